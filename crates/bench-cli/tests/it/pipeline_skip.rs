//! One failure, one message: a failed install skips every later phase with that cause, a
//! trial 0 that fails makes the later trials and the staircase skip as "same failure"
//! (unless `--keep-going`), a spec for an already installed program runs, and
//! `--drop-caches` is recorded (and refused without root).

use crate::pipeline_run::{assert_nothing_left, demo, edit, is_root, load, phase_logs};
use crate::{clibench, run};
use bench_core::Metric;
use std::path::Path;

fn run_spec(spec: &Path, out: &Path, extra: &[&str]) -> crate::Run {
    run(clibench()
        .arg("run")
        .arg(spec)
        .arg("--out")
        .arg(out)
        .args(extra))
}

#[test]
fn a_failed_install_skips_every_later_phase_with_one_line_naming_it() {
    let (dir, spec) = demo();
    edit(
        &spec,
        r#"command = ["sh", "{source}/install.sh", "{version}"]"#,
        r#"command = ["sh", "-c", "echo no room >&2; exit 7"]"#,
    );
    let out = dir.path().join("out");
    let result = run_spec(&spec, &out, &["--trials", "2"]);
    assert_eq!(result.code, Some(1), "stderr: {}", result.stderr);
    let stderr = &result.stderr;
    assert_eq!(
        stderr.matches("install trial 0: failed").count(),
        1,
        "{stderr}"
    );
    for phase in ["measure", "runtime", "ui", "session", "staircase"] {
        let line = format!("{phase}: skipped: install trial 0 failed");
        assert_eq!(stderr.matches(&line).count(), 1, "{line}:\n{stderr}");
    }
    assert!(!stderr.contains("No such file"), "{stderr}");
    assert!(!stderr.contains("measure trial 0: failed"), "{stderr}");
    // The summary leads with the cause and says how much it cost; its error is told live
    // and in the summary's `failed:` line, not a third time.
    let cause = stderr
        .lines()
        .find(|line| line.starts_with("clibench run: install trial 0 failed; "))
        .unwrap_or_else(|| panic!("no root cause line:\n{stderr}"));
    assert!(cause.contains("9 later step(s) skipped"), "{cause}");
    assert_eq!(stderr.matches("exit status: 7").count(), 2, "{stderr}");
    let saved = load(&out);
    assert_eq!(
        saved.side.skipped.keys().collect::<Vec<_>>(),
        [
            "measure:0",
            "measure:1",
            "runtime:0",
            "runtime:1",
            "session:0",
            "session:1",
            "staircase:0",
            "ui:0",
            "ui:1"
        ]
    );
    assert!(
        saved
            .side
            .skipped
            .values()
            .all(|reason| reason == "install trial 0 failed")
    );
    assert_nothing_left(&out, is_root());
}

