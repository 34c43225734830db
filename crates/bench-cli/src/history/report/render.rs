//! The history as text for a terminal: a series as a sparkline and a table, with its
//! change points. Returns strings; the binary prints them (inert).

use crate::history::change_points::check::MetricCheck;
use crate::history::change_points::find::ChangePoint;
use crate::history::series::points::Series;
use bench_core::units::format_bytes;
use std::fmt::Write;

const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// `values` as a line of block characters, at most `width` wide: with more values than
/// that, each character is the median of a run of neighbours. Lowest value ▁, highest █;
/// a flat series is all ▄.
pub fn sparkline(values: &[f64], width: usize) -> String {
    let width = width.max(1);
    let buckets: Vec<f64> = if values.len() <= width {
        values.to_vec()
    } else {
        (0..width)
            .map(|i| {
                let start = i * values.len() / width;
                let end = ((i + 1) * values.len() / width).max(start + 1);
                let mut run = values[start..end].to_vec();
                run.sort_by(f64::total_cmp);
                bench_core::stats::median_of_sorted(&run)
            })
            .collect()
    };
    let low = buckets.iter().copied().fold(f64::INFINITY, f64::min);
    let high = buckets.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    buckets
        .iter()
        .map(|&v| {
            if high - low <= f64::EPSILON * high.abs().max(1.0) {
                BARS[3]
            } else {
                let level = ((v - low) / (high - low) * (BARS.len() - 1) as f64).round();
                BARS[(level as usize).min(BARS.len() - 1)]
            }
        })
        .collect()
}

/// The series' heading: target, branch, the testbed's facts, and `duet` for a duet's
/// values.
pub(crate) fn heading(series: &Series) -> String {
    let testbed = &series.testbed;
    format!(
        "{}{} · {} · {} · testbed {} ({}, {} cores, {}, kernel {})",
        series.metric,
        if series.duet { " (duet)" } else { "" },
        series.target,
        series.branch,
        series.fingerprint(),
        testbed.cpu,
        testbed.cores,
        format_bytes(testbed.memory_bytes as f64),
        testbed.kernel
    )
}

/// One change point as a line: where, between which builds, how much and how sure.
pub(crate) fn change_line(series: &Series, change: &ChangePoint) -> String {
    let before = &series.points[change.index - 1];
    let after = &series.points[change.index];
    format!(
        "change at point {} ({} -> {}): {:+.1}% [{:+.1}%, {:+.1}%], p = {:.3}",
        change.index + 1,
        before.label,
        after.label,
        change.change * 100.0,
        change.low * 100.0,
        change.high * 100.0,
        change.p_value
    )
}

/// A series as a heading, a sparkline, its change points and a table of its last
/// `rows` points (all of them with `rows` 0).
pub fn series_text(series: &Series, changes: &[ChangePoint], rows: usize) -> String {
    let unit = series.metric.unit();
    let medians = series.medians();
    let mut text = String::new();
    let _ = writeln!(text, "{}", heading(series));
    let _ = writeln!(
        text,
        "  {}  {} point(s), {} .. {}",
        sparkline(&medians, 60),
        medians.len(),
        unit.format(medians.iter().copied().fold(f64::INFINITY, f64::min)),
        unit.format(medians.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
    );
    for change in changes {
        let _ = writeln!(text, "  {}", change_line(series, change));
    }
    let skip = if rows == 0 {
        0
    } else {
        series.points.len().saturating_sub(rows)
    };
    if skip > 0 {
        let _ = writeln!(text, "  ({skip} earlier point(s) not shown)");
    }
    let _ = writeln!(
        text,
        "  {:>5}  {:<14} {:>10}  {:<23} {:>3}  {:>5}",
        "point", "build", "median", "interval", "n", "load"
    );
    for (index, point) in series.points.iter().enumerate().skip(skip) {
        let mark = if changes.iter().any(|c| c.index == index) {
            "▲"
        } else {
            " "
        };
        let _ = writeln!(
            text,
            "{mark} {:>5}  {:<14} {:>10}  {:<23} {:>3}  {:>5}",
            index + 1,
            point.label,
            unit.format(point.median),
            format!("{} .. {}", unit.format(point.low), unit.format(point.high)),
            point.n,
            point
                .load_average
                .map_or_else(|| "-".to_owned(), |load| format!("{load:.2}")),
        );
    }
    text
}

/// A check's verdicts as lines: one per metric.
pub fn check_text(checks: &[MetricCheck]) -> String {
    let mut text = String::new();
    for checked in checks {
        let unit = checked.metric.unit();
        let _ = write!(
            text,
            "{:<16} {:<15} {:>10}",
            checked.metric.name(),
            checked.outcome.word(),
            unit.format(checked.median)
        );
        if checked.points > 0 {
            let _ = write!(
                text,
                "  vs {} over {} point(s): {:+.1}%",
                unit.format(checked.baseline),
                checked.points,
                checked.change * 100.0
            );
        }
        if checked.p_value.is_finite() {
            let _ = write!(text, ", p = {:.3}", checked.p_value);
            if checked.adjusted_p > checked.p_value {
                let _ = write!(text, " (Holm: {:.3})", checked.adjusted_p);
            }
        }
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sparkline_runs_from_lowest_to_highest() {
        assert_eq!(
            sparkline(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], 60),
            "▁▂▃▄▅▆▇█"
        );
        assert_eq!(sparkline(&[2.0, 2.0, 2.0], 60), "▄▄▄");
    }

    #[test]
    fn a_long_series_is_squeezed_to_the_width() {
        let values: Vec<f64> = (0..1000).map(f64::from).collect();
        let line = sparkline(&values, 40);
        assert_eq!(line.chars().count(), 40);
        assert!(line.starts_with('▁') && line.ends_with('█'));
    }
}
