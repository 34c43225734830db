//! A long session's checkpoints in the HTML report: the keystroke echo and the bytes
//! written per key at the idle prompt every `checkpoint_every` turns, one dot per
//! checkpoint and trial, each trial with the least-squares line whose slope is
//! `lag_growth` or `render_growth` (per 100 turns).

use super::page::{escape, figure, legend, metric_name};
use crate::detail::{SessionCheckpoint, SessionRun};
use crate::export::charts::{self, FittedLine, TurnLine};
use crate::metric::Metric;
use crate::stats::slope_change::run_slope;
use crate::units::Unit;
use std::fmt::Write;

/// One value a checkpoint has, when it has it.
type CheckpointValue = fn(&SessionCheckpoint) -> Option<f64>;

/// A checkpoint chart: the slope it shows, its value's name, the value, how it reads.
type CheckpointChart = (Metric, &'static str, CheckpointValue, fn(f64) -> String);

/// "At each checkpoint": the echo and bytes-per-key charts of the trials with two
/// checkpoints or more; nothing for a session of a few turns (one checkpoint, after its
/// last turn, which has no slope).
pub(super) fn checkpoints(out: &mut String, runs: &[&SessionRun]) {
    let runs: Vec<&SessionRun> = runs
        .iter()
        .copied()
        .filter(|run| run.checkpoints.len() >= 2)
        .collect();
    if runs.is_empty() {
        return;
    }
    let every = runs
        .iter()
        .find_map(|run| Some(run.checkpoints.get(1)?.turn - run.checkpoints.first()?.turn))
        .unwrap_or(0);
    let _ = writeln!(
        out,
        "<h3>At each checkpoint</h3>\n<p class=\"note\">Every {every} turns the session \
         stops at the idle prompt, types a few letters one at a time and erases them: the \
         median time until each letter's echo, and the bytes the agent wrote per letter. A \
         cost that grows with the session (an O(session) redraw per key) shows as a \
         rising line.</p>"
    );
    let charts: [CheckpointChart; 2] = [
        (
            Metric::LagGrowth,
            "keystroke echo",
            SessionCheckpoint::key_echo_median,
            |seconds| Unit::Seconds.format(seconds),
        ),
        (
            Metric::RenderGrowth,
            "bytes per key",
            |checkpoint| Some(checkpoint.bytes_per_key),
            |bytes| Unit::Bytes.format(bytes),
        ),
    ];
    for (metric, desc, value, format) in charts {
        let lines: Vec<TurnLine> = runs
            .iter()
            .map(|run| {
                let points: Vec<(u32, f64)> = run
                    .checkpoints
                    .iter()
                    .filter_map(|c| Some((c.turn, value(c)?)))
                    .collect();
                TurnLine {
                    fit: FittedLine::through(&points, run.warmup_turns),
                    points,
                }
            })
            .collect();
        if lines.iter().all(|line| line.points.is_empty()) {
            continue;
        }
        let entries: Vec<String> = runs
            .iter()
            .map(|run| slope_words(run, metric, format))
            .collect();
        legend(out, &entries);
        let svg = match metric {
            Metric::LagGrowth => charts::seconds_per_turn(&lines, desc),
            _ => charts::bytes_per_turn(&lines, desc),
        };
        let caption = format!(
            "The {desc} at each checkpoint, one dot per checkpoint and trial, and each \
             trial's least-squares line over the checkpoints after its warm-up, drawn dark \
             over the trial's colour; its slope per 100 turns is {} ({}).",
            metric_name(metric),
            escape(metric.description())
        );
        figure(
            out,
            &format!("chart-checkpoint-{}", metric.name()),
            &format!("{desc} at each checkpoint, one line per trial"),
            svg,
            &caption,
        );
    }
}

/// `trial 0: +51.1 ms ± 9.6 ms per 100 turns`, with `faster than linear` when the fit
/// says so, or why there is no slope.
fn slope_words(run: &SessionRun, metric: Metric, format: fn(f64) -> String) -> String {
    let trial = run.trial;
    let Some(fit) = run_slope(run, metric) else {
        return format!("trial {trial}: no slope (two checkpoints after the warm-up needed)");
    };
    let sign = if fit.slope > 0.0 { "+" } else { "" };
    let error = fit
        .std_error
        .map_or(String::new(), |error| format!(" ± {}", format(error)));
    let curve = if fit.faster_than_linear() {
        ", faster than linear"
    } else {
        ""
    };
    format!(
        "trial {trial}: {sign}{}{error} per 100 turns{curve}",
        format(fit.slope)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Fit;

    fn run(checkpoints: u32) -> SessionRun {
        SessionRun {
            trial: 0,
            dialect: String::new(),
            turns: Vec::new(),
            growth_bytes_per_turn: None,
            warmup_turns: 1,
            pss_every: 1,
            growth: None,
            // 0.5 ms a turn: 50 ms per 100 turns, clearly curving upwards.
            lag: Some(Fit {
                slope: 0.0005,
                std_error: Some(0.0001),
                walk_std_error: None,
                points: checkpoints,
                curvature_t: Some(4.0),
            }),
            render: None,
            checkpoints: (1..=checkpoints)
                .map(|k| SessionCheckpoint {
                    turn: 10 * k,
                    key_echo_seconds: vec![0.005 * f64::from(k)],
                    bytes_per_key: 800.0,
                    rss_bytes: 100,
                    pss_bytes: None,
                    idle_cpu_share: None,
                    idle_bytes_per_second: None,
                })
                .collect(),
            idle_seconds: 1.0,
            idle_cpu_share: None,
            idle_monotonic_ns: None,
            idle_output: None,
            startup_output: None,
            pastes: Vec::new(),
        }
    }

    #[test]
    fn each_checkpoint_chart_has_its_fitted_line_and_slope() {
        let mut out = String::new();
        let session = run(5);
        checkpoints(&mut out, &[&session]);
        assert!(out.contains("Every 10 turns"), "{out}");
        assert!(out.contains("id=\"chart-checkpoint-lag_growth\""), "{out}");
        assert!(
            out.contains("id=\"chart-checkpoint-render_growth\""),
            "{out}"
        );
        assert!(
            out.contains("trial 0: +50.0 ms ± 10.0 ms per 100 turns, faster than linear"),
            "{out}"
        );
        assert!(out.contains("trial 0: no slope"), "{out}");
        // The echo chart: its dots, and its fitted line twice (edge and colour) beside the
        // line through the dots.
        let echo = &out[out.find("chart-checkpoint-lag_growth").unwrap()..];
        let echo = &echo[echo.find("class=\"marks\"").unwrap()..echo.find("</figure>").unwrap()];
        assert_eq!(echo.matches("<circle").count(), 5, "{echo}");
        assert_eq!(echo.matches("<polyline").count(), 3, "{echo}");
        // One checkpoint (a short session) draws nothing.
        let mut out = String::new();
        checkpoints(&mut out, &[&run(1)]);
        assert!(out.is_empty(), "{out}");
    }
}
