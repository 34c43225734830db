//! GitHub-flavoured Markdown, ready to post as a pull-request comment: readable
//! units (`412 ms`, `131.2 MiB`) and verdicts as words.

use super::cells::{
    self, Notation, SideName, detectable_and_trials, not_interleaved, plural, presence, rule,
    signed_amount, trials,
};
use super::failures::{Failure, SideFailures};
use crate::compare::{Comparison, Interleaving, MetricComparison, SideFacts, Verdict};
use crate::metric::Metric;
use crate::report::Report;
use crate::result::Request;
use crate::units::{format_bytes, format_fact, format_seconds};
use std::fmt::Write;

/// How many processes the report lists before saying how many more there are.
const PROCESS_ROWS: usize = 10;

/// `report` as Markdown: the request, a table of every metric's statistics, the
/// failures, then artifacts, timings, runtime facts and the largest processes.
pub fn report(report: &Report) -> String {
    let mut out = String::new();
    report_heading(&mut out, report);
    metric_table(&mut out, report);
    report_notes(&mut out, report);
    side_facts(&mut out, report);
    process_table(&mut out, report);
    out
}

/// The title (target, sha, role), the request's line and the busy-host warning.
fn report_heading(out: &mut String, report: &Report) {
    // A lone run is a candidate by default; only a base build is worth naming as such.
    let role = match report.request.role {
        crate::result::Role::Base => " (base)",
        crate::result::Role::Candidate => "",
    };
    let target = report
        .target()
        .map_or(String::new(), |target| format!("{} ", code(target)));
    let _ = writeln!(
        out,
        "## clibench result: {target}{}{role}\n",
        code(&report.sha),
    );
    if let Some(line) = request_line(&report.request) {
        let _ = writeln!(out, "{line}\n");
    }
    if let Some(busy) = &report.busy {
        let _ = writeln!(out, "> **Warning**: {busy}.\n");
    }
}

/// A row of statistics per metric.
fn metric_table(out: &mut String, report: &Report) {
    if report.metrics.is_empty() {
        out.push_str("No metric was recorded.\n");
    } else {
        out.push_str(
            "| Metric | Median | Mean ± SD | Min | Max | p95 | MAD | Trials | Outliers |\n\
             | :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :--- |\n",
        );
        for stats in &report.metrics {
            let unit = stats.unit;
            let cells = match &stats.summary {
                Some(s) => [
                    unit.format(s.median),
                    mean_sd(unit, s),
                    unit.format(s.min),
                    unit.format(s.max),
                    unit.format(s.p95),
                    unit.format(s.mad),
                ],
                None => std::array::from_fn(|_| "–".to_string()),
            };
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} |",
                stats.metric,
                cells.join(" | "),
                trials(stats),
                outliers(&stats.outlier_trials)
            );
        }
    }
}

/// What the table cannot say: the notes on cold starts and the staircase, the session's
/// slopes, turns, output and checkpoints, the legend, the failures and the skipped steps.
fn report_notes(out: &mut String, report: &Report) {
    if let Some(note) = report.cold_note() {
        let _ = writeln!(
            out,
            "
{note}"
        );
    }
    if let Some(note) = report.staircase_note() {
        let _ = writeln!(out, "\n{note}");
    }
    if let Some(note) = report.slope_note() {
        let _ = writeln!(out, "\n{note}");
    }
    if !report.session_slopes.is_empty() {
        out.push_str("\n**Session slopes** (least squares ± standard error)\n\n");
        for line in &report.session_slopes {
            let _ = writeln!(out, "- {line}");
        }
    }
    out.push_str(&super::terminal::turns_markdown(&report.session_turns));
    out.push_str(&super::terminal::markdown(&report.terminal_output));
    if let Some(checkpoints) = &report.session_checkpoints {
        checkpoint_table(out, checkpoints);
    }
    legend(out, report.metrics.iter().map(|stats| stats.metric));
    failures(out, &[("", &report.error, &report.failures)]);
    if !report.skipped.is_empty() {
        out.push_str("\n**Skipped**\n\n");
        for (steps, reason) in report.skipped_by_reason() {
            let steps: Vec<String> = steps.iter().map(|s| code(s)).collect();
            let _ = writeln!(out, "- {}: {}", steps.join(", "), code(reason));
        }
    }
}

