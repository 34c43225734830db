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

mod metric_stats;
mod summary;
#[cfg(test)]
mod tests;

pub use metric_stats::{MetricStats, side_stats};
pub use summary::{
    OUTLIER_MIN_SAMPLES, OUTLIER_Z, RELATIVE_TOLERANCE, Summary, median_of_sorted,
    modified_z_score, percentile_of_sorted,
};
