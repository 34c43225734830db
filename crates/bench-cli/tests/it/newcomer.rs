//! What a newcomer runs into, each said once and plainly: a program that is not found, a
//! startup or kernel export given to `report`, `?` in `mem`'s table, a peak process count
//! above the final one, and a command without `--`.

use crate::is_root;
use crate::{clibench, run};
use std::process::Command;

#[test]
fn startup_of_a_missing_program_says_so_once_before_any_run() {
    let out = run(clibench().args(["startup", "--runs", "2", "--", "no-such-program-h7"]));
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert_eq!(
        out.stderr.matches("no-such-program-h7").count(),
        1,
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .starts_with("error: `no-such-program-h7` was not found on PATH ("),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("0 of 2"), "{}", out.stderr);
}

#[test]
fn report_reads_a_startup_export_as_a_result() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("startup.json");
    let made = run(clibench()
        .args([
            "startup",
            "--runs",
            "1",
            "--warmup",
            "0",
            "--ready",
            "pattern:>>> ",
            "--settle",
            "100ms",
            "--export-json",
        ])
        .arg(&export)
        .args(["--", "python3", "-q"]));
    assert_eq!(made.code, Some(0), "{}", made.stderr);
    let out = run(clibench().arg("report").arg(&export));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stderr.starts_with("python3 -q\n"), "{}", out.stderr);
    assert!(out.stderr.contains(" ready "), "{}", out.stderr);
}

#[test]
fn report_names_a_startup_export_of_an_earlier_clibench() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("startup.json");
    std::fs::write(
        &export,
        r#"{"schema_version": 1, "command": ["python3", "-q"], "ready_mode": "probe", "cols": 120, "rows": 40, "runs": [], "summary": {}}"#,
    )
    .unwrap();
    let out = run(clibench().arg("report").arg(&export));
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "is a `clibench startup --export-json` file of an earlier clibench (of `python3 -q`), not a result file: `clibench report` and `clibench compare` read the result.json"
        ),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("unknown field"), "{}", out.stderr);
}

#[test]
fn report_names_a_kernel_export() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("kernel.json");
    std::fs::write(
        &export,
        r#"{"schema_version": 1, "command": ["python3", "-m", "kernel"], "reference_kernel": true, "python": null, "workload": null, "runs": [], "metrics": []}"#,
    )
    .unwrap();
    let out = run(clibench().arg("report").arg(&export));
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("is a `clibench kernel --export-json` file of an earlier clibench (of `python3 -m kernel`)"),
        "{}",
        out.stderr
    );
}

#[test]
fn mem_of_another_users_processes_explains_the_question_marks() {
    if !is_root() {
        bench_core::skip_test!("needs root to run clibench as nobody");
    }
    // As nobody, root's processes (this test's own, at least) show `?` for PSS.
    let out = run(Command::new("/usr/sbin/runuser")
        .args(["-u", "nobody", "--"])
        .arg(env!("CARGO_BIN_EXE_clibench"))
        .args(["mem", "--user", "root"])
        .current_dir("/"));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stderr.contains("    ?"), "{}", out.stderr);
    assert!(
        out.stderr.contains("note: PSS, USS and swap are `?` for",)
            && out
                .stderr
                .contains("only to root or a process with CAP_SYS_PTRACE"),
        "{}",
        out.stderr
    );
}

#[test]
fn mem_explains_a_peak_above_the_final_process_count() {
    // Two helpers live for a second of the three-second settle, like a version manager's
    // shim that starts the real program and goes away.
    let out = run(clibench().args([
        "mem",
        "--settle",
        "3s",
        "--",
        "sh",
        "-c",
        "sleep 1 & sleep 1 & exec sleep 30",
    ]));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "note: the peak counted 3 processes, the table 1: the others were short-lived"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn a_command_without_the_separator_gets_the_fixed_command_line() {
    let out = run(clibench().args(["mem", "python3", "-m", "http.server"]));
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("tip: did you mean: clibench mem -- python3 -m http.server"),
        "{}",
        out.stderr
    );
}

