//! Settling: waiting until a family's memory has stopped changing before it is measured.
//!
//! A [`Settle`] is either a fixed wait ([`Settle::Fixed`], the old behaviour: exactly that
//! long) or a wait for quiet ([`Settle::Quiet`]): the family's resident memory and process
//! count sampled every few milliseconds, ending as soon as both stayed within a
//! tolerance for a quiet interval, and at the latest after a maximum. A program whose
//! memory is complete 80 ms after ready is then measured 80 ms + the quiet interval after
//! ready, not after a second.
//!
//! The decision is a pure function over the samples ([`decide`]); [`settle`] is the loop
//! that samples a [`Selector`] and hands the time between samples to the caller, who
//! spends it reading a terminal or sleeping.
//!
//! ```
//! use bench_proc::settle::{Settle, Quiet};
//! use std::time::Duration;
//!
//! let fixed: Settle = "1s".parse().unwrap();
//! assert_eq!(fixed, Settle::Fixed(Duration::from_secs(1)));
//! let auto: Settle = "auto:max=3s".parse().unwrap();
//! assert_eq!(auto, Settle::Quiet(Quiet { max: Duration::from_secs(3), ..Quiet::default() }));
//! ```

use crate::snapshot_linux::{ProcRoot, Selector, SnapshotError, StatTotals};
use serde::Serialize;
use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant};

/// How long a settle waits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Settle {
    /// Exactly this long (ended early only when the program closed its terminal).
    Fixed(Duration),
    /// Until the family's memory is quiet, at most [`Quiet::max`].
    Quiet(Quiet),
}

/// When a family counts as settled: its process count unchanged, its resident memory
/// within [`Quiet::tolerance`] of the latest sample and none of its processes running
/// or in uninterruptible sleep when sampled, for [`Quiet::quiet`]. The last condition
/// keeps a start-up that is waiting for a CPU (on a loaded machine) or for a disk from
/// looking settled during the pause: its memory stands still, but it is not done.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quiet {
    /// The longest the settle waits; a family still changing then is measured as it is.
    pub max: Duration,
    /// How long memory and process count must stay within the tolerance.
    pub quiet: Duration,
    /// The allowed difference from the latest sample, as a fraction (0.01 is 1 %).
    pub tolerance: f64,
    /// Time between the starts of two samples (a slow sample delays the next one).
    pub interval: Duration,
}

impl Default for Quiet {
    /// `auto`: at most 5 s, quiet for 100 ms within 1 %, sampled every 10 ms.
    ///
    /// Measured on the demo agent and `python3 -m http.server` (cold and warm, on a
    /// loaded 2-core host): the family's RSS reaches its final value within 1 % at
    /// most 100 ms after ready (usually before ready), and never moved again within
    /// the following seconds; 100 ms of quiet is several times the longest pause
    /// between two changes while a start-up still grows (a few tens of ms, an import
    /// or a page fault burst), so a start that is still loading does not look settled.
    fn default() -> Quiet {
        Quiet {
            max: Duration::from_secs(5),
            quiet: Duration::from_millis(100),
            tolerance: 0.01,
            interval: Duration::from_millis(10),
        }
    }
}

impl Settle {
    /// The longest this settle can take.
    pub fn max(&self) -> Duration {
        match self {
            Settle::Fixed(duration) => *duration,
            Settle::Quiet(quiet) => quiet.max,
        }
    }
}

