//! The comparison page: each metric's change with its interval against the noise
//! floor, the slopes, the table, the gaps and the failures.

use super::page::{busy_line, escape, failures, figure, glossary, metric_name, page};
use crate::compare::{Comparison, MetricComparison, Verdict};
use crate::export::cells::{self, Notation, SideName, presence};
use crate::export::charts::{self, Change, Tone};
use crate::metric::Metric;
use std::fmt::Write;

/// `comparison` as a self-contained HTML page: each metric's change with its
/// interval against the noise floor, then the table, the gaps and the failures.
pub fn comparison(comparison: &Comparison) -> String {
    let mut body = String::new();
    let names = cells::side_names(comparison);
    let [candidate, base] = names.map(|side| match side {
        SideName::Sha(text) | SideName::Overrides(text) => {
            format!("<code>{}</code>", escape(text))
        }
        SideName::AsItIs => SideName::AS_IT_IS.to_owned(),
        SideName::SharedOnly => SideName::SHARED_ONLY.to_owned(),
    });
    heading(&mut body, comparison, (&candidate, &base));
    changes(&mut body, comparison);
    slope_changes(&mut body, comparison);
    metrics_table(&mut body, comparison);
    missing(&mut body, comparison);
    failures(
        &mut body,
        &[
            ("base", &comparison.base_error, &comparison.base_failures),
            (
                "candidate",
                &comparison.candidate_error,
                &comparison.candidate_failures,
            ),
        ],
    );
    let metrics: Vec<Metric> = comparison
        .metrics
        .iter()
        .map(|row| row.metric)
        .chain(comparison.missing.iter().map(|m| m.metric))
        .collect();
    glossary(&mut body, &metrics);
    let [candidate, base] = names.map(|side| match side {
        SideName::Sha(text) | SideName::Overrides(text) => text,
        SideName::AsItIs => SideName::AS_IT_IS,
        SideName::SharedOnly => SideName::SHARED_ONLY,
    });
    page(&format!("clibench {candidate} vs {base}"), &body)
}

/// The title naming both sides (as HTML), the verdicts' headline and each side's busy
/// machine, if any.
fn heading(body: &mut String, comparison: &Comparison, (candidate, base): (&str, &str)) {
    let _ = writeln!(
        body,
        "<h1>clibench: {candidate} (candidate) vs {base} (base)</h1>"
    );
    let headline = cells::headline(&comparison.verdict_counts()).join(", ");
    let _ = writeln!(body, "<p class=\"headline\">{}.</p>", escape(&headline));
    for (role, facts) in [
        ("base: ", &comparison.base_facts),
        ("candidate: ", &comparison.candidate_facts),
    ] {
        if let Some(busy) = &facts.busy {
            busy_line(body, role, busy);
        }
    }
}

/// The changes chart: each metric's change with its interval against the noise floor.
fn changes(body: &mut String, comparison: &Comparison) {
    let rows: Vec<Change> = comparison
        .metrics
        .iter()
        .filter(|row| row.ratio.is_finite() && row.ci_low.is_finite() && row.ci_high.is_finite())
        .map(|row| Change {
            label: format!("{} {}", row.metric.name(), cells::signed_amount(row)),
            percent: (row.ratio - 1.0) * 100.0,
            low_percent: (row.ci_low - 1.0) * 100.0,
            high_percent: (row.ci_high - 1.0) * 100.0,
            floor_percent: row.floor * 100.0,
            tone: match row.verdict {
                Verdict::Regressed => Tone::Regressed,
                Verdict::Improved => Tone::Improved,
                _ => Tone::Neutral,
            },
        })
        .collect();
    if !rows.is_empty() {
        body.push_str("<section><h2>Changes</h2>\n");
        let caption = "Dot: the test's estimate of the change, candidate vs base. Whisker: \
             the test's own interval, at the level Holm's procedure judged the metric at. Grey \
             band: the metric's practical threshold (none for exact sizes on disk); a change \
             counts when its whisker clears no change and its dot lies outside the band. Red: \
             worse; green: better."
            .to_string();
        figure(
            body,
            "chart-changes",
            "Change of each metric with its interval and the noise floor",
            charts::changes(&rows),
            &caption,
        );
        body.push_str("</section>\n");
    }
}

