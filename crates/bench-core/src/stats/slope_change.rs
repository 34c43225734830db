//! Slopes over a session's turns compared by their difference, not their ratio.
//!
//! A slope is 0 when nothing grows, and a fitted slope of a session that leaks nothing is
//! noise around 0, often below it: the ratio of head's slope to base's is then
//! meaningless (2 MiB per turn over 3 KiB per turn is +70,000%, over −3 KiB per turn it
//! has no sign), and the log-scale test `compare` makes of every other metric cannot say
//! that a leak of 2 MiB per turn appeared. So a slope metric ([`Metric::is_slope`]) is
//! judged by `head − base` in its own unit:
//!
//! - the slopes are the trials' signed fits (`side.sessions[].growth`, `lag`, `render`;
//!   the metric's samples record a shrinking series as 0), scaled as the metric is (per
//!   turn, per 100 turns); a result without them falls back to the samples;
//! - with two trials or more a side, a t-test on the raw slopes: paired trial by trial
//!   for interleaved sides, else Welch's ([`paired_difference`],
//!   [`welch_difference`]); with one trial a side, the two fits' own
//!   standard errors ([`estimates_difference`]), each the larger of the
//!   line's (residuals about the fit) and the walk's (the spread of the steps between
//!   turns, [`Fit::walk_std_error`]): memory keeps what a turn allocated, so a one-time
//!   load or free is a step that the line's residuals call a certain slope (an A/A run
//!   of the demo was called improved by 499 KiB a turn that way);
//! - its p-value joins the family Holm's procedure adjusts, and the interval shown is the
//!   test's own at the level Holm judged the metric at;
//! - a change counts when that interval excludes 0 and the difference is beyond the
//!   metric's threshold in its unit ([`Metric::slope_threshold`], or the spec's
//!   `[compare] noise`).
//!
//! No drift term is added between separate runs: a machine's offset multiplies what it
//! times, and a slope of nothing multiplied is still nothing.

use super::t_test::{Estimate, Welch, estimates_difference, paired_difference, welch_difference};
use super::trend::Fit;
use crate::compare::Verdict;
use crate::detail::SessionRun;
use crate::metric::{Direction, Metric};
use crate::result::Side;
use std::collections::BTreeMap;

/// Latency and bytes-per-key slopes are fitted per turn and recorded per 100 turns.
pub const PER_HUNDRED_TURNS: f64 = 100.0;

/// How a slope metric's difference was judged: in the metric's unit, as
/// `MetricComparison::delta` is.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct SlopeChange {
    /// The practical threshold, in the metric's unit (bytes per turn, seconds per 100
    /// turns, bytes per key per 100 turns).
    pub threshold: f64,
    /// Lower end of the test's interval of `candidate − base`, in the metric's unit, at
    /// the row's confidence; the difference itself without a test.
    pub low: f64,
    /// Upper end of the interval.
    pub high: f64,
    /// The smallest difference the run could have detected (80% power at the
    /// Bonferroni share of alpha), in the metric's unit; infinite without a test.
    pub detectable: f64,
    /// Whether the standard error came from the two fits (one trial a side) rather than
    /// from the spread of the trials' slopes.
    pub from_fits: bool,
}

/// One trial's slope of `metric`, in the metric's unit, from its session's fit.
pub fn run_slope(run: &SessionRun, metric: Metric) -> Option<Fit> {
    let (fit, scale) = match metric {
        Metric::SessionGrowth => (run.growth?, 1.0),
        Metric::LagGrowth => (run.lag?, PER_HUNDRED_TURNS),
        Metric::RenderGrowth => (run.render?, PER_HUNDRED_TURNS),
        _ => return None,
    };
    Some(Fit {
        slope: fit.slope * scale,
        std_error: fit.std_error.map(|error| error * scale),
        walk_std_error: fit.walk_std_error.map(|error| error * scale),
        ..fit
    })
}

