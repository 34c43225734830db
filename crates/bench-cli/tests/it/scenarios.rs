//! `--scenario big-output`, `paste` and `idle` on the built-in demo agent, each with the
//! demo's knob that plants the cost it measures: CPU per KB of tool output, CPU per KB
//! pasted, a spinner at the idle prompt. The planted CPU costs are lower bounds of what the
//! family's CPU time must show (the demo computes them in its own CPU time), so the checks
//! hold however loaded the machine is.

use crate::pipeline_run::{demo, load, phase_logs};
use crate::{clibench, run};
use bench_core::{Metric, ResultFile};
use std::path::Path;

/// `clibench run SPEC --scenario NAME --trials 1 --phases prepare,install,session FLAGS...`.
fn scenario(spec: &Path, out: &Path, name: &str, flags: &[&str]) -> ResultFile {
    let result = run(clibench()
        .arg("run")
        .arg(spec)
        .arg("--out")
        .arg(out)
        .args([
            "--scenario",
            name,
            "--trials",
            "1",
            "--phases",
            "prepare,install,session",
        ])
        .args(flags));
    assert_eq!(
        result.code,
        Some(0),
        "{}\n{}",
        result.stderr,
        phase_logs(out)
    );
    load(out)
}

fn value(result: &ResultFile, metric: Metric) -> f64 {
    let observation = &result.side.metrics[&metric][0];
    observation
        .value
        .unwrap_or_else(|| panic!("{metric}: {:?}", observation.error))
}

#[test]
fn big_output_measures_each_tool_results_turn_and_sees_a_planted_cost_per_kb() {
    // 1 ms of CPU per KB printed: at least 1.024 s for the 1 MB result, 0.1 s for 100 KB.
    let (dir, spec) = demo();
    let out = dir.path().join("out");
    let result = scenario(
        &spec,
        &out,
        "big-output",
        &[
            "--set",
            "session.idle=\"1s\"",
            "--set",
            "measure.env.DEMO_AGENT_OUTPUT_COST_US_PER_KB=\"1000\"",
        ],
    );
    let run = &result.side.sessions[0];
    assert_eq!(run.turns.len(), 4);
    for turn in &run.turns {
        let output = turn.output.unwrap_or_else(|| panic!("turn {}", turn.turn));
        assert!(output.bytes > 0 && turn.rss_bytes > 0, "{turn:?}");
        assert!(turn.tool_roundtrip_seconds.is_some(), "{turn:?}");
    }
    let cpu: Vec<f64> = run.turns.iter().map(|t| t.cpu_seconds).collect();
    // The demo computes the cost in its turn's own thread, which starts and exits within
    // the turn: its time reaches the family's through the process's tick-counted total
    // (10 ms ticks), up to two ticks under what it spent.
    const TICKS: f64 = 0.02;
    assert!(cpu[1] >= 0.1 - TICKS && cpu[3] >= 0.1 - TICKS, "{cpu:?}");
    assert!(cpu[2] >= 1.024 - TICKS, "{cpu:?}");
    assert!(value(&result, Metric::Turn) > 0.0);
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains("**What the terminal received**"),
        "{report}"
    );
}

#[test]
fn paste_measures_each_paste_until_shown_and_sees_a_planted_cost_per_kb() {
    // 25 ms of CPU per KB pasted: 1.25 s for the 50 KB paste, longer than the second of
    // quiet that accepts a paste an agent never shows. The demo repaints its unchanged
    // screen while it reads the paste, then computes in silence: that is no change of the
    // screen, so the paste is accepted only when its end shows.
    let (dir, spec) = demo();
    let out = dir.path().join("out");
    let result = scenario(
        &spec,
        &out,
        "paste",
        &[
            "--set",
            "session.pastes=[1024,51200]",
            "--set",
            "session.idle=\"1s\"",
            "--set",
            "measure.env.DEMO_AGENT_PASTE_COST_US_PER_KB=\"25000\"",
        ],
    );
    let pastes = &result.side.sessions[0].pastes;
    let sizes: Vec<u64> = pastes.iter().map(|p| p.bytes).collect();
    assert_eq!(sizes, [1024, 51200]);
    // The demo shows a paste's end in its prompt line: accepted when seen, not by quiet.
    assert!(pastes.iter().all(|p| p.shown), "{pastes:?}");
    assert!(pastes[0].cpu_seconds >= 0.025, "{pastes:?}");
    assert!(value(&result, Metric::PasteCpu) >= 1.25);
    // Wall time includes the CPU time the demo spent before showing the paste.
    assert!(value(&result, Metric::PasteAccept) >= 1.25);
    assert!(value(&result, Metric::PasteOutput) > 0.0);
}

