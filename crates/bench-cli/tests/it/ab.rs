//! `clibench run --set`, `clibench ab`, `--shard` and `clibench merge` on the built-in demo.

use crate::{clibench, run};
use bench_core::{Metric, Phase, ResultFile, Role};
use std::path::Path;

fn load(path: &Path) -> ResultFile {
    ResultFile::load(path).expect("result.json is intact and valid")
}

fn logs(out: &Path) -> String {
    let mut text = String::new();
    for entry in walk(out) {
        if entry.extension().is_some_and(|ext| ext == "log") {
            text.push_str(&format!("--- {}\n", entry.display()));
            text.push_str(&std::fs::read_to_string(&entry).unwrap_or_default());
        }
    }
    text
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

/// Both sides' results of an `ab` that must have succeeded (its logs shown when not).
fn both_sides(result: &crate::Run, out: &Path) -> [ResultFile; 2] {
    assert_eq!(
        result.code,
        Some(0),
        "stderr: {}\n{}",
        result.stderr,
        logs(out)
    );
    [
        load(&out.join("base/result.json")),
        load(&out.join("head/result.json")),
    ]
}

#[test]
fn set_passes_measure_env_to_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // The demo agent refuses a delay that is not a number: seeing its refusal proves the
    // variable reached it, with no clock involved.
    let result = run(clibench()
        .args([
            "run",
            "--trials",
            "1",
            "--phases",
            "prepare,install,measure",
        ])
        .args(["--set", "measure.env.DEMO_AGENT_STARTUP_DELAY_MS=soon"])
        .arg("--out")
        .arg(&out));
    assert_eq!(result.code, Some(1), "stderr: {}", result.stderr);
    let saved = load(&out.join("result.json"));
    assert_eq!(
        saved.request.config["overrides"],
        "measure.env.DEMO_AGENT_STARTUP_DELAY_MS=soon"
    );
    let cold = &saved.side.metrics[&Metric::Cold][0];
    let error = cold.error.clone().unwrap_or_default();
    assert!(error.contains("exit status: 2"), "{error}\n{}", logs(&out));
}

#[test]
fn a_startup_delay_set_on_the_command_line_delays_ready() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let result = run(clibench()
        .args([
            "run",
            "--trials",
            "1",
            "--phases",
            "prepare,install,measure",
        ])
        .args(["--set", "measure.env.DEMO_AGENT_STARTUP_DELAY_MS=1500"])
        .arg("--out")
        .arg(&out));
    assert_eq!(result.code, Some(0), "stderr: {}", result.stderr);
    let saved = load(&out.join("result.json"));
    // A lower bound only: the agent sleeps 1.5 s before it draws, however fast the machine.
    let cold = saved.side.values(Metric::Cold);
    assert!(cold[0] >= 1.5, "cold {cold:?}");
    let warm = saved.side.values(Metric::Warm);
    assert!(warm[0] >= 1.5, "warm {warm:?}");
}

#[test]
fn a_bad_override_is_a_usage_error_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let result = run(clibench()
        .args(["run", "--set", "measure.ready_timeout=soon", "--out"])
        .arg(dir.path().join("out")));
    assert_eq!(result.code, Some(2), "stderr: {}", result.stderr);
    assert!(
        result.stderr.contains("key 'measure.ready_timeout'"),
        "{}",
        result.stderr
    );
    let result = run(clibench().args(["ab", "--head", "measure"]));
    assert_eq!(result.code, Some(2), "stderr: {}", result.stderr);
    assert!(
        result.stderr.contains("expected KEY=VALUE"),
        "{}",
        result.stderr
    );
    assert!(!dir.path().join("out").exists());
}

