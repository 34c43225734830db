//! The whole history as Bencher Metric Format: a JSON array with one element per
//! stored result, each holding the BMF document `bencher run --adapter json` reads
//! (bench-core's measures and factors), beside the key it belongs to, so a script can
//! feed Bencher one report per result with its branch and testbed.

use crate::history::store::Stored;
use bench_core::export::bmf::measure;
use bench_core::stats::median_of_sorted;
use serde_json::{Map, Value, json};

/// `stored` as a JSON array of `{target, branch, testbed, revision, version,
/// started_unix_ms, bmf}`, pretty-printed with a final newline. `value` is the median
/// of the trials; `lower_value` and `upper_value` the smallest and largest, as in
/// `clibench report --format bmf`. A duet's values (`ab`'s default schedule) are their
/// own benchmark, `cold (duet)`: slower than a start alone, they must not join its
/// series in Bencher either.
pub fn export(stored: &[Stored]) -> String {
    let reports: Vec<Value> = stored
        .iter()
        .map(|row| {
            let record = &row.record;
            let mut benchmarks = Map::new();
            for (metric, samples) in &record.samples {
                let mut values: Vec<f64> = samples.iter().map(|&(_, v)| v).collect();
                if values.is_empty() {
                    continue;
                }
                values.sort_by(f64::total_cmp);
                let (name, factor) = measure(*metric);
                let benchmark = if record.duet_values(*metric) {
                    format!("{} (duet)", metric.name())
                } else {
                    metric.name().to_owned()
                };
                benchmarks.insert(
                    benchmark,
                    json!({ name: {
                        "value": median_of_sorted(&values) * factor,
                        "lower_value": values[0] * factor,
                        "upper_value": values[values.len() - 1] * factor,
                    }}),
                );
            }
            json!({
                "target": record.target,
                "branch": record.branch,
                "testbed": record.testbed.fingerprint(),
                "revision": record.revision,
                "version": record.version,
                "started_unix_ms": record.started_unix_ms,
                "bmf": benchmarks,
            })
        })
        .collect();
    // Invariant: every key is a string and every number finite (records are
    // validated), so serialization cannot fail.
    let mut text = serde_json::to_string_pretty(&reports).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::store::record::Record;
    use crate::history::store::record::tests::result;

    #[test]
    fn each_result_becomes_one_bmf_document_in_nanoseconds() {
        let record = Record::of(&result("demo", "abc", 5, &[0.3, 0.1, 0.2]), None, "main").unwrap();
        let text = export(&[Stored { id: 1, record }]);
        let parsed: Value = serde_json::from_str(&text).unwrap();
        let latency = &parsed[0]["bmf"]["cold"]["latency"];
        assert_eq!(latency["value"], json!(200000000.0));
        assert_eq!(latency["lower_value"], json!(100000000.0));
        assert_eq!(parsed[0]["branch"], json!("main"));
    }

    #[test]
    fn a_duets_values_are_a_benchmark_of_their_own() {
        let duet = crate::history::store::record::tests::duet_result("demo", "abc", 5, &[0.1, 0.3]);
        let record = Record::of(&duet, None, "main").unwrap();
        let parsed: Value = serde_json::from_str(&export(&[Stored { id: 1, record }])).unwrap();
        assert_eq!(
            parsed[0]["bmf"]["cold (duet)"]["latency"]["value"],
            json!(300000000.0)
        );
        assert!(parsed[0]["bmf"].get("cold").is_none());
    }
}
