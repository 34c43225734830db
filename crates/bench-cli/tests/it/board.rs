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

/// `OUT/board.json` as JSON.
fn board_json(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("board.json")).unwrap()).unwrap()
}

/// How many trials of `phase` the target's result holds.
fn trials_of(out: &Path, name: &str, phase: Phase) -> usize {
    let result = ResultFile::load(&out.join(name).join("result.json")).unwrap();
    result
        .side
        .trials
        .iter()
        .filter(|record| record.phase == phase)
        .count()
}

#[test]
fn a_budget_stops_between_rounds_after_at_least_three_and_says_how_long_first() {
    let dir = tempfile::tempdir().unwrap();
    let specs = two_demos(dir.path());
    let out = dir.path().join("board");
    // Each start waits 1.2 s before it draws, so a measure trial (a cold and a warm start)
    // takes at least 2.4 s and a round of two targets 4.8 s: three rounds pass the 10 s
    // budget, on any machine, and the fourth is never started.
    let result = run(clibench()
        .arg("board")
        .args(&specs)
        .args(["--phases", "prepare,install,measure", "--trials", "5"])
        .args(["--budget", "10s"])
        .args(["--set", "measure.env.DEMO_AGENT_STARTUP_DELAY_MS=1200"])
        .arg("--out")
        .arg(&out));
    assert_eq!(result.code, Some(0), "stderr: {}", result.stderr);
    let lines: Vec<&str> = result.stderr.lines().collect();
    assert!(
        lines[0].contains("rounds for 10.0 s (3 to 5 trials each, round by round)")
            && lines[0].contains("at most 14 steps"),
        "{}",
        lines[0]
    );
    // Before the first step: the whole board by the guesses, three rounds (the budget's
    // least) of 15 s measure trials.
    assert!(
        lines[1].starts_with("clibench board: expect about 3 min: 3 rounds within the budget; 2 prepare ~20 s, 2 install ~30 s, 6 measure ~15 s"),
        "{}",
        lines[1]
    );
    // After the first round, what is left as the first round took.
    let first_round = lines
        .iter()
        .position(|line| line.starts_with("agent-b: measure trial 0: ok ("))
        .unwrap();
    assert!(
        lines[first_round + 1].starts_with("clibench board: expect about ")
            && lines[first_round + 1].contains(" more: ")
            && lines[first_round + 1]
                .contains("each step as long as the steps of its phase so far"),
        "{}",
        result.stderr
    );
    let board = board_json(&out);
    assert_eq!(board["sampling"]["rounds"], 3, "{}", board["sampling"]);
    assert_eq!(board["sampling"]["stopped"], "budget");
    assert_eq!(board["sampling"]["budget_seconds"], 10.0);
    for name in ["agent-a", "agent-b"] {
        assert_eq!(trials_of(&out, name, Phase::Measure), 3, "{name}");
    }
    let markdown = std::fs::read_to_string(out.join("board.md")).unwrap();
    assert!(
        markdown.contains("3 rounds of trials") && markdown.contains("the budget of 10.0 s"),
        "{markdown}"
    );
}

#[test]
fn a_board_file_shares_one_model_script_whose_turns_every_target_plays() {
    let dir = tempfile::tempdir().unwrap();
    let specs = two_demos(dir.path());
    // Replies no spec's own script has: each target's model journal must show them.
    std::fs::write(
        dir.path().join("demo/shared.toml"),
        "[physics]\nfirst_token = \"50ms\"\ntokens_per_second = 400\n\n\
         [[turns]]\nprompt = \"first shared prompt\"\ntext = \"Shared reply one.\"\n\n\
         [[turns]]\nprompt = \"second shared prompt\"\nshell = \"ls\"\n\
         then = \"Shared reply two.\"\n\n\
         [[turns]]\nprompt = \"third shared prompt\"\ntokens = 60\n",
    )
    .unwrap();
    let names: Vec<String> = specs
        .iter()
        .map(|spec| format!("{:?}", spec.file_name().unwrap().to_string_lossy()))
        .collect();
    let board_file = dir.path().join("demo/board.toml");
    std::fs::write(
        &board_file,
        format!(
            "specs = [{}]\nmodel_script = \"shared.toml\"\n\
             phases = [\"prepare\", \"install\", \"session\"]\ntrials = 1\n",
            names.join(", ")
        ),
    )
    .unwrap();
    let out = dir.path().join("board");
    let result = run(clibench()
        .arg("board")
        .arg("--board")
        .arg(&board_file)
        .arg("--out")
        .arg(&out));
    assert_eq!(result.code, Some(0), "stderr: {}", result.stderr);
    assert!(
        result.stderr.contains("1 trials each") && result.stderr.contains("2 session"),
        "the file's trials and phases: {}",
        result.stderr
    );
    for name in ["agent-a", "agent-b"] {
        let journal =
            std::fs::read_to_string(out.join(name).join("logs/model-session-0.jsonl")).unwrap();
        for expected in [
            "first shared prompt",
            "second shared prompt",
            "third shared prompt",
        ] {
            assert!(
                journal.contains(expected),
                "{name}: {expected}: {journal:.2000}"
            );
        }
        assert!(
            !journal.contains("say hello"),
            "{name} played its own spec's script: {journal:.2000}"
        );
        assert_eq!(trials_of(&out, name, Phase::Session), 1, "{name}");
    }
    let markdown = std::fs::read_to_string(out.join("board.md")).unwrap();
    assert!(
        markdown.contains("Every target played the same model script")
            && markdown.contains("shared.toml"),
        "{markdown}"
    );
    let board = board_json(&out);
    assert_eq!(board["sampling"]["stopped"], "trials");
    assert_eq!(board["sampling"]["rounds"], 1);
}

#[test]
fn a_bad_board_file_is_refused_naming_the_file_and_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let board_file = dir.path().join("board.toml");
    std::fs::write(&board_file, "specs = [\"a.toml\", \"missing.toml\"]\n").unwrap();
    std::fs::write(dir.path().join("a.toml"), "").unwrap();
    let out = dir.path().join("board");
    let result = run(clibench()
        .arg("board")
        .arg("--board")
        .arg(&board_file)
        .arg("--out")
        .arg(&out));
    assert_eq!(result.code, Some(2), "{}", result.stderr);
    assert!(
        result.stderr.contains("board.toml: 'specs[1]'")
            && result.stderr.contains("missing.toml is not a file"),
        "{}",
        result.stderr
    );
    assert!(!out.exists());
}