/// The slopes of `metric` by trial: the signed fits of the trials that recorded a value,
/// or, when some such trial kept no fit (an older result), the recorded values.
fn slopes(side: &Side, metric: Metric) -> BTreeMap<u32, (f64, Option<Estimate>)> {
    let recorded: BTreeMap<u32, f64> = side
        .metrics
        .get(&metric)
        .into_iter()
        .flatten()
        .filter_map(|sample| Some((sample.trial, sample.value?)))
        .collect();
    let fitted: BTreeMap<u32, Fit> = side
        .sessions
        .iter()
        .filter(|run| recorded.contains_key(&run.trial))
        .filter_map(|run| Some((run.trial, run_slope(run, metric)?)))
        .collect();
    if fitted.len() == recorded.len() {
        fitted
            .into_iter()
            .map(|(trial, fit)| {
                // One run cannot say whether its series is a line with noise about it or
                // a walk that keeps its noise (memory does): the larger error holds both.
                let estimate = fit.std_error.map(|line| Estimate {
                    value: fit.slope,
                    standard_error: fit.walk_std_error.map_or(line, |walk| walk.max(line)),
                    df: f64::from(fit.points) - 2.0,
                });
                (trial, (fit.slope, estimate))
            })
            .collect()
    } else {
        recorded
            .into_iter()
            .map(|(trial, value)| (trial, (value, None)))
            .collect()
    }
}

/// The test of `metric`'s slopes, candidate − base, on raw values, and whether its error
/// came from the fits; `None` when a side has no slope, or one slope without an error.
pub(crate) fn test(
    metric: Metric,
    base: &Side,
    candidate: &Side,
    interleaved: bool,
) -> Option<(Welch, bool)> {
    let (base, candidate) = (slopes(base, metric), slopes(candidate, metric));
    let values = |slopes: &BTreeMap<u32, (f64, Option<Estimate>)>| -> Vec<f64> {
        slopes.values().map(|(value, _)| *value).collect()
    };
    match (base.len(), candidate.len()) {
        (1, 1) => {
            let (_, base) = base.into_values().next()?;
            let (_, candidate) = candidate.into_values().next()?;
            Some((estimates_difference(base?, candidate?)?, true))
        }
        (b, c) if b >= 2 && c >= 2 => {
            let test = if interleaved && base.keys().eq(candidate.keys()) {
                paired_difference(&values(&base), &values(&candidate))
            } else {
                welch_difference(&values(&base), &values(&candidate))
            };
            Some((test?, false))
        }
        _ => None,
    }
}

