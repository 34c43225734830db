//! Statistics over the samples of one metric.
//!
//! Outliers follow hyperfine's rule: the modified z-score
//! `0.6745 * (x - median) / MAD` beyond ±3.5 marks a sample as an outlier.

/// Summary statistics of a set of finite samples, in the samples' unit.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
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

impl Summary {
    /// Summarizes `values`; `None` when there are none. Non-finite values are ignored.
    pub fn from_values(values: &[f64]) -> Option<Summary> {
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
        let outliers = finite
            .iter()
            .filter(|&&(_, v)| modified_z_score(v, median, mad).abs() > OUTLIER_Z)
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
    fn empty_and_non_finite_inputs() {
        assert!(Summary::from_values(&[]).is_none());
        assert!(Summary::from_values(&[f64::NAN]).is_none());
        let one = Summary::from_values(&[f64::NAN, 2.0]).unwrap();
        assert_eq!((one.n, one.std_dev, one.outliers.len()), (1, 0.0, 0));
    }
}
