//! `clibench board` on two copies of the built-in demo under different names: the
//! offline fixture of a board of an agent against itself.

use crate::{clibench, run};
use bench_core::{Phase, ResultFile};
use std::path::{Path, PathBuf};

/// The demo's spec written into `dir` and copied as `agent-a.toml` and `agent-b.toml`.
fn two_demos(dir: &Path) -> [PathBuf; 2] {
    let written = run(clibench()
        .args(["run", "--write-demo"])
        .arg(dir.join("demo")));
    assert_eq!(written.code, Some(0), "{}", written.stderr);
    let spec = PathBuf::from(written.stdout.trim());
    ["agent-a", "agent-b"].map(|name| {
        let copy = dir.join("demo").join(format!("{name}.toml"));
        std::fs::copy(&spec, &copy).unwrap();
        copy
    })
}

#[test]
fn a_board_of_the_demo_against_itself_interleaves_and_ranks_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let specs = two_demos(dir.path());
    let out = dir.path().join("board");
    let result = run(clibench()
        .arg("board")
        .args(&specs)
        .args([
            "--phases",
            "prepare,install,measure,session",
            "--trials",
            "2",
        ])
        .arg("--history")
        .arg(dir.path().join("history.sqlite"))
        .arg("--out")
        .arg(&out));
    assert_eq!(result.code, Some(0), "stderr: {}", result.stderr);
    // Said before it starts: what will run.
    assert!(
        result.stderr.starts_with(
            "clibench board: 2 targets (agent-a, agent-b), 2 trials each, round-robin in a \
             120x40 terminal: 12 steps (2 prepare, 2 install, 4 measure, 4 session)\n"
        ),
        "{}",
        result.stderr
    );
    // Progress per target and trial.
    assert!(
        result.stderr.contains("agent-b: session trial 1: ok"),
        "{}",
        result.stderr
    );
    let markdown = std::fs::read_to_string(out.join("board.md")).unwrap();
    assert_eq!(result.stdout.trim_end(), markdown.trim_end());
    let header = markdown
        .lines()
        .find(|line| line.starts_with("| metric"))
        .unwrap();
    assert!(
        header.contains("`agent-a`") && header.contains("`agent-b`"),
        "{header}"
    );
    for metric in ["cold", "pss", "turn", "typing_lag"] {
        assert!(
            markdown.contains(&format!("| `{metric}` |")),
            "{metric}: {markdown}"
        );
    }
    // An agent against itself: no row has a winner.
    let board: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("board.json")).unwrap()).unwrap();
    let rows: Vec<&serde_json::Value> = board["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|group| group["rows"].as_array().unwrap())
        .collect();
    assert!(rows.len() >= 8, "{board}");
    for row in &rows {
        assert!(row["winner"].is_null(), "a winner in {row}");
    }
    assert!(
        markdown
            .lines()
            .filter(|line| line.starts_with("| `"))
            .all(|row| !row.contains("**best**") && !row.contains("x |") && row.contains("tie")),
        "{markdown}"
    );
    // Trial k of both before trial k+1 of either, the order rotating.
    let results = ["agent-a", "agent-b"]
        .map(|name| ResultFile::load(&out.join(name).join("result.json")).unwrap());
    let started = |target: usize, phase: Phase, trial: u32| {
        results[target]
            .side
            .trials
            .iter()
            .find(|record| record.phase == phase && record.trial == trial)
            .and_then(|record| record.started_unix_ms)
            .unwrap()
    };
    for phase in [Phase::Measure, Phase::Session] {
        assert!(started(0, phase, 0) <= started(1, phase, 0), "{phase}");
        assert!(started(1, phase, 0) <= started(1, phase, 1), "{phase}");
        assert!(started(1, phase, 1) <= started(0, phase, 1), "{phase}");
    }
    // Both targets' results went into the store, as a run's do.
    assert!(
        result.stderr.contains("clibench: history ") && result.stderr.contains("2 result(s) added"),
        "{}",
        result.stderr
    );
    let html = std::fs::read_to_string(out.join("board.html")).unwrap();
    assert!(html.contains("id=\"chart-board-turns\""), "{html:.300}");
}

#[test]
fn a_board_of_two_specs_of_one_name_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let [spec, _] = two_demos(dir.path());
    let out = dir.path().join("board");
    let result = run(clibench()
        .arg("board")
        .arg(&spec)
        .arg(&spec)
        .arg("--out")
        .arg(&out));
    assert_eq!(result.code, Some(2), "{}", result.stderr);
    assert!(
        result.stderr.contains("two specs are named `agent-a`"),
        "{}",
        result.stderr
    );
    assert!(!out.exists());
}
