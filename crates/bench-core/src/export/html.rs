//! One self-contained HTML page per result or comparison: the summary table, the
//! charts, the screen at ready, the glossary and the host facts.
//!
//! The page opens offline: no script, no external style, font or image; its CSS is
//! inline and its charts are inline SVG drawn by [`charts`]. A
//! Content-Security-Policy of `default-src 'none'` makes any fetch a browser error
//! rather than a silent request. Every string that comes from a result (process
//! names, screens, errors, facts) is HTML-escaped: the measured program is not
//! trusted.

mod checkpoints;

use super::cells::{self, Notation, SideName, presence, trials};
use super::charts::{
    self, Bar, Change, FittedLine, Line, Moment, Orientation, Tone, Trials, TurnLine,
};
use super::failures::{Failure, SideFailures};
use crate::compare::{Comparison, MetricComparison, Verdict};
use crate::detail::{MemorySeries, SessionRun, SessionTurn};
use crate::metric::{Metric, Phase};
use crate::report::Report;
use crate::result::ResultFile;
use crate::stats::MetricStats;
use crate::units::{format_bytes, format_fact, format_seconds};
use std::fmt::Write;

/// How many processes the "who holds the memory" chart shows.
const PROCESS_BARS: usize = 12;

/// `result` as a self-contained HTML page.
pub fn report(result: &ResultFile) -> String {
    let report = Report::new(result);
    let side = &result.side;
    let mut body = String::new();
    let _ = writeln!(
        body,
        "<h1>clibench result <code>{}</code></h1>",
        escape(&report.sha)
    );
    request_line(&mut body, &report);
    if let Some(busy) = &report.busy {
        busy_line(&mut body, "", busy);
    }
    body.push_str("<section id=\"summary\"><h2>Summary</h2>\n");
    if report.metrics.is_empty() {
        body.push_str("<p class=\"none\">No metric was recorded.</p>\n");
    } else {
        summary_table(&mut body, &report.metrics);
    }
    failures(&mut body, &[("", &report.error, &report.failures)]);
    body.push_str("</section>\n");

    time_to_ready(&mut body, side, &report.metrics);
    memory_over_time(&mut body, &side.memory_series);
    session(&mut body, &side.sessions, &report.metrics);
    body.push_str(&super::terminal::html(&report.terminal_output));
    processes(&mut body, &report);
    staircase(&mut body, result);
    screens(&mut body, result);
    glossary(
        &mut body,
        &report.metrics.iter().map(|m| m.metric).collect::<Vec<_>>(),
    );
    facts(&mut body, &report, side);
    page(&format!("clibench result {}", report.sha), &body)
}

/// The busy-host warning of a side (`role` names it in a comparison).
fn busy_line(body: &mut String, role: &str, busy: &crate::busy::BusyHost) {
    let _ = writeln!(
        body,
        "<p class=\"busy\"><strong>Warning</strong>: {}{}.</p>",
        escape(role),
        escape(&busy.to_string())
    );
}

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
            busy_line(&mut body, role, busy);
        }
    }
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
            &mut body,
            "chart-changes",
            "Change of each metric with its interval and the noise floor",
            charts::changes(&rows),
            &caption,
        );
        body.push_str("</section>\n");
    }
    slope_changes(&mut body, comparison);
    if !comparison.metrics.is_empty() {
        body.push_str("<section><h2>Metrics</h2>\n<table>\n<thead><tr><th>Metric</th><th>Base</th><th>Candidate</th><th>Change</th><th>Delta</th>");
        body.push_str(
            "<th>Interval</th><th>Verdict</th><th>Could detect</th><th>Trials</th></tr></thead>\n<tbody>\n",
        );
        for row in &comparison.metrics {
            comparison_row(&mut body, row);
        }
        body.push_str("</tbody>\n</table>\n</section>\n");
    }
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