#[test]
fn ab_interleaves_the_sides_and_writes_both_results_and_the_comparison() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ab");
    let result = run(clibench()
        .args(["ab", "--trials", "2", "--phases", "prepare,install,measure"])
        .args(["--schedule", "abba"])
        .args(["--head", "measure.env.DEMO_AGENT_STARTUP_DELAY_MS=1500"])
        .arg("--out")
        .arg(&out));
    assert_eq!(result.code, Some(0), "stderr: {}", result.stderr);
    let base = load(&out.join("base/result.json"));
    let head = load(&out.join("head/result.json"));
    assert_eq!(base.request.role, Role::Base);
    assert_eq!(head.request.role, Role::Candidate);
    // Both sides carry the invocation's identifier: the history knows they were paired.
    assert!(base.request.invocation_id.is_some());
    assert_eq!(base.request.invocation_id, head.request.invocation_id);
    // Both sides built the same demo commit; only head carries the override.
    assert_eq!(base.request.sha, head.request.sha);
    assert!(!base.request.config.contains_key("overrides"));
    assert!(
        head.side
            .values(Metric::Cold)
            .iter()
            .all(|&cold| cold >= 1.5)
    );
    assert_eq!(base.side.values(Metric::Cold).len(), 2);
    // Each trial says when it started, under what load and where.
    let records: Vec<_> = head
        .side
        .trials
        .iter()
        .filter(|record| record.phase == Phase::Measure)
        .collect();
    assert_eq!(records.len(), 2);
    for record in records {
        assert!(record.started_unix_ms.is_some());
        assert!(record.load_average.is_some());
        assert!(record.host.is_some());
    }
    // The measure trials ran in ABBA order: base's trial 0 before head's, head's trial 1
    // before base's.
    let started = |result: &ResultFile, trial: u32| {
        result
            .side
            .trials
            .iter()
            .find(|r| r.phase == Phase::Measure && r.trial == trial)
            .and_then(|r| r.started_unix_ms)
            .unwrap()
    };
    assert!(started(&base, 0) < started(&head, 0));
    assert!(started(&head, 1) < started(&base, 1));
    let schedule: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("ab.json")).unwrap()).unwrap();
    assert_eq!(schedule["order"]["kind"], "abba");
    let sides: Vec<&str> = schedule["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|step| step["side"].as_str().unwrap())
        .collect();
    assert_eq!(
        sides,
        [
            "base", "base", "head", "head", "base", "head", "head", "base"
        ]
    );
    let markdown = std::fs::read_to_string(out.join("comparison.md")).unwrap();
    assert_eq!(result.stdout, markdown);
    assert!(markdown.contains("`cold`"), "{markdown}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("comparison.json")).unwrap())
            .unwrap();
    assert!(json["metrics"].is_array(), "{json}");
    let html = std::fs::read_to_string(out.join("comparison.html")).unwrap();
    assert!(html.contains("cold"), "{html:.300}");
    // The titles and the header name what differs, not the same sha twice.
    assert!(
        markdown.starts_with(
            "## clibench: `measure.env.DEMO_AGENT_STARTUP_DELAY_MS=1500` (candidate) vs the \
             spec as it is (base)\n"
        ),
        "{markdown}"
    );
    assert!(
        html.contains(
            "<h1>clibench: <code>measure.env.DEMO_AGENT_STARTUP_DELAY_MS=1500</code> \
             (candidate) vs the spec as it is (base)</h1>"
        ),
        "{html}"
    );
    assert!(
        result
            .stderr
            .contains("head (candidate): measure.env.DEMO_AGENT_STARTUP_DELAY_MS=1500 (",)
            && result.stderr.contains(") vs base: the spec as it is ("),
        "{}",
        result.stderr
    );
    assert!(
        !result.stderr.contains("(candidate) vs "),
        "{}",
        result.stderr
    );
}

#[test]
fn shards_run_their_slice_and_merge_into_every_trial() {
    let dir = tempfile::tempdir().unwrap();
    for shard in ["1/2", "2/2"] {
        let out = dir.path().join(format!("shard-{}", &shard[..1]));
        let result = run(clibench()
            .args([
                "run",
                "--trials",
                "3",
                "--phases",
                "prepare,install,measure",
            ])
            .args(["--shard", shard])
            .arg("--out")
            .arg(&out));
        assert_eq!(result.code, Some(0), "stderr: {}", result.stderr);
    }
    let trials = |path: &Path| -> Vec<u32> {
        let saved = load(path);
        saved.side.metrics[&Metric::Cold]
            .iter()
            .map(|sample| sample.trial)
            .collect()
    };
    assert_eq!(trials(&dir.path().join("shard-1/result.json")), [0, 2]);
    assert_eq!(trials(&dir.path().join("shard-2/result.json")), [1]);
    let merged = dir.path().join("merged");
    let result = run(clibench()
        .arg("merge")
        .arg(dir.path().join("shard-1"))
        .arg(dir.path().join("shard-2/result.json"))
        .arg("--out")
        .arg(&merged));
    assert_eq!(result.code, Some(0), "stderr: {}", result.stderr);
    assert_eq!(trials(&merged.join("result.json")), [0, 1, 2]);
    let saved = load(&merged.join("result.json"));
    assert_eq!(saved.side.values(Metric::Install).len(), 2);
    assert!(merged.join("report.md").is_file());
}

fn small_result(dir: &Path, name: &str, sha: &str, host: &str) -> std::path::PathBuf {
    let mut result = ResultFile::new(bench_core::Request::new(sha, Role::Candidate));
    for trial in 0..2 {
        bench_core::record(
            &mut result.side,
            Metric::Cold,
            trial,
            bench_core::Sample::Value(0.4),
        );
        result.side.trial_record_mut(Phase::Measure, trial).host = Some(host.to_owned());
    }
    let path = dir.join(format!("{name}.json"));
    result.save(&path).unwrap();
    path
}

#[test]
fn merge_flags_hosts_and_refuses_another_build() {
    let dir = tempfile::tempdir().unwrap();
    let a = small_result(dir.path(), "a", "abc", "runner-a");
    let b = small_result(dir.path(), "b", "abc", "runner-b");
    let c = small_result(dir.path(), "c", "def", "runner-a");
    let out = dir.path().join("merged");
    let result = run(clibench()
        .arg("merge")
        .arg(&a)
        .arg(&b)
        .arg("--out")
        .arg(&out));
    assert_eq!(result.code, Some(0), "stderr: {}", result.stderr);
    assert!(
        result
            .stderr
            .contains("2 different hosts (runner-a, runner-b)"),
        "{}",
        result.stderr
    );
    assert_eq!(
        load(&out.join("result.json"))
            .side
            .values(Metric::Cold)
            .len(),
        4
    );
    let result = run(clibench()
        .arg("merge")
        .arg(&a)
        .arg(&c)
        .arg("--out")
        .arg(&out));
    assert_eq!(result.code, Some(2), "stderr: {}", result.stderr);
    assert!(
        result.stderr.contains("sha differs (\"abc\" vs \"def\")"),
        "{}",
        result.stderr
    );
}

#[test]
fn a_tight_schedule_runs_both_sides_starts_back_to_back_and_reads_memory_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ab");
    let result = run(clibench()
        .args(["ab", "--schedule", "tight", "--trials", "2"])
        .args([
            "--memory-trials",
            "1",
            "--phases",
            "prepare,install,measure",
        ])
        .arg("--out")
        .arg(&out));
    let sides = both_sides(&result, &out);
    let measure = |result: &ResultFile, trial: u32| {
        result
            .side
            .trials
            .iter()
            .find(|r| r.phase == Phase::Measure && r.trial == trial)
            .cloned()
            .unwrap()
    };
    for side in &sides {
        // `--trials 2` is two timed pairs, after the memory trial: three trials a side.
        assert_eq!(side.side.values(Metric::Cold).len(), 3, "{:?}", side.side);
        assert_eq!(side.side.values(Metric::Warm).len(), 3);
        // Trial 0 settles and reads memory; trials 1 and 2 are timed starts only.
        assert_eq!(side.side.values(Metric::Rss).len(), 1);
        assert_eq!(measure(side, 0).settles.len(), 2);
        assert!(measure(side, 1).settles.is_empty());
        assert!(measure(side, 2).settles.is_empty());
        assert_eq!(
            side.request.config.get("overrides").map(String::as_str),
            Some("measure.memory_trials=1")
        );
    }
    // The pairs' order alternates: base first in pair 0, head first in pair 1.
    let started = |side: usize, trial: u32| measure(&sides[side], trial).started_unix_ms.unwrap();
    assert!(started(0, 0) < started(1, 0));
    // Pair 0 reads memory: each side's trial is its own step, its two starts together.
    let spawned = |side: usize, trial: u32, start: usize| {
        let record = measure(&sides[side], trial);
        assert_eq!(record.starts.len(), 2, "{record:?}");
        assert_eq!(record.starts[0].session, "cold");
        assert_eq!(record.starts[1].session, "warm");
        record.starts[start].spawned_unix_us
    };
    assert!(spawned(0, 0, 1) < spawned(1, 0, 0));
    // Pair 1 is timed only: one process runs head's cold start, base's, then base's warm
    // start and head's, so each side's start sits right beside the other's.
    let order = [
        spawned(1, 1, 0),
        spawned(0, 1, 0),
        spawned(0, 1, 1),
        spawned(1, 1, 1),
    ];
    assert!(order.is_sorted(), "{order:?}");
    let schedule: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("ab.json")).unwrap()).unwrap();
    let paired: Vec<(String, u64)> = schedule["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|step| step["paired_with_next"] == true)
        .map(|step| {
            (
                step["side"].as_str().unwrap().to_owned(),
                step["trial"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(paired, [("head".to_owned(), 1), ("base".to_owned(), 2)]);
    assert_eq!(schedule["tight_memory_trials"], 1);
    assert_eq!(schedule["order"]["kind"], "abba");
    assert!(
        result
            .stdout
            .contains("tight pairs: from measure trial 1 on, one process runs both sides"),
        "{}",
        result.stdout
    );
}

#[test]
fn a_duet_starts_both_sides_programs_before_either_is_ready() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ab");
    // Starts of 300 ms and more: the two threads of a duet spawn well within one.
    let slow = "measure.env.DEMO_AGENT_STARTUP_DELAY_MS=300";
    let result = run(clibench()
        .args([
            "ab",
            "--schedule",
            "duet",
            "--trials",
            "2",
            "--memory-trials",
            "1",
        ])
        .args([
            "--phases",
            "prepare,install,measure",
            "--base",
            slow,
            "--head",
            slow,
        ])
        .arg("--out")
        .arg(&out));
    let sides = both_sides(&result, &out);
    let start = |side: usize, session: &str| {
        let record = sides[side]
            .side
            .trials
            .iter()
            .find(|r| r.phase == Phase::Measure && r.trial == 1)
            .unwrap();
        let spawned = record
            .starts
            .iter()
            .find(|start| start.session == session)
            .unwrap()
            .spawned_unix_us;
        let metric = if session == "cold" {
            Metric::Cold
        } else {
            Metric::Warm
        };
        let seconds = sides[side].side.metrics[&metric]
            .iter()
            .find(|sample| sample.trial == 1)
            .and_then(|sample| sample.value)
            .unwrap();
        (spawned, spawned + (seconds * 1e6) as u64)
    };
    for session in ["cold", "warm"] {
        let [(base_spawned, base_ready), (head_spawned, head_ready)] =
            [start(0, session), start(1, session)];
        // Each program was spawned before the other was ready: they ran at once.
        assert!(
            base_spawned < head_ready,
            "{session}: {base_spawned} {head_ready}"
        );
        assert!(
            head_spawned < base_ready,
            "{session}: {head_spawned} {base_ready}"
        );
    }
    // Both cold starts are over before either warm start begins.
    assert!(
        start(0, "cold").1.max(start(1, "cold").1)
            <= start(0, "warm").0.min(start(1, "warm").0) + 1_000
    );
    let schedule: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("ab.json")).unwrap()).unwrap();
    assert_eq!(schedule["duet"], true);
    // The pair's four starts shared one CPU; trial 0's, alone, none.
    let shared = |side: usize, trial: u32| -> Vec<Option<u32>> {
        let record = sides[side]
            .side
            .trials
            .iter()
            .find(|r| r.phase == Phase::Measure && r.trial == trial);
        record
            .unwrap()
            .starts
            .iter()
            .map(|s| s.shared_cpu)
            .collect()
    };
    let cpu = shared(0, 1)[0];
    assert!(cpu.is_some());
    assert_eq!([shared(0, 1), shared(1, 1)], [vec![cpu; 2], vec![cpu; 2]]);
    assert_eq!(shared(0, 0), vec![None, None]);
    // The comparison tests the starts that shared the CPU, not trial 0's.
    let comparison = bench_core::compare::compare(
        &sides[0].side,
        &sides[1].side,
        &bench_core::compare::CompareOptions::default(),
    );
    let cold = comparison
        .metrics
        .iter()
        .find(|row| row.metric == Metric::Cold)
        .unwrap();
    // `--trials 2` is two timed pairs, whatever ran alone before them.
    assert_eq!(cold.base.summary.as_ref().map(|s| s.n), Some(2), "{cold:?}");
    assert!(
        result.stdout.contains(
            "duet pairs: from measure trial 1 on, one process starts both sides' programs at \
             the same moment, confined to one CPU"
        ),
        "{}",
        result.stdout
    );
}

#[test]
fn a_duet_runs_both_sides_runtime_trials_at_once_on_one_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ab");
    let result = run(clibench()
        .args(["ab", "--schedule", "duet", "--trials", "2"])
        .args(["--phases", "prepare,install,runtime"])
        .arg("--out")
        .arg(&out));
    let sides = both_sides(&result, &out);
    let record = |side: usize, trial: u32| {
        sides[side]
            .side
            .trials
            .iter()
            .find(|r| r.phase == Phase::Runtime && r.trial == trial)
            .cloned()
            .unwrap()
    };
    // Trial 0 runs alone (its failure decides what the run skips); trial 1 shared a CPU.
    assert_eq!(
        [record(0, 0).shared_cpu, record(1, 0).shared_cpu],
        [None, None]
    );
    let cpu = record(0, 1).shared_cpu;
    assert!(cpu.is_some(), "{:?}", record(0, 1));
    assert_eq!(record(1, 1).shared_cpu, cpu);
    // Run one after the other, the second trial would start after the first had spent at
    // least its timed calls; together, each started before the other's calls were done.
    let timed_ms = |side: usize| -> f64 {
        sides[side]
            .side
            .metrics
            .iter()
            .filter(|(metric, _)| metric.unit() == bench_core::units::Unit::Seconds)
            .flat_map(|(_, samples)| samples.iter())
            .filter(|sample| sample.trial == 1)
            .filter_map(|sample| sample.value)
            .sum::<f64>()
            * 1e3
    };
    let gap = record(0, 1)
        .started_unix_ms
        .unwrap()
        .abs_diff(record(1, 1).started_unix_ms.unwrap()) as f64;
    assert!(
        gap < timed_ms(0).min(timed_ms(1)),
        "{gap} ms apart, timed {} and {} ms",
        timed_ms(0),
        timed_ms(1)
    );
    // The comparison tests kernel times of the pair alone; memory keeps both trials.
    let comparison = bench_core::compare::compare(
        &sides[0].side,
        &sides[1].side,
        &bench_core::compare::CompareOptions::default(),
    );
    let n = |metric: Metric| {
        comparison
            .metrics
            .iter()
            .find(|row| row.metric == metric)
            .and_then(|row| row.base.summary.as_ref())
            .map(|summary| summary.n)
    };
    assert_eq!(n(Metric::KernelExec), Some(1));
    assert_eq!(n(Metric::KernelRss), Some(2));
    assert!(
        result
            .stdout
            .contains("runtime trials from trial 1 on ran both sides at the same moment"),
        "{}",
        result.stdout
    );
}

