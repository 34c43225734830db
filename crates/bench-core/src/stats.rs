//! Statistics over the samples of one metric.
//!
//! Outliers follow hyperfine's rule: the modified z-score
//! `0.6745 * (x - median) / MAD` beyond ±3.5 marks a sample as an outlier, among
//! at least [`OUTLIER_MIN_SAMPLES`] samples.
//!
//! # Ties and resolution
//! With most samples equal the MAD is 0, and hyperfine's rule makes any other value
//! an infinitely far outlier, even `0.020000000000000004` next to `0.02`. So the
//! MAD the score divides by is never below a tolerance: the metric's resolution
//! (a clock tick for CPU time) or, at least, [`RELATIVE_TOLERANCE`] of the median,
//! which is far above a double's rounding error and far below anything measured.

use crate::metric::Metric;
use crate::result::Side;
use crate::units::Unit;

/// Summary statistics of a set of finite samples, in the samples' unit.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Summary {
    /// Number of samples with a value.
    pub n: usize,
    /// Smallest sample.
    pub min: f64,
    /// Median (mean of the two middle samples for an even count).
    pub median: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n - 1 in the denominator); 0 for a single sample.
    pub std_dev: f64,
    /// Median absolute deviation from the median (unscaled).
    pub mad: f64,
    /// 95th percentile, linearly interpolated between closest ranks.
    pub p95: f64,
    /// Largest sample.
    pub max: f64,
    /// Indices (into the input slice) of samples whose modified z-score exceeds 3.5.
    pub outliers: Vec<usize>,
}

/// The modified z-score beyond which hyperfine calls a sample an outlier.
pub const OUTLIER_Z: f64 = 3.5;

/// The fewest samples among which one is called an outlier. With fewer, the median and
/// the MAD are decided by one or two samples: of three, the MAD is the smaller distance
/// to the median, and the farther sample is marked whenever it is four times farther,
/// which is how three samples usually fall, not a sign that one of them went wrong.
pub const OUTLIER_MIN_SAMPLES: usize = 5;

/// The smallest spread, relative to the median, that the outlier rule takes as
/// real: differences below it are floating-point rounding, not measurements.
pub const RELATIVE_TOLERANCE: f64 = 1e-9;

impl Summary {
    /// Summarizes `values`; `None` when there are none. Non-finite values are ignored.
    pub fn from_values(values: &[f64]) -> Option<Summary> {
        Summary::with_resolution(values, 0.0)
    }