/// `text` safe inside HTML text and quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    // Control characters and bidi overrides are shown escaped, as on a terminal: the
    // page may be printed to one (`--format html`), and an override would reorder
    // what the reader sees.
    for c in crate::text::inert(text).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "\
:root{color-scheme:light;--fg:#1d1d1f;--muted:#5f6368;--line:#e3e3e3;--bad:#c62828;--good:#1e8c3c}\
*{box-sizing:border-box}\
body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif;color:var(--fg);margin:0 auto;max-width:980px;padding:24px 20px 60px}\
h1{font-size:1.45em;margin:0 0 4px}h2{font-size:1.15em;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}\
h3{font-size:1em;margin:18px 0 6px}\
code,pre{font-family:ui-monospace,'SFMono-Regular',Menlo,Consolas,'DejaVu Sans Mono',monospace;font-size:.92em}\
.request,.none,figcaption,.note{color:var(--muted)}\
table{border-collapse:collapse;margin:6px 0;font-variant-numeric:tabular-nums}\
th,td{padding:4px 10px;border-bottom:1px solid var(--line);text-align:right;vertical-align:top}\
th:first-child,td:first-child{text-align:left}\
thead th{font-weight:600;border-bottom:2px solid #ccc}\
tr.phase th{text-align:left;background:#f6f6f6;font-weight:600;color:var(--muted);font-size:.85em;text-transform:uppercase;letter-spacing:.04em}\
td.failed{color:var(--bad)}\
abbr{text-decoration:underline dotted;cursor:help}\
figure{margin:8px 0 18px}figure svg{max-width:100%;height:auto;display:block}\
figcaption{font-size:.9em;margin-top:2px}\
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:.9em;margin:2px 0 4px}\
.swatch{display:inline-block;width:11px;height:11px;border-radius:50%;margin-right:5px;vertical-align:-1px}\
pre.screen{background:#111;color:#e6e6e6;padding:12px 14px;border-radius:6px;overflow-x:auto;line-height:1.2;font-size:.8em;width:fit-content;max-width:calc(100% - 28px)}\
details{margin:6px 0}summary{cursor:pointer;font-weight:600}\
dl.glossary dt{font-weight:600;margin-top:8px}dl.glossary dd{margin:2px 0 0 18px}\
.regressed{color:var(--bad);font-weight:600}.improved{color:var(--good)}\
ul.failures li{color:var(--bad)}\
table.facts td{text-align:left}\
";

/// `body` (HTML, escaped by its maker) in the one page frame every report uses: its
/// style, a title escaped here, and a policy that lets the page load nothing.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}\
         <footer class=\"note\"><p>Made by clibench. This page is self-contained: it loads nothing from anywhere.</p></footer>\n\
         </body>\n</html>\n",
        escape(title)
    )
}

fn request_line(out: &mut String, report: &Report) {
    let request = &report.request;
    let mut parts = Vec::new();
    if let Some(repository) = &request.repository {
        parts.push(format!("repository <code>{}</code>", escape(repository)));
    }
    if let Some(pr) = request.pr {
        parts.push(format!("pull request #{pr}"));
    }
    if let Some(run) = &request.run_id {
        parts.push(format!("run <code>{}</code>", escape(run)));
    }
    if let Some(harness) = &request.harness_sha {
        parts.push(format!("harness <code>{}</code>", escape(harness)));
    }
    for (key, value) in &request.config {
        parts.push(format!("{} {}", escape(key), escape(value)));
    }
    if !parts.is_empty() {
        let _ = writeln!(out, "<p class=\"request\">{}</p>", parts.join(" · "));
    }
}

/// A metric's name with its glossary entry as a tooltip.
fn metric_name(metric: Metric) -> String {
    format!(
        "<abbr title=\"{} ({})\"><code>{}</code></abbr>",
        escape(metric.description()),
        escape(&metric.unit_and_direction()),
        metric.name()
    )
}

fn summary_table(out: &mut String, metrics: &[MetricStats]) {
    out.push_str(
        "<table class=\"summary\">\n<thead><tr><th>Metric</th><th>Median</th><th>Mean ± SD</th>\
         <th>Min</th><th>Max</th><th>Trials</th><th>Failed</th></tr></thead>\n<tbody>\n",
    );
    for phase in Phase::ALL {
        let rows: Vec<&MetricStats> = metrics
            .iter()
            .filter(|stats| stats.metric.phase() == phase)
            .collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "<tr class=\"phase\"><th colspan=\"7\">{phase}</th></tr>"
        );
        for stats in rows {
            let unit = stats.unit;
            // A slope's unit is a rate: "1.0 MiB" alone would read as a size. Short, since
            // the mean ± SD cell holds it twice.
            let per = stats.metric.per_short();
            let format = |value: f64| format!("{}{per}", unit.format(value));
            let cells = match &stats.summary {
                Some(s) => [
                    format(s.median),
                    format!("{} ± {}", format(s.mean), format(s.std_dev)),
                    format(s.min),
                    format(s.max),
                ],
                None => std::array::from_fn(|_| "–".to_string()),
            };
            let failed_class = if stats.errored > 0 {
                " class=\"failed\""
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td{failed_class}>{}</td></tr>",
                metric_name(stats.metric),
                escape(&cells[0]),
                escape(&cells[1]),
                escape(&cells[2]),
                escape(&cells[3]),
                stats.n(),
                stats.errored
            );
        }
    }
    out.push_str("</tbody>\n</table>\n");
}

