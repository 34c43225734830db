//! Plain-text tables for people, as a terminal shows them: aligned columns, values with
//! their units, metrics grouped by phase.

use super::cells::{
    Notation, SideName, detectable, not_interleaved, presence, rule, signed_amount, trials_needed,
};
use crate::compare::{Comparison, Interleaving, Verdict};
use crate::report::Report;
use crate::stats::MetricStats;
use crate::text::inert;

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
/// trimmed. Every cell is made [inert](crate::text::inert()) before it is measured: a
/// process name or an error may come from a target.
pub fn render(headers: &[&str], aligns: &[Align], rows: &[Vec<String>]) -> String {
    let headers: Vec<String> = headers.iter().map(|h| inert(h).into_owned()).collect();
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|cell| inert(cell).into_owned()).collect())
        .collect();
    let columns = headers.len();
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
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
    for row in &rows {
        out.push_str(&line(&mut row.iter().map(String::as_str)));
    }
    out
}

/// A screen inside a box, so that its blank rows and edges are visible.
pub fn framed(screen: &str) -> String {
    let width = screen.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    let mut out = format!("┌{}┐\n", "─".repeat(width));
    for line in screen.lines() {
        let pad = width - line.chars().count();
        out.push_str(&format!("│{line}{}│\n", " ".repeat(pad)));
    }
    out.push_str(&format!("└{}┘", "─".repeat(width)));
    out
}

/// The narrowest terminal the tables are fitted to: below it columns are not dropped
/// further and lines are not wrapped, since nothing would fit anyway.
pub const MIN_COLUMNS: usize = 40;

/// [`render`] fitted to `columns`: while the table is wider, the columns named in
/// `droppable` (indexes, the first dropped first) are left out. Returns the table and
/// the headers left out, for a note that says so.
pub fn render_fit(
    headers: &[&str],
    aligns: &[Align],
    rows: &[Vec<String>],
    droppable: &[usize],
    columns: usize,
) -> (String, Vec<String>) {
    let mut kept: Vec<usize> = (0..headers.len()).collect();
    let mut dropped = Vec::new();
    let pick = |kept: &[usize]| {
        let headers: Vec<&str> = kept.iter().map(|&i| headers[i]).collect();
        let aligns: Vec<Align> = kept
            .iter()
            .map(|&i| aligns.get(i).copied().unwrap_or(Align::Left))
            .collect();
        let rows: Vec<Vec<String>> = rows
            .iter()
            .map(|row| {
                kept.iter()
                    .map(|&i| row.get(i).cloned().unwrap_or_default())
                    .collect()
            })
            .collect();
        render(&headers, &aligns, &rows)
    };
    let mut table = pick(&kept);
    for &column in droppable {
        if width(&table) <= columns.max(MIN_COLUMNS) {
            break;
        }
        kept.retain(|&i| i != column);
        dropped.push(headers[column].to_string());
        table = pick(&kept);
    }
    (table, dropped)
}

/// The widest line's width in characters.
fn width(text: &str) -> usize {
    text.lines()
        .map(|line| line.chars().count())
        .max()
        .unwrap_or(0)
}

/// `text` with every line longer than `columns` broken at spaces, continued two spaces
/// in, so a sentence does not break mid-word in a narrow terminal. A word longer than
/// the line stays whole.
pub fn wrap(text: &str, columns: usize) -> String {
    let columns = columns.max(MIN_COLUMNS);
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        if body.chars().count() <= columns {
            out.push_str(line);
            continue;
        }
        let mut current = String::new();
        for word in body.split(' ') {
            let needed = current.chars().count() + 1 + word.chars().count();
            if !current.trim().is_empty() && needed > columns {
                out.push_str(current.trim_end());
                out.push('\n');
                current = format!("  {word}");
            } else {
                if !current.is_empty() {
                    current.push(' ');
                }
                current.push_str(word);
            }
        }
        out.push_str(current.trim_end());
        out.push_str(end);
    }
    out
}

/// The note under a table that had columns left out to fit.
fn narrowed(dropped: &[String], columns: usize) -> String {
    if dropped.is_empty() {
        return String::new();
    }
    format!(
        "\n({} left out to fit {columns} columns; a wider terminal or COLUMNS=200 shows them)\n",
        dropped.join(", ")
    )
}

/// One result as a terminal table: a line naming the build, then a row per metric,
/// grouped by phase (the phase named on its first row), then the failures. Inert:
/// shas, errors and reasons from the file cannot drive the terminal. The wide form;
/// [`report_fit`] fits a terminal.
pub fn report(report: &Report) -> String {
    report_fit(report, usize::MAX)
}

