//! The statistics clibench computes over trials, one file per test or estimator.
//!
//! - [`Summary`] and [`MetricStats`]: the median, spread and outliers of one metric's
//!   samples (`summary.rs`, `metric_stats.rs`).
//! - [`welch`] and [`paired`]: whether two sides of one metric differ, Welch's t-test
//!   or Student's paired one on log values, and what a run could have detected
//!   ([`Welch::detectable_change`]) (`t_test.rs`).
//! - [`holm`] and [`holm_levels`]: the false-alarm rate kept over every metric of a
//!   comparison (`holm.rs`).
//! - [`t_two_sided`], [`t_quantile`], [`normal_upper_tail`], [`normal_quantile`]: the
//!   distributions the tests read (`distributions.rs`).
//! - [`fit`]: a least-squares line through a session's turns with its slope's error
//!   ([`Fit`], `trend.rs`); [`SlopeChange`]: two sides' slopes compared by their
//!   difference (`slope_change.rs`).
//! - [`sequential`]: when `ab --trials auto` stops, a group-sequential design of looks.
//!
//! # Outliers
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

mod distributions;
mod holm;
mod metric_stats;
pub mod sequential;
pub(crate) mod slope_change;
mod summary;
mod t_test;
#[cfg(test)]
mod tests;
mod trend;

pub use distributions::{normal_quantile, normal_upper_tail, t_quantile, t_two_sided};
pub use holm::{holm, holm_levels};
pub use metric_stats::{MetricStats, side_stats};
pub use slope_change::{PER_HUNDRED_TURNS, SlopeChange};
pub(crate) use summary::mean_and_variance;
pub use summary::{
    OUTLIER_MIN_SAMPLES, OUTLIER_Z, RELATIVE_TOLERANCE, Summary, median_of_sorted,
    modified_z_score, percentile_of_sorted,
};
pub use t_test::{
    Estimate, POWER, Welch, estimates_difference, paired, paired_difference, welch,
    welch_between_runs, welch_difference,
};
pub use trend::{FASTER_THAN_LINEAR_T, Fit, MIN_SLOPE_POINTS, fit};
