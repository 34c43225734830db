//! The report page of one result: its summary, charts, processes, staircase, screens
//! and the host's facts.

use super::page::{
    busy_line, css_id, escape, failures, figure, glossary, legend, metric_name, page,
};
use super::screens::screens;
use super::session::{session, session_name};
use crate::detail::MemorySeries;
use crate::export::charts::{self, Bar, Line, Orientation, Trials};
use crate::metric::{Metric, Phase};
use crate::report::Report;
use crate::result::ResultFile;
use crate::stats::MetricStats;
use crate::units::{format_bytes, format_fact, format_seconds};
use std::fmt::Write;

/// How many processes the "who holds the memory" chart shows.
const PROCESS_BARS: usize = 12;

/// A request value longer than this is folded under the request line: a scenario's
/// overrides carry its whole script (about 4,000 characters for `long-session`), which
/// filled the page's first screen above the summary.
const CONFIG_INLINE_CHARS: usize = 160;

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
    body.push_str(&crate::export::terminal::html(&report.terminal_output));
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
    let mut folded = Vec::new();
    for (key, value) in &request.config {
        let length = value.chars().count();
        if length > CONFIG_INLINE_CHARS {
            parts.push(format!("{} ({length} characters, below)", escape(key)));
            folded.push((key, value, length));
        } else {
            parts.push(format!("{} {}", escape(key), escape(value)));
        }
    }
    if !parts.is_empty() {
        let _ = writeln!(out, "<p class=\"request\">{}</p>", parts.join(" · "));
    }
    for (key, value, length) in folded {
        let _ = writeln!(
            out,
            "<details class=\"request\"><summary>{} ({length} characters)</summary>\
             <pre class=\"config\">{}</pre></details>",
            escape(key),
            escape(value)
        );
    }
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
                    match s.n {
                        // One value has no spread: "± 0" read as a measured zero.
                        1 => format!("{} (1 trial)", format(s.mean)),
                        _ => format!("{} ± {}", format(s.mean), format(s.std_dev)),
                    },
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