/// [`report`] fitted to a terminal `columns` wide: mean, spread, min and max are left
/// out (and said to be) when the table is wider, and the notes are wrapped.
pub fn report_fit(report: &Report, columns: usize) -> String {
    let text = inert(&report_text(report, columns)).into_owned();
    if columns == usize::MAX {
        text
    } else {
        wrap(&text, columns)
    }
}

fn report_text(report: &Report, columns: usize) -> String {
    let target = report
        .target()
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
        let (table, dropped) = render_fit(
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
            // Mean and spread first: the median is what the comparisons use.
            &[3, 4, 5, 6, 0],
            columns,
        );
        out.push_str(&table);
        out.push_str(&narrowed(&dropped, columns));
    }
    if report
        .metrics
        .iter()
        .any(|stats| !stats.outlier_trials.is_empty())
    {
        // `#2` alone says nothing to someone who has not read the code.
        out.push_str(&format!(
            "\noutliers: #N is trial N, whose value lies more than {} median absolute \
             deviations (modified z-score) from the median, as hyperfine flags them \
             (among {} samples or more)\n",
            crate::stats::OUTLIER_Z,
            crate::stats::OUTLIER_MIN_SAMPLES
        ));
    }
    if let Some(note) = report.cold_note() {
        out.push_str(&format!("\n{note}\n"));
    }
    if let Some(note) = report.family_note() {
        out.push_str(&format!("\nnote: {note}\n"));
    }
    if let Some(note) = report.staircase_note() {
        out.push_str(&format!("\n{note}\n"));
    }
    if let Some(note) = report.slope_note() {
        out.push_str(&format!("\n{}\n", note.replace('`', "")));
    }
    if let Some(error) = &report.error {
        out.push_str(&format!("\nrun error: {error}\n"));
    }
    if !report.failures.is_empty() {
        out.push('\n');
        for group in super::failures::grouped(&report.failures) {
            out.push_str(&format!(
                "failed: {} trial {}: {}\n",
                group.metric_list(str::to_owned),
                group.trial,
                group.error
            ));
        }
    }
    if !report.skipped.is_empty() {
        out.push('\n');
        for (steps, reason) in report.skipped_by_reason() {
            out.push_str(&format!("skipped: {}: {reason}\n", steps.join(", ")));
        }
    }
    if let Some(busy) = &report.busy {
        out.push_str(&format!("\nwarning: {busy}\n"));
    }
    out
}

/// A comparison as a terminal table: a line naming both builds, a row per metric
/// measured on both sides (medians, change, interval, verdict, trials), then the
/// metrics missing on a side, the failures, changed process counts, and a line
/// counting the verdicts under the noise floors. The wide form; [`comparison_fit`]
/// fits a terminal.
pub fn comparison(comparison: &Comparison) -> String {
    comparison_fit(comparison, usize::MAX)
}

/// [`comparison`] fitted to a terminal `columns` wide: the detectable change, the
/// interval, the trials and the base's median are left out in that order (and said to
/// be) while the table is wider, and the notes are wrapped.
pub fn comparison_fit(comparison: &Comparison, columns: usize) -> String {
    let text = inert(&comparison_text(comparison, columns)).into_owned();
    if columns == usize::MAX {
        text
    } else {
        wrap(&text, columns)
    }
}

fn comparison_text(comparison: &Comparison, columns: usize) -> String {
    let [candidate, base] = super::cells::side_names(comparison).map(|side| match side {
        SideName::Sha(text) | SideName::Overrides(text) => text,
        SideName::AsItIs => SideName::AS_IT_IS,
        SideName::SharedOnly => SideName::SHARED_ONLY,
    });
    let mut out = format!("{candidate} (candidate) vs {base} (base)\n\n");
    comparison_table(&mut out, comparison, columns);
    problems(&mut out, comparison);
    if comparison.interleaving != Interleaving::Interleaved {
        out.push_str(&format!(
            "\nwarning: {}\n",
            not_interleaved(comparison.interleaving)
        ));
    }
    for (role, facts) in [
        ("base", &comparison.base_facts),
        ("candidate", &comparison.candidate_facts),
    ] {
        if let Some(busy) = &facts.busy {
            out.push_str(&format!("\nwarning ({role}): {busy}\n"));
        }
    }
    if let Some(line) = trials_line(comparison) {
        out.push_str(&format!("\n{line}\n"));
    }
    out.push_str(&format!(
        "\n{} ({})\n",
        verdict_counts(comparison).join(", "),
        rule(comparison)
    ));
    out
}