/// A settle that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Neither a duration nor `auto[:...]`.
    #[error(
        "invalid settle {0:?} (expected a duration such as 1s, or auto, auto:MAX or \
         auto:max=5s,quiet=100ms,tolerance=1%)"
    )]
    Invalid(String),
    /// A key of `auto:` that is not max, quiet or tolerance.
    #[error("unknown settle key {0:?} (expected max, quiet or tolerance)")]
    UnknownKey(String),
    /// A duration that does not parse.
    #[error("invalid settle {key}")]
    Duration {
        /// `max`, `quiet` or the whole text.
        key: &'static str,
        /// Why.
        #[source]
        source: bench_core::units::DurationError,
    },
    /// A tolerance that is not a percentage from 0 to 100.
    #[error("settle tolerance {0:?} is not a percentage such as 1% or 0.5%")]
    Tolerance(String),
    /// A quiet interval longer than the maximum, which could never end quietly.
    #[error("settle quiet interval {quiet:?} is longer than its maximum {max:?}")]
    QuietOverMax {
        /// The quiet interval.
        quiet: Duration,
        /// The maximum.
        max: Duration,
    },
}

/// Parses a tolerance written as a percentage (`1%`, `0.5%`) into a fraction.
pub fn parse_tolerance(text: &str) -> Result<f64, ParseError> {
    let invalid = || ParseError::Tolerance(text.to_owned());
    let number = text.trim().strip_suffix('%').ok_or_else(invalid)?;
    if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(invalid());
    }
    let percent: f64 = number.parse().map_err(|_| invalid())?;
    if !(0.0..=100.0).contains(&percent) {
        return Err(invalid());
    }
    Ok(percent / 100.0)
}

impl Quiet {
    /// Sets one `auto:` key (`max`, `quiet` or `tolerance`) from its text.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ParseError> {
        let duration = |key: &'static str| {
            bench_core::units::parse_duration(value)
                .map_err(|source| ParseError::Duration { key, source })
        };
        match key {
            "max" => self.max = duration("max")?,
            "quiet" => self.quiet = duration("quiet")?,
            "tolerance" => self.tolerance = parse_tolerance(value)?,
            other => return Err(ParseError::UnknownKey(other.to_owned())),
        }
        Ok(())
    }

    /// Refuses a quiet interval longer than the maximum.
    pub fn check(self) -> Result<Quiet, ParseError> {
        if self.quiet > self.max {
            return Err(ParseError::QuietOverMax {
                quiet: self.quiet,
                max: self.max,
            });
        }
        Ok(self)
    }
}

impl FromStr for Settle {
    type Err = ParseError;

    /// `DURATION` (fixed: exactly that long), `auto` (quiet with the defaults),
    /// `auto:MAX` or `auto:KEY=VALUE,...` with the keys `max`, `quiet` and `tolerance`.
    fn from_str(text: &str) -> Result<Settle, ParseError> {
        let text = text.trim();
        let Some(rest) = text.strip_prefix("auto") else {
            return bench_core::units::parse_duration(text)
                .map(Settle::Fixed)
                .map_err(|source| match source {
                    bench_core::units::DurationError::Invalid(_) => {
                        ParseError::Invalid(text.to_owned())
                    }
                    source => ParseError::Duration {
                        key: "duration",
                        source,
                    },
                });
        };
        let mut quiet = Quiet::default();
        if rest.is_empty() {
            return Ok(Settle::Quiet(quiet));
        }
        let rest = rest
            .strip_prefix(':')
            .ok_or_else(|| ParseError::Invalid(text.to_owned()))?;
        if !rest.contains('=') {
            quiet.set("max", rest)?;
            return quiet.check().map(Settle::Quiet);
        }
        for pair in rest.split(',') {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| ParseError::Invalid(text.to_owned()))?;
            quiet.set(key.trim(), value.trim())?;
        }
        quiet.check().map(Settle::Quiet)
    }
}

/// `1500ms`, `2s`: the shortest exact spelling of a whole number of milliseconds.
fn duration_text(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis > 0 && millis.is_multiple_of(1000) {
        format!("{}s", millis / 1000)
    } else {
        format!("{millis}ms")
    }
}

impl fmt::Display for Settle {
    /// The form [`Settle::from_str`] reads back: `1s`, `auto:max=5s,quiet=100ms,tolerance=1%`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Settle::Fixed(duration) => f.write_str(&duration_text(*duration)),
            Settle::Quiet(quiet) => write!(
                f,
                "auto:max={},quiet={},tolerance={}%",
                duration_text(quiet.max),
                duration_text(quiet.quiet),
                quiet.tolerance * 100.0
            ),
        }
    }
}

