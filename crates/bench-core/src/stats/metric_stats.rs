//! A metric's samples on one side of a result, summarised: its failures, its
//! statistics and its outliers.

use super::Summary;
use crate::metric::Metric;
use crate::result::Side;
use crate::units::Unit;

/// What the trials of one metric on one side add up to.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MetricStats {
    /// Which metric's trials these are.
    pub metric: Metric,
    /// Its unit; every number below except counts is in it.
    pub unit: Unit,
    /// Samples that failed.
    pub errored: usize,
    /// The trials whose sample failed, ascending.
    pub errored_trials: Vec<u32>,
    /// Statistics of the successful samples; `None` when every sample failed.
    pub summary: Option<Summary>,
    /// The trials whose value is an outlier by the modified z-score, ascending.
    pub outlier_trials: Vec<u32>,
}

impl MetricStats {
    /// The statistics of `metric` on `side`; `None` when it has no sample at all.
    pub fn of(side: &Side, metric: Metric) -> Option<MetricStats> {
        let mut samples: Vec<_> = side.metrics.get(&metric)?.iter().collect();
        if samples.is_empty() {
            return None;
        }
        samples.sort_by_key(|sample| sample.trial);
        let errored_trials: Vec<u32> = samples
            .iter()
            .filter(|sample| sample.value.is_none())
            .map(|sample| sample.trial)
            .collect();
        let valued: Vec<(u32, f64)> = samples
            .iter()
            .filter_map(|sample| Some((sample.trial, sample.value?)))
            .collect();
        let values: Vec<f64> = valued.iter().map(|&(_, value)| value).collect();
        let summary = Summary::from_values(&values);
        let outlier_trials = summary
            .iter()
            .flat_map(|summary| summary.outliers.iter().map(|&index| valued[index].0))
            .collect();
        Some(MetricStats {
            metric,
            unit: metric.unit(),
            errored: errored_trials.len(),
            errored_trials,
            summary,
            outlier_trials,
        })
    }

    /// Successful samples.
    pub fn n(&self) -> usize {
        self.summary.as_ref().map_or(0, |summary| summary.n)
    }

    /// The median of the successful samples, when there are any.
    pub fn median(&self) -> Option<f64> {
        self.summary.as_ref().map(|summary| summary.median)
    }
}

/// The statistics of every metric of `side` that has samples, in metric order.
pub fn side_stats(side: &Side) -> Vec<MetricStats> {
    side.metrics
        .keys()
        .filter_map(|&metric| MetricStats::of(side, metric))
        .collect()
}