/// The table of every compared metric, fitted to `columns`.
fn comparison_table(out: &mut String, comparison: &Comparison, columns: usize) {
    if comparison.metrics.is_empty() {
        return;
    }
    let notation = Notation::TERMINAL;
    let rows: Vec<Vec<String>> = comparison
        .metrics
        .iter()
        .map(|row| {
            vec![
                row.metric.to_string(),
                notation.side(row, false),
                notation.side(row, true),
                signed_amount(row),
                notation.change(row),
                notation.interval(row),
                row.verdict.word().to_string(),
                detectable(row).unwrap_or_else(|| "exact".to_string()),
                super::cells::row_trials(row),
            ]
        })
        .collect();
    let (table, dropped) = render_fit(
        &[
            "metric",
            "base",
            "candidate",
            "delta",
            "change",
            "interval",
            "verdict",
            "could detect",
            "trials",
        ],
        &[
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Left,
            Align::Right,
            Align::Right,
        ],
        &rows,
        // The verdict and the delta carry the comparison; the rest explains it (a
        // failed trial is also listed under the table).
        &[7, 5, 8, 1],
        columns,
    );
    out.push_str(&table);
    out.push_str(&narrowed(&dropped, columns));
}

/// What the table leaves out: metrics measured on one side only, each side's run error
/// and failed trials, and a change in the number of processes.
fn problems(out: &mut String, comparison: &Comparison) {
    if !comparison.missing.is_empty() {
        out.push('\n');
        for missing in &comparison.missing {
            out.push_str(&format!(
                "missing: {}: base {}; candidate {}\n",
                missing.metric,
                presence(missing.base.as_ref()),
                presence(missing.candidate.as_ref())
            ));
        }
    }
    for (side, error, failures) in [
        ("base", &comparison.base_error, &comparison.base_failures),
        (
            "candidate",
            &comparison.candidate_error,
            &comparison.candidate_failures,
        ),
    ] {
        if let Some(error) = error {
            out.push_str(&format!("\n{side} run error: {error}\n"));
        }
        for group in super::failures::grouped(failures) {
            out.push_str(&format!(
                "{side} failed: {} trial {}: {}\n",
                group.metric_list(str::to_owned),
                group.trial,
                group.error
            ));
        }
    }
    for counts in comparison.process_count_changes() {
        out.push_str(&format!(
            "\nwarning: the number of processes changed in the {} phase: base {:?}, candidate {:?}\n",
            counts.phase, counts.base, counts.candidate
        ));
    }
}

/// "3 regressed, 1 improved, 20 within noise, ...": regressed and improved always, the
/// other verdicts when some metric has them.
fn verdict_counts(comparison: &Comparison) -> Vec<String> {
    let verdicts = comparison.verdict_counts();
    let mut counts = Vec::new();
    for verdict in Verdict::ALL {
        let count = verdicts.of(verdict);
        match verdict {
            Verdict::Regressed | Verdict::Improved => {
                counts.push(format!("{count} {}", verdict.word()));
            }
            Verdict::SingleSample if count > 0 => {
                counts.push(format!("{count} with a single sample (no verdict)"));
            }
            _ if count > 0 => counts.push(format!("{count} {}", verdict.word())),
            _ => {}
        }
    }
    counts
}

/// For the rows without a verdict that could not detect twice their threshold, the
/// trials a side their spread would need, on one line (the table's "could detect" column
/// has no room for it): `trials a side to detect twice the threshold at this spread:
/// cold ±6% ~31, warm ±6% ~73`.
fn trials_line(comparison: &Comparison) -> Option<String> {
    let needs: Vec<String> = comparison
        .metrics
        .iter()
        .filter_map(|row| {
            let (change, count) = trials_needed(row)?;
            Some(format!("{} ±{change}% {count}", row.metric))
        })
        .collect();
    (!needs.is_empty()).then(|| {
        format!(
            "trials a side to detect twice the threshold at this spread: {}",
            needs.join(", ")
        )
    })
}