#[test]
fn a_folded_paste_is_accepted_by_quiet_and_must_leave_the_input_when_cleared() {
    // The demo folds a paste of more than 100 lines into `[Pasted text #1 +711 lines]`:
    // its last line is never shown, so it is accepted by quiet; Ctrl-C empties the input.
    let fold = ["--set", "measure.env.DEMO_AGENT_PASTE_FOLD_LINES=\"100\""];
    let (dir, spec) = demo();
    let out = dir.path().join("out");
    let mut flags = vec!["--set", "session.pastes=[1024,51200,51200]"];
    flags.extend(fold);
    let result = scenario(&spec, &out, "paste", &flags);
    let shown: Vec<bool> = result.side.sessions[0]
        .pastes
        .iter()
        .map(|p| p.shown)
        .collect();
    assert_eq!(shown, [true, false, false]);
    // A clear that does not empty the input (it types a letter) leaves the placeholder
    // on the screen: the session fails there instead of pasting into a full input.
    let out = dir.path().join("not-cleared");
    let failed = run(clibench()
        .arg("run")
        .arg(&spec)
        .arg("--out")
        .arg(&out)
        .args(["--scenario", "paste", "--trials", "1"])
        .args(["--phases", "prepare,install,session"])
        .args(["--set", "session.pastes=[51200]"])
        .args(["--set", "session.paste_clear=\"x\""])
        .args(["--set", "session.turn_timeout=\"5s\""])
        .args(fold));
    assert_ne!(failed.code, Some(0), "{}", failed.stderr);
    assert!(
        failed.stderr.contains("the paste to leave the input"),
        "{}",
        failed.stderr
    );
    // The error names the line that stayed, not only the screen it stayed on.
    assert!(
        failed.stderr.contains("still shown, squashed: ")
            && failed.stderr.contains("[Pastedtext#1+"),
        "{}",
        failed.stderr
    );
}

#[test]
fn idle_measures_what_a_spinner_writes_and_nothing_without_one() {
    let (dir, spec) = demo();
    let idle = |name: &str, flags: &[&str]| {
        let out = dir.path().join(name);
        let mut all = vec!["--set", "session.idle=\"2s\""];
        all.extend(flags);
        scenario(&spec, &out, "idle", &all)
    };
    let quiet = idle("quiet", &[]);
    assert_eq!(quiet.side.sessions[0].turns.len(), 3);
    // The demo's start-up: it switches to the alternate screen and clears it once.
    let startup = quiet.side.sessions[0].startup_output.unwrap();
    assert_eq!(startup.alt_screen_switches, 1, "{startup:?}");
    assert!(startup.full_clears >= 1 && startup.bytes > 0, "{startup:?}");
    assert_eq!(value(&quiet, Metric::IdleOutput), 0.0);
    let spinning = idle(
        "spinning",
        &["--set", "measure.env.DEMO_AGENT_IDLE_SPINNER_MS=\"50\""],
    );
    assert!(value(&spinning, Metric::IdleOutput) > 0.0);
    // About 40 redraws in 2 s; a loaded machine delays some, not most.
    let output = spinning.side.sessions[0].idle_output.unwrap();
    assert!(output.frames >= 5, "{output:?}");
}