    /// Summarizes `values` measured at `resolution` (in their unit, 0 when
    /// continuous): the outlier rule's MAD is at least the resolution, so a sample
    /// one step from a run of equal samples is not an outlier.
    pub fn with_resolution(values: &[f64], resolution: f64) -> Option<Summary> {
        let finite: Vec<(usize, f64)> = values
            .iter()
            .copied()
            .enumerate()
            .filter(|(_, v)| v.is_finite())
            .collect();
        if finite.is_empty() {
            return None;
        }
        let mut sorted: Vec<f64> = finite.iter().map(|&(_, v)| v).collect();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let std_dev = if n > 1 {
            (sorted.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let median = median_of_sorted(&sorted);
        let mut deviations: Vec<f64> = sorted.iter().map(|v| (v - median).abs()).collect();
        deviations.sort_by(f64::total_cmp);
        let mad = median_of_sorted(&deviations);
        let spread = mad.max(resolution).max(RELATIVE_TOLERANCE * median.abs());
        let outliers = finite
            .iter()
            .filter(|_| n >= OUTLIER_MIN_SAMPLES)
            .filter(|&&(_, v)| modified_z_score(v, median, spread).abs() > OUTLIER_Z)
            .map(|&(index, _)| index)
            .collect();
        Some(Summary {
            n,
            min: sorted[0],
            median,
            mean,
            std_dev,
            mad,
            p95: percentile_of_sorted(&sorted, 0.95),
            max: sorted[n - 1],
            outliers,
        })
    }
}

/// What the trials of one metric on one side add up to.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MetricStats {
    /// The metric.
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

/// The median of an already sorted, non-empty slice.
pub fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// The `q` quantile (0..=1) of an already sorted, non-empty slice, interpolating
/// linearly between closest ranks.
pub fn percentile_of_sorted(sorted: &[f64], q: f64) -> f64 {
    let rank = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let low = rank.floor() as usize;
    let high = rank.ceil() as usize;
    sorted[low] + (sorted[high] - sorted[low]) * (rank - low as f64)
}

/// Hyperfine's modified z-score; 0 when the MAD is 0 and the value is the median,
/// infinite when the MAD is 0 and it is not.
pub fn modified_z_score(value: f64, median: f64, mad: f64) -> f64 {
    let distance = value - median;
    if mad == 0.0 {
        return if distance == 0.0 {
            0.0
        } else {
            f64::INFINITY.copysign(distance)
        };
    }
    0.6745 * distance / mad
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_known_samples() {
        let s = Summary::from_values(&[1.0, 2.0, 3.0, 4.0, 100.0]).unwrap();
        assert_eq!(s.n, 5);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 100.0);
        assert_eq!(s.median, 3.0);
        assert_eq!(s.mean, 22.0);
        assert_eq!(s.mad, 1.0);
        assert_eq!(s.outliers, vec![4]);
        assert!((s.std_dev - 43.617_656_975).abs() < 1e-6);
        assert!((s.p95 - 80.8).abs() < 1e-9);
    }

    #[test]
    fn metric_stats_count_errors_and_name_outlier_trials() {
        use crate::trial::{Sample, record};
        let mut side = Side::new("a");
        for (trial, value) in [(3, 1.0), (0, 1.1), (1, 0.9), (4, 1.0), (5, 9.0)] {
            record(&mut side, Metric::Cold, trial, Sample::Value(value));
        }
        record(
            &mut side,
            Metric::Cold,
            2,
            Sample::Error("timed out".into()),
        );
        let stats = MetricStats::of(&side, Metric::Cold).unwrap();
        assert_eq!((stats.n(), stats.errored), (5, 1));
        assert_eq!(stats.errored_trials, [2]);
        assert_eq!(stats.median(), Some(1.0));
        assert_eq!(stats.outlier_trials, [5]);
        assert!(MetricStats::of(&side, Metric::Warm).is_none());

        record(
            &mut side,
            Metric::Rss,
            0,
            Sample::Error("no processes".into()),
        );
        let rss = MetricStats::of(&side, Metric::Rss).unwrap();
        assert_eq!((rss.n(), rss.errored, rss.median()), (0, 1, None));
        let all: Vec<Metric> = side_stats(&side).iter().map(|s| s.metric).collect();
        assert_eq!(all, [Metric::Cold, Metric::Rss]);
    }

    #[test]
    fn fewer_than_five_samples_mark_no_outlier() {
        // Of three, the farther sample is 4 MADs away: hyperfine's rule would mark it.
        assert!(
            Summary::from_values(&[10.0, 11.0, 14.0])
                .unwrap()
                .outliers
                .is_empty()
        );
        assert!(
            Summary::from_values(&[1.0, 1.0, 1.0, 9.0])
                .unwrap()
                .outliers
                .is_empty()
        );
        assert_eq!(
            Summary::from_values(&[1.0, 1.0, 1.2, 1.1, 9.0])
                .unwrap()
                .outliers,
            [4]
        );
    }

    #[test]
    fn floating_point_rounding_is_not_an_outlier() {
        // The values `report` once flagged: 0.02 summed three ways.
        let values = [0.02, 0.020000000000000004, 0.019999999999999997, 0.02, 0.02];
        let s = Summary::from_values(&values).unwrap();
        assert_eq!(s.mad, 0.0);
        assert!(s.outliers.is_empty(), "{:?}", s.outliers);
        // A real difference among equal values still is one.
        let s = Summary::from_values(&[0.02, 0.02, 0.02, 0.02, 0.025]).unwrap();
        assert_eq!(s.outliers, [4]);
    }

    #[test]
    fn one_step_of_resolution_is_not_an_outlier() {
        let ticks = [0.02, 0.02, 0.02, 0.02, 0.03];
        assert_eq!(Summary::from_values(&ticks).unwrap().outliers, [4]);
        assert!(
            Summary::with_resolution(&ticks, 0.01)
                .unwrap()
                .outliers
                .is_empty()
        );
        let far = [0.02, 0.02, 0.02, 0.02, 0.20];
        assert_eq!(Summary::with_resolution(&far, 0.01).unwrap().outliers, [4]);
    }

    #[test]
    fn all_zero_samples_have_no_outlier_but_a_nonzero_one_is() {
        assert!(
            Summary::from_values(&[0.0, 0.0, 0.0])
                .unwrap()
                .outliers
                .is_empty()
        );
        assert_eq!(
            Summary::from_values(&[0.0, 0.0, 0.0, 0.0, 5.0])
                .unwrap()
                .outliers,
            [4]
        );
    }

    #[test]
    fn empty_and_non_finite_inputs() {
        assert!(Summary::from_values(&[]).is_none());
        assert!(Summary::from_values(&[f64::NAN]).is_none());
        let one = Summary::from_values(&[f64::NAN, 2.0]).unwrap();
        assert_eq!((one.n, one.std_dev, one.outliers.len()), (1, 0.0, 0));
    }
}
