//! What a comparison says of each metric: a measured row, a metric missing on a side,
//! and the failed samples.

use super::Verdict;
use crate::metric::{Direction, Metric, Nature};
use crate::result::{Role, Side};
use crate::stats::MetricStats;
use crate::units::Unit;

/// One metric measured on both sides.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MetricComparison {
    /// Which metric the row compares.
    pub metric: Metric,
    /// The unit of every number in the row except counts and ratios.
    pub unit: Unit,
    /// Which way it improves.
    pub direction: Direction,
    /// What kind of number it is, which decided the verdict.
    pub nature: Nature,
    /// The practical threshold the change was judged against, as a fraction.
    pub floor: f64,
    /// The byte part of the threshold, for an exact metric.
    pub floor_bytes: Option<f64>,
    /// The base side's statistics.
    pub base: MetricStats,
    /// The candidate side's statistics.
    pub candidate: MetricStats,
    /// The change in the metric's unit: `candidate_center − base_center` for a tested
    /// metric, else `candidate median - base median`.
    pub delta: f64,
    /// For a tested metric, what the test compares of the base, in the metric's unit:
    /// the geometric mean of its values (over the pairs, for the paired test; the
    /// mean when some value is not positive). The tables show it, not the median, so
    /// that base, candidate, delta, change and interval are one test's numbers.
    pub base_center: Option<f64>,
    /// The same for the candidate.
    pub candidate_center: Option<f64>,
    /// The change as a ratio candidate / base. For a tested metric the test's own
    /// estimate ([`crate::stats::Welch::estimate`]: the ratio of geometric means, or
    /// for pairs the geometric mean of their ratios), the centre of the interval;
    /// otherwise `candidate median / base median`, 1 when both are 0, infinite
    /// (`null` in JSON) when only the base is 0.
    pub ratio: f64,
    /// Lower end of the test's confidence interval of the ratio, at
    /// [`confidence`](Self::confidence); the ratio itself without a test.
    pub ci_low: f64,
    /// Upper end of the interval.
    pub ci_high: f64,
    /// The confidence of the interval: 1 − the level Holm's procedure judged this
    /// metric at ([`crate::stats::holm_levels`]; 0.99 for the first of 5 tested
    /// metrics at 5%). The verdict is read from this interval: a change is there
    /// when it excludes 1. `None` without a test (sizes, a single sample).
    pub confidence: Option<f64>,
    /// The two-sided p-value of Welch's t-test on the log values
    /// ([`crate::stats::welch`]), for a noisy metric with two samples or more a side.
    pub p_value: Option<f64>,
    /// The p-value after Holm's adjustment over every tested metric: the change is
    /// there when this is at most [`CompareOptions::alpha`](crate::compare::CompareOptions::alpha).
    pub p_adjusted: Option<f64>,
    /// The smallest relative change (0.06 = ±6%) this run could have detected
    /// (80% power), never below [`floor`](Self::floor) and never above
    /// [`DETECTABLE_CAP`](crate::compare::DETECTABLE_CAP) (read "over ±100%"); infinite when the trials are too few
    /// for any verdict. `None` for exact metrics, where every byte shows.
    pub detectable: Option<f64>,
    /// For a slope metric ([`Metric::is_slope`]), how its difference was judged, in its
    /// unit: then [`ratio`](Self::ratio), [`ci_low`](Self::ci_low) and
    /// [`ci_high`](Self::ci_high) are NaN (`null` in JSON), [`floor`](Self::floor) is the
    /// threshold in the metric's unit and [`detectable`](Self::detectable) is `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slope: Option<crate::stats::SlopeChange>,
    /// When this interleaved run could not detect twice the threshold (the change
    /// `ab --trials auto` waits for unless told otherwise), how many trials a side the
    /// same spread would need to; `None` when it could, for an exact metric or one
    /// without a test, and between separate runs (where the drift between the runs,
    /// not the trials, limits what can be detected).
    pub trials_for_target: Option<TrialsForTarget>,
    /// For a metric tested on duet pairs (both sides at the same moment on one CPU), how
    /// the pairs' test became the program's own numbers: base above is base alone (its
    /// trials alone); for a start, candidate is base alone plus the pairs' difference and
    /// the change, its interval and "could detect" are relative to base alone; for the
    /// other duet metrics, candidate is base alone times the pairs' ratio, which the
    /// change keeps ([`AloneScale`]). `None` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alone: Option<AloneScale>,
    /// The conclusion.
    pub verdict: Verdict,
}

/// A duet-tested row's numbers before they were made the program's own
/// ([`MetricComparison::alone`]). In a duet both programs share one CPU from the same
/// moment: a base that needs B of CPU ends near 2B, a head that needs B + d near 2B + d,
/// so the pairs' difference is about d (what a person would see alone) while their ratio
/// is about half the change alone. The change shown is that difference over base alone.
/// That holds for a start (the measure phase's metrics); a kernel call, ui step or turn
/// of a duet keeps the pairs' ratio, shown on base alone (candidate = base alone × ratio).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct AloneScale {
    /// The geometric mean of base's values from its trials alone, in the metric's unit.
    pub base_alone: f64,
    /// How many trials alone it is from.
    pub alone_trials: usize,
    /// The pairs' base centre (the paired test's), in the metric's unit.
    pub duet_base: f64,
    /// The pairs' candidate centre.
    pub duet_candidate: f64,
    /// The pairs' ratio, candidate / base (the test's estimate).
    pub duet_ratio: f64,
}

/// The trials a side a metric's spread needs to detect a target change
/// ([`crate::stats::Welch::trials_for`]).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct TrialsForTarget {
    /// The target, as a fraction (0.06 = ±6%).
    pub change: f64,
    /// The trials a side (pairs when paired); `None` when more than a result holds
    /// ([`crate::MAX_TRIAL`] + 1) would be needed.
    pub trials: Option<u32>,
}

impl MetricComparison {
    /// The relative change `ratio - 1` (0.35 = 35% larger).
    pub fn change(&self) -> f64 {
        self.ratio - 1.0
    }
}

/// A metric with samples on at most one side, or with no successful sample on one side.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MissingMetric {
    /// Which metric is missing a side.
    pub metric: Metric,
    /// The base side's statistics, when it has samples.
    pub base: Option<MetricStats>,
    /// The candidate side's statistics, when it has samples.
    pub candidate: Option<MetricStats>,
}

impl MissingMetric {
    /// The sides without a successful sample.
    pub fn missing_on(&self) -> Vec<Role> {
        let lacks = |stats: &Option<MetricStats>| stats.as_ref().is_none_or(|s| s.n() == 0);
        let mut roles = Vec::new();
        if lacks(&self.base) {
            roles.push(Role::Base);
        }
        if lacks(&self.candidate) {
            roles.push(Role::Candidate);
        }
        roles
    }
}

/// A failed sample, for listing.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FailedSample {
    /// Which metric the sample belonged to.
    pub metric: Metric,
    /// The trial it failed in.
    pub trial: u32,
    /// Why it failed.
    pub error: String,
}

/// The failed samples of `side`, in metric then trial order.
pub fn failed_samples(side: &Side) -> Vec<FailedSample> {
    let mut failed = Vec::new();
    for (&metric, samples) in &side.metrics {
        let mut errored: Vec<_> = samples
            .iter()
            .filter_map(|sample| Some((sample.trial, sample.error.as_ref()?)))
            .collect();
        errored.sort_by_key(|&(trial, _)| trial);
        for (trial, error) in errored {
            failed.push(FailedSample {
                metric,
                trial,
                error: error.clone(),
            });
        }
    }
    failed
}