/// The metrics that regressed, with their change, on one line:
/// `cold (+175 ms, +42.5%), disk (+1.0 MiB, +0.5%)`; a slope by its difference alone
/// (`session_growth (+2.00 MiB/turn)`).
pub fn regressions(comparison: &Comparison) -> String {
    comparison
        .regressions()
        .map(|row| {
            if row.slope.is_some() {
                return format!("{} ({})", row.metric, signed_amount(row));
            }
            format!(
                "{} ({}, {:+.1}%)",
                row.metric,
                signed_amount(row),
                row.change() * 100.0
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn metric_row(phase: String, stats: &MetricStats) -> Vec<String> {
    let unit = stats.unit;
    let numbers = match &stats.summary {
        Some(s) => {
            let mut cells =
                [s.median, s.mean, s.std_dev, s.min, s.max].map(|value| unit.format(value));
            // One value has no spread: "0" under "± sd" read as a measured zero.
            if s.n == 1 {
                cells[2] = "1 trial".to_owned();
            }
            cells
        }
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
    use crate::Metric;
    use crate::compare::{CompareOptions, compare};
    use crate::test_support::side;

    #[test]
    fn screens_are_boxed() {
        assert_eq!(framed("ab\n\nc"), "┌──┐\n│ab│\n│  │\n│c │\n└──┘");
    }

    #[test]
    fn single_samples_and_missing_metrics_are_counted_in_words() {
        let base = side(
            "b",
            &[
                (Metric::Cold, &[0.4]),
                (Metric::Disk, &[1000.0]),
                (Metric::Keystroke, &[0.01]),
            ],
        );
        let candidate = side("c", &[(Metric::Cold, &[0.5]), (Metric::Disk, &[1000.0])]);
        let text = comparison(&compare(&base, &candidate, &CompareOptions::default()));
        assert!(
            text.contains(
                "\nmissing: keystroke: base 10.0 ms over 1 trial; candidate not measured\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "\n0 regressed, 0 improved, 1 with a single sample (no verdict), 1 unchanged \
                 (a change counts when the interval of Welch's t-test on the logs (the drift \
                 between separate runs is in the test as variance: a run's offset spreads 0.220 \
                 for timing, 0.060 for CPU, 0.020 for memory; no speed probes on both sides) \
                 excludes no change and its \
                 estimate exceeds timing and CPU ±3%, memory ±2%; each interval is at the \
                 level Holm's procedure judged its metric at (over 0 tested metrics, a family \
                 false-alarm rate of 5%); sizes are exact: every byte is reported, beyond 64.0 \
                 KiB and 1% it counts)\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn regressions_name_each_metric_with_its_change() {
        let base = side(
            "b",
            &[
                (Metric::Disk, &[1_000_000.0]),
                (Metric::Cold, &[0.40, 0.41, 0.42, 0.40, 0.43]),
            ],
        );
        let candidate = side(
            "c",
            &[
                (Metric::Disk, &[1_500_000.0]),
                (Metric::Cold, &[0.60, 0.62, 0.61, 0.63, 0.60]),
            ],
        );
        // Interleaved trials, as `ab` measures: no drift between runs to allow for.
        let options = CompareOptions {
            interleaving: Some(crate::compare::Interleaving::Interleaved),
            ..CompareOptions::default()
        };
        let comparison = compare(&base, &candidate, &options);
        assert_eq!(
            regressions(&comparison),
            "disk (+488.3 KiB, +50.0%), cold (+200 ms, +48.6%)"
        );
    }

    #[test]
    fn rows_without_a_verdict_say_the_trials_their_spread_would_need() {
        // Five noisy trials a side: cold cannot detect ±6%, rss (no spread) can.
        let base = side(
            "b",
            &[
                (Metric::Cold, &[0.40, 0.48, 0.36, 0.44, 0.41]),
                (Metric::Rss, &[1e8; 5]),
            ],
        );
        let candidate = side(
            "c",
            &[
                (Metric::Cold, &[0.45, 0.38, 0.42, 0.40, 0.47]),
                (Metric::Rss, &[1e8; 5]),
            ],
        );
        let interleaved = CompareOptions {
            interleaving: Some(crate::compare::Interleaving::Interleaved),
            ..CompareOptions::default()
        };
        let text = comparison(&compare(&base, &candidate, &interleaved));
        let line = text
            .lines()
            .find(|line| line.starts_with("trials a side to detect twice the threshold"))
            .unwrap_or_else(|| panic!("no trials line in:\n{text}"));
        assert!(line.contains(": cold ±6% ~"), "{line}");
        assert!(!line.contains("rss"), "{line}");
        // Between separate runs the drift decides, not the count: no such line.
        let separate = comparison(&compare(&base, &candidate, &CompareOptions::default()));
        assert!(!separate.contains("trials a side to detect"), "{separate}");
    }

    #[test]
    fn long_lines_wrap_at_spaces_and_short_ones_stay() {
        let text = format!("short\n{}\n", "word ".repeat(20).trim_end());
        let wrapped = wrap(&text, 40);
        assert!(wrapped.starts_with("short\n"));
        assert!(
            wrapped.lines().all(|line| line.chars().count() <= 40),
            "{wrapped}"
        );
        assert_eq!(wrapped.lines().count(), 4, "{wrapped}");
        assert!(wrapped.lines().nth(2).unwrap().starts_with("  word"));
        assert_eq!(wrap(&text, usize::MAX), text);
    }

    #[test]
    fn a_table_too_wide_drops_its_droppable_columns_in_order() {
        let rows = vec![vec!["a".into(), "b".repeat(30), "c".repeat(30)]];
        let fit =
            |columns| render_fit(&["x", "y", "z"], &[Align::Left; 3], &rows, &[2, 1], columns);
        let (table, dropped) = fit(usize::MAX);
        assert!(dropped.is_empty() && table.contains("cccc"));
        let (table, dropped) = fit(50);
        assert_eq!(dropped, ["z"]);
        assert!(table.contains("bbbb") && !table.contains("cccc"), "{table}");
    }

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