/// The artifacts, the named timings and the runtime facts.
fn side_facts(out: &mut String, report: &Report) {
    if !report.artifacts.is_empty() {
        out.push_str("\n**Artifacts**\n\n| File | Size |\n| :--- | ---: |\n");
        for (name, bytes) in &report.artifacts {
            let _ = writeln!(out, "| {} | {} |", cell(name), format_bytes(*bytes as f64));
        }
    }
    if !report.timings.is_empty() {
        out.push_str("\n**Timings**\n\n| Step | Time |\n| :--- | ---: |\n");
        for (name, seconds) in &report.timings {
            let _ = writeln!(out, "| {} | {} |", cell(name), format_seconds(*seconds));
        }
    }
    if !report.runtime.is_empty() {
        out.push_str("\n**Runtime**\n\n| Fact | Value |\n| :--- | :--- |\n");
        for (name, value) in &report.runtime {
            let _ = writeln!(
                out,
                "| {} | {} |",
                cell(name),
                cell(&format_fact(name, value))
            );
        }
    }
}

/// The largest processes of the last memory measurement.
fn process_table(out: &mut String, report: &Report) {
    if !report.processes.is_empty() {
        out.push_str(
            "\n**Processes** (last memory measurement)\n\n\
             | PID | Name | RSS | PSS | USS | Swap | CPU |\n\
             | ---: | :--- | ---: | ---: | ---: | ---: | ---: |\n",
        );
        let bytes =
            |value: Option<u64>| value.map_or("–".to_string(), |b| format_bytes(b as f64));
        for process in report.processes.iter().take(PROCESS_ROWS) {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                process.pid,
                cell(&process.name),
                format_bytes(process.rss as f64),
                bytes(process.pss),
                bytes(process.uss),
                bytes(process.swap),
                process.cpu_seconds.map_or("–".to_string(), format_seconds)
            );
        }
        if report.processes.len() > PROCESS_ROWS {
            let _ = writeln!(
                out,
                "\n…and {} more processes.",
                report.processes.len() - PROCESS_ROWS
            );
        }
    }
}

/// `comparison` as Markdown, a pull-request comment: a headline count, a table of
/// the metrics that changed (absolute and relative change, interval, verdict,
/// sample counts), the metrics without a verdict folded under `<details>`, a
/// warning when the number of processes changed, the metrics missing on a side,
/// the failed trials, where and under what load each side ran with which versions,
/// and how to read it.
pub fn comparison(comparison: &Comparison) -> String {
    let mut out = String::new();
    let [candidate, base] = cells::side_names(comparison).map(|side| match side {
        SideName::Sha(text) | SideName::Overrides(text) => code(text),
        SideName::AsItIs => SideName::AS_IT_IS.to_owned(),
        SideName::SharedOnly => SideName::SHARED_ONLY.to_owned(),
    });
    let _ = writeln!(
        out,
        "## clibench: {candidate} (candidate) vs {base} (base)\n"
    );
    let _ = writeln!(out, "{}.\n", headline(comparison));
    let (changed, unchanged): (Vec<&MetricComparison>, Vec<&MetricComparison>) = comparison
        .metrics
        .iter()
        .partition(|row| row.verdict.is_reported());
    if comparison.interleaving != Interleaving::Interleaved {
        let _ = writeln!(
            out,
            "> **Not interleaved**: {}.\n",
            not_interleaved(comparison.interleaving)
        );
    }
    for (role, facts) in [
        ("base", &comparison.base_facts),
        ("candidate", &comparison.candidate_facts),
    ] {
        if let Some(busy) = &facts.busy {
            let _ = writeln!(out, "> **Warning** ({role}): {busy}.\n");
        }
    }
    if !changed.is_empty() {
        comparison_table(&mut out, &changed, false);
    } else if !comparison.metrics.is_empty() {
        out.push_str("No metric changed beyond its threshold.\n");
    }
    session_figures(&mut out, comparison);
    if !unchanged.is_empty() {
        let _ = writeln!(
            out,
            "\n<details><summary>{} without a verdict (within noise, unchanged or a single \
             sample), with the change each run could have detected</summary>\n",
            plural(unchanged.len(), "metric", "metrics")
        );
        comparison_table(&mut out, &unchanged, true);
        out.push_str("\n</details>\n");
    }
    for counts in comparison.process_count_changes() {
        let _ = writeln!(
            out,
            "\n> **Process count changed** ({} phase): base {}, candidate {}. A process \
             (often a daemon) came or went, and memory totals moved with it.",
            counts.phase,
            process_count(&counts.base),
            process_count(&counts.candidate)
        );
    }
    if !comparison.missing.is_empty() {
        out.push_str("\n**Missing on a side**\n\n");
        for missing in &comparison.missing {
            let _ = writeln!(
                out,
                "- `{}`: base {}; candidate {}",
                missing.metric,
                presence(missing.base.as_ref()),
                presence(missing.candidate.as_ref())
            );
        }
    }
    failures(
        &mut out,
        &[
            ("base", &comparison.base_error, &comparison.base_failures),
            (
                "candidate",
                &comparison.candidate_error,
                &comparison.candidate_failures,
            ),
        ],
    );
    out.push_str("\n**Runs**\n\n");
    for (role, sha, facts) in [
        ("base", &comparison.base_sha, &comparison.base_facts),
        (
            "candidate",
            &comparison.candidate_sha,
            &comparison.candidate_facts,
        ),
    ] {
        let _ = writeln!(out, "- {role} {}: {}", code(sha), facts_line(facts));
    }
    let _ = writeln!(out, "\n<sub>{}</sub>", how_to_read(comparison));
    out
}