/// The verdict on a slope's difference: a change when the interval `(low, high)` excludes
/// 0 and the `difference` is beyond `threshold`, both in the metric's unit;
/// [`Verdict::SingleSample`] without a test.
pub fn judge(
    difference: f64,
    interval: Option<(f64, f64)>,
    threshold: f64,
    direction: Direction,
) -> Verdict {
    let Some((low, high)) = interval else {
        return Verdict::SingleSample;
    };
    if low <= 0.0 && high >= 0.0 {
        return Verdict::WithinNoise;
    }
    let worse = match direction {
        Direction::LowerIsBetter => difference > threshold,
        Direction::HigherIsBetter => difference < -threshold,
    };
    let better = match direction {
        Direction::LowerIsBetter => difference < -threshold,
        Direction::HigherIsBetter => difference > threshold,
    };
    if worse {
        Verdict::Regressed
    } else if better {
        Verdict::Improved
    } else {
        Verdict::WithinNoise
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{CompareOptions, Interleaving, compare};
    use crate::{Sample, record};

    const MIB: f64 = 1024.0 * 1024.0;

    fn session(trial: u32, growth: Fit, lag: Fit) -> SessionRun {
        SessionRun {
            trial,
            dialect: String::new(),
            turns: Vec::new(),
            growth_bytes_per_turn: Some(growth.slope),
            warmup_turns: 1,
            pss_every: 1,
            growth: Some(growth),
            lag: Some(lag),
            render: None,
            checkpoints: Vec::new(),
            idle_seconds: 1.0,
            idle_cpu_share: None,
            idle_monotonic_ns: None,
            idle_output: None,
            startup_output: None,
            pastes: Vec::new(),
        }
    }

    fn fit(slope: f64, std_error: f64) -> Fit {
        Fit {
            slope,
            std_error: Some(std_error),
            walk_std_error: None,
            points: 99,
            curvature_t: None,
        }
    }

    /// A side whose trials' sessions grew by `growth` bytes a turn and `lag` seconds of
    /// echo per turn (signed, as fitted), recorded as the session phase records them:
    /// per 100 turns for the lag, and a shrinking series as 0.
    fn side(sha: &str, slopes: &[(f64, f64)], error: (f64, f64)) -> Side {
        let mut side = Side::new(sha);
        for (trial, &(growth, lag)) in slopes.iter().enumerate() {
            let trial = trial as u32;
            let run = session(trial, fit(growth, error.0), fit(lag, error.1));
            record(
                &mut side,
                Metric::SessionGrowth,
                trial,
                Sample::Value(growth.max(0.0)),
            );
            record(
                &mut side,
                Metric::LagGrowth,
                trial,
                Sample::Value((lag * 100.0).max(0.0)),
            );
            side.sessions.push(run);
        }
        side
    }

    fn interleaved() -> CompareOptions {
        CompareOptions {
            interleaving: Some(Interleaving::Interleaved),
            ..CompareOptions::default()
        }
    }

    fn row(
        comparison: &crate::compare::Comparison,
        metric: Metric,
    ) -> &crate::compare::MetricComparison {
        comparison
            .metrics
            .iter()
            .find(|row| row.metric == metric)
            .unwrap()
    }

    #[test]
    fn a_lag_that_appears_over_a_slope_near_zero_is_a_regression() {
        // docs/spec.md's run before slopes were judged by their difference: base's lag
        // slopes are noise near 0, head's 55 ms per 100 turns. The log-ratio test saw
        // base's 1.2 to 15 ms as a spread of more than 10x and said within noise (p 0.07).
        let base = side(
            "b",
            &[(0.0, 0.000_021), (0.0, 0.000_150), (0.0, 0.000_012)],
            (1.0, 1e-5),
        );
        let head = side(
            "h",
            &[(0.0, 0.000_550), (0.0, 0.000_580), (0.0, 0.000_570)],
            (1.0, 1e-5),
        );
        let comparison = compare(&base, &head, &interleaved());
        let lag = row(&comparison, Metric::LagGrowth);
        assert_eq!(lag.verdict, Verdict::Regressed, "{lag:?}");
        let slope = lag.slope.unwrap();
        // The difference and its interval are in seconds per 100 turns: 56.7 ms − 6.1 ms
        // (the means of the trials' slopes).
        assert!((lag.delta - (0.056_667 - 0.006_1)).abs() < 1e-6, "{lag:?}");
        assert!(slope.low > 0.0 && slope.low < lag.delta && lag.delta < slope.high);
        assert_eq!(slope.threshold, 0.005);
        assert!(!slope.from_fits);
        assert!(lag.ratio.is_nan() && lag.detectable.is_none());
    }

    #[test]
    fn a_planted_leak_regresses_and_an_a_a_comparison_stays_within_noise() {
        // Three trials a side, the demo's own history (~11 KiB a turn) on both; head leaks
        // 2 MiB a turn more.
        let own = [(11_000.0, 0.0), (13_500.0, 0.0), (9_800.0, 0.0)];
        let again = [(12_400.0, 0.0), (10_100.0, 0.0), (11_900.0, 0.0)];
        let leaking: Vec<(f64, f64)> = own.iter().map(|&(g, l)| (g + 2.0 * MIB, l)).collect();
        let base = side("b", &own, (2_000.0, 1e-5));
        let growth = |head: &Side| {
            let comparison = compare(&base, head, &interleaved());
            row(&comparison, Metric::SessionGrowth).clone()
        };
        let leak = growth(&side("h", &leaking, (2_000.0, 1e-5)));
        assert_eq!(leak.verdict, Verdict::Regressed, "{leak:?}");
        assert!((leak.delta - 2.0 * MIB).abs() < 10_000.0, "{leak:?}");
        let same = growth(&side("h", &again, (2_000.0, 1e-5)));
        assert_eq!(same.verdict, Verdict::WithinNoise, "{same:?}");
        let slope = same.slope.unwrap();
        assert!(slope.low < 0.0 && slope.high > 0.0, "{same:?}");
    }

    #[test]
    fn one_trial_a_side_is_judged_by_the_fits_own_errors() {
        let base = side("b", &[(11_000.0, 0.0)], (1_500.0, 1e-5));
        let leak = side("h", &[(2.0 * MIB + 11_000.0, 0.0)], (1_500.0, 1e-5));
        let comparison = compare(&base, &leak, &interleaved());
        let growth = row(&comparison, Metric::SessionGrowth);
        assert_eq!(growth.verdict, Verdict::Regressed, "{growth:?}");
        assert!(growth.slope.unwrap().from_fits);
        assert!(growth.confidence.is_some());
        // The same series again: the fits' errors hold the difference.
        let again = side("h", &[(12_000.0, 0.0)], (1_500.0, 1e-5));
        let comparison = compare(&base, &again, &interleaved());
        assert_eq!(
            row(&comparison, Metric::SessionGrowth).verdict,
            Verdict::WithinNoise
        );
        // Without an error on a fit (two points) there is nothing to judge by.
        let mut bare = side("h", &[(2.0 * MIB, 0.0)], (1_500.0, 1e-5));
        bare.sessions[0].growth = Some(Fit {
            std_error: None,
            ..fit(2.0 * MIB, 0.0)
        });
        let comparison = compare(&base, &bare, &interleaved());
        assert_eq!(
            row(&comparison, Metric::SessionGrowth).verdict,
            Verdict::SingleSample
        );
    }

    /// A side of one trial whose session's memory after each turn (past the warm-up) was
    /// `memory`, fitted as the session phase fits it.
    fn one_session(sha: &str, memory: &[f64]) -> Side {
        let points: Vec<(f64, f64)> = memory
            .iter()
            .enumerate()
            .map(|(turn, &bytes)| (turn as f64 + 1.0, bytes))
            .collect();
        let growth = crate::stats::fit(&points).unwrap();
        let mut side = Side::new(sha);
        record(
            &mut side,
            Metric::SessionGrowth,
            0,
            Sample::Value(growth.slope.max(0.0)),
        );
        side.sessions.push(session(0, growth, fit(0.0, 1e-5)));
        side
    }

    #[test]
    fn one_trial_a_side_does_not_call_a_one_time_free_a_slope() {
        // The demo's own 6 KiB a turn on both sides; head's Python gave back 3 MiB
        // half-way (an A/A run in CI, called improved by the line's errors alone).
        let kib = 1024.0;
        let base: Vec<f64> = (0..9)
            .map(|turn| 34.0 * MIB + 6.0 * kib * turn as f64)
            .collect();
        let freed: Vec<f64> = base
            .iter()
            .enumerate()
            .map(|(turn, &bytes)| if turn < 5 { bytes } else { bytes - 3.0 * MIB })
            .collect();
        let comparison = compare(
            &one_session("b", &base),
            &one_session("h", &freed),
            &interleaved(),
        );
        let growth = row(&comparison, Metric::SessionGrowth);
        assert!(growth.delta < -256.0 * kib, "{growth:?}");
        assert_eq!(growth.verdict, Verdict::WithinNoise, "{growth:?}");
        // A leak of 4 MiB a turn, one reading a turn late, is still a regression.
        let leaking: Vec<f64> = base
            .iter()
            .enumerate()
            .map(|(turn, &bytes)| {
                let late = if turn == 4 { 4.0 * MIB } else { 0.0 };
                bytes + 4.0 * MIB * turn as f64 - late
            })
            .collect();
        let comparison = compare(
            &one_session("b", &base),
            &one_session("h", &leaking),
            &interleaved(),
        );
        let growth = row(&comparison, Metric::SessionGrowth);
        assert_eq!(growth.verdict, Verdict::Regressed, "{growth:?}");
        assert!(growth.slope.unwrap().from_fits);
    }

    #[test]
    fn a_spec_threshold_in_the_unit_decides_what_counts() {
        let base = side(
            "b",
            &[(11_000.0, 0.0), (13_000.0, 0.0), (12_000.0, 0.0)],
            (2_000.0, 1e-5),
        );
        let head = side(
            "h",
            &[(111_000.0, 0.0), (113_000.0, 0.0), (112_000.0, 0.0)],
            (2_000.0, 1e-5),
        );
        // 100 KB a turn more: certain, but under the default 256 KiB a turn.
        let comparison = compare(&base, &head, &interleaved());
        assert_eq!(
            row(&comparison, Metric::SessionGrowth).verdict,
            Verdict::WithinNoise
        );
        let strict = interleaved().with_floor(Metric::SessionGrowth, 50_000.0);
        let comparison = compare(&base, &head, &strict);
        assert_eq!(
            row(&comparison, Metric::SessionGrowth).verdict,
            Verdict::Regressed
        );
    }

    #[test]
    fn a_slope_counts_only_when_its_interval_excludes_zero_and_it_passes_the_threshold() {
        let mib = 1024.0 * 1024.0;
        let threshold = 256.0 * 1024.0;
        let judged = |difference: f64, low: f64, high: f64| {
            judge(
                difference,
                Some((low, high)),
                threshold,
                Direction::LowerIsBetter,
            )
        };
        assert_eq!(judged(2.0 * mib, 1.9 * mib, 2.1 * mib), Verdict::Regressed);
        assert_eq!(
            judged(-2.0 * mib, -2.1 * mib, -1.9 * mib),
            Verdict::Improved
        );
        // Certain, but smaller than the threshold.
        assert_eq!(
            judged(0.1 * mib, 0.05 * mib, 0.15 * mib),
            Verdict::WithinNoise
        );
        // Beyond the threshold, but the interval holds no change.
        assert_eq!(
            judged(2.0 * mib, -0.5 * mib, 4.5 * mib),
            Verdict::WithinNoise
        );
        assert_eq!(
            judge(2.0 * mib, None, threshold, Direction::LowerIsBetter),
            Verdict::SingleSample
        );
    }

    #[test]
    fn latency_and_render_slopes_are_read_per_hundred_turns() {
        let fit = Fit {
            slope: 0.0005,
            std_error: Some(0.0001),
            walk_std_error: None,
            points: 10,
            curvature_t: None,
        };
        let run = SessionRun {
            trial: 0,
            dialect: String::new(),
            turns: Vec::new(),
            growth_bytes_per_turn: None,
            warmup_turns: 1,
            pss_every: 1,
            growth: Some(fit),
            lag: Some(fit),
            render: None,
            checkpoints: Vec::new(),
            idle_seconds: 1.0,
            idle_cpu_share: None,
            idle_monotonic_ns: None,
            idle_output: None,
            startup_output: None,
            pastes: Vec::new(),
        };
        assert_eq!(run_slope(&run, Metric::SessionGrowth), Some(fit));
        let lag = run_slope(&run, Metric::LagGrowth).unwrap();
        assert!((lag.slope - 0.05).abs() < 1e-12);
        assert!((lag.std_error.unwrap() - 0.01).abs() < 1e-12);
        assert_eq!(run_slope(&run, Metric::RenderGrowth), None);
        assert_eq!(run_slope(&run, Metric::Cold), None);
    }
}