fn failures(out: &mut String, sides: &[SideFailures<'_>]) {
    let lines = super::failures::failures(sides);
    if lines.is_empty() {
        return;
    }
    out.push_str("<h3>Failures</h3>\n<ul class=\"failures\">\n");
    for (prefix, failure) in lines {
        let _ = match failure {
            Failure::Run(error) => writeln!(out, "<li>{prefix}run: {}</li>", escape(error)),
            Failure::Sample(sample) => writeln!(
                out,
                "<li>{prefix}<code>{}</code> trial {}: {}</li>",
                sample.metric,
                sample.trial,
                escape(&sample.error)
            ),
        };
    }
    out.push_str("</ul>\n");
}

/// A chart in a `<figure>` with a tooltip (`<title>`) and a caption; a chart that
/// could not be drawn is replaced by the reason.
fn figure(
    out: &mut String,
    id: &str,
    title: &str,
    svg: Result<String, charts::ChartError>,
    caption: &str,
) {
    let _ = writeln!(out, "<figure id=\"{id}\">");
    match svg {
        Ok(svg) => {
            // The chart's own tooltip: the first child of the <svg> element.
            let title = format!("<title>{}</title>", escape(title));
            match svg.find('>') {
                Some(open) => {
                    out.push_str(&svg[..=open]);
                    out.push_str(&title);
                    out.push_str(&svg[open + 1..]);
                }
                None => out.push_str(&svg),
            }
        }
        Err(error) => {
            let _ = writeln!(out, "<p class=\"none\">{}</p>", escape(&error.to_string()));
        }
    }
    let _ = writeln!(out, "<figcaption>{caption}</figcaption>\n</figure>");
}

fn legend(out: &mut String, entries: &[String]) {
    out.push_str("<div class=\"legend\">");
    for (index, entry) in entries.iter().enumerate() {
        let _ = write!(
            out,
            "<span><span class=\"swatch\" style=\"background:{}\"></span>{}</span>",
            charts::css_color(index),
            escape(entry)
        );
    }
    out.push_str("</div>\n");
}

fn samples(side: &crate::result::Side, metric: Metric) -> Vec<(u32, f64)> {
    let mut points: Vec<(u32, f64)> = side
        .metrics
        .get(&metric)
        .into_iter()
        .flatten()
        .filter_map(|o| o.value.map(|value| (o.trial, value)))
        .collect();
    points.sort_by_key(|p| p.0);
    points
}

/// The time-to-ready chart: each cold and warm sample, with the medians that
/// `metrics`, the report's statistics, already hold.
fn time_to_ready(out: &mut String, side: &crate::result::Side, metrics: &[MetricStats]) {
    let groups = [Metric::Cold, Metric::Warm].map(|metric| Trials {
        points: samples(side, metric),
        median: metrics
            .iter()
            .find(|stats| stats.metric == metric)
            .and_then(MetricStats::median),
    });
    if groups.iter().all(|group| group.points.is_empty()) {
        return;
    }
    out.push_str("<section id=\"ready\"><h2>Time to ready</h2>\n");
    let entries = [("cold", &groups[0]), ("warm", &groups[1])].map(|(name, group)| {
        format!(
            "{name}: {} trials, median {}",
            group.points.len(),
            group.median.map_or("–".to_string(), format_seconds)
        )
    });
    legend(out, &entries);
    figure(
        out,
        "chart-ready",
        "Time to ready per trial, cold and warm",
        charts::time_to_ready(&groups),
        "Each dot is one trial's start, from spawn in a terminal until ready; each line is \
         the median. Cold is the trial's first start, warm the second.",
    );
    out.push_str("</section>\n");
}

fn memory_over_time(out: &mut String, all: &[MemorySeries]) {
    if all.is_empty() {
        return;
    }
    out.push_str("<section id=\"memory\"><h2>Memory over time</h2>\n");
    let mut sessions: Vec<&str> = Vec::new();
    for series in all {
        if !sessions.contains(&series.session.as_str()) {
            sessions.push(&series.session);
        }
    }
    for session in sessions {
        let mut series: Vec<&MemorySeries> = all.iter().filter(|s| s.session == session).collect();
        series.sort_by_key(|s| s.trial);
        let _ = writeln!(out, "<h3>{}</h3>", escape(&session_name(session)));
        let entries: Vec<String> = series
            .iter()
            .map(|s| {
                format!(
                    "trial {}: peak {}",
                    s.trial,
                    format_bytes(s.peak_rss_bytes() as f64)
                )
            })
            .collect();
        legend(out, &entries);
        let lines: Vec<Line> = series
            .iter()
            .map(|s| Line {
                points: s.points.iter().map(|p| (p.t_ms, p.rss_bytes)).collect(),
                ready_ms: s.ready_ms,
            })
            .collect();
        let id = format!("chart-memory-{}", css_id(session));
        figure(
            out,
            &id,
            &format!(
                "Resident memory of the process family during the {}",
                session_name(session)
            ),
            charts::memory_over_time(&lines),
            "Resident memory (RSS) of the whole process family, sampled in the background from \
             spawn until the measurement ended; one line per trial. A ring marks the moment the \
             program was ready.",
        );
    }
    out.push_str("</section>\n");
}

/// A start's name as a heading says it: `cold session` for the start named `cold`, and
/// `session` (not `session session`) for the session phase's own.
fn session_name(session: &str) -> String {
    if session == "session" || session.ends_with(" session") {
        session.to_owned()
    } else {
        format!("{session} session")
    }
}

/// One per-turn value of a turn, when it has it.
type TurnValue = fn(&SessionTurn) -> Option<f64>;

/// The per-turn latencies the session section draws, each in its own chart: their
/// scales differ by orders of magnitude (a turn takes seconds, a render milliseconds).
const TURN_LATENCIES: [(Metric, TurnValue); 4] = [
    (Metric::Turn, |t| Some(t.turn_seconds)),
    (Metric::Submit, |t| t.submit_seconds),
    (Metric::FirstToken, |t| t.first_token_seconds),
    (Metric::StreamRender, |t| t.stream_render_seconds),
];

/// "Session: the agent at work": latency and memory per turn, one line per trial, and
/// the timeline of one turn.
fn session(out: &mut String, runs: &[SessionRun], metrics: &[MetricStats]) {
    let mut runs: Vec<&SessionRun> = runs.iter().filter(|run| !run.turns.is_empty()).collect();
    if runs.is_empty() {
        return;
    }
    runs.sort_by_key(|run| run.trial);
    out.push_str("<section id=\"session\"><h2>Session: the agent at work</h2>\n");
    let turns: usize = runs.iter().map(|run| run.turns.len()).sum();
    let mut dialects: Vec<&str> = runs.iter().map(|run| run.dialect.as_str()).collect();
    dialects.dedup();
    let _ = writeln!(
        out,
        "<p class=\"note\">{} trials, {turns} turns in all; the agent spoke the {} dialect to \
         the trial's model endpoint. Each turn's prompt was typed key by key, then Enter.</p>",
        runs.len(),
        escape(&dialects.join(", "))
    );
    let trial_entries: Vec<String> = runs
        .iter()
        .map(|run| format!("trial {}", run.trial))
        .collect();

    out.push_str("<h3>Latency per turn</h3>\n");
    legend(out, &trial_entries);
    for (metric, value) in TURN_LATENCIES {
        let lines: Vec<TurnLine> = runs
            .iter()
            .map(|run| TurnLine {
                points: run
                    .turns
                    .iter()
                    .filter_map(|t| value(t).map(|v| (t.turn, v)))
                    .collect(),
                fit: None,
            })
            .collect();
        if lines.iter().all(|line| line.points.is_empty()) {
            continue;
        }
        let median = metrics
            .iter()
            .find(|stats| stats.metric == metric)
            .and_then(MetricStats::median)
            .map_or(String::new(), |m| {
                format!(" The median over trials is {}.", format_seconds(m))
            });
        figure(
            out,
            &format!("chart-session-{}", metric.name()),
            &format!("{} per turn, one line per trial", metric.name()),
            charts::seconds_per_turn(&lines, metric.name()),
            &format!(
                "{} {}{}",
                metric_name(metric),
                escape(metric.description()),
                escape(&median)
            ),
        );
    }

    // One kind of memory for every line: PSS when every turn has it, as session_growth
    // takes its slope of, else RSS; a chart mixing the two would draw a false step.
    let all_pss = runs
        .iter()
        .flat_map(|run| &run.turns)
        .all(|t| t.pss_bytes.is_some());
    let kind = if all_pss {
        "proportional memory (PSS)"
    } else {
        "resident memory (RSS)"
    };
    let lines: Vec<TurnLine> = runs
        .iter()
        .map(|run| {
            let points: Vec<(u32, f64)> = run
                .turns
                .iter()
                .map(|t| (t.turn, t.memory_bytes(all_pss) as f64))
                .collect();
            TurnLine {
                fit: FittedLine::through(&points, run.warmup_turns),
                points,
            }
        })
        .collect();
    out.push_str("<h3>Memory after each turn</h3>\n");
    let entries: Vec<String> = runs
        .iter()
        .map(|run| match run.growth_bytes_per_turn {
            Some(slope) => format!("trial {}: grows {} per turn", run.trial, signed(slope)),
            None => format!("trial {}: no slope", run.trial),
        })
        .collect();
    legend(out, &entries);
    let growth = metrics
        .iter()
        .find(|stats| stats.metric == Metric::SessionGrowth)
        .and_then(MetricStats::median)
        .map_or("no growth slope was recorded".to_string(), |m| {
            format!("grows {} per turn", signed(m))
        });
    let warmup = runs.iter().map(|run| run.warmup_turns).max().unwrap_or(0);
    let caption = format!(
        "The {kind} of the whole process family after each turn, one step line per trial, \
         and the least-squares line over the turns after the warm-up (turn {warmup} and \
         before), drawn dark over the trial's colour. The median trial {growth} ({} metric: \
         that line's slope).",
        metric_name(Metric::SessionGrowth)
    );
    figure(
        out,
        "chart-session-memory",
        "Family memory after each turn, one line per trial",
        charts::memory_per_turn(
            &lines,
            if all_pss {
                "proportional memory"
            } else {
                "resident memory"
            },
        ),
        &caption,
    );

    checkpoints::checkpoints(out, &runs);

    if let Some((run, turn)) = timeline_turn(&runs) {
        out.push_str("<h3>One turn, step by step</h3>\n");
        let moments = turn_moments(turn);
        let what = if turn.tool_call_at_seconds.is_some() {
            "the median trial's turn with a tool call"
        } else {
            "the median trial's longest turn"
        };
        let caption = format!(
            "Trial {}, turn {}: {what}. The moments on the terminal's clock, the model \
             endpoint's journal put on it: what the agent did (request sent, text drawn) \
             between what the endpoint did (chunks written). Each bar is the wait since the \
             moment above it.",
            run.trial, turn.turn
        );
        figure(
            out,
            "chart-session-timeline",
            &format!("The moments of trial {}'s turn {}", run.trial, turn.turn),
            charts::timeline(&moments),
            &escape(&caption),
        );
    }
    out.push_str("</section>\n");
}

/// Bytes with a sign: `+1.0 MiB`, `-512 B`.
fn signed(bytes: f64) -> String {
    let text = format_bytes(bytes);
    if bytes >= 0.0 {
        format!("+{text}")
    } else {
        text
    }
}

/// The turn whose timeline the report draws: in the trial whose median turn time is the
/// median of the trials (the lower one of an even count), its turn with a tool call (the
/// longest of several), else its longest turn.
fn timeline_turn<'a>(runs: &[&'a SessionRun]) -> Option<(&'a SessionRun, &'a SessionTurn)> {
    let mut ranked: Vec<(f64, &SessionRun)> = runs
        .iter()
        .filter_map(|run| {
            let times: Vec<f64> = run.turns.iter().map(|t| t.turn_seconds).collect();
            crate::stats::Summary::from_values(&times).map(|s| (s.median, *run))
        })
        .collect();
    ranked.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.trial.cmp(&b.1.trial)));
    let run = ranked.get(ranked.len().checked_sub(1)? / 2)?.1;
    let longest = |tool: bool| {
        run.turns
            .iter()
            .filter(|t| !tool || t.tool_call_at_seconds.is_some())
            .max_by(|a, b| a.turn_seconds.total_cmp(&b.turn_seconds))
    };
    longest(true)
        .or_else(|| longest(false))
        .map(|turn| (run, turn))
}