#[test]
fn kernel_of_a_missing_program_says_so_once_and_fails() {
    let out = run(clibench().args(["kernel", "--runs", "3", "--", "no-such-kernel-h7"]));
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert_eq!(
        out.stderr.matches("no-such-kernel-h7").count(),
        1,
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("`no-such-kernel-h7` was not found on PATH"),
        "{}",
        out.stderr
    );
}

/// Runs `args` with stdout, or stderr, into a pipe whose reader is already gone (as
/// `| head -1` leaves it once head has its line); the other stream is captured.
fn into_closed_pipe(args: &[&str], stream: &str) -> crate::Run {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut command = clibench();
    command.args(args);
    let output = if stream == "stdout" {
        command.stdout(writer).stderr(std::process::Stdio::piped())
    } else {
        command.stderr(writer).stdout(std::process::Stdio::piped())
    }
    .output()
    .unwrap();
    let captured = String::from_utf8_lossy(if stream == "stdout" {
        &output.stderr
    } else {
        &output.stdout
    })
    .into_owned();
    crate::Run {
        code: output.status.code(),
        stdout: captured.clone(),
        stderr: captured,
    }
}

#[test]
fn output_into_a_closed_pipe_ends_quietly_with_status_0() {
    let base = crate::example_result("base");
    let candidate = crate::example_result("candidate");
    let (base, candidate) = (base.to_str().unwrap(), candidate.to_str().unwrap());
    for (args, stream) in [
        (
            vec!["compare", base, candidate, "--format", "json"],
            "stdout",
        ),
        (vec!["compare", base, candidate], "stderr"),
        (vec!["report", base, "--format", "markdown"], "stdout"),
        (
            vec![
                "startup",
                "--runs",
                "1",
                "--warmup",
                "0",
                "--ready",
                "pattern:>>> ",
                "--export-json",
                "-",
                "--",
                "python3",
                "-q",
            ],
            "stdout",
        ),
    ] {
        let out = into_closed_pipe(&args, stream);
        assert_eq!(
            out.code,
            Some(0),
            "{args:?} into a closed {stream}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains("panicked"), "{args:?}: {}", out.stderr);
        assert!(
            !out.stderr.contains("Broken pipe"),
            "{args:?}: {}",
            out.stderr
        );
    }
}

#[test]
fn a_required_prompt_ending_in_a_blank_is_found_as_the_ready_pattern_finds_it() {
    for ready in ["probe", "pattern:>>>.$"] {
        let out = run(clibench().args([
            "startup",
            "--runs",
            "1",
            "--warmup",
            "0",
            "--ready",
            ready,
            "--ready-require",
            ">>>.$",
            "--",
            "python3",
            "-q",
        ]));
        assert_eq!(out.code, Some(0), "--ready {ready}: {}", out.stderr);
        // The summary table has a `failed` column; a failed run is said as
        // `run N failed: ...` and counted as `N of M runs failed`.
        assert!(
            !out.stderr.contains("run 1 failed") && !out.stderr.contains("runs failed"),
            "--ready {ready}: {}",
            out.stderr
        );
        assert!(out.stderr.contains("1 of 1 runs ok"), "{}", out.stderr);
    }
}

#[test]
fn a_failed_run_says_its_error_live_and_in_the_summary_and_points_at_the_logs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("spec.toml"),
        "name = \"failing\"\n[install]\ncommand = [\"sh\", \"-c\", \"echo 'npm error 404 gone-h7'; exit 1\"]\n\
         [measure]\ncommand = [\"true\"]\n",
    )
    .unwrap();
    let out = run(clibench()
        .args(["run", "spec.toml", "--out", "out", "--trials", "2"])
        .current_dir(dir.path()));
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    // Once as it happens, once in the summary's `failed:` line; the installer's command
    // line quotes it a third time in each, so count the output's own line.
    let told = out.stderr.matches("output ends with").count()
        + out.stderr.matches("install trial 0: failed").count();
    assert_eq!(told, 2, "{}", out.stderr);
    assert!(
        !out.stderr.contains("measure another build"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("next: the failed steps' logs are in out/logs"),
        "{}",
        out.stderr
    );
}
