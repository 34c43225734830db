//! Builders the unit tests of several modules share.

use crate::{Metric, Sample, Side, record};

/// A side whose metrics have one value per trial, trials numbered from 0.
pub(crate) fn side(sha: &str, metrics: &[(Metric, &[f64])]) -> Side {
    let mut side = Side::new(sha);
    for &(metric, values) in metrics {
        for (trial, &value) in values.iter().enumerate() {
            record(&mut side, metric, trial as u32, Sample::Value(value));
        }
    }
    side
}