/// The table of every metric compared.
fn metrics_table(body: &mut String, comparison: &Comparison) {
    if !comparison.metrics.is_empty() {
        body.push_str("<section><h2>Metrics</h2>\n<table>\n<thead><tr><th>Metric</th><th>Base</th><th>Candidate</th><th>Change</th><th>Delta</th>");
        body.push_str(
            "<th>Interval</th><th>Verdict</th><th>Could detect</th><th>Trials</th></tr></thead>\n<tbody>\n",
        );
        for row in &comparison.metrics {
            comparison_row(body, row);
        }
        body.push_str("</tbody>\n</table>\n</section>\n");
    }
}

/// The metrics only one side has.
fn missing(body: &mut String, comparison: &Comparison) {
    if !comparison.missing.is_empty() {
        body.push_str("<section><h2>Missing on a side</h2>\n<ul>\n");
        for missing in &comparison.missing {
            let _ = writeln!(
                body,
                "<li>{}: base {}; candidate {}</li>",
                metric_name(missing.metric),
                escape(&presence(missing.base.as_ref())),
                escape(&presence(missing.candidate.as_ref()))
            );
        }
        body.push_str("</ul>\n</section>\n");
    }
}

/// The slopes over a session's turns, which the changes chart (in percent) cannot draw:
/// each one's difference in its unit, its interval and verdict, coloured as the table.
fn slope_changes(out: &mut String, comparison: &Comparison) {
    let rows: Vec<&MetricComparison> = comparison
        .metrics
        .iter()
        .filter(|row| row.slope.is_some())
        .collect();
    if rows.is_empty() {
        return;
    }
    out.push_str(
        "<section><h2>Session slopes</h2>\n<p class=\"note\">A slope over the session's \
         turns is compared by its difference, candidate − base, in its own unit (a ratio of \
         slopes near zero says nothing): the test's interval of that difference and the \
         verdict read from it.</p>\n<ul>\n",
    );
    for row in rows {
        let class = match row.verdict {
            Verdict::Regressed => "regressed",
            Verdict::Improved => "improved",
            _ => "",
        };
        let _ = writeln!(
            out,
            "<li>{}: {} → {}: <strong>{}</strong>, interval {}, <span class=\"{class}\">{}</span></li>",
            metric_name(row.metric),
            escape(&Notation::DOCUMENT.side(row, false)),
            escape(&Notation::DOCUMENT.side(row, true)),
            escape(&cells::signed_amount(row)),
            escape(&Notation::DOCUMENT.interval(row)),
            escape(row.verdict.word())
        );
    }
    out.push_str("</ul>\n</section>\n");
}

fn comparison_row(out: &mut String, row: &MetricComparison) {
    let (class, word) = match row.verdict {
        Verdict::Regressed => ("regressed", row.verdict.word()),
        Verdict::Improved => ("improved", row.verdict.word()),
        other => ("", other.word()),
    };
    let _ = writeln!(
        out,
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{class}\">{}</td><td>{}</td><td>{}</td></tr>",
        metric_name(row.metric),
        escape(&Notation::DOCUMENT.side(row, false)),
        escape(&Notation::DOCUMENT.side(row, true)),
        Notation::DOCUMENT.change(row),
        // The absolute change beside the percent: "0.0%" of a 170 MiB bundle can still
        // be 70 KiB, which is what made it regress.
        escape(&cells::signed_amount(row)),
        Notation::DOCUMENT.interval(row),
        escape(word),
        // What the run could have seen and, for a row without a verdict, the trials its
        // spread would need for twice the threshold (as in the Markdown comment); an
        // exact size shows every byte.
        escape(&cells::detectable_and_trials(row).unwrap_or_else(|| "every byte".to_string())),
        escape(&cells::row_trials(row))
    );
}
