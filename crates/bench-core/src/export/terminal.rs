//! What the terminal received, as a small table for report.md and the HTML page: for each
//! kind of window, the bytes the program wrote, its frames (synchronized updates, else
//! write bursts), full clears and alternate-screen switches, and the bytes per streamed
//! token and per second. The measure phase's starts until ready and idle after ready and
//! the ui phase's steps come first ([`trial_rows`], from the trial records), then the
//! session's start-up, turns, pastes and idle window ([`rows`]). Each cell is the mean
//! over the trials that measured the window.
//!
//! A short session (at most [`TURN_ROWS`] turns, as `--scenario big-output`) also gets
//! its turns one by one: each turn's time, CPU, what it wrote and the memory after it.

use crate::detail::{SessionRun, TerminalOutput};
use crate::metric::Phase;
use crate::result::TrialRecord;
use crate::units::{format_bytes, format_seconds};
use std::fmt::Write;

/// Sessions of at most this many turns list each turn.
pub const TURN_ROWS: usize = 12;

/// One window kind of the table.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TerminalRow {
    /// What the window is: `turns (per turn)`, `paste of 500.0 KiB`, `idle window`.
    pub window: String,
    /// Bytes written.
    pub bytes: f64,
    /// Frames: synchronized updates when the agent uses them, else write bursts.
    pub frames: f64,
    /// Full clears (`CSI 2 J`, `CSI 3 J`, `ESC c`).
    pub full_clears: f64,
    /// Alternate-screen switches either way.
    pub alt_screen_switches: f64,
    /// Bytes per token the turns' replies streamed (turns only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_per_token: Option<f64>,
    /// Bytes per second over the window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_per_second: Option<f64>,
    /// Trials that measured the window.
    pub trials: usize,
}

/// Sums of one window kind over the trials.
#[derive(Default)]
struct Sum {
    bytes: f64,
    frames: f64,
    full_clears: f64,
    alt_screen_switches: f64,
    per_token: Vec<f64>,
    per_second: Vec<f64>,
    trials: usize,
}

impl Sum {
    fn add(&mut self, output: &TerminalOutput, scale: f64) {
        self.bytes += output.bytes as f64 * scale;
        self.frames += output.frames as f64 * scale;
        self.full_clears += output.full_clears as f64 * scale;
        self.alt_screen_switches += output.alt_screen_switches as f64 * scale;
    }

