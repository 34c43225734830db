//! One metric's successful values summarised: centre, spread, percentiles and the
//! outlier rule. Pure numbers, nothing of a result file.

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

/// The mean and the sample variance (n − 1) of at least two values.
pub(crate) fn mean_and_variance(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, variance)
}
