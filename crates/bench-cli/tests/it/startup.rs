//! `clibench startup`, driving real line-mode programs in a PTY.

use crate::{clibench, run};
use bench_core::Metric;

#[test]
fn probe_mode_measures_bash_and_exports_json_and_markdown() {
    let folder = tempfile::tempdir().unwrap();
    let json = folder.path().join("startup.json");
    let markdown = folder.path().join("startup.md");
    let hyperfine = folder.path().join("hyperfine.json");
    let out = run(clibench()
        .args([
            "startup", "--runs", "2", "--warmup", "1", "--settle", "100ms",
        ])
        .arg("--export-json")
        .arg(&json)
        .arg("--export-markdown")
        .arg(&markdown)
        .arg("--export-hyperfine")
        .arg(&hyperfine)
        .args(["--show-screen", "--", "bash", "--norc", "--noprofile"])
        .env("PS1", "startup$ "));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stderr.contains("Screen of the first run:"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("│startup$"), "{}", out.stderr);
    assert!(
        out.stderr.contains("(probe ready, 2 of 2 runs ok)"),
        "{}",
        out.stderr
    );

    let hyperfine: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&hyperfine).unwrap()).unwrap();
    let result = &hyperfine["results"][0];
    assert_eq!(result["command"], "bash --norc --noprofile");
    assert_eq!(result["times"].as_array().unwrap().len(), 2, "{hyperfine}");
    for key in ["mean", "median", "min", "max", "user", "system", "stddev"] {
        assert!(
            result[key].as_f64().is_some_and(|v| v >= 0.0),
            "{key}: {hyperfine}"
        );
    }

    let report = bench_core::ResultFile::load(&json).unwrap();
    assert_eq!(report.request.sha, "bash --norc --noprofile");
    assert_eq!(report.request.config["ready_mode"], "probe");
    let side = &report.side;
    let (first_byte, ready) = (side.values(Metric::FirstByte), side.values(Metric::Ready));
    assert_eq!(ready.len(), 2, "warm-up runs are not kept");
    for (first_byte, ready) in first_byte.iter().zip(&ready) {
        assert!(first_byte <= ready, "{side:?}");
    }
    // bash alone in its session: a few MiB, certainly between 1 MiB and 1 GiB.
    for (rss, pss) in side
        .values(Metric::Rss)
        .iter()
        .zip(side.values(Metric::Pss))
    {
        assert!(
            (1.0 * (1 << 20) as f64..(1 << 30) as f64).contains(rss),
            "{side:?}"
        );
        assert!(pss <= *rss, "{side:?}");
    }
    for metric in [
        Metric::FirstByte,
        Metric::FirstFrame,
        Metric::Ready,
        Metric::Rss,
        Metric::Pss,
    ] {
        assert_eq!(side.values(metric).len(), 2, "{metric}");
    }
    assert_eq!(bench_core::compare::failed_samples(side), []);
    let markdown = std::fs::read_to_string(&markdown).unwrap();
    assert!(markdown.contains("| `ready` |"), "{markdown}");
}

#[test]
fn pattern_mode_waits_for_the_python_prompt() {
    let out = run(clibench()
        .args([
            "startup", "--runs", "1", "--warmup", "0", "--settle", "100ms",
        ])
        .args([
            "--ready",
            "pattern:>>> ",
            "--export-json",
            "-",
            "--",
            "python3",
        ]));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let report = bench_core::ResultFile::from_json_str(&out.stdout).unwrap();
    assert!(report.side.values(Metric::Ready)[0] > 0.0);
}

#[test]
fn a_program_that_never_gets_ready_fails_with_the_stage_and_screen() {
    let out = run(clibench()
        .args([
            "startup",
            "--runs",
            "1",
            "--warmup",
            "0",
            "--timeout",
            "500ms",
        ])
        .args(["--", "sh", "-c", "echo still starting; sleep 30"]));
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("waiting for raw mode (ICANON and ECHO off)"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("  | still starting"), "{}", out.stderr);
    assert!(out.stderr.contains("1 of 1 runs failed"), "{}", out.stderr);
}