fn headline(comparison: &Comparison) -> String {
    let counts = comparison.verdict_counts();
    let mut parts = cells::headline(&counts);
    if counts.regressed > 0 {
        parts[0] = format!("**{}**", parts[0]);
    }
    parts.join(", ")
}

/// The session's figures over its turns, always in view (a slope within noise is
/// otherwise in the folded table): each slope's base and candidate and their difference
/// with its interval, and the last checkpoint's keystroke echo and bytes per key.
fn session_figures(out: &mut String, comparison: &Comparison) {
    let rows: Vec<&MetricComparison> = comparison
        .metrics
        .iter()
        .filter(|row| {
            row.metric.is_slope() || matches!(row.metric, Metric::KeyEcho | Metric::KeyBytes)
        })
        .collect();
    if !rows.iter().any(|row| row.slope.is_some()) {
        return;
    }
    out.push_str("\n**Session over its turns** (base → candidate: change, interval, verdict)\n\n");
    for row in rows {
        let change = change_text(row);
        let _ = writeln!(
            out,
            "- `{}`: {} → {}: {change}, {}, {}",
            row.metric,
            Notation::DOCUMENT.side(row, false),
            Notation::DOCUMENT.side(row, true),
            Notation::DOCUMENT.interval(row),
            verdict(row)
        );
    }
}

/// A long session's checkpoints as a table, the fitted slope of each column last:
/// the compact form of the HTML report's checkpoint charts.
fn checkpoint_table(out: &mut String, table: &crate::report::Checkpoints) {
    use crate::units::Unit;
    let shown = if table.rows.len() < table.measured {
        format!("{} of {}", table.rows.len(), table.measured)
    } else {
        table.measured.to_string()
    };
    let memory = if table.pss { "PSS" } else { "RSS" };
    let _ = writeln!(
        out,
        "\n**Checkpoints** (trial {}, {shown} checkpoints: the idle prompt's keystroke echo \
         and bytes per key, and the family's memory)\n\n\
         | After turn | Key echo | Bytes per key | {memory} |\n\
         | ---: | ---: | ---: | ---: |",
        table.trial
    );
    for row in &table.rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            row.turn,
            row.key_echo_seconds
                .map_or("–".to_string(), |seconds| Unit::Seconds.format(seconds)),
            Unit::Bytes.format(row.bytes_per_key),
            Unit::Bytes.format(row.memory_bytes as f64)
        );
    }
    let slope = |fit: Option<crate::stats::Fit>, unit: Unit, per: &str| {
        fit.map_or("–".to_string(), |fit| {
            let sign = if fit.slope > 0.0 { "+" } else { "" };
            let curve = if fit.faster_than_linear() {
                " **faster than linear**"
            } else {
                ""
            };
            format!("{sign}{}{per}{curve}", unit.format(fit.slope))
        })
    };
    let _ = writeln!(
        out,
        "| slope (least squares after the warm-up) | {} | {} | {} |",
        slope(table.lag, Unit::Seconds, "/100 turns"),
        slope(table.render, Unit::Bytes, "/100 turns"),
        slope(table.growth, Unit::Bytes, "/turn")
    );
}

