//! Bencher Metric Format (BMF), the JSON that [Bencher](https://bencher.dev)'s
//! `json` adapter reads (`bencher run --adapter json --file results.json`):
//!
//! ```json
//! { "cold": { "latency": { "value": 412000000.0, "lower_value": 398000000.0, "upper_value": 440000000.0 } } }
//! ```
//!
//! - Each metric is a benchmark, named as in result files (`cold`, `rss`).
//! - Its one measure says what kind of number it is: `latency` for times, in
//!   nanoseconds (Bencher's built-in latency measure); `file-size` for the exact
//!   sizes `bundle` and `disk`, in bytes (Bencher's file-size measure); `memory`
//!   for memory, in bytes (created by Bencher on first use).
//! - `value` is the median over trials; `lower_value` and `upper_value` are the
//!   smallest and largest sample, so Bencher's thresholds see the spread.
//!
//! A comparison exports its candidate side: Bencher keeps the history and compares
//! against its own baseline. Metrics without a successful sample are left out,
//! since BMF has no way to say "failed".

use crate::compare::Comparison;
use crate::metric::{Metric, Nature};
use crate::report::Report;
use crate::stats::MetricStats;
use crate::units::Unit;
use std::collections::BTreeMap;

/// The BMF measure a metric is reported under, and the factor from the metric's
/// base unit to the measure's unit.
pub fn measure(metric: Metric) -> (&'static str, f64) {
    match (metric.unit(), metric.nature()) {
        (Unit::Seconds, _) => ("latency", 1e9),
        (Unit::Bytes, Nature::Exact) => ("file-size", 1.0),
        (Unit::Bytes, _) => ("memory", 1.0),
        // BMF has no measure for a CPU share; its throughput measure is unit-free.
        (Unit::Share, _) => ("cpu-share", 1.0),
    }
}

/// One measure's numbers.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
struct Values {
    value: f64,
    lower_value: f64,
    upper_value: f64,
}

/// The candidate side of `comparison` as BMF JSON, pretty-printed with a final newline.
pub fn comparison(comparison: &Comparison) -> String {
    let stats = comparison.metrics.iter().map(|row| &row.candidate).chain(
        comparison
            .missing
            .iter()
            .filter_map(|missing| missing.candidate.as_ref()),
    );
    document(stats)
}

/// Every metric of `report` as BMF JSON, pretty-printed with a final newline.
pub fn report(report: &Report) -> String {
    document(report.metrics.iter())
}

fn document<'a>(stats: impl Iterator<Item = &'a MetricStats>) -> String {
    let mut benchmarks: BTreeMap<Metric, BTreeMap<&str, Values>> = BTreeMap::new();
    for stats in stats {
        let Some(summary) = &stats.summary else {
            continue;
        };
        let (name, factor) = measure(stats.metric);
        benchmarks.entry(stats.metric).or_default().insert(
            name,
            Values {
                value: summary.median * factor,
                lower_value: summary.min * factor,
                upper_value: summary.max * factor,
            },
        );
    }
    // Invariant: metric names and measure names are strings and every value is a
    // finite number from a summary, so serialization cannot fail.
    let mut text = serde_json::to_string_pretty(&benchmarks).expect("BMF serializes to JSON");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{CompareOptions, compare};
    use crate::{Sample, Side, record};

    #[test]
    fn each_unit_gets_its_measure() {
        assert_eq!(measure(Metric::Cold), ("latency", 1e9));
        assert_eq!(measure(Metric::Disk), ("file-size", 1.0));
        assert_eq!(measure(Metric::Rss), ("memory", 1.0));
    }

    #[test]
    fn the_candidate_median_with_its_range_in_measure_units() {
        let mut base = Side::new("b");
        let mut candidate = Side::new("c");
        for (trial, value) in [0.5, 0.4, 0.45].into_iter().enumerate() {
            record(&mut base, Metric::Cold, trial as u32, Sample::Value(1.0));
            record(
                &mut candidate,
                Metric::Cold,
                trial as u32,
                Sample::Value(value),
            );
        }
        record(&mut candidate, Metric::Rss, 0, Sample::Error("gone".into()));
        record(&mut candidate, Metric::Disk, 0, Sample::Value(4096.0));
        let text = comparison(&compare(&base, &candidate, &CompareOptions::default()));
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            value,
            serde_json::json!({
                "cold": {"latency": {"value": 450000000.0, "lower_value": 400000000.0, "upper_value": 500000000.0}},
                "disk": {"file-size": {"value": 4096.0, "lower_value": 4096.0, "upper_value": 4096.0}},
            })
        );
    }
}