#[test]
fn an_early_exit_reports_the_exit_status() {
    let out = run(clibench()
        .args([
            "startup",
            "--runs",
            "1",
            "--warmup",
            "0",
            "--ready",
            "pattern:never",
        ])
        .args(["--", "sh", "-c", "echo bye; exit 3"]));
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(out.stderr.contains("exit status: 3"), "{}", out.stderr);
}

#[test]
fn a_failed_run_is_numbered_as_runs_and_warmup_count_it() {
    let out = run(clibench()
        .args([
            "startup",
            "--runs",
            "1",
            "--warmup",
            "1",
            "--ready",
            "pattern:never",
        ])
        .args(["--", "sh", "-c", "echo bye; exit 3"]));
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    // `--runs 1` has no run 2: the first failure is the warm-up's.
    assert!(
        out.stderr.contains("warm-up run 1 failed: "),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("\nrun 1 failed: "), "{}", out.stderr);
    assert!(!out.stderr.contains("run 2 failed"), "{}", out.stderr);
}

#[test]
fn exit_mode_exports_exit_codes_as_hyperfine_does() {
    let folder = tempfile::tempdir().unwrap();
    let hyperfine = folder.path().join("hyperfine.json");
    let json = folder.path().join("startup.json");
    let out = run(clibench()
        .args([
            "startup", "--runs", "2", "--warmup", "0", "--ready", "exit", "-i",
        ])
        .arg("--export-hyperfine")
        .arg(&hyperfine)
        .arg("--export-json")
        .arg(&json)
        .args(["--", "sh", "-c", "echo done; exit 3"]));
    assert_eq!(
        out.code,
        Some(0),
        "-i keeps the failing runs: {}",
        out.stderr
    );
    let hyperfine: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&hyperfine).unwrap()).unwrap();
    assert_eq!(
        hyperfine["results"][0]["exit_codes"],
        serde_json::json!([3, 3]),
        "{hyperfine}"
    );
    let result = bench_core::ResultFile::load(&json).unwrap();
    assert_eq!(result.request.config["ignore_failure"], "true");
    assert_eq!(result.side.values(Metric::Ready).len(), 2);
    let codes: Vec<_> = result.side.trials.iter().map(|t| t.exit_code).collect();
    assert_eq!(codes, [Some(3), Some(3)], "{:?}", result.side.trials);
    assert!(
        result.side.trials.iter().all(|t| t.settles.is_empty()),
        "an exited program settles nothing"
    );
}

#[test]
fn bad_flags_are_usage_errors() {
    for (flag, value, message) in [
        ("--ready", "soon", "--ready: unknown ready mode \"soon\""),
        ("--timeout", "30", "--timeout: invalid duration \"30\""),
        (
            "--env",
            "NOEQUALS",
            "--env \"NOEQUALS\": expected KEY=VALUE",
        ),
    ] {
        let out = run(clibench().args(["startup", flag, value, "--", "true"]));
        assert_eq!(out.code, Some(2), "{}", out.stderr);
        assert!(out.stderr.contains(message), "{}", out.stderr);
    }
}

#[test]
fn transcripts_are_saved_per_run() {
    let folder = tempfile::tempdir().unwrap();
    let out = run(clibench()
        .args([
            "startup", "--runs", "2", "--warmup", "1", "--settle", "50ms",
        ])
        .args(["--ready", "first-frame", "--transcripts"])
        .arg(folder.path())
        .args(["--", "sh", "-c", "echo transcript check; sleep 30"]));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    for run in ["warmup-1", "run-1", "run-2"] {
        let screen = std::fs::read_to_string(folder.path().join(run).join("screen.txt")).unwrap();
        assert!(screen.starts_with("transcript check\n"), "{run}: {screen}");
        let output = std::fs::read(folder.path().join(run).join("output.raw")).unwrap();
        assert!(
            output.starts_with(b"transcript check\r\n"),
            "{run}: {output:?}"
        );
        let cast = std::fs::read_to_string(folder.path().join(run).join("recording.cast")).unwrap();
        let recording = bench_term::asciicast::Recording::parse(&cast).unwrap();
        assert_eq!(recording.output().as_bytes(), output.as_slice());
        assert!(recording.marker("ready").is_some(), "{run}: {cast}");
        let at_ready =
            std::fs::read_to_string(folder.path().join(run).join("screen-at-ready.txt")).unwrap();
        assert_eq!(at_ready, "transcript check\n");
    }
}