#[test]
fn a_trial_0_that_never_gets_ready_skips_the_later_trials_and_the_staircase() {
    let (dir, spec) = demo();
    edit(
        &spec,
        r#"command = ["demo-agent"]"#,
        r#"command = ["demo-agent", "--never-ready"]"#,
    );
    edit(&spec, r#"ready_timeout = "20s""#, r#"ready_timeout = "1s""#);
    let phases = ["--phases", "prepare,install,measure,staircase"];

    let out = dir.path().join("out");
    let result = run_spec(&spec, &out, &[&["--trials", "3"][..], &phases[..]].concat());
    assert_eq!(result.code, Some(1), "stderr: {}", result.stderr);
    let stderr = &result.stderr;
    assert_eq!(stderr.matches(": failed").count(), 1, "{stderr}");
    assert!(
        stderr.contains(
            "measure from trial 1: skipped: same failure as measure trial 0: cold, cold_cpu: "
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("staircase: skipped: same failure as measure trial 0"),
        "{stderr}"
    );
    let saved = load(&out);
    assert_eq!(
        saved.side.skipped.keys().collect::<Vec<_>>(),
        ["measure:1", "measure:2", "staircase:0"]
    );
    // Trial 0's own error stays where it was; the skips name it.
    let cold = &saved.side.metrics[&Metric::Cold];
    assert_eq!(cold.len(), 1, "{cold:?}");
    // The footprint is the installation's: measured although no start succeeded.
    assert_eq!(
        saved.side.values(Metric::Disk).len(),
        1,
        "{:?}",
        saved.side.metrics
    );
    // One failure under cold and cold_cpu is said once, naming both.
    assert!(saved.side.skipped["measure:1"].contains("cold, cold_cpu: "));
    assert_nothing_left(&out, is_root());

    // --keep-going runs them all, each failing on its own.
    let out = dir.path().join("out-keep-going");
    let result = run_spec(
        &spec,
        &out,
        &[&["--trials", "2", "--keep-going"][..], &phases[..]].concat(),
    );
    assert_eq!(result.code, Some(1), "stderr: {}", result.stderr);
    assert!(
        result.stderr.contains("measure trial 1: failed"),
        "{}",
        result.stderr
    );
    let saved = load(&out);
    assert!(saved.side.skipped.is_empty(), "{:?}", saved.side.skipped);
    assert_eq!(saved.side.metrics[&Metric::Cold].len(), 2);
    assert_nothing_left(&out, is_root());
}

#[test]
fn a_spec_of_a_name_and_a_measure_runs_an_installed_program() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("python.toml");
    std::fs::write(
        &spec,
        r#"name = "python"

[measure]
command = ["python3", "-q", "-i", "{home}/check.py"]
ready = "pattern"
ready_pattern = "readynow"
ready_timeout = "30s"
settle = "200ms"

[[install.write]]
path = "where.json"
content = '{"workspace": "{json:workspace}", "home": "{json:home}"}'

# Ready only when the placeholders were written as the paths the program sees.
[[install.write]]
path = "check.py"
content = """
import json, os
where = json.load(open(os.path.expanduser("~/where.json")))
ok = where == {"workspace": os.getcwd(), "home": os.environ["HOME"]}
print(("ready" + "now") if ok else ("wrong: %r" % where))
"""
"#,
    )
    .unwrap();
    let out = dir.path().join("out");
    let result = run_spec(&spec, &out, &["--trials", "1"]);
    assert_eq!(
        result.code,
        Some(0),
        "stderr: {}\n{}",
        result.stderr,
        phase_logs(&out)
    );
    let saved = load(&out);
    assert_eq!(saved.side.values(Metric::Cold).len(), 1);
    assert_eq!(saved.side.values(Metric::Rss).len(), 1);
    assert_eq!(saved.side.values(Metric::Disk).len(), 1);
    // Nothing was built or installed: those metrics are absent, not errors.
    assert!(!saved.side.metrics.contains_key(&Metric::Bundle));
    assert!(!saved.side.metrics.contains_key(&Metric::Install));
    assert!(saved.side.skipped.is_empty());
    // No installer log names the trial user; the state file and the processes still tell.
    assert_nothing_left(&out, false);
}

/// A spec of a name and a `[measure]` of python3, which is on every test machine.
fn python_spec(dir: &Path) -> std::path::PathBuf {
    let spec = dir.join("python.toml");
    std::fs::write(
        &spec,
        r#"name = "python"

[measure]
command = ["python3", "-q"]
ready = "pattern"
ready_pattern = ">>> "
settle = "200ms"
"#,
    )
    .unwrap();
    spec
}

#[test]
fn drop_caches_is_recorded_in_the_result_and_said_once() {
    if !is_root() {
        bench_core::skip_test!("needs root to drop the page cache");
    }
    let dir = tempfile::tempdir().unwrap();
    let spec = python_spec(dir.path());
    let out = dir.path().join("out");
    let result = run_spec(&spec, &out, &["--trials", "2", "--drop-caches"]);
    assert_eq!(result.code, Some(0), "stderr: {}", result.stderr);
    assert_eq!(
        result.stderr.matches("affects the whole machine").count(),
        1,
        "{}",
        result.stderr
    );
    let saved = load(&out);
    assert_eq!(
        saved.side.runtime["caches_dropped"],
        "yes: before each measure trial"
    );
    assert!(
        result
            .stdout
            .contains("the page cache was dropped before each cold start"),
        "{}",
        result.stdout
    );
    assert_nothing_left(&out, false);

    // Without the flag the result says so, and so does the report.
    let out = dir.path().join("out-kept");
    let result = run_spec(&spec, &out, &["--trials", "1"]);
    assert_eq!(result.code, Some(0), "stderr: {}", result.stderr);
    assert_eq!(load(&out).side.runtime["caches_dropped"], "no");
    assert!(result.stdout.contains("the page cache was not dropped"));
    assert_nothing_left(&out, false);
}

#[test]
fn drop_caches_without_root_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut command = if is_root() {
        let mut command = std::process::Command::new("/usr/sbin/runuser");
        command
            .args(["-u", "nobody", "--"])
            .arg(env!("CARGO_BIN_EXE_clibench"));
        command
    } else {
        clibench()
    };
    let result = run(command
        .args(["run", "--drop-caches", "--out"])
        .arg(&out)
        .current_dir("/"));
    assert_eq!(result.code, Some(2), "stderr: {}", result.stderr);
    assert!(
        result.stderr.contains("--drop-caches needs root"),
        "{}",
        result.stderr
    );
    assert!(!out.exists());
}
