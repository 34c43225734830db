//! JSON: the report or comparison as data, numbers in base units (seconds, bytes).
//! Non-finite numbers (a ratio over a zero base) are written as `null`.

use crate::compare::Comparison;
use crate::report::Report;

/// `report` as pretty-printed JSON with a final newline.
pub fn report(report: &Report) -> String {
    pretty(report)
}

/// `comparison` as pretty-printed JSON with a final newline.
pub fn comparison(comparison: &Comparison) -> String {
    pretty(comparison)
}

fn pretty(value: &impl serde::Serialize) -> String {
    // Invariant: reports and comparisons hold only strings, numbers, derived
    // Serialize impls and maps keyed by strings, which serde_json always serializes.
    let mut text = serde_json::to_string_pretty(value).expect("exports serialize to JSON");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use crate::compare::{CompareOptions, compare};
    use crate::{Metric, Sample, Side, record};

    #[test]
    fn an_infinite_ratio_is_written_as_null() {
        let mut base = Side::new("b");
        let mut candidate = Side::new("c");
        for trial in 0..6 {
            record(&mut base, Metric::ReclaimedRss, trial, Sample::Value(0.0));
            record(
                &mut candidate,
                Metric::ReclaimedRss,
                trial,
                Sample::Value(4096.0),
            );
        }
        let text = super::comparison(&compare(&base, &candidate, &CompareOptions::default()));
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let row = &value["metrics"][0];
        assert_eq!(row["ratio"], serde_json::Value::Null);
        assert_eq!(row["verdict"], "improved");
        assert!(text.ends_with("}\n"));
    }
}