/// A turn's moments in time order, each one the turn recorded (older results lack the
/// chunk times, and their timeline has only what they hold).
fn turn_moments(turn: &SessionTurn) -> Vec<Moment> {
    let plus = |at: Option<f64>, wait: Option<f64>| Some(at? + wait?);
    let candidates = [
        ("Enter", Some(0.0)),
        ("request received", turn.submit_seconds),
        ("tool call written", turn.tool_call_at_seconds),
        (
            "result request received",
            plus(turn.tool_call_at_seconds, turn.tool_roundtrip_seconds),
        ),
        ("first chunk written", turn.first_chunk_at_seconds),
        (
            "first text visible",
            plus(turn.first_chunk_at_seconds, turn.first_token_seconds),
        ),
        ("last chunk written", turn.last_chunk_at_seconds),
        (
            "final text visible",
            plus(turn.last_chunk_at_seconds, turn.stream_render_seconds),
        ),
        ("prompt takes input", Some(turn.turn_seconds)),
    ];
    let mut moments: Vec<Moment> = candidates
        .into_iter()
        .filter_map(|(label, at)| {
            at.map(|seconds| Moment {
                label: label.to_string(),
                seconds,
            })
        })
        .collect();
    // Stable: moments at the same time keep the order of the turn's story.
    moments.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
    moments
}