fn comparison_table(out: &mut String, rows: &[&MetricComparison], with_detectable: bool) {
    let (header, line) = if with_detectable {
        (" Could detect |", " ---: |")
    } else {
        ("", "")
    };
    let _ = writeln!(
        out,
        "| Metric | Base | Candidate | Change | Interval | Verdict |{header} Trials |\n\
         | :--- | ---: | ---: | ---: | ---: | :--- |{line} ---: |"
    );
    for row in rows {
        let detectable = if with_detectable {
            format!(
                " {} |",
                detectable_and_trials(row).unwrap_or_else(|| "every byte".to_string())
            )
        } else {
            String::new()
        };
        let change = change_text(row);
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {change} | {} | {} |{detectable} {} |",
            row.metric,
            Notation::DOCUMENT.side(row, false),
            Notation::DOCUMENT.side(row, true),
            Notation::DOCUMENT.interval(row),
            verdict(row),
            super::cells::row_trials(row)
        );
    }
}

fn process_count(counts: &[u32]) -> String {
    match counts {
        [] => "not counted".to_string(),
        [one] => plural(*one as usize, "process", "processes"),
        many => {
            let listed: Vec<String> = many.iter().map(u32::to_string).collect();
            format!("{} processes in different trials", listed.join(" or "))
        }
    }
}

