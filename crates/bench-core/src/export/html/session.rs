//! A measured session on the report page: each turn's latencies, memory and timeline.

use super::page::{escape, figure, legend, metric_name};
use crate::detail::{SessionRun, SessionTurn};
use crate::export::charts::{self, FittedLine, Moment, TurnLine};
use crate::metric::Metric;
use crate::stats::MetricStats;
use crate::units::{format_bytes, format_seconds};
use std::fmt::Write;

/// A start's name as a heading says it: `cold session` for the start named `cold`, and
/// `session` (not `session session`) for the session phase's own.
pub(super) fn session_name(session: &str) -> String {
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
pub(super) fn session(out: &mut String, runs: &[SessionRun], metrics: &[MetricStats]) {
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
    latency_charts(out, &runs, metrics);
    memory_chart(out, &runs, metrics);
    super::checkpoints::checkpoints(out, &runs);
    timeline_chart(out, &runs);
    out.push_str("</section>\n");
}

/// "Latency per turn": a chart per latency of [`TURN_LATENCIES`] that some turn has, one
/// line per trial, its caption giving the median over trials.
fn latency_charts(out: &mut String, runs: &[&SessionRun], metrics: &[MetricStats]) {
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
}

/// "Memory after each turn": one step line per trial and its fitted growth line.
fn memory_chart(out: &mut String, runs: &[&SessionRun], metrics: &[MetricStats]) {
    // One kind of memory for every line: PSS when every run has it on the turns it read
    // it on, as session_growth takes its slope of, else RSS; a chart mixing the two would
    // draw a false step.
    let all_pss = runs.iter().all(|run| run.has_pss());
    let kind = if all_pss {
        "proportional memory (PSS)"
    } else {
        "resident memory (RSS)"
    };
    let lines: Vec<TurnLine> = runs
        .iter()
        .map(|run| {
            let points: Vec<(u32, f64)> = run
                .memory_points(all_pss)
                .into_iter()
                .map(|(turn, bytes)| (turn, bytes as f64))
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
    // A long session reads PSS on about 100 of its turns: say which.
    let every = runs.iter().map(|run| run.pss_every).max().unwrap_or(1);
    let when = if all_pss && every > 1 {
        format!(
            "after every {every}th turn (and the warm-up and the last: a long session reads PSS on about 100)"
        )
    } else {
        "after each turn".to_owned()
    };
    let caption = format!(
        "The {kind} of the whole process family {when}, one step line per trial, \
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
}

/// "One turn, step by step": the moments of the turn [`timeline_turn`] picks.
fn timeline_chart(out: &mut String, runs: &[&SessionRun]) {
    if let Some((run, turn)) = timeline_turn(runs) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_named_session_is_not_a_session_session() {
        assert_eq!(session_name("cold"), "cold session");
        assert_eq!(session_name("session"), "session");
    }
}