fn processes(out: &mut String, report: &Report) {
    if report.processes.is_empty() {
        return;
    }
    out.push_str("<section id=\"processes\"><h2>Who holds the memory</h2>\n");
    let bars: Vec<Bar> = report
        .processes
        .iter()
        .take(PROCESS_BARS)
        .map(|p| Bar {
            label: match p.role {
                Some(role) => format!("{} ({}, {})", p.name, p.pid, role.word()),
                None => format!("{} ({})", p.name, p.pid),
            },
            bytes: p.rss,
            inner_bytes: p.pss,
            note: Some(format_bytes(p.rss as f64)),
        })
        .collect();
    let total: u64 = report.processes.iter().map(|p| p.rss).sum();
    let more = report.processes.len().saturating_sub(PROCESS_BARS);
    let caption = format!(
        "Each process of the family at the last memory measurement, largest first: the wide \
         bar is its resident memory (RSS), the narrow one its proportional share (PSS). {} \
         processes, {} RSS in all{}.",
        report.processes.len(),
        format_bytes(total as f64),
        if more > 0 {
            format!("; {more} smaller ones are not drawn")
        } else {
            String::new()
        }
    );
    figure(
        out,
        "chart-processes",
        "Resident memory per process at the measurement",
        charts::bars(&bars, "memory", Orientation::Horizontal),
        &escape(&caption),
    );
    process_table(out, report);
    out.push_str("</section>\n");
}

