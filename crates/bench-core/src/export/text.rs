//! Plain-text tables for people, as a terminal shows them: aligned columns, values with
//! their units, metrics grouped by phase.

use crate::report::Report;
use crate::stats::MetricStats;

/// How a column's cells line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text columns.
    Left,
    /// Number columns.
    Right,
}

/// Renders a table with a header row, a rule under it, and two spaces between
/// columns. Widths count characters, not bytes, so `µs` lines up; trailing spaces are
/// trimmed.
pub fn render(headers: &[&str], aligns: &[Align], rows: &[Vec<String>]) -> String {
    let columns = headers.len();
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (index, cell) in row.iter().enumerate().take(columns) {
            widths[index] = widths[index].max(cell.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut out = String::new();
        for (index, cell) in cells.enumerate().take(columns) {
            if index > 0 {
                out.push_str("  ");
            }
            let pad = widths[index].saturating_sub(cell.chars().count());
            let align = aligns.get(index).copied().unwrap_or(Align::Left);
            if align == Align::Right {
                out.extend(std::iter::repeat_n(' ', pad));
                out.push_str(cell);
            } else {
                out.push_str(cell);
                out.extend(std::iter::repeat_n(' ', pad));
            }
        }
        out.truncate(out.trim_end().len());
        out.push('\n');
        out
    };
    let mut out = line(&mut headers.iter().copied());
    let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
    out.push_str(&line(&mut rule.iter().map(String::as_str)));
    for row in rows {
        out.push_str(&line(&mut row.iter().map(String::as_str)));
    }
    out
}

/// One result as a terminal table: a line naming the build, then a row per metric,
/// grouped by phase (the phase named on its first row), then the failures.
pub fn report(report: &Report) -> String {
    let target = report
        .request
        .config
        .get("target")
        .map_or(String::new(), |target| format!("{target} "));
    let mut out = format!("{target}{}\n\n", report.sha);
    if report.metrics.is_empty() {
        out.push_str("no metric was recorded\n");
    } else {
        let mut rows: Vec<Vec<String>> = Vec::new();
        let mut last_phase = None;
        for stats in &report.metrics {
            let phase = stats.metric.phase();
            let label = if last_phase == Some(phase) {
                String::new()
            } else {
                phase.to_string()
            };
            last_phase = Some(phase);
            rows.push(metric_row(label, stats));
        }
        out.push_str(&render(
            &[
                "phase", "metric", "median", "mean", "± sd", "min", "max", "trials", "failed",
                "outliers",
            ],
            &[
                Align::Left,
                Align::Left,
                Align::Right,
                Align::Right,
                Align::Right,
                Align::Right,
                Align::Right,
                Align::Right,
                Align::Right,
                Align::Left,
            ],
            &rows,
        ));
    }
    if let Some(note) = report.cold_note() {
        out.push_str(&format!("\n{note}\n"));
    }
    if let Some(error) = &report.error {
        out.push_str(&format!("\nrun error: {error}\n"));
    }
    if !report.failures.is_empty() {
        out.push('\n');
        for failure in &report.failures {
            out.push_str(&format!(
                "failed: {} trial {}: {}\n",
                failure.metric, failure.trial, failure.error
            ));
        }
    }
    if !report.skipped.is_empty() {
        out.push('\n');
        for (steps, reason) in report.skipped_by_reason() {
            out.push_str(&format!("skipped: {}: {reason}\n", steps.join(", ")));
        }
    }
    out
}

fn metric_row(phase: String, stats: &MetricStats) -> Vec<String> {
    let unit = stats.unit;
    let numbers = match &stats.summary {
        Some(s) => [s.median, s.mean, s.std_dev, s.min, s.max].map(|value| unit.format(value)),
        None => std::array::from_fn(|_| "-".to_string()),
    };
    let mut row = vec![phase, stats.metric.to_string()];
    row.extend(numbers);
    row.push(stats.n().to_string());
    row.push(stats.errored.to_string());
    row.push(
        stats
            .outlier_trials
            .iter()
            .map(|trial| format!("#{trial}"))
            .collect::<Vec<_>>()
            .join(" "),
    );
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_by_characters() {
        let table = render(
            &["metric", "median"],
            &[Align::Left, Align::Right],
            &[
                vec!["cold".into(), "412 ms".into()],
                vec!["kernel_exec".into(), "31.0 µs".into()],
            ],
        );
        assert_eq!(
            table,
            "metric        median\n-----------  -------\ncold          412 ms\nkernel_exec  31.0 µs\n"
        );
    }
}
