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
    // These types hold only strings, numbers and string-keyed maps, which
    // serde_json always serializes.
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}