/// `clibench ab --scenario long-session` on the demo, ten turns a side, one trial each
/// (so the slopes are judged by their fits' own errors), with `head` added to head's side.
fn long_session_ab(out: &Path, head: &[&str]) -> (crate::Run, bench_core::compare::Comparison) {
    let mut command = clibench();
    command
        .args(["ab", "--scenario", "long-session", "--trials", "1"])
        .args(["--phases", "prepare,install,session"]);
    for side in ["--base", "--head"] {
        command.args([side, "session.turns=10", side, "session.checkpoint_every=5"]);
    }
    for &setting in head {
        command.args(["--head", setting]);
    }
    let result = run(command.arg("--out").arg(out));
    assert_eq!(
        result.code,
        Some(0),
        "stderr: {}\n{}",
        result.stderr,
        logs(out)
    );
    let base = load(&out.join("base/result.json"));
    let head = load(&out.join("head/result.json"));
    let comparison = bench_core::compare::compare(
        &base.side,
        &head.side,
        &bench_core::compare::CompareOptions::default(),
    );
    (result, comparison)
}

#[test]
fn ab_of_a_long_session_calls_a_planted_leak_per_turn_regressed_and_a_a_within_noise() {
    const LEAK: f64 = 4.0 * 1024.0 * 1024.0;
    let dir = tempfile::tempdir().unwrap();
    let growth = |comparison: &bench_core::compare::Comparison| {
        comparison
            .metrics
            .iter()
            .find(|row| row.metric == Metric::SessionGrowth)
            .cloned()
            .expect("session_growth on both sides")
    };
    let (result, comparison) = long_session_ab(
        &dir.path().join("leak"),
        &["measure.env.DEMO_AGENT_LEAK_BYTES_PER_TURN=4194304"],
    );
    let leak = growth(&comparison);
    assert_eq!(
        leak.verdict,
        bench_core::compare::Verdict::Regressed,
        "{leak:?}\n{}",
        result.stdout
    );
    // The difference is of the planted leak's size, in bytes per turn, not a ratio of
    // slopes. Nine turns after the warm-up are few: on a loaded machine one turn's memory
    // read before the demo's allocation moved the fit by 14% once (at 100 turns the demo's
    // leak is found within 0.5%, docs/spec.md); this test is about the verdict.
    assert!((leak.delta - LEAK).abs() < 0.5 * LEAK, "{leak:?}");
    let slope = leak.slope.expect("a slope's difference");
    assert!(slope.from_fits && slope.low > 0.0, "{leak:?}");
    // The comment shows the difference in the slope's unit, and the title names what
    // differs, not the scenario both sides ran.
    assert!(
        result.stdout.starts_with(
            "## clibench: `measure.env.DEMO_AGENT_LEAK_BYTES_PER_TURN=4194304` (candidate) vs \
             the overrides both sides ran with (base)\n"
        ),
        "{}",
        result.stdout
    );
    let row = result
        .stdout
        .lines()
        .find(|line| line.starts_with("| `session_growth`"))
        .unwrap_or_default();
    assert!(
        row.contains("MiB/turn |") && row.contains("**regressed**") && !row.contains('%'),
        "{row}"
    );
    let (result, comparison) = long_session_ab(&dir.path().join("same"), &[]);
    let same = growth(&comparison);
    assert_eq!(
        same.verdict,
        bench_core::compare::Verdict::WithinNoise,
        "{same:?}\n{}",
        result.stdout
    );
}