    fn row(self, window: String) -> Option<TerminalRow> {
        let trials = self.trials;
        (trials > 0).then(|| {
            let mean = |values: &[f64]| {
                (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
            };
            TerminalRow {
                window,
                bytes: self.bytes / trials as f64,
                frames: self.frames / trials as f64,
                full_clears: self.full_clears / trials as f64,
                alt_screen_switches: self.alt_screen_switches / trials as f64,
                bytes_per_token: mean(&self.per_token),
                bytes_per_second: mean(&self.per_second),
                trials,
            }
        })
    }
}

/// The rows of the measure and ui phases' windows (`side.trials[].terminal`), measure
/// first, each window in the order the trials recorded it, labelled with its phase
/// (`cold to ready (measure)`, `step open help (ui)`).
pub fn trial_rows(records: &[TrialRecord]) -> Vec<TerminalRow> {
    let mut rows = Vec::new();
    for phase in [Phase::Measure, Phase::Ui] {
        let of_phase: Vec<&TrialRecord> = records.iter().filter(|r| r.phase == phase).collect();
        let mut windows: Vec<&str> = Vec::new();
        for window in of_phase.iter().flat_map(|r| &r.terminal) {
            if !windows.contains(&window.window.as_str()) {
                windows.push(&window.window);
            }
        }
        for name in windows {
            let mut sum = Sum::default();
            for window in of_phase
                .iter()
                .filter_map(|r| r.terminal.iter().find(|w| w.window == name))
            {
                sum.trials += 1;
                sum.add(&window.output, 1.0);
                if window.seconds > 0.0 {
                    sum.per_second
                        .push(window.output.bytes as f64 / window.seconds);
                }
            }
            rows.extend(sum.row(format!("{name} ({phase})")));
        }
    }
    rows
}

/// The table's rows from the session runs; empty when no run counted its output.
pub fn rows(runs: &[SessionRun]) -> Vec<TerminalRow> {
    let mut rows = Vec::new();
    let mut startup = Sum::default();
    for output in runs.iter().filter_map(|run| run.startup_output.as_ref()) {
        startup.trials += 1;
        startup.add(output, 1.0);
    }
    rows.extend(startup.row("start-up (spawn to ready)".to_owned()));
    let mut turns = Sum::default();
    for run in runs {
        let counted: Vec<_> = run
            .turns
            .iter()
            .filter_map(|t| Some((t, t.output?)))
            .collect();
        if counted.is_empty() {
            continue;
        }
        turns.trials += 1;
        // Per turn: a trial of 100 turns weighs as much as one of 3.
        let scale = 1.0 / counted.len() as f64;
        let mut bytes = 0.0;
        let mut seconds = 0.0;
        for (turn, output) in &counted {
            turns.add(output, scale);
            turns.per_token.extend(turn.bytes_per_token);
            bytes += output.bytes as f64;
            seconds += turn.turn_seconds;
        }
        if seconds > 0.0 {
            turns.per_second.push(bytes / seconds);
        }
    }
    rows.extend(turns.row("turns (per turn)".to_owned()));
    let mut sizes: Vec<u64> = runs
        .iter()
        .flat_map(|run| run.pastes.iter().map(|p| p.bytes))
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    for size in sizes {
        let mut sum = Sum::default();
        for paste in runs
            .iter()
            .flat_map(|run| run.pastes.iter().find(|p| p.bytes == size))
        {
            sum.trials += 1;
            sum.add(&paste.output, 1.0);
            if paste.accept_seconds > 0.0 {
                sum.per_second
                    .push(paste.output.bytes as f64 / paste.accept_seconds);
            }
        }
        rows.extend(sum.row(format!("paste of {}", format_bytes(size as f64))));
    }
    let mut idle = Sum::default();
    for run in runs {
        if let Some(output) = &run.idle_output {
            idle.trials += 1;
            idle.add(output, 1.0);
            if run.idle_seconds > 0.0 {
                idle.per_second.push(output.bytes as f64 / run.idle_seconds);
            }
        }
    }
    rows.extend(idle.row("idle window after the turns".to_owned()));
    rows
}

/// One turn of a short session, the mean over the trials that played it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TurnRow {
    /// The turn, from 1.
    pub turn: u32,
    /// Enter until the reply was shown and the prompt took input again, seconds.
    pub seconds: f64,
    /// CPU seconds of the family during the turn.
    pub cpu_seconds: f64,
    /// Bytes written to the terminal during the turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<f64>,
    /// Frames written during the turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames: Option<f64>,
    /// Resident bytes of the family after the turn.
    pub rss_bytes: f64,
    /// Trials that played the turn.
    pub trials: usize,
}

/// Each turn of the sessions, when none has more than [`TURN_ROWS`] turns.
pub fn turn_rows(runs: &[SessionRun]) -> Vec<TurnRow> {
    let longest = runs.iter().map(|run| run.turns.len()).max().unwrap_or(0);
    if longest > TURN_ROWS {
        return Vec::new();
    }
    (0..longest)
        .filter_map(|index| {
            let turns: Vec<_> = runs.iter().filter_map(|run| run.turns.get(index)).collect();
            let first = turns.first()?;
            let count = turns.len() as f64;
            let mean = |f: &dyn Fn(&crate::detail::SessionTurn) -> f64| {
                turns.iter().map(|t| f(t)).sum::<f64>() / count
            };
            let outputs: Vec<TerminalOutput> = turns.iter().filter_map(|t| t.output).collect();
            let output_mean = |f: &dyn Fn(&TerminalOutput) -> u64| {
                (!outputs.is_empty()).then(|| {
                    outputs.iter().map(|o| f(o) as f64).sum::<f64>() / outputs.len() as f64
                })
            };
            Some(TurnRow {
                turn: first.turn,
                seconds: mean(&|t| t.turn_seconds),
                cpu_seconds: mean(&|t| t.cpu_seconds),
                bytes: output_mean(&|o| o.bytes),
                frames: output_mean(&|o| o.frames),
                rss_bytes: mean(&|t| t.rss_bytes as f64),
                trials: turns.len(),
            })
        })
        .collect()
}

