//! The input of [github-action-benchmark](https://github.com/benchmark-action/github-action-benchmark)'s
//! custom tools: a JSON array of `{name, unit, value, range, extra}`.
//!
//! The action reads one direction per file, so a comparison gives two documents:
//!
//! - [`GithubBenchmark::smaller_is_better`], for `tool: customSmallerIsBetter`:
//!   every time, size and memory metric;
//! - [`GithubBenchmark::bigger_is_better`], for `tool: customBiggerIsBetter`:
//!   the metrics where more is better (`reclaimed_rss`), `None` when there are none.
//!
//! Each entry is the candidate's median (`name` is the metric, times in `ms` and
//! sizes in `MiB`, so the action's charts read well), `range` is `± ` the sample
//! standard deviation, and `extra` (shown in the chart's tooltip) has the trial
//! count, the change against the base with its interval, and the verdict.

use crate::compare::{Comparison, MetricComparison, MissingMetric};
use crate::metric::{Direction, Metric};
use crate::stats::MetricStats;
use crate::units::Unit;

/// The two documents of a comparison, one per direction.
#[derive(Debug, Clone, PartialEq)]
pub struct GithubBenchmark {
    /// The `customSmallerIsBetter` array, pretty-printed JSON with a final newline.
    pub smaller_is_better: String,
    /// The `customBiggerIsBetter` array, when any metric is bigger-is-better.
    pub bigger_is_better: Option<String>,
}

/// One entry of the action's custom format.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
struct Entry {
    name: String,
    unit: &'static str,
    value: f64,
    range: String,
    extra: String,
}

/// The unit a metric is charted in, and the factor from its base unit.
fn chart_unit(metric: Metric) -> (&'static str, f64) {
    match metric.unit() {
        Unit::Seconds => ("ms", 1e3),
        Unit::Bytes => ("MiB", 1.0 / (1024.0 * 1024.0)),
        Unit::Share => ("% of a core", 100.0),
    }
}

/// The candidate side of `comparison` in github-action-benchmark's custom format.
pub fn comparison(comparison: &Comparison) -> GithubBenchmark {
    let mut smaller = Vec::new();
    let mut bigger = Vec::new();
    let rows = comparison
        .metrics
        .iter()
        .map(|row| (row.metric, Some(&row.candidate), Some(row)))
        .chain(
            comparison
                .missing
                .iter()
                .map(|missing: &MissingMetric| (missing.metric, missing.candidate.as_ref(), None)),
        );
    for (metric, stats, row) in rows {
        let context = Context {
            base_sha: &comparison.base_sha,
        };
        let Some(entry) = stats.and_then(|stats| entry(metric, stats, row, &context)) else {
            continue;
        };
        match metric.direction() {
            Direction::LowerIsBetter => smaller.push((metric, entry)),
            Direction::HigherIsBetter => bigger.push((metric, entry)),
        }
    }
    smaller.sort_by_key(|(metric, _)| *metric);
    bigger.sort_by_key(|(metric, _)| *metric);
    GithubBenchmark {
        smaller_is_better: document(smaller),
        bigger_is_better: (!bigger.is_empty()).then(|| document(bigger)),
    }
}

/// What every entry's `extra` mentions.
struct Context<'a> {
    base_sha: &'a str,
}

fn entry(
    metric: Metric,
    stats: &MetricStats,
    row: Option<&MetricComparison>,
    context: &Context,
) -> Option<Entry> {
    let base_sha = context.base_sha;
    let summary = stats.summary.as_ref()?;
    let (unit, factor) = chart_unit(metric);
    let mut extra = vec![match summary.n {
        1 => "median of 1 trial".to_string(),
        n => format!("median of {n} trials"),
    }];
    if stats.errored > 0 {
        extra.push(format!("{} failed", stats.errored));
    }
    match row {
        // A slope's change is its difference in its unit, never a percentage.
        Some(row) if row.slope.is_some() => extra.push(format!(
            "vs base {base_sha}: {} ({}, interval {})",
            row.verdict.word(),
            super::cells::signed_amount(row),
            super::cells::Notation::TERMINAL.interval(row)
        )),
        Some(row) => extra.push(match row.confidence {
            Some(confidence) => format!(
                "vs base {base_sha}: {} ({:+.1}%, {}% CI {:+.1}% to {:+.1}%)",
                row.verdict.word(),
                row.change() * 100.0,
                round3(confidence * 100.0),
                (row.ci_low - 1.0) * 100.0,
                (row.ci_high - 1.0) * 100.0
            ),
            None => format!(
                "vs base {base_sha}: {} ({:+.1}%)",
                row.verdict.word(),
                row.change() * 100.0
            ),
        }),
        None => extra.push(format!("not measured on base {base_sha}")),
    }
    if let Some(row) = row.filter(|row| !row.verdict.is_reported())
        && let Some(could) = super::cells::detectable_and_trials(row)
    {
        extra.push(format!("could detect {could}"));
    }
    Some(Entry {
        name: metric.name().to_string(),
        unit,
        value: summary.median * factor,
        range: format!("± {}", round3(summary.std_dev * factor)),
        extra: extra.join("\n"),
    })
}

/// Three decimals, without trailing zeros: 12.5 -> `12.5`, 0.0004 -> `0`.
fn round3(value: f64) -> String {
    let text = format!("{value:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    text.to_string()
}

fn document(entries: Vec<(Metric, Entry)>) -> String {
    let entries: Vec<Entry> = entries.into_iter().map(|(_, entry)| entry).collect();
    // Invariant: entries hold strings and finite numbers from summaries.
    let mut text = serde_json::to_string_pretty(&entries).expect("entries serialize to JSON");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_decimals_without_trailing_zeros() {
        assert_eq!(round3(12.5), "12.5");
        assert_eq!(round3(0.0004), "0");
        assert_eq!(round3(2.71234), "2.712");
    }
}
