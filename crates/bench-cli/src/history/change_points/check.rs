//! Is a new result a change against the recent series on the same testbed?
//!
//! A change-point search cannot place a change at the very last point (a segment needs a few
//! points on each side), so a new result is judged as Conbench does, by a look-back:
//! on the log scale, the new median against a prediction interval from the last
//! [`Settings::lookback`] points of its series (same target, branch and testbed):
//! `mean ± t(1-α/2, n-1) · sd · √(1 + 1/n)`. A change must also reach the metric's
//! practical threshold (3% for times), as `compare` requires. The metrics checked are one
//! family: their p-values are adjusted by Holm's step-down method, so that a result of 39
//! unchanged metrics is called regressed in at most `alpha` of checks, not in about a
//! third of them (39 tests at 1% each), which would fail CI on main every few commits.

use crate::history::series::points::{Series, series};
use crate::history::store::Stored;
use crate::history::store::record::Record;
use bench_core::stats::{self, median_of_sorted, t_two_sided};
use bench_core::{Direction, Metric};

/// How a check decides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// How many of the most recent points the new result is compared with.
    pub lookback: usize,
    /// The fewest earlier points a check needs.
    pub min_points: usize,
    /// The two-sided level: a change needs a p-value at most this.
    pub alpha: f64,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            lookback: 30,
            min_points: 5,
            alpha: 0.01,
        }
    }
}

/// What a check says about one metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Worse than the series, beyond noise and the threshold.
    Regressed,
    /// Better than the series, beyond noise and the threshold.
    Improved,
    /// Within the series' noise or below the threshold.
    Unchanged,
    /// Too few earlier points on this testbed to say.
    TooFew,
}

impl Outcome {
    /// The word shown.
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Regressed => "regressed",
            Outcome::Improved => "improved",
            Outcome::Unchanged => "unchanged",
            Outcome::TooFew => "too few points",
        }
    }
}

/// One metric's check.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricCheck {
    /// The metric of the new result that was checked.
    pub metric: Metric,
    /// Earlier points compared with.
    pub points: usize,
    /// The new result's median.
    pub median: f64,
    /// The series' typical value (geometric mean of the recent medians); NaN with no points.
    pub baseline: f64,
    /// The change of the new median over the baseline, as a fraction.
    pub change: f64,
    /// The p-value of the new point under the series' noise; NaN when not computed.
    pub p_value: f64,
    /// The p-value adjusted by Holm over the metrics checked together; the verdict's.
    pub adjusted_p: f64,
    /// The verdict.
    pub outcome: Outcome,
}

/// Checks the metrics of `record` named in `only` (every one when empty) against the
/// earlier records in `history` (the record itself, when stored, is left out by
/// `own_id`), as one family (`holm`).
pub fn check(
    record: &Record,
    own_id: Option<i64>,
    history: &[Stored],
    only: &[Metric],
    settings: &Settings,
) -> Vec<MetricCheck> {
    let earlier: Vec<Stored> = history
        .iter()
        .filter(|stored| Some(stored.id) != own_id)
        .filter(|stored| {
            let other = &stored.record;
            other.target == record.target
                && other.branch == record.branch
                && other.testbed == record.testbed
        })
        .cloned()
        .collect();
    let checks = record
        .samples
        .iter()
        .filter(|(metric, _)| only.is_empty() || only.contains(metric))
        .map(|(&metric, samples)| {
            let mut values: Vec<f64> = samples.iter().map(|&(_, v)| v).collect();
            values.sort_by(f64::total_cmp);
            let median = median_of_sorted(&values);
            // The series of the record's own schedule: a duet's values are judged
            // against a duet's, values measured alone against values measured alone.
            let duet = record.duet_values(metric);
            let recent = series(&earlier, metric)
                .into_iter()
                .find(|series| series.duet == duet)
                .map(|series: Series| {
                    let medians = series.medians();
                    medians[medians.len().saturating_sub(settings.lookback)..].to_vec()
                })
                .unwrap_or_default();
            judge(metric, median, &recent, settings)
        })
        .collect();
    holm(checks, settings.alpha)
}

/// Judges `checks` as one family: each verdict from its p-value adjusted by Holm over
/// every check that had enough points.
pub(crate) fn holm(mut checks: Vec<MetricCheck>, alpha: f64) -> Vec<MetricCheck> {
    let p_values: Vec<Option<f64>> = checks
        .iter()
        .map(|c| (c.outcome != Outcome::TooFew).then_some(c.p_value))
        .collect();
    for (checked, adjusted) in checks.iter_mut().zip(stats::holm(&p_values)) {
        if let Some(adjusted) = adjusted {
            checked.adjusted_p = adjusted;
            checked.outcome = verdict(checked.metric, checked.change, adjusted, alpha);
        }
    }
    checks
}

/// The verdict on a change with p-value `p`: beyond noise and the practical threshold.
fn verdict(metric: Metric, change: f64, p: f64, alpha: f64) -> Outcome {
    let beyond = p <= alpha && change.abs() >= metric.nature().default_threshold();
    let worse = match metric.direction() {
        Direction::LowerIsBetter => change > 0.0,
        Direction::HigherIsBetter => change < 0.0,
    };
    match (beyond, worse) {
        (false, _) => Outcome::Unchanged,
        (true, true) => Outcome::Regressed,
        (true, false) => Outcome::Improved,
    }
}