/// How much of a command line the process table shows, in characters.
const CMDLINE_CHARS: usize = 120;

/// Each drawn process with its role and command line: `python3 (28615)` alone does not
/// say which is the program and which a daemon it left behind.
fn process_table(out: &mut String, report: &Report) {
    out.push_str(
        "<table class=\"processes\">\n<thead><tr><th>Process</th><th>Role</th><th>RSS</th>\
         <th>PSS</th><th>Command line</th></tr></thead>\n<tbody>\n",
    );
    for p in report.processes.iter().take(PROCESS_BARS) {
        let cmdline = p.cmdline.as_deref().map_or(String::from("–"), |line| {
            let inert = crate::text::inert(line).into_owned();
            if inert.chars().count() > CMDLINE_CHARS {
                let cut: String = inert.chars().take(CMDLINE_CHARS - 1).collect();
                format!("{cut}…")
            } else {
                inert
            }
        });
        let _ = writeln!(
            out,
            "<tr><td>{} ({})</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
            escape(&crate::text::inert(&p.name)),
            p.pid,
            p.role.map_or("–", |role| role.word()),
            format_bytes(p.rss as f64),
            p.pss
                .map_or(String::from("–"), |pss| format_bytes(pss as f64)),
            escape(&cmdline)
        );
    }
    out.push_str("</tbody>\n</table>\n");
}