/// The family's totals at one sample of a settle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettlePoint {
    /// Since the settle began.
    pub elapsed: Duration,
    /// Live processes (zombies and kernel threads left out).
    pub process_count: u32,
    /// Sum of the kernel's RSS counters (`/proc/PID/stat`), in bytes.
    pub rss_bytes: u64,
    /// Whether any process was running, runnable or in uninterruptible sleep.
    pub busy: bool,
}

/// What [`decide`] says about a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Not quiet yet and the maximum not reached.
    Wait,
    /// Quiet for the whole interval (the quiet interval began at `since`).
    Settled {
        /// When the quiet interval began: the first sample after the last change.
        since: Duration,
    },
    /// The maximum passed without a quiet interval.
    Max,
}

/// Whether `points` (oldest first, all taken by `now`, measured from the settle's
/// start) show a settled family: the latest sample's process count and RSS (within
/// `quiet.tolerance` of the latest RSS) held, with no process busy, since a sample at
/// least `quiet.quiet` before the latest one. A process that appears or goes resets the
/// interval, as does RSS that moves by more than the tolerance, or a busy sample. Past
/// `quiet.max` without that: [`Decision::Max`].
pub fn decide(quiet: &Quiet, points: &[SettlePoint], now: Duration) -> Decision {
    if let Some(latest) = points.last() {
        let band = latest.rss_bytes as f64 * quiet.tolerance;
        let same = |point: &SettlePoint| {
            !point.busy
                && point.process_count == latest.process_count
                && (point.rss_bytes as f64 - latest.rss_bytes as f64).abs() <= band
        };
        // The first sample of the unbroken run of samples like the latest one.
        let start = points
            .iter()
            .rposition(|point| !same(point))
            .map_or(0, |changed| changed + 1);
        // A busy latest sample starts no run at all.
        if let Some(first) = points.get(start)
            && latest.elapsed.saturating_sub(first.elapsed) >= quiet.quiet
        {
            return Decision::Settled {
                since: first.elapsed,
            };
        }
    }
    if now >= quiet.max {
        Decision::Max
    } else {
        Decision::Wait
    }
}

/// How a settle ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SettleEnd {
    /// A fixed settle waited its whole time.
    Elapsed,
    /// The family was quiet for the interval.
    Quiet,
    /// The maximum passed while the family still changed.
    Max,
    /// The program closed its terminal (the caller's wait said so).
    Closed,
}

impl SettleEnd {
    /// `elapsed`, `quiet`, `max` or `closed`.
    pub fn name(self) -> &'static str {
        match self {
            SettleEnd::Elapsed => "elapsed",
            SettleEnd::Quiet => "quiet",
            SettleEnd::Max => "max",
            SettleEnd::Closed => "closed",
        }
    }
}

/// What one settle did: its mode, how long it took and how it ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SettleReport {
    /// The settle asked for.
    pub settle: Settle,
    /// How long it took.
    pub took: Duration,
    /// How it ended.
    pub end: SettleEnd,
    /// Samples of the family taken (0 for a fixed settle).
    pub samples: u32,
}

impl Serialize for SettleReport {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = serializer.serialize_struct("SettleReport", 6)?;
        out.serialize_field("settle", &self.settle.to_string())?;
        out.serialize_field("took_seconds", &self.took.as_secs_f64())?;
        out.serialize_field("end", &self.end)?;
        out.serialize_field("samples", &self.samples)?;
        out.end()
    }
}

