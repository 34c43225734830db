//! The test statistics' glue: one metric's values turned into a test (paired, Welch's,
//! or between separate runs with their drift), and the test's numbers into a row.

use super::{
    AloneScale, Change, CompareOptions, DETECTABLE_CAP, Interleaving, MetricComparison, Threshold,
    TrialsForTarget, judge,
};
use crate::metric::{Metric, Nature};
use crate::result::Side;
use crate::stats;
use crate::stats::MetricStats;
use std::collections::BTreeMap;

/// One metric's numbers before the family's adjustment gives its verdict.
pub(super) struct Measured {
    pub(super) metric: Metric,
    pub(super) base: MetricStats,
    pub(super) candidate: MetricStats,
    /// `candidate median - base median`.
    pub(super) delta: f64,
    /// `candidate median / base median`.
    pub(super) ratio: f64,
    /// The test, for a noisy metric with two samples or more a side, or a slope's.
    pub(super) test: Option<stats::Welch>,
    /// For a slope metric, whether its test's error came from the two fits.
    pub(super) slope_from_fits: Option<bool>,
    /// For a metric tested on duet pairs, the geometric mean of base's values from its
    /// trials alone and how many there were: the row is shown relative to it.
    pub(super) alone_base: Option<(f64, usize)>,
}

/// The metric's values of interleaved sides as pairs of the same trial (base, candidate),
/// in trial order; `None` unless every trial of either side has exactly one value and the
/// other side that trial too (then the paired test applies; otherwise Welch's).
pub(super) fn trial_pairs(
    base: &Side,
    candidate: &Side,
    metric: Metric,
) -> Option<(Vec<f64>, Vec<f64>)> {
    let by_trial = |side: &Side| -> Option<BTreeMap<u32, f64>> {
        let mut values = BTreeMap::new();
        for sample in side.metrics.get(&metric).into_iter().flatten() {
            if let Some(value) = sample.value
                && values.insert(sample.trial, value).is_some()
            {
                return None;
            }
        }
        Some(values)
    };
    let (base, candidate) = (by_trial(base)?, by_trial(candidate)?);
    if base.len() < 2 || !base.keys().eq(candidate.keys()) {
        return None;
    }
    Some((
        base.values().copied().collect(),
        candidate.values().copied().collect(),
    ))
}

/// One metric's values on both sides, and as trial pairs when the test may pair them.
pub(super) struct SideValues {
    pub(super) base: Vec<f64>,
    pub(super) candidate: Vec<f64>,
    pub(super) pairs: Option<(Vec<f64>, Vec<f64>)>,
}

impl Measured {
    pub(super) fn new(
        metric: Metric,
        base: MetricStats,
        candidate: MetricStats,
        values: &SideValues,
        interleaving: Interleaving,
        options: &CompareOptions,
    ) -> Measured {
        // `compare` only gets here with samples on both sides, so both medians exist.
        let (ratio, delta) = match (base.median(), candidate.median()) {
            (Some(base_median), Some(candidate_median)) => (
                ratio_of(base_median, candidate_median),
                candidate_median - base_median,
            ),
            _ => (f64::NAN, f64::NAN),
        };
        let noisy = metric.nature() != Nature::Exact && base.n().min(candidate.n()) >= 2;
        // Separate runs each carry their own offset, which no count of trials
        // averages away: the test counts it as variance.
        let drift = if interleaving == Interleaving::Interleaved {
            0.0
        } else {
            options.drift.of(metric.nature())
        };
        let test = noisy
            .then(|| match &values.pairs {
                Some((base_pairs, candidate_pairs)) => stats::paired(base_pairs, candidate_pairs),
                None => stats::welch_between_runs(&values.base, &values.candidate, drift),
            })
            .flatten();
        Measured {
            metric,
            base,
            candidate,
            delta,
            ratio,
            test,
            slope_from_fits: None,
            alone_base: None,
        }
    }

    /// The numbers of a duet-tested row before they are made the program's own: `None`
    /// without a test or without base values alone.
    fn alone_scale(&self, centers: Option<(f64, f64)>, ratio: f64) -> Option<AloneScale> {
        let (base_alone, alone_trials) = self.alone_base?;
        let (duet_base, duet_candidate) = centers?;
        (base_alone.is_finite() && base_alone > 0.0 && duet_base > 0.0).then_some(AloneScale {
            base_alone,
            alone_trials,
            duet_base,
            duet_candidate,
            duet_ratio: ratio,
        })
    }