fn staircase(out: &mut String, result: &ResultFile) {
    let runs = &result.side.staircases;
    let Some(run) = runs.iter().min_by_key(|run| run.trial) else {
        return;
    };
    out.push_str("<section id=\"staircase\"><h2>Staircase: the cost of one more instance</h2>\n");
    let mut bars = vec![Bar {
        label: "before".into(),
        bytes: run.baseline_rss_bytes,
        inner_bytes: None,
        note: None,
    }];
    for step in &run.steps {
        bars.push(Bar {
            label: format!("{}", step.instances),
            bytes: step.rss_bytes,
            inner_bytes: step.pss_bytes,
            note: Some(charts::signed_bytes(step.rss_delta_bytes)),
        });
    }
    bars.push(Bar {
        label: "stopped".into(),
        bytes: run.after_teardown_rss_bytes,
        inner_bytes: None,
        note: Some(format!(
            "{} given back",
            format_bytes(run.reclaimed_rss_bytes as f64)
        )),
    });
    let average = if run.steps.is_empty() {
        "–".to_string()
    } else {
        let sum: i64 = run.steps.iter().map(|s| s.rss_delta_bytes).sum();
        format_bytes(sum as f64 / run.steps.len() as f64)
    };
    let caption = format!(
        "Trial {} of {}, {}. The family's resident memory before the first instance, after \
         each added instance settled (the label above each bar is what that instance added; \
         narrow bar: PSS), and after every instance was stopped. Average per instance: {}; \
         given back when stopped: {}.",
        run.trial,
        runs.len(),
        run.instance.meaning(),
        average,
        format_bytes(run.reclaimed_rss_bytes as f64)
    );
    figure(
        out,
        "chart-staircase",
        "Family memory per number of running instances",
        charts::bars(&bars, "resident memory", Orientation::Vertical),
        &escape(&caption),
    );
    out.push_str("</section>\n");
}

fn screens(out: &mut String, result: &ResultFile) {
    let screens = &result.side.screens;
    if screens.is_empty() {
        return;
    }
    out.push_str("<section id=\"screens\"><h2>The screen at ready</h2>\n");
    // The first screen in full; the others (usually the same program again) folded.
    for (index, screen) in screens.iter().enumerate() {
        let heading = format!(
            "{}, trial {}",
            escape(&session_name(&screen.session)),
            screen.trial
        );
        let text = escape(&crop_screen(&screen.text));
        if index == 0 {
            let _ = writeln!(
                out,
                "<h3>{heading}</h3>\n<pre class=\"screen\">{text}</pre>"
            );
        } else {
            let _ = writeln!(
                out,
                "<details><summary>{heading}</summary>\n<pre class=\"screen\">{text}</pre></details>"
            );
        }
    }
    out.push_str("</section>\n");
}

/// Rows and columns of margin kept around a screen's text.
const CROP_MARGIN_ROWS: usize = 1;
const CROP_MARGIN_COLUMNS: usize = 2;
/// The longest run of empty rows kept inside a screen; a longer one becomes a line
/// that says how many rows it held.
const CROP_EMPTY_ROWS: usize = 3;

/// `screen` cut to the rows and columns that hold text, with a small margin: a program
/// that draws a few lines at the top of a 50-row terminal is not a tall black box.
/// Columns are counted in characters (the screen text has one per cell); a screen
/// without text stays as it is.
pub fn crop_screen(screen: &str) -> String {
    let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let Some(first) = rows.iter().position(|row| !row.is_empty()) else {
        return screen.to_string();
    };
    // `first` exists, so a last non-empty row does too.
    let last = rows
        .iter()
        .rposition(|row| !row.is_empty())
        .unwrap_or(first);
    let indent = rows[first..=last]
        .iter()
        .filter(|row| !row.is_empty())
        .map(|row| row.chars().take_while(|c| *c == ' ').count())
        .min()
        .unwrap_or(0);
    let skip = indent.saturating_sub(CROP_MARGIN_COLUMNS);
    let top = first.saturating_sub(CROP_MARGIN_ROWS);
    let bottom = (last + CROP_MARGIN_ROWS).min(rows.len() - 1);
    let mut cropped: Vec<String> = Vec::new();
    let mut empty = 0;
    for row in rows[top..=bottom].iter().chain([&"x"]) {
        if row.is_empty() {
            empty += 1;
            continue;
        }
        // A full-screen program draws its header at the top and its prompt at the bottom:
        // the empty rows between would be a tall black box, so a long run of them is
        // said in one line.
        if empty > CROP_EMPTY_ROWS {
            cropped.extend([
                String::new(),
                format!("({empty} empty rows)"),
                String::new(),
            ]);
        } else {
            cropped.extend(std::iter::repeat_n(String::new(), empty));
        }
        empty = 0;
        cropped.push(row.chars().skip(skip).collect());
    }
    // The "x" that ended the last run of empty rows.
    cropped.pop();
    // The right margin: trailing spaces on the widest row keep the box off the text.
    let width = cropped
        .iter()
        .map(|row| row.chars().count())
        .max()
        .unwrap_or(0);
    if let Some(widest) = cropped.iter_mut().find(|row| row.chars().count() == width) {
        widest.push_str(&" ".repeat(CROP_MARGIN_COLUMNS));
    }
    cropped.join("\n")
}

