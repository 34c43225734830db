//! What the fixture agent (`bench-cli-fixture-agent`) writes to its terminal in the measure
//! and ui phases: each start until ready and idle after ready, and each ui step, kept in
//! the trial records and shown in report.md's terminal table.

use crate::{clibench, run};
use bench_core::{Phase, ResultFile, TerminalWindow};
use std::fs;
use std::path::Path;

/// A measure and ui run of the fixture agent with `env` in its environment; its result
/// and report.md.
fn measure_and_ui(dir: &Path, env: &str) -> (ResultFile, String) {
    let agent = env!("CARGO_BIN_EXE_bench-cli-fixture-agent");
    let spec = dir.join("spec.toml");
    fs::write(
        &spec,
        format!(
            r#"name = "fixture-agent"

[env]
MODEL_URL = "http://127.0.0.1:9/unused"
{env}

[measure]
command = ["{agent}"]
ready = "pattern"
ready_pattern = "(?m)^> $"
settle = "600ms"

[[ui.steps]]
name = "type"
keys = "abc"
expect = "(?m)^> abc$"
"#
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let result = run(clibench()
        .arg("run")
        .arg(&spec)
        .arg("--out")
        .arg(&out)
        .args(["--trials", "1", "--phases", "install,measure,ui"]));
    assert_eq!(result.code, Some(0), "stderr: {}", result.stderr);
    let saved = ResultFile::load(&out.join("result.json")).unwrap();
    (saved, fs::read_to_string(out.join("report.md")).unwrap())
}

fn windows(result: &ResultFile, phase: Phase) -> Vec<TerminalWindow> {
    result
        .side
        .trials
        .iter()
        .find(|record| record.phase == phase && record.trial == 0)
        .map(|record| record.terminal.clone())
        .unwrap_or_default()
}

#[test]
fn each_start_idle_window_and_ui_step_counts_what_the_agent_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let (quiet, report) = measure_and_ui(dir.path(), "");
    let measure = windows(&quiet, Phase::Measure);
    let names: Vec<&str> = measure.iter().map(|w| w.window.as_str()).collect();
    assert_eq!(
        names,
        [
            "cold to ready",
            "cold idle after ready",
            "warm to ready",
            "warm idle after ready"
        ]
    );
    // The first screen: a full clear, its banner and the input line, in one frame or more.
    let cold = &measure[0];
    assert!(
        cold.output.bytes > "fixture agent ready".len() as u64,
        "{cold:?}"
    );
    assert_eq!(cold.output.full_clears, 1, "{cold:?}");
    assert!(cold.output.frames >= 1, "{cold:?}");
    // Nothing is drawn after the prompt without the spinner.
    assert_eq!(measure[1].output.bytes, 0, "{:?}", measure[1]);
    assert!(measure[1].seconds >= 0.5, "{:?}", measure[1]);
    // Three keys, each echoed by redrawing the input row: `ESC 7`, the row's position,
    // `ESC [2K`, the prompt and the input so far, `ESC 8`.
    let ui = windows(&quiet, Phase::Ui);
    assert_eq!(ui.len(), 1, "{ui:?}");
    assert_eq!(ui[0].window, "step type");
    let echoes = ui[0].output.bytes;
    assert!(
        echoes >= 3 * 17 + 6 && (echoes - 6).is_multiple_of(3),
        "{ui:?}"
    );
    for row in [
        "| cold to ready (measure) |",
        "| cold idle after ready (measure) |",
        "| warm to ready (measure) |",
        "| step type (ui) |",
    ] {
        assert!(report.contains(row), "{row}:\n{report}");
    }

    // A spinner drawn every 50 ms: the idle windows hold whole frames of it.
    let dir = tempfile::tempdir().unwrap();
    let (spinning, _) = measure_and_ui(dir.path(), "FIXTURE_SPINNER_MS = \"50\"");
    for idle in windows(&spinning, Phase::Measure)
        .iter()
        .filter(|w| w.window.ends_with("idle after ready"))
    {
        assert!(idle.output.bytes >= 12, "{idle:?}");
        assert!(idle.output.bytes.is_multiple_of(12), "{idle:?}");
        assert!(idle.output.frames >= 1, "{idle:?}");
    }
}