fn facts_line(facts: &SideFacts) -> String {
    let mut parts = Vec::new();
    match facts.hosts.as_slice() {
        [] => {}
        [host] => parts.push(format!("host {}", code(host))),
        hosts => parts.push(format!(
            "hosts {}",
            hosts
                .iter()
                .map(|host| code(host))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
    if let Some((low, high)) = facts.load_average_1m {
        let range = if low == high {
            format!("{low:.2}")
        } else {
            format!("{low:.2} to {high:.2}")
        };
        parts.push(format!("load {range} (1 min, at trial start)"));
    }
    if let Some((first, last)) = facts.started_unix_ms {
        parts.push(format!(
            "{} started within {}",
            plural(facts.timed_trials, "trial", "trials"),
            format_seconds((last - first) as f64 / 1000.0)
        ));
    }
    if !facts.environment.is_empty() {
        parts.push(
            facts
                .environment
                .iter()
                .map(|(key, value)| format!("{key} {}", code(value)))
                .collect::<Vec<_>>()
                .join(", "),
        );
    }
    if parts.is_empty() {
        "no host, load or versions recorded".to_string()
    } else {
        parts.join("; ")
    }
}

fn how_to_read(comparison: &Comparison) -> String {
    let mut rule = rule(comparison);
    if let Some(first) = rule.get(..1) {
        rule = format!("{}{}", first.to_uppercase(), &rule[1..]);
    }
    format!(
        "Base and candidate: the geometric means over trials the test compares (medians \
         where there is no test); change = candidate / base − 1, and the interval is the \
         test's own. {rule}. Could detect: the smallest change this \
         run would have found 4 times in 5, from its spread and trial counts. Rule and \
         defaults: docs/verdicts.md."
    )
}

/// A short legend under a metrics table: what each metric in it means, from the
/// one glossary ([`Metric::description`]).
fn legend(out: &mut String, metrics: impl Iterator<Item = Metric>) {
    let lines: Vec<String> = metrics
        .map(|metric| {
            format!(
                "- `{metric}` ({}): {}",
                metric.unit_and_direction(),
                metric.description()
            )
        })
        .collect();
    if lines.is_empty() {
        return;
    }
    out.push_str("\n<details><summary>What the metrics mean</summary>\n\n");
    for line in lines {
        let _ = writeln!(out, "{line}");
    }
    out.push_str("\n</details>\n");
}

fn request_line(request: &Request) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(repository) = &request.repository {
        parts.push(format!("repository {}", code(repository)));
    }
    if let Some(source) = &request.source_repository {
        parts.push(format!("source {}", code(source)));
    }
    if let Some(pr) = request.pr {
        parts.push(format!("PR #{pr}"));
    }
    if let Some(run) = &request.run_id {
        let attempt = request
            .attempt
            .map_or(String::new(), |attempt| format!(" (attempt {attempt})"));
        parts.push(format!("run {}{attempt}", code(run)));
    }
    if let Some(harness) = &request.harness_sha {
        parts.push(format!("harness {}", code(harness)));
    }
    if parts.is_empty() {
        return None;
    }
    let mut line = parts.join(", ");
    if let Some(first) = line.get(..1) {
        line = first.to_uppercase() + &line[1..];
    }
    Some(line)
}

fn failures(out: &mut String, sides: &[SideFailures<'_>]) {
    let lines = super::failures::failures(sides);
    if lines.is_empty() {
        return;
    }
    out.push_str("\n**Failures**\n\n");
    for (prefix, failure) in lines {
        let _ = match failure {
            Failure::Run(error) => writeln!(out, "- {prefix}run: {}", code(error)),
            Failure::Samples(group) => writeln!(
                out,
                "- {prefix}{} trial {}: {}",
                group.metric_list(|m| format!("`{m}`")),
                group.trial,
                code(group.error)
            ),
        };
    }
}

/// A Mean ± SD cell: `1.2 s ± 30 ms`, or `1.2 s (1 trial)` for a single value, whose
/// spread is unknown ("± 0" read as a measured zero).
fn mean_sd(unit: crate::units::Unit, summary: &crate::stats::Summary) -> String {
    match summary.n {
        1 => format!("{} (1 trial)", unit.format(summary.mean)),
        _ => format!(
            "{} ± {}",
            unit.format(summary.mean),
            unit.format(summary.std_dev)
        ),
    }
}

fn outliers(trials: &[u32]) -> String {
    match trials {
        [] => String::new(),
        [one] => format!("trial {one}"),
        many => format!(
            "trials {}",
            many.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn verdict(row: &MetricComparison) -> String {
    match row.verdict {
        Verdict::Regressed => format!("**{}**", row.verdict.word()),
        other => other.word().to_string(),
    }
}

/// `value` as a code span, the one way text that came from a target or a file enters
/// Markdown outside a fenced block. GitHub neither formats, autolinks, mentions (`@team`)
/// nor links issues (`#123`) inside code, while a backslash escape would not stop a
/// mention: GitHub finds those in the rendered HTML, after the escapes are gone. The
/// fence is longer than any run of backticks inside, so the text is kept as it is;
/// newlines become spaces (a table row and a list item are one line), and control
/// characters and bidi overrides are shown escaped.
pub fn code(value: &str) -> String {
    if value.is_empty() {
        // Two backticks alone are not a code span; one space between them is.
        return "` `".to_owned();
    }
    let value = value.replace(['\n', '\r'], " ");
    let value = crate::text::inert(&value);
    let fence = "`".repeat(longest_run(&value, '`') + 1);
    // CommonMark takes one space off each end when both ends are spaces (unless the text
    // is only spaces), and a backtick at an end would run into the fence: a space on each
    // side keeps both as they are.
    let pad = if value.starts_with('`')
        || value.ends_with('`')
        || (value.starts_with(' ') && value.ends_with(' ') && !value.trim().is_empty())
    {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{value}{pad}{fence}")
}

/// [`code`] for a table cell: GitHub splits a row at every `|` before it looks for code
/// spans, so a `|` inside one would end the cell and let the rest render as Markdown.
/// `\|` keeps it in the cell, and GitHub shows it as `|`, even inside a code span.
fn cell(value: &str) -> String {
    code(value).replace('|', "\\|")
}

/// The longest run of `mark` in `text`.
fn longest_run(text: &str, mark: char) -> usize {
    text.split(|c| c != mark).map(str::len).max().unwrap_or(0)
}

/// `body` as a fenced code block with the info string `info` (a word such as `text`),
/// safe whatever `body` holds: the fence is longer than any run of backticks or tildes
/// in it (at least three backticks), so no line of `body` can close it, and `body` is
/// made [inert](crate::text::inert). Every fence clibench writes goes through here.
pub fn fenced(info: &str, body: &str) -> String {
    let longest = longest_run(body, '`').max(longest_run(body, '~'));
    let fence = "`".repeat(longest.max(2) + 1);
    let info: String = info
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    let body = crate::text::inert(body.trim_end_matches('\n'));
    format!("{fence}{info}\n{body}\n{fence}\n")
}

/// A row's change: the difference and its percentage, or for a slope its difference
/// alone (a ratio of two slopes has no meaning).
fn change_text(row: &crate::compare::MetricComparison) -> String {
    if row.slope.is_some() {
        signed_amount(row)
    } else {
        format!(
            "{} ({})",
            signed_amount(row),
            Notation::DOCUMENT.change(row)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Metric;

    #[test]
    fn code_keeps_the_text_and_nothing_inside_can_end_the_span() {
        assert_eq!(code("x86_64"), "`x86_64`");
        assert_eq!(code("x`y\nz"), "``x`y z``");
        assert_eq!(code("`a``"), "``` `a`` ```");
        assert_eq!(code(" a "), "`  a  `");
        assert_eq!(code("  "), "`  `");
        assert_eq!(code(""), "` `");
        assert_eq!(code("a\r\nb\x1b[2J"), "`a  b\\x1b[2J`");
        assert_eq!(code("\u{202e}x"), "`\\u{202e}x`");
    }

    #[test]
    fn a_pipe_in_a_cell_is_escaped_even_inside_a_code_span() {
        assert_eq!(cell("|[x](//e.vil)|"), "`\\|[x](//e.vil)\\|`");
        assert_eq!(cell("a\\|b"), "`a\\\\|b`");
    }

    #[test]
    fn a_fence_is_longer_than_any_run_of_backticks_or_tildes_inside() {
        let screen = "ok\n```\n~~~~\n![x](http://example.invalid/x.png)\n# heading\n`````x\n";
        let block = fenced("text", screen);
        let fence = "``````";
        assert!(block.starts_with(&format!("{fence}text\n")), "{block}");
        assert!(block.ends_with(&format!("\n{fence}\n")), "{block}");
        // Every line inside is shorter than the fence, so none of them closes it.
        let inner: Vec<&str> = block.lines().skip(1).collect();
        let (last, inside) = inner.split_last().unwrap();
        assert_eq!(*last, fence);
        for line in inside {
            let run = line
                .trim_start()
                .chars()
                .take_while(|&c| c == '`' || c == '~')
                .count();
            assert!(run < fence.len(), "{line:?} could close the fence");
        }
        assert_eq!(fenced("text", "plain\n"), "```text\nplain\n```\n");
        assert_eq!(fenced("te`xt", "\x1b[2J"), "```text\n\\x1b[2J\n```\n");
    }

    fn result_with_cold(caches_dropped: Option<&str>) -> crate::ResultFile {
        let mut result = crate::ResultFile::new(crate::Request::new("a", crate::Role::Candidate));
        crate::record(&mut result.side, Metric::Cold, 0, crate::Sample::Value(1.0));
        if let Some(value) = caches_dropped {
            result
                .side
                .runtime
                .insert("caches_dropped".to_owned(), value.to_owned());
        }
        result
    }

    #[test]
    fn the_report_says_whether_cold_started_from_a_dropped_cache() {
        let dropped = report(&Report::new(&result_with_cold(Some(
            "yes: before each measure trial",
        ))));
        assert!(
            dropped.contains("the page cache was dropped before each cold start"),
            "{dropped}"
        );
        for runtime in [None, Some("no")] {
            let kept = report(&Report::new(&result_with_cold(runtime)));
            assert!(kept.contains("the page cache was not dropped"), "{kept}");
        }
    }

    #[test]
    fn a_target_known_by_its_name_alone_is_named_once() {
        let mut result = result_with_cold(None);
        result.side.sha = "node-repl".to_owned();
        result
            .request
            .config
            .insert("target".to_owned(), "node-repl".to_owned());
        let text = report(&Report::new(&result));
        assert!(
            text.starts_with("## clibench result: `node-repl`\n"),
            "{text}"
        );
        let terminal = crate::export::text::report(&Report::new(&result));
        assert!(terminal.starts_with("node-repl\n"), "{terminal}");
    }

    #[test]
    fn skipped_steps_are_listed_with_their_reason() {
        let mut result = result_with_cold(None);
        result
            .side
            .set_skipped(crate::Phase::Measure, 1, "same failure as measure trial 0");
        let text = report(&Report::new(&result));
        assert!(
            text.contains("**Skipped**\n\n- `measure:1`: `same failure as measure trial 0`\n"),
            "{text}"
        );
    }
}