/// The turns as a Markdown table, with its heading; empty without rows.
pub fn turns_markdown(rows: &[TurnRow]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n**Session turns** (Enter until the prompt is back; mean over trials)\n\n\
         | Turn | Time | CPU | Written | Frames | RSS after |\n\
         | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for row in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            row.turn,
            format_seconds(row.seconds),
            format_seconds(row.cpu_seconds),
            row.bytes.map_or("–".to_owned(), format_bytes),
            row.frames.map_or("–".to_owned(), count),
            format_bytes(row.rss_bytes),
        );
    }
    out
}

fn count(value: f64) -> String {
    if value.fract() == 0.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

fn cells(row: &TerminalRow) -> [String; 6] {
    [
        format_bytes(row.bytes),
        count(row.frames),
        count(row.full_clears),
        count(row.alt_screen_switches),
        row.bytes_per_token
            .map_or("–".to_owned(), |b| format!("{}/token", format_bytes(b))),
        row.bytes_per_second
            .map_or("–".to_owned(), |b| format!("{}/s", format_bytes(b))),
    ]
}

const HEADINGS: [&str; 7] = [
    "Window",
    "Bytes",
    "Frames",
    "Full clears",
    "Alt-screen switches",
    "Per token",
    "Per second",
];

/// The table as Markdown, with its heading; empty without rows.
pub fn markdown(rows: &[TerminalRow]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n**What the terminal received** (mean over trials)\n\n");
    let _ = writeln!(out, "| {} |", HEADINGS.join(" | "));
    out.push_str("| :--- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for row in rows {
        let _ = writeln!(out, "| {} | {} |", row.window, cells(row).join(" | "));
    }
    out
}

/// The table as an HTML section; empty without rows. Every cell is clibench's own text
/// (numbers and fixed words), escaped all the same.
#[cfg(feature = "html")]
pub fn html(rows: &[TerminalRow]) -> String {
    use super::html::escape;
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "<section id=\"terminal\"><h2>What the terminal received</h2>\n\
         <p>The PTY byte stream of the measure, ui and session phases, mean over \
         trials.</p>\n<table>\n<thead><tr>",
    );
    for heading in HEADINGS {
        let _ = write!(out, "<th>{heading}</th>");
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        let _ = write!(out, "<tr><td>{}</td>", escape(&row.window));
        for cell in cells(row) {
            let _ = write!(out, "<td class=\"num\">{}</td>", escape(&cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detail::{SessionPaste, SessionTurn};

    fn output(bytes: u64, frames: u64) -> TerminalOutput {
        TerminalOutput {
            bytes,
            frames,
            full_clears: frames,
            alt_screen_switches: 0,
        }
    }

    fn turn(turn: u32, bytes: u64, tokens: f64) -> SessionTurn {
        SessionTurn {
            turn,
            turn_seconds: 2.0,
            submit_seconds: None,
            first_token_seconds: None,
            stream_render_seconds: None,
            tool_roundtrip_seconds: None,
            cpu_seconds: 0.1,
            rss_bytes: 1,
            pss_bytes: None,
            typing_lag_seconds: Vec::new(),
            first_chunk_at_seconds: None,
            last_chunk_at_seconds: None,
            tool_call_at_seconds: None,
            output: Some(output(bytes, 10)),
            bytes_per_token: Some(bytes as f64 / tokens),
        }
    }

    fn run(trial: u32, turns: Vec<SessionTurn>) -> SessionRun {
        SessionRun {
            trial,
            dialect: "anthropic".into(),
            turns,
            growth_bytes_per_turn: None,
            warmup_turns: 1,
            pss_every: 1,
            growth: None,
            lag: None,
            render: None,
            checkpoints: Vec::new(),
            idle_seconds: 4.0,
            idle_cpu_share: None,
            idle_monotonic_ns: None,
            idle_output: Some(output(2000, 40)),
            startup_output: Some(TerminalOutput {
                alt_screen_switches: 1,
                ..output(300, 2)
            }),
            pastes: vec![SessionPaste {
                bytes: 512_000,
                accept_seconds: 0.5,
                shown: true,
                cpu_seconds: 0.2,
                output: output(60_000, 3),
            }],
        }
    }

    fn record(phase: Phase, trial: u32, windows: &[(&str, f64, u64)]) -> TrialRecord {
        let mut record = TrialRecord::new(phase, trial);
        for &(name, seconds, bytes) in windows {
            record.push_terminal(crate::TerminalWindow {
                window: name.into(),
                seconds,
                output: output(bytes, bytes / 100),
            });
        }
        record
    }

    #[test]
    fn measure_and_ui_windows_are_rows_of_means_labelled_with_their_phase() {
        let records = [
            record(Phase::Ui, 0, &[("step help", 0.5, 800)]),
            record(
                Phase::Measure,
                0,
                &[
                    ("cold to ready", 0.4, 2000),
                    ("cold idle after ready", 2.0, 400),
                    ("warm to ready", 0.2, 1800),
                ],
            ),
            // A trial whose warm start never became ready has no warm windows.
            record(Phase::Measure, 1, &[("cold to ready", 0.6, 3000)]),
        ];
        let rows = trial_rows(&records);
        let windows: Vec<&str> = rows.iter().map(|r| r.window.as_str()).collect();
        assert_eq!(
            windows,
            [
                "cold to ready (measure)",
                "cold idle after ready (measure)",
                "warm to ready (measure)",
                "step help (ui)",
            ]
        );
        assert_eq!(rows[0].trials, 2);
        assert_eq!(rows[0].bytes, 2500.0);
        // Per second: the mean of 2000/0.4 and 3000/0.6.
        assert_eq!(rows[0].bytes_per_second, Some(5000.0));
        assert_eq!(rows[1].bytes_per_second, Some(200.0));
        insta::assert_snapshot!(markdown(&rows));
    }

    #[test]
    fn each_window_kind_is_a_row_of_means_over_the_trials() {
        let runs = [
            run(0, vec![turn(1, 4000, 100.0), turn(2, 6000, 100.0)]),
            run(1, vec![turn(1, 8000, 100.0)]),
        ];
        let rows = rows(&runs);
        let windows: Vec<&str> = rows.iter().map(|r| r.window.as_str()).collect();
        assert_eq!(
            windows,
            [
                "start-up (spawn to ready)",
                "turns (per turn)",
                "paste of 500.0 KiB",
                "idle window after the turns"
            ]
        );
        assert_eq!(rows[0].alt_screen_switches, 1.0);
        // Per turn: trial 0's 5000, trial 1's 8000.
        assert_eq!(rows[1].bytes, 6500.0);
        assert_eq!(rows[1].bytes_per_token, Some(60.0));
        assert_eq!(rows[3].bytes_per_second, Some(500.0));
        insta::assert_snapshot!(markdown(&rows));
        // Trial 1 played only turn 1: turn 2 is trial 0's alone.
        let turns = turn_rows(&runs);
        assert_eq!((turns[0].trials, turns[1].trials), (2, 1));
        assert_eq!(turns[0].bytes, Some(6000.0));
        insta::assert_snapshot!("session_turns", turns_markdown(&turns));
    }

    #[test]
    fn a_long_session_lists_no_single_turns() {
        let turns = (1..=TURN_ROWS as u32 + 1)
            .map(|t| turn(t, 10, 1.0))
            .collect();
        assert!(turn_rows(&[run(0, turns)]).is_empty());
    }

    #[test]
    fn runs_without_counts_make_no_table() {
        let mut old = run(0, vec![turn(1, 10, 1.0)]);
        old.turns[0].output = None;
        old.idle_output = None;
        old.startup_output = None;
        old.pastes.clear();
        assert!(rows(&[old]).is_empty());
        assert_eq!(markdown(&[]), "");
    }
}