/// The `ab` example of README.md and docs/ab.md, exactly as printed, run where a reader
/// would run it (a folder of their own, the default output folder in it): with no trial
/// flag the planted 300 ms delay is caught, cold and warm regressed and the exit code 1,
/// and cold's base is the program's start alone, not a duet's.
#[test]
fn the_documented_ab_example_catches_its_planted_delay() {
    let dir = tempfile::tempdir().unwrap();
    let line = "ab --head measure.env.DEMO_AGENT_STARTUP_DELAY_MS=300 --fail-on-regression";
    for doc in ["README.md", "docs/ab.md"] {
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../..")
                .join(doc),
        )
        .unwrap();
        assert!(text.contains(&format!("clibench {line}")), "{doc}");
    }
    let result = run(clibench().current_dir(dir.path()).args(line.split(' ')));
    assert_eq!(result.code, Some(1), "{}", result.stderr);
    let outs: Vec<_> = std::fs::read_dir(dir.path().join("clibench-out"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(outs.len(), 1, "{outs:?}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(outs[0].join("comparison.json")).unwrap())
            .unwrap();
    let row = |metric: &str| {
        json["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|row| row["metric"] == metric)
            .cloned()
            .unwrap_or_else(|| panic!("no {metric} in {json}"))
    };
    for metric in ["cold", "warm"] {
        assert_eq!(row(metric)["verdict"], "regressed", "{}", row(metric));
    }
    // The demo starts in well under 300 ms alone; a duet's base would be about twice it.
    let cold = row("cold");
    let (base, candidate) = (
        cold["base_center"].as_f64().unwrap(),
        cold["candidate_center"].as_f64().unwrap(),
    );
    assert_eq!(cold["alone"]["base_alone"].as_f64(), Some(base), "{cold}");
    assert!(candidate - base > 0.25, "{cold}");
    assert!(
        result.stderr.contains("--trials auto: stopped"),
        "{}",
        result.stderr
    );
}