fn glossary(out: &mut String, metrics: &[Metric]) {
    if metrics.is_empty() {
        return;
    }
    out.push_str(
        "<section id=\"glossary\"><h2>What the metrics mean</h2>\n<dl class=\"glossary\">\n",
    );
    for metric in Metric::ALL.into_iter().filter(|m| metrics.contains(m)) {
        let _ = writeln!(
            out,
            "<dt><code>{}</code> <span class=\"note\">({})</span></dt><dd>{}</dd>",
            metric.name(),
            escape(&metric.unit_and_direction()),
            escape(metric.description())
        );
    }
    out.push_str("</dl>\n</section>\n");
}

fn facts(out: &mut String, report: &Report, side: &crate::result::Side) {
    // The load the trials started under: numbers from a busy machine read differently.
    let load = crate::compare::SideFacts::of(side)
        .load_average_1m
        .map(|(low, high)| {
            let range = if low == high {
                format!("{low:.2}")
            } else {
                format!("{low:.2} to {high:.2}")
            };
            (
                "load_average".to_owned(),
                format!("{range} (1 min, at the start of the trials)"),
            )
        });
    if report.runtime.is_empty()
        && report.artifacts.is_empty()
        && report.timings.is_empty()
        && load.is_none()
    {
        return;
    }
    out.push_str("<section id=\"facts\"><h2>Host and run facts</h2>\n");
    let table = |out: &mut String, title: &str, rows: Vec<(String, String)>| {
        if rows.is_empty() {
            return;
        }
        let _ = writeln!(out, "<h3>{title}</h3>\n<table class=\"facts\">");
        for (key, value) in rows {
            let _ = writeln!(
                out,
                "<tr><td><code>{}</code></td><td>{}</td></tr>",
                escape(&key),
                escape(&value)
            );
        }
        out.push_str("</table>\n");
    };
    table(
        out,
        "Host and tools",
        report
            .runtime
            .iter()
            .map(|(k, v)| (k.clone(), format_fact(k, v)))
            .chain(load)
            .collect(),
    );
    table(
        out,
        "Artifacts",
        report
            .artifacts
            .iter()
            .map(|(k, v)| (k.clone(), format_bytes(*v as f64)))
            .collect(),
    );
    table(
        out,
        "Timings",
        report
            .timings
            .iter()
            .map(|(k, v)| (k.clone(), format_seconds(*v)))
            .collect(),
    );
    out.push_str("</section>\n");
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
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{class}\">{}</td><td>{}</td><td>{} / {}</td></tr>",
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
        escape(&trials(&row.base)),
        escape(&trials(&row.candidate))
    );
}

/// `text` reduced to letters, digits and dashes, for an element id.
fn css_id(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_text_and_attributes() {
        assert_eq!(
            escape(r#"<script>alert("x") & 'y'</script>"#),
            "&lt;script&gt;alert(&quot;x&quot;) &amp; &#39;y&#39;&lt;/script&gt;"
        );
    }

    #[test]
    fn the_screen_is_cropped_to_its_text_with_a_margin() {
        let screen = "\n\n\n      hello\n\n        world   \n\n\n\n\n";
        assert_eq!(crop_screen(screen), "\n  hello\n\n    world  \n");
        assert_eq!(crop_screen("a\nb"), "a  \nb");
        assert_eq!(crop_screen("   \n  "), "   \n  ");
    }

    #[test]
    fn a_long_run_of_empty_rows_inside_a_screen_is_said_in_one_line() {
        let screen = format!(" header\n{}> \n", "\n".repeat(40));
        assert_eq!(crop_screen(&screen), " header\n\n(40 empty rows)  \n\n>");
        assert_eq!(crop_screen("a\n\n\n\nb"), "a  \n\n\n\nb");
    }

    #[test]
    fn a_start_named_session_is_not_a_session_session() {
        assert_eq!(session_name("cold"), "cold session");
        assert_eq!(session_name("session"), "session");
    }

    #[test]
    fn ids_are_tame() {
        assert_eq!(css_id("ui"), "ui");
        assert_eq!(css_id("a\"b c"), "a-b-c");
    }
}