/// The verdict on a new `median` after the `recent` medians, alone (not adjusted for
/// other metrics checked beside it: [`holm`] does that).
pub(crate) fn judge(
    metric: Metric,
    median: f64,
    recent: &[f64],
    settings: &Settings,
) -> MetricCheck {
    let n = recent.len();
    let logged = median > 0.0 && recent.iter().all(|v| *v > 0.0);
    let scale = |v: f64| if logged { v.ln() } else { v };
    let logs: Vec<f64> = recent.iter().map(|&v| scale(v)).collect();
    let mean = if n > 0 {
        logs.iter().sum::<f64>() / n as f64
    } else {
        f64::NAN
    };
    let baseline = if logged { mean.exp() } else { mean };
    let change = if baseline != 0.0 {
        median / baseline - 1.0
    } else {
        f64::NAN
    };
    let mut checked = MetricCheck {
        metric,
        points: n,
        median,
        baseline,
        change,
        p_value: f64::NAN,
        adjusted_p: f64::NAN,
        outcome: Outcome::TooFew,
    };
    if n < settings.min_points.max(2) {
        return checked;
    }
    let sd = (logs.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
    let distance = scale(median) - mean;
    let t = distance / (sd * (1.0 + 1.0 / n as f64).sqrt());
    // A series without noise (an exact size): any difference is a change.
    let p_value = if sd > 0.0 {
        t_two_sided(t, (n - 1) as f64)
    } else if distance.abs() > 1e-12 {
        0.0
    } else {
        1.0
    };
    checked.p_value = p_value;
    checked.adjusted_p = p_value;
    checked.outcome = verdict(metric, change, p_value, settings.alpha);
    checked
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUIET: [f64; 10] = [0.40, 0.41, 0.39, 0.40, 0.42, 0.40, 0.38, 0.41, 0.40, 0.39];

    #[test]
    fn a_much_slower_start_is_a_regression() {
        let checked = judge(Metric::Cold, 0.52, &QUIET, &Settings::default());
        assert_eq!(checked.outcome, Outcome::Regressed);
        assert!((checked.change - 0.3).abs() < 0.02, "{checked:?}");
    }

    #[test]
    fn a_value_inside_the_noise_is_unchanged() {
        let checked = judge(Metric::Cold, 0.41, &QUIET, &Settings::default());
        assert_eq!(checked.outcome, Outcome::Unchanged);
    }

    #[test]
    fn a_much_faster_start_is_an_improvement() {
        let checked = judge(Metric::Cold, 0.30, &QUIET, &Settings::default());
        assert_eq!(checked.outcome, Outcome::Improved);
    }

    #[test]
    fn metrics_checked_together_are_one_family() {
        // Alone, a point at p = 0.004 is a regression at 1%; beside 38 other metrics,
        // Holm asks p <= 0.01 / 39 of the smallest, and it is within the family's noise.
        let one = judge(Metric::Cold, 0.452, &QUIET, &Settings::default());
        assert!(one.p_value < 0.01 && one.p_value > 0.01 / 39.0, "{one:?}");
        assert_eq!(one.outcome, Outcome::Regressed);
        let quiet = judge(Metric::Warm, 0.40, &QUIET, &Settings::default());
        let mut family = vec![one.clone()];
        family.extend(std::iter::repeat_n(quiet, 38));
        let judged = holm(family, 0.01);
        assert_eq!(judged[0].outcome, Outcome::Unchanged, "{:?}", judged[0]);
        assert!(judged[0].adjusted_p > judged[0].p_value);
        // A clear regression stays one in the family.
        let clear = judge(Metric::Cold, 0.52, &QUIET, &Settings::default());
        let judged = holm(vec![clear; 39], 0.01);
        assert_eq!(judged[0].outcome, Outcome::Regressed);
    }

    #[test]
    fn a_short_series_says_too_few() {
        let checked = judge(Metric::Cold, 0.9, &QUIET[..3], &Settings::default());
        assert_eq!(checked.outcome, Outcome::TooFew);
    }

    #[test]
    fn a_duet_is_judged_against_duets_not_against_starts_alone() {
        use crate::history::store::record::tests::{duet_result, result};
        use crate::history::store::tests::stored;
        // The demo's cold start: about 0.12 s alone, 0.185 s in a duet.
        let alone: Vec<_> = (0..8)
            .map(|i| {
                result(
                    "demo",
                    &format!("r{i}"),
                    i,
                    &[0.120 + 0.001 * (i % 3) as f64; 3],
                )
            })
            .collect();
        let duet = Record::of(
            &duet_result("demo", "new", 100, &[0.12, 0.185, 0.186]),
            None,
            "main",
        )
        .unwrap();
        let cold = |history: &[Stored]| {
            check(&duet, None, history, &[Metric::Cold], &Settings::default())[0].clone()
        };
        // Against runs alone it would read +55%, a regression of the schedule.
        assert_eq!(cold(&stored(&alone)).outcome, Outcome::TooFew);
        let mut both = alone;
        both.extend((0..8).map(|i| {
            let start = 0.184 + 0.001 * (i % 3) as f64;
            duet_result("demo", &format!("d{i}"), 50 + i, &[0.12, start, start])
        }));
        let judged = cold(&stored(&both));
        assert_eq!(
            (judged.outcome, judged.points),
            (Outcome::Unchanged, 8),
            "{judged:?}"
        );
    }
}