    pub(super) fn judged(
        self,
        p_adjusted: Option<f64>,
        level: Option<f64>,
        tested: usize,
        interleaving: Interleaving,
        options: &CompareOptions,
    ) -> MetricComparison {
        let metric = self.metric;
        if let Some(threshold) = options.slope_threshold(metric) {
            return self.judged_slope(p_adjusted, level, tested, threshold, options);
        }
        let nature = metric.nature();
        let direction = metric.direction();
        let floor = options.floor(metric);
        let exact = nature == Nature::Exact;
        // The row shows the test's estimate and its interval at the level Holm's
        // procedure judged the metric at, and the verdict is read from exactly these
        // numbers, so the two can never disagree (docs/verdicts.md, "One verdict").
        let judged_test = self.test.zip(level);
        let (ratio, ci_low, ci_high) = match judged_test {
            Some((test, level)) => {
                let (low, high) = test.interval(level);
                (test.estimate(), low, high)
            }
            None => (self.ratio, self.ratio, self.ratio),
        };
        let centers = judged_test.map(|(test, _)| test.centers());
        let delta = centers.map_or(self.delta, |(base, candidate)| candidate - base);
        // A duet's pairs: their difference is about what a person would see alone, their
        // ratio about half of it (both programs shared one CPU), so the change is that
        // difference over base alone. The map is increasing, so the interval excludes no
        // change exactly when the pairs' does: the test is still the pairs'.
        // That model is a start's, both programs ready once their CPU is done; a kernel
        // call, a ui step or a turn of a duet is measured inside programs that both keep
        // running, so its row keeps the pairs' ratio on base alone (the additive map gave
        // an interrupt of 346 µs alone and -398 µs in the pairs a candidate of -52 µs).
        let alone = self.alone_scale(centers, ratio);
        let additive = alone.is_some() && metric.phase() == crate::Phase::Measure;
        let scale = match alone {
            Some(alone) if additive => alone.duet_base / alone.base_alone,
            _ => 1.0,
        };
        // No change maps to no change and the map is increasing; a ratio is never below 0.
        let scaled = |ratio: f64| (1.0 + scale * (ratio - 1.0)).max(0.0);
        let (ratio, ci_low, ci_high) = (scaled(ratio), scaled(ci_low), scaled(ci_high));
        let (centers, delta) = match alone {
            Some(alone) if additive => (Some((alone.base_alone, alone.base_alone + delta)), delta),
            Some(alone) => (
                Some((alone.base_alone, alone.base_alone * ratio)),
                alone.base_alone * (ratio - 1.0),
            ),
            None => (centers, delta),
        };
        let change = Change {
            delta,
            ratio,
            samples: self.base.n().min(self.candidate.n()),
            significant: judged_test.is_some() && (ci_low > 1.0 || ci_high < 1.0),
        };
        let threshold = Threshold {
            fraction: floor,
            bytes: options.exact_bytes,
        };
        let detectable = (!exact).then(|| {
            // Bonferroni's share of alpha: what the first step of Holm's procedure
            // asks of the most significant metric, so a bound for all of them.
            let level = options.alpha / tested.max(1) as f64;
            let statistical = self
                .test
                .map_or(f64::INFINITY, |test| scale * test.detectable_change(level));
            if statistical.is_finite() {
                statistical.clamp(floor.min(DETECTABLE_CAP), DETECTABLE_CAP)
            } else {
                statistical
            }
        });
        let target = 2.0 * floor;
        // Between separate runs the drift, which more trials do not shrink, sets what
        // can be detected: the answer there is `ab`, not a count.
        let trials_for_target = self
            .test
            .filter(|_| interleaving == Interleaving::Interleaved)
            .filter(|_| detectable.is_some_and(|d| d.is_finite() && d > target))
            .map(|test| TrialsForTarget {
                change: target,
                trials: test.trials_for(
                    target / scale,
                    options.alpha / tested.max(1) as f64,
                    crate::result::MAX_TRIAL + 1,
                ),
            });
        MetricComparison {
            metric,
            unit: metric.unit(),
            direction,
            nature,
            floor,
            floor_bytes: exact.then_some(options.exact_bytes),
            verdict: judge(change, nature, threshold, direction),
            base: self.base,
            candidate: self.candidate,
            delta,
            base_center: centers.map(|(base, _)| base),
            candidate_center: centers.map(|(_, candidate)| candidate),
            ratio,
            ci_low,
            ci_high,
            confidence: level
                .filter(|_| judged_test.is_some())
                .map(|level| 1.0 - level),
            p_value: self.test.map(|test| test.p_value),
            p_adjusted,
            detectable,
            slope: None,
            trials_for_target,
            alone,
        }
    }

    /// [`Measured::judged`] for a slope: the difference, its interval and threshold in
    /// the metric's unit ([`SlopeChange`](crate::stats::SlopeChange)).
    fn judged_slope(
        self,
        p_adjusted: Option<f64>,
        level: Option<f64>,
        tested: usize,
        threshold: f64,
        options: &CompareOptions,
    ) -> MetricComparison {
        let metric = self.metric;
        let judged_test = self.test.zip(level);
        let centers = self.test.map(|test| test.centers());
        let delta = centers.map_or(self.delta, |(base, candidate)| candidate - base);
        let interval = judged_test.map(|(test, level)| test.difference_interval(level));
        let (low, high) = interval.unwrap_or((delta, delta));
        let detectable = self.test.map_or(f64::INFINITY, |test| {
            test.detectable_difference(options.alpha / tested.max(1) as f64)
        });
        MetricComparison {
            metric,
            unit: metric.unit(),
            direction: metric.direction(),
            nature: metric.nature(),
            floor: threshold,
            floor_bytes: None,
            verdict: crate::stats::slope_change::judge(
                delta,
                interval,
                threshold,
                metric.direction(),
            ),
            base: self.base,
            candidate: self.candidate,
            delta,
            base_center: centers.map(|(base, _)| base),
            candidate_center: centers.map(|(_, candidate)| candidate),
            ratio: f64::NAN,
            ci_low: f64::NAN,
            ci_high: f64::NAN,
            confidence: level
                .filter(|_| judged_test.is_some())
                .map(|level| 1.0 - level),
            p_value: self.test.map(|test| test.p_value),
            p_adjusted,
            detectable: None,
            slope: Some(crate::stats::SlopeChange {
                threshold,
                low,
                high,
                detectable,
                from_fits: self.slope_from_fits.unwrap_or(false),
            }),
            trials_for_target: None,
            alone: None,
        }
    }
}

/// `candidate / base`, with 0/0 = 1 (no change) and x/0 = infinity.
fn ratio_of(base: f64, candidate: f64) -> f64 {
    if base == 0.0 {
        if candidate == 0.0 { 1.0 } else { f64::INFINITY }
    } else {
        candidate / base
    }
}