impl SettleReport {
    /// This settle as a result file keeps it, named `session` (`cold`, `step-3`).
    pub fn record(&self, session: &str) -> bench_core::SettleRecord {
        let (until, quiet, tolerance) = match self.settle {
            Settle::Fixed(_) => (bench_core::SettleUntil::Fixed, None, None),
            Settle::Quiet(quiet) => (
                bench_core::SettleUntil::Quiet,
                Some(quiet.quiet.as_secs_f64()),
                Some(quiet.tolerance),
            ),
        };
        bench_core::SettleRecord {
            session: session.to_owned(),
            until,
            max_seconds: self.settle.max().as_secs_f64(),
            quiet_seconds: quiet,
            tolerance,
            took_seconds: self.took.as_secs_f64(),
            ended: match self.end {
                SettleEnd::Elapsed => bench_core::SettleEnded::Elapsed,
                SettleEnd::Quiet => bench_core::SettleEnded::Quiet,
                SettleEnd::Max => bench_core::SettleEnded::Max,
                SettleEnd::Closed => bench_core::SettleEnded::Closed,
            },
        }
    }
}

/// What the caller's wait saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waited {
    /// The time passed.
    Full,
    /// The program closed its terminal: the settle ends now.
    Closed,
}

/// The family's process count, summed RSS and busy processes now, from `stat` alone
/// (cheap enough to sample every few milliseconds, even for a thousand processes). A
/// tree whose root is gone is an empty family.
pub fn family_totals(
    root: &ProcRoot,
    family: &Selector,
    exclude_pids: &[u32],
) -> Result<StatTotals, SnapshotError> {
    match root.stat_totals(family, exclude_pids) {
        Err(SnapshotError::NoSuchProcess { .. }) => Ok(StatTotals::default()),
        other => other,
    }
}

/// Settles `family` by `settle`: a fixed settle calls `wait` until its time is spent;
/// a quiet settle samples the family (see [`family_totals`]) every
/// [`Quiet::interval`], calls `wait` with the time until the next sample, and ends by
/// [`decide`]. `wait` spends the time it is given (reading a terminal, sleeping) and
/// says whether the program closed its terminal, which ends the settle at once.
/// A sample that fails (an unreadable `/proc`) is skipped: the settle then ends at
/// its maximum.
pub fn settle<E>(
    root: &ProcRoot,
    family: &Selector,
    exclude_pids: &[u32],
    settle: &Settle,
    wait: &mut dyn FnMut(Duration) -> Result<Waited, E>,
) -> Result<SettleReport, E> {
    let started = Instant::now();
    let report = |end: SettleEnd, samples: u32| SettleReport {
        settle: *settle,
        took: started.elapsed(),
        end,
        samples,
    };
    match settle {
        Settle::Fixed(duration) => loop {
            let left = duration.saturating_sub(started.elapsed());
            if left.is_zero() {
                return Ok(report(SettleEnd::Elapsed, 0));
            }
            if wait(left)? == Waited::Closed {
                return Ok(report(SettleEnd::Closed, 0));
            }
        },
        Settle::Quiet(quiet) => {
            let mut points: Vec<SettlePoint> = Vec::new();
            let mut samples = 0u32;
            loop {
                let began = started.elapsed();
                if let Ok(totals) = family_totals(root, family, exclude_pids) {
                    samples += 1;
                    points.push(SettlePoint {
                        elapsed: began,
                        process_count: totals.process_count,
                        rss_bytes: totals.rss_bytes,
                        busy: totals.busy_count > 0,
                    });
                }
                match decide(quiet, &points, started.elapsed()) {
                    Decision::Settled { .. } => return Ok(report(SettleEnd::Quiet, samples)),
                    Decision::Max => return Ok(report(SettleEnd::Max, samples)),
                    Decision::Wait => {}
                }
                // Only the run since the last change matters; keep the series short.
                if points.len() > 4096 {
                    points.drain(..points.len() - 2048);
                }
                let now = started.elapsed();
                let next = (began + quiet.interval).min(quiet.max);
                if let Some(left) = next.checked_sub(now).filter(|left| !left.is_zero())
                    && wait(left)? == Waited::Closed
                {
                    return Ok(report(SettleEnd::Closed, samples));
                }
            }
        }
    }
}