#[test]
fn a_dialog_at_ready_fails_the_run_unless_allowed() {
    let dialog = "printf 'Do you trust the files in this folder?\\n 1. Yes\\n 2. No\\n'; sleep 30";
    let start = |extra: &[&str]| {
        run(clibench()
            .args([
                "startup", "--runs", "1", "--warmup", "0", "--settle", "50ms",
            ])
            .args(["--ready", "first-frame"])
            .args(extra)
            .args(["--", "sh", "-c", dialog]))
    };
    let blocked = start(&[]);
    assert_eq!(blocked.code, Some(1), "{}", blocked.stderr);
    assert!(
        blocked.stderr.contains(
            "blocked by a dialog (folder trust: \"Do you trust the files in this folder?\")"
        ),
        "{}",
        blocked.stderr
    );
    assert!(blocked.stderr.contains("  |  1. Yes"), "{}", blocked.stderr);
    let allowed = start(&["--allow-dialog"]);
    assert_eq!(allowed.code, Some(0), "{}", allowed.stderr);
    let required = start(&["--ready-require", "trust the files"]);
    assert_eq!(required.code, Some(0), "{}", required.stderr);
}

#[test]
fn ready_reject_and_require_fail_the_run_with_the_screen() {
    let start = |extra: &[&str]| {
        run(clibench()
            .args([
                "startup", "--runs", "1", "--warmup", "0", "--settle", "50ms",
            ])
            .args(["--ready", "first-frame"])
            .args(extra)
            .args(["--", "sh", "-c", "echo 'Update available!'; sleep 30"]))
    };
    let rejected = start(&["--ready-reject", "Update avail"]);
    assert_eq!(rejected.code, Some(1), "{}", rejected.stderr);
    assert!(
        rejected
            .stderr
            .contains("blocked by: Update avail; the screen at ready:\n  | Update available!"),
        "{}",
        rejected.stderr
    );
    let missing = start(&["--ready-require", "^> "]);
    assert_eq!(missing.code, Some(1), "{}", missing.stderr);
    assert!(
        missing
            .stderr
            .contains("the screen at ready does not match the required ^> "),
        "{}",
        missing.stderr
    );
    let bad = start(&["--quit", "C-12"]);
    assert_eq!(bad.code, Some(2), "{}", bad.stderr);
    assert!(
        bad.stderr.contains("--quit: unknown key \"C-12\""),
        "{}",
        bad.stderr
    );
}

#[test]
fn a_program_that_ignores_its_quit_keys_is_hung_up_and_the_run_counts() {
    // sh ignores SIGINT here and so does its sleep: Ctrl-C does nothing.
    let out = run(clibench()
        .args([
            "startup", "--runs", "2", "--warmup", "0", "--settle", "50ms",
        ])
        .args(["--ready", "first-frame", "--quit", "C-c"])
        .args([
            "--",
            "sh",
            "-c",
            "trap '' INT; echo ignoring ctrl-c; sleep 30",
        ]));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stderr.contains("2 of 2 runs ok"), "{}", out.stderr);
}

/// Pids whose command line is exactly `args`.
fn processes_running(args: &[&str]) -> Vec<u32> {
    let wanted: Vec<u8> = args
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).ok() == Some(wanted.clone()))
        .collect()
}

#[test]
fn detached_daemons_are_measured_and_stopped() {
    // `setsid` moves the daemon out of the terminal's session, as agent daemons do.
    let daemon = ["sleep", "3127"];
    let out = run(clibench()
        .args([
            "startup", "--runs", "1", "--warmup", "0", "--settle", "200ms",
        ])
        .args(["--ready", "pattern:started", "--export-json", "-", "--"])
        .args(["sh", "-c", "setsid sleep 3127 & echo started; sleep 30"]));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let report = bench_core::ResultFile::from_json_str(&out.stdout).unwrap();
    let side = &report.side;
    // sh, its `sleep 30` and the detached `sleep 3127`.
    assert_eq!(side.trials[0].process_count, Some(3), "{side:?}");
    assert_eq!(side.runtime["detached_stopped"], "1", "{side:?}");
    assert_eq!(processes_running(&daemon), Vec::<u32>::new());
}
