//! A host-speed probe: a fixed CPU loop timed just before a trial starts, so that two
//! separate runs can tell how far the machine's speed moved between them.
//!
//! Between two runs (`clibench run` twice, `ab --sequential`) the machine's load, clock
//! and neighbours change; a target's times move with them, and a comparison cannot tell
//! that from a change of the target. Every trial records how long [`probe`] took
//! ([`crate::TrialRecord::speed_probe_seconds`]); [`SpeedShift::between`] compares the
//! two runs' probes, and `compare` counts that shift as the drift between the runs
//! instead of an assumed spread (see `docs/verdicts.md`).
//!
//! ```
//! let took = bench_core::compare::speed_probe::probe();
//! assert!(took > std::time::Duration::ZERO);
//! ```

use crate::result::Side;
use crate::stats::mean_and_variance;
use std::time::{Duration, Instant};

/// The steps of the probe's loop: about 2 ms of one core in a release build on a
/// 2020s x86 machine (a debug build takes about ten times longer, the same on both
/// sides of a comparison made with one binary).
pub const PROBE_STEPS: u64 = 1 << 21;

/// Runs the fixed loop once and returns how long it took. The loop is integer
/// arithmetic on registers (xorshift), with nothing to allocate, read or wait for, so
/// its time moves with the CPU's speed and what else runs on it.
pub fn probe() -> Duration {
    let started = Instant::now();
    std::hint::black_box(xorshift_steps(std::hint::black_box(PROBE_STEPS)));
    started.elapsed()
}

/// `steps` steps of xorshift64 from a fixed seed: the probe's work (and `clibench
/// calibrate`'s), integer arithmetic on registers only, so its time moves with the CPU's
/// speed and what else runs on it. Keep its result (`std::hint::black_box`) so the loop
/// is not optimized away.
pub fn xorshift_steps(steps: u64) -> u64 {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..steps {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
    }
    state
}

/// How the host's speed differed between two separate runs, by their probes.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct SpeedShift {
    /// The candidate run's probes against the base's, as the log of the ratio of their
    /// geometric means: 0.05 means the probe took about 5% longer (the host was slower)
    /// while the candidate ran.
    pub log_ratio: f64,
    /// The standard error of [`log_ratio`](Self::log_ratio) from the probes' spread
    /// within each run.
    pub standard_error: f64,
    /// How many probes each side had (base, candidate).
    pub probes: (usize, usize),
}

impl SpeedShift {
    /// The shift between the probes of `base` and `candidate`, from every trial record
    /// that has one; `None` when a side has fewer than two (then nothing is known about
    /// how the machine moved, and the comparison says so).
    pub fn between(base: &Side, candidate: &Side) -> Option<SpeedShift> {
        let logs = |side: &Side| -> Vec<f64> {
            side.trials
                .iter()
                .filter_map(|record| record.speed_probe_seconds)
                .filter(|seconds| seconds.is_finite() && *seconds > 0.0)
                .map(f64::ln)
                .collect()
        };
        let (base, candidate) = (logs(base), logs(candidate));
        if base.len() < 2 || candidate.len() < 2 {
            return None;
        }
        let (base_mean, base_variance) = mean_and_variance(&base);
        let (candidate_mean, candidate_variance) = mean_and_variance(&candidate);
        Some(SpeedShift {
            log_ratio: candidate_mean - base_mean,
            standard_error: (base_variance / base.len() as f64
                + candidate_variance / candidate.len() as f64)
                .sqrt(),
            probes: (base.len(), candidate.len()),
        })
    }

    /// The drift spread τ this shift stands for: the difference of two runs' offsets has
    /// variance `2·τ²`, and this pair of runs showed one such difference, `log_ratio`,
    /// measured with its own sampling error, so `2·τ² = log_ratio² + standard_error²`.
    pub fn drift_spread(&self) -> f64 {
        ((self.log_ratio.powi(2) + self.standard_error.powi(2)) / 2.0).sqrt()
    }

    /// The shift as a relative change of the probe's time (0.05 = 5% slower).
    pub fn change(&self) -> f64 {
        self.log_ratio.exp_m1()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::Phase;

    fn probed(seconds: &[f64]) -> Side {
        let mut side = Side::new("x");
        for (trial, &value) in seconds.iter().enumerate() {
            side.trial_record_mut(Phase::Measure, trial as u32)
                .speed_probe_seconds = Some(value);
        }
        side
    }

    #[test]
    fn the_probe_does_the_same_work_every_time() {
        assert_eq!(xorshift_steps(1000), xorshift_steps(1000));
        assert_ne!(xorshift_steps(1000), xorshift_steps(1001));
        assert!(probe() > Duration::ZERO);
    }

    #[test]
    fn a_slower_host_shows_as_a_shift_and_a_drift_spread() {
        let base = probed(&[0.0020, 0.0021, 0.0019, 0.0020]);
        let slower = probed(&[0.0022, 0.0023, 0.0021, 0.0022]);
        let shift = SpeedShift::between(&base, &slower).unwrap();
        assert!((shift.change() - 0.10).abs() < 0.01, "{shift:?}");
        assert_eq!(shift.probes, (4, 4));
        // 2·τ² = log_ratio² + se²: about 0.0953/√2 for a 10% move.
        let tau = shift.drift_spread();
        assert!((tau - 0.0953 / 2f64.sqrt()).abs() < 0.005, "{tau}");
        // The same host gives a spread of its sampling error only.
        let same = SpeedShift::between(&base, &base).unwrap();
        assert_eq!(same.log_ratio, 0.0);
        assert!(same.drift_spread() < 0.03);
    }

    #[test]
    fn fewer_than_two_probes_a_side_say_nothing() {
        let base = probed(&[0.002, 0.002]);
        assert_eq!(SpeedShift::between(&base, &probed(&[0.002])), None);
        assert_eq!(SpeedShift::between(&Side::new("y"), &base), None);
    }
}