/// [`settle`] that sleeps between samples (for a family with no terminal to read).
pub fn settle_sleeping(
    root: &ProcRoot,
    family: &Selector,
    exclude_pids: &[u32],
    settle: &Settle,
) -> SettleReport {
    let result: Result<SettleReport, std::convert::Infallible> =
        self::settle(root, family, exclude_pids, settle, &mut |left| {
            std::thread::sleep(left);
            Ok(Waited::Full)
        });
    match result {
        Ok(report) => report,
        Err(never) => match never {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    fn quiet() -> Quiet {
        Quiet {
            max: ms(1000),
            quiet: ms(100),
            tolerance: 0.01,
            interval: ms(10),
        }
    }

    /// Samples every 10 ms: `(process_count, rss_mib)` per sample.
    fn series(samples: &[(u32, u64)]) -> Vec<SettlePoint> {
        samples
            .iter()
            .enumerate()
            .map(|(index, &(count, mib))| SettlePoint {
                elapsed: ms(10 * index as u64),
                process_count: count,
                rss_bytes: mib << 20,
                busy: false,
            })
            .collect()
    }

    /// The first moment (sample time) `decide` does not say wait, and what it said.
    fn first_decision(quiet: &Quiet, points: &[SettlePoint]) -> Option<(Duration, Decision)> {
        (1..=points.len()).find_map(|taken| {
            let now = points[taken - 1].elapsed;
            match decide(quiet, &points[..taken], now) {
                Decision::Wait => None,
                decision => Some((now, decision)),
            }
        })
    }

    #[test]
    fn settles_once_quiet_for_the_interval() {
        // Grows for 50 ms, then stays at 100 MiB.
        let mut samples = vec![(1, 10), (1, 30), (2, 60), (2, 90), (2, 99)];
        samples.extend(std::iter::repeat_n((2, 100), 30));
        let points = series(&samples);
        assert_eq!(
            first_decision(&quiet(), &points),
            // 99 MiB is within 1 % of 100: quiet since 40 ms, settled at 140 ms.
            Some((ms(140), Decision::Settled { since: ms(40) }))
        );
    }

    #[test]
    fn small_changes_within_the_tolerance_are_quiet() {
        let points = series(&[(1, 1000), (1, 1005), (1, 998), (1, 1003)].repeat(5));
        assert_eq!(
            first_decision(&quiet(), &points),
            Some((ms(100), Decision::Settled { since: ms(0) }))
        );
    }

    #[test]
    fn a_family_that_never_settles_ends_at_the_maximum() {
        // Grows 2 % every sample, for two seconds.
        let samples: Vec<(u32, u64)> = (0..200)
            .map(|i| (1, (100.0 * 1.02f64.powi(i)) as u64))
            .collect();
        let points = series(&samples);
        assert_eq!(
            first_decision(&quiet(), &points),
            Some((ms(1000), Decision::Max))
        );
        assert_eq!(decide(&quiet(), &[], ms(999)), Decision::Wait);
        assert_eq!(decide(&quiet(), &[], ms(1000)), Decision::Max);
    }

    #[test]
    fn a_late_child_resets_the_interval() {
        // Quiet for 90 ms, then a child with no memory of its own to speak of appears.
        let mut samples = vec![(1, 100); 10];
        samples.extend(std::iter::repeat_n((2, 100), 20));
        let points = series(&samples);
        assert_eq!(
            first_decision(&quiet(), &points),
            Some((ms(200), Decision::Settled { since: ms(100) }))
        );
        // And a process that goes resets it as well.
        let mut samples = vec![(3, 100); 9];
        samples.extend(std::iter::repeat_n((2, 100), 20));
        assert_eq!(
            first_decision(&quiet(), &series(&samples)),
            Some((ms(190), Decision::Settled { since: ms(90) }))
        );
    }

    #[test]
    fn a_busy_sample_resets_the_interval() {
        // Memory stands still from the start, but the process is runnable (waiting for a
        // CPU) at 50 ms: quiet only from 60 ms.
        let mut points = series(&[(1, 100); 30]);
        points[5].busy = true;
        assert_eq!(
            first_decision(&quiet(), &points),
            Some((ms(160), Decision::Settled { since: ms(60) }))
        );
    }

    #[test]
    fn a_zero_quiet_interval_settles_at_the_first_sample() {
        let quiet = Quiet {
            quiet: Duration::ZERO,
            ..quiet()
        };
        assert_eq!(
            decide(&quiet, &series(&[(1, 5)]), ms(0)),
            Decision::Settled { since: ms(0) }
        );
    }

    #[test]
    fn settles_parse_and_print_back() {
        assert_eq!("1s".parse(), Ok(Settle::Fixed(ms(1000))));
        assert_eq!("250ms".parse(), Ok(Settle::Fixed(ms(250))));
        assert_eq!("auto".parse(), Ok(Settle::Quiet(Quiet::default())));
        assert_eq!(
            "auto:3s".parse(),
            Ok(Settle::Quiet(Quiet {
                max: ms(3000),
                ..Quiet::default()
            }))
        );
        let full: Settle = "auto:max=5s, quiet=250ms,tolerance=0.5%".parse().unwrap();
        assert_eq!(
            full,
            Settle::Quiet(Quiet {
                max: ms(5000),
                quiet: ms(250),
                tolerance: 0.005,
                interval: Quiet::default().interval,
            })
        );
        for text in ["1s", "1500ms", "auto:max=5s,quiet=100ms,tolerance=1%"] {
            assert_eq!(text.parse::<Settle>().unwrap().to_string(), text);
        }
        assert_eq!(full.to_string().parse::<Settle>(), Ok(full));
    }

    #[test]
    fn bad_settles_say_what_is_expected() {
        assert_eq!(
            "soon".parse::<Settle>(),
            Err(ParseError::Invalid("soon".into()))
        );
        assert_eq!(
            "automatic".parse::<Settle>(),
            Err(ParseError::Invalid("automatic".into()))
        );
        assert_eq!(
            "auto:speed=1s".parse::<Settle>(),
            Err(ParseError::UnknownKey("speed".into()))
        );
        assert_eq!(
            "auto:tolerance=1".parse::<Settle>(),
            Err(ParseError::Tolerance("1".into()))
        );
        assert_eq!(
            "auto:max=1s,quiet=2s".parse::<Settle>(),
            Err(ParseError::QuietOverMax {
                quiet: ms(2000),
                max: ms(1000)
            })
        );
        assert!(matches!(
            "auto:max=soon".parse::<Settle>(),
            Err(ParseError::Duration { key: "max", .. })
        ));
    }

    #[test]
    fn a_fixed_settle_waits_its_whole_time_in_the_callers_waits() {
        let mut waits = Vec::new();
        let report = settle(
            &ProcRoot::new("/nonexistent"),
            &Selector::Tree(1),
            &[],
            &Settle::Fixed(ms(30)),
            &mut |left| -> Result<Waited, ()> {
                waits.push(left);
                std::thread::sleep(left);
                Ok(Waited::Full)
            },
        )
        .unwrap();
        assert_eq!(report.end, SettleEnd::Elapsed);
        assert!(report.took >= ms(30), "{report:?}");
        assert_eq!(report.samples, 0);
        assert!(!waits.is_empty() && waits[0] <= ms(30));
    }

    #[test]
    fn a_closed_terminal_ends_the_settle() {
        let report = settle(
            &ProcRoot::live(),
            &Selector::Tree(std::process::id()),
            &[],
            &Settle::Quiet(Quiet {
                max: Duration::from_secs(30),
                quiet: Duration::from_secs(20),
                ..Quiet::default()
            }),
            &mut |_| -> Result<Waited, ()> { Ok(Waited::Closed) },
        )
        .unwrap();
        assert_eq!(report.end, SettleEnd::Closed);
        assert_eq!(report.samples, 1);
    }
}
