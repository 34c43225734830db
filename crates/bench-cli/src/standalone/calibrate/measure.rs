//! The measurement of `clibench calibrate`: the CPU loop on every CPU, then the
//! command's starts, turned into a [`Report`].

use super::cpu_linux::{self, CpuError, CpuWindows};
use super::report::{CorrelationAtGap, CpuDrift, DriftAtGap, Report, StartNoise};
use super::spread::{
    budget_power, difference_spread, lag_correlation, log_spread, pair_log_ratios, spread,
};
use super::start_linux::{StartError, time_one_start};
use crate::pipeline::orchestration::circumstances::parse_loadavg;
use bench_core::compare::DEFAULT_ALPHA;
use std::ffi::OsString;
use std::time::{Duration, Instant};

/// One window of the CPU loop: about one start of a small program.
pub const WINDOW: Duration = Duration::from_millis(50);
/// The gaps between two windows whose difference is reported: back to back, about a
/// short settle, and about today's ABBA pair (0.8 s between its two cold starts).
pub const GAPS: [Duration; 3] = [
    Duration::ZERO,
    Duration::from_millis(100),
    Duration::from_millis(800),
];
/// The gaps at which a window's correlation with a later one is reported.
pub const CORRELATION_GAPS: [Duration; 6] = [
    Duration::ZERO,
    Duration::from_millis(100),
    Duration::from_millis(200),
    Duration::from_millis(400),
    Duration::from_millis(800),
    Duration::from_millis(1600),
];
/// The budgets whose detectable change is reported.
pub const BUDGETS: [Duration; 2] = [Duration::from_secs(60), Duration::from_secs(300)];
/// The fewest starts of the command, whatever the duration: two pairs.
const MIN_STARTS: usize = 4;
/// The most starts of the command: enough for a spread, and a bound on the time a fast
/// command's loop takes whatever the duration.
const MAX_STARTS: usize = 2000;

/// What to measure.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The whole measurement's length: all of it for the CPU loop, or half of it when a
    /// command is given (the other half starts the command).
    pub duration: Duration,
    /// The command to start back to back; empty for none.
    pub command: Vec<OsString>,
    /// The longest one start may take before it is killed and calibration fails.
    pub start_timeout: Duration,
}

/// Why calibration failed.
#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    /// The CPU loop failed.
    #[error(transparent)]
    Cpu(#[from] CpuError),
    /// A start of the command failed.
    #[error(transparent)]
    Start(#[from] StartError),
    /// The duration leaves no whole window of the CPU loop.
    #[error("a duration of {0:?} is too short: calibrate needs at least {WINDOW:?} per part")]
    TooShort(Duration),
}

/// Measures the host's noise profile as `settings` ask.
pub fn calibrate(settings: &Settings) -> Result<Report, CalibrateError> {
    let load_average = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| parse_loadavg(&text));
    let cpu_time = if settings.command.is_empty() {
        settings.duration
    } else {
        settings.duration / 2
    };
    if cpu_time < WINDOW * 2 {
        return Err(CalibrateError::TooShort(settings.duration));
    }
    let cpus = cpu_linux::allowed_cpus()?;
    let measured = cpu_linux::measure(&cpus, cpu_time, WINDOW)?;
    let start = if settings.command.is_empty() {
        None
    } else {
        Some(starts(settings, settings.duration - cpu_time)?)
    };
    Ok(Report {
        load_average,
        cpus,
        window_ms: WINDOW.as_secs_f64() * 1e3,
        cpu_seconds: cpu_time.as_secs_f64(),
        per_cpu: measured
            .iter()
            .map(|cpu| CpuDrift {
                cpu: cpu.cpu,
                chunks: cpu.chunks,
                window_spread: spread(&present(&cpu.windows)),
            })
            .collect(),
        cross_cpu_same_moment: cross(&measured, Duration::ZERO, true),
        drift_by_gap: GAPS
            .iter()
            .map(|&gap| DriftAtGap {
                gap_ms: gap.as_secs_f64() * 1e3,
                same_cpu: same_cpu(&measured, gap),
                cross_cpu: cross(&measured, gap, false),
            })
            .collect(),
        correlation_by_gap: CORRELATION_GAPS
            .iter()
            .map(|&gap| CorrelationAtGap {
                gap_ms: gap.as_secs_f64() * 1e3,
                correlation: correlation(&measured, gap),
            })
            .collect(),
        start,
    })
}

/// The windows' lag for two windows `gap` apart (end of one to start of the other).
fn lag(gap: Duration) -> usize {
    1 + (gap.as_nanos() / WINDOW.as_nanos()) as usize
}

/// The windows that had a chunk.
fn present(windows: &[Option<f64>]) -> Vec<f64> {
    windows.iter().flatten().copied().collect()
}

/// The difference spread at `gap` on each CPU, combined as the root of the mean variance.
fn same_cpu(measured: &[CpuWindows], gap: Duration) -> Option<f64> {
    root_mean_square(
        measured
            .iter()
            .filter_map(|cpu| difference_spread(&cpu.windows, &cpu.windows, lag(gap))),
    )
}

/// The difference spread between the first two CPUs, at the same moment or `gap` apart.
fn cross(measured: &[CpuWindows], gap: Duration, same_moment: bool) -> Option<f64> {
    let [first, second, ..] = measured else {
        return None;
    };
    let lag = if same_moment { 0 } else { lag(gap) };
    difference_spread(&first.windows, &second.windows, lag)
}

/// The mean over the CPUs of the lag correlation at `gap`.
fn correlation(measured: &[CpuWindows], gap: Duration) -> Option<f64> {
    let values: Vec<f64> = measured
        .iter()
        .filter_map(|cpu| lag_correlation(&cpu.windows, lag(gap)))
        .collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The root of the mean of the squares, `None` for none.
fn root_mean_square(values: impl Iterator<Item = f64>) -> Option<f64> {
    let squares: Vec<f64> = values.map(|v| v * v).collect();
    (!squares.is_empty()).then(|| (squares.iter().sum::<f64>() / squares.len() as f64).sqrt())
}

/// Starts the command back to back for `budget` (at least [`MIN_STARTS`] times, at most
/// [`MAX_STARTS`]).
fn starts(settings: &Settings, budget: Duration) -> Result<StartNoise, CalibrateError> {
    let began = Instant::now();
    let mut times = Vec::new();
    while times.len() < MIN_STARTS || (began.elapsed() < budget && times.len() < MAX_STARTS) {
        times.push(time_one_start(&settings.command, settings.start_timeout)?.as_secs_f64());
    }
    let ratios = pair_log_ratios(&times);
    let pair_spread = spread(&ratios);
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    let pair_time = Duration::from_secs_f64(2.0 * mean);
    Ok(StartNoise {
        command: crate::standalone::spawn::display_command(&settings.command),
        starts: times.len(),
        median_seconds: bench_core::stats::median_of_sorted(&sorted),
        log_spread: log_spread(&times),
        pair_spread,
        alpha: DEFAULT_ALPHA,
        budgets: pair_spread.map_or_else(Vec::new, |pair_spread| {
            BUDGETS
                .iter()
                .map(|&budget| budget_power(pair_spread, pair_time, budget, DEFAULT_ALPHA))
                .collect()
        }),
    })
}
