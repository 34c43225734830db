//! Bad values are refused up front with exit code 2 and a message naming the
//! flag or file: never a panic, a hang or a failure after minutes of work.

use crate::{Run, clibench, example_result, run};
use std::fs;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `command`, failing the test instead of hanging if it does not finish
/// (the bound is a guard against a hang, far above the milliseconds it takes).
fn run_bounded(command: &mut Command) -> Run {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("failed to start clibench");
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{command:?} still ran after 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().unwrap();
    Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn assert_refused(out: &Run, naming: &str) {
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains(naming), "{}", out.stderr);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
}

#[test]
fn overflowing_durations_are_refused_not_a_panic() {
    let huge = "9999999999999999999s";
    for args in [
        &["startup", "--timeout", huge, "--", "true"][..],
        &["startup", "--settle", huge, "--", "true"],
        &["kernel", "--timeout", huge],
        &["mem", "--settle", huge, "--", "true"],
        &["staircase", "--settle", huge, "--", "true"],
    ] {
        let out = run_bounded(clibench().args(args));
        assert_refused(&out, &format!("{}: ", args[1]));
        assert!(
            out.stderr.contains("out of range"),
            "{args:?}: {}",
            out.stderr
        );
    }
}

#[test]
fn trial_counts_beyond_the_result_format_are_refused_at_parse_time() {
    let out = tempfile::tempdir().unwrap();
    let out_dir = out.path().join("out");
    for args in [
        &["run", "--trials", "102"][..],
        &["run", "--installs", "102"],
        &["run", "--trials", "99999999999"],
    ] {
        let result = run_bounded(clibench().args(args).arg("--out").arg(&out_dir));
        assert_refused(&result, args[1]);
        assert!(
            !out_dir.exists(),
            "{args:?} started work in {}",
            out_dir.display()
        );
    }
    let result = run_bounded(
        clibench()
            .args([
                "phase",
                "measure",
                "--spec",
                "nonexistent.toml",
                "--trial",
                "101",
                "--out",
            ])
            .arg(&out_dir),
    );
    assert_refused(&result, "--trial");
    // The largest count the result file can hold is accepted by the parser.
    let help = run(clibench().args(["run", "--trials", "101", "--help"]));
    assert_eq!(help.code, Some(0), "{}", help.stderr);
}

#[test]
fn report_and_compare_refuse_a_fifo_without_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("result.json");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let out = run_bounded(clibench().arg("report").arg(&fifo));
    assert_refused(&out, "named pipe");
    assert!(
        out.stderr.contains(&fifo.display().to_string()),
        "{}",
        out.stderr
    );
    let out = run_bounded(
        clibench()
            .arg("compare")
            .arg(example_result("base"))
            .arg(&fifo),
    );
    assert_refused(&out, "named pipe");
}

#[test]
fn a_spec_that_is_a_fifo_or_a_device_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("spec.toml");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let zero = dir.path().join("zero.toml");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    for (spec, kind) in [(&fifo, "named pipe"), (&zero, "a device")] {
        // `phase` reads the spec as given (`run` checks it is a file first).
        let out = run_bounded(
            clibench()
                .args(["phase", "prepare", "--out"])
                .arg(dir.path().join("out"))
                .arg("--spec")
                .arg(spec),
        );
        assert_refused(&out, kind);
        assert!(
            out.stderr.contains("cannot read the spec"),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn report_refuses_a_link_to_a_device() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("result.json");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    let out = run_bounded(clibench().arg("report").arg(&link));
    assert_refused(&out, "a device");
}

#[test]
fn report_refuses_a_file_over_the_size_cap() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("result.json");
    // Sparse: 300 MiB long, no disk used.
    fs::File::create(&path).unwrap().set_len(300 << 20).unwrap();
    let out = run_bounded(clibench().arg("report").arg(&path));
    assert_refused(&out, "larger than 256 MiB");
}

#[test]
fn compare_refuses_to_export_over_one_of_its_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("a.json");
    let candidate = dir.path().join("b.json");
    fs::copy(example_result("base"), &base).unwrap();
    fs::copy(example_result("candidate"), &candidate).unwrap();
    let link = dir.path().join("link.md");
    std::os::unix::fs::symlink(&candidate, &link).unwrap();
    let original = fs::read(&base).unwrap();
    for export in [
        base.clone(),
        dir.path().join(".").join("a.json"),
        link.clone(),
    ] {
        let out = run_bounded(
            clibench()
                .arg("compare")
                .arg(&base)
                .arg(&candidate)
                .arg("--export-markdown")
                .arg(&export),
        );
        assert_refused(&out, "--export-markdown");
    }
    assert_eq!(fs::read(&base).unwrap(), original);
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // Another path is written as before.
    let export = dir.path().join("comment.md");
    let out = run_bounded(
        clibench()
            .arg("compare")
            .arg(&base)
            .arg(&candidate)
            .arg("--export-markdown")
            .arg(&export),
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(fs::read_to_string(&export).unwrap().contains('|'));
}

#[test]
fn the_demo_spec_holds_an_output_path_with_quotes_backslashes_and_newlines() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir
        .path()
        .join("a \"quoted\" back\\slash\nnew line 'single'");
    let result = run_bounded(clibench().arg("run").arg("--write-demo").arg(&out));
    assert_eq!(result.code, Some(0), "{}", result.stderr);
    let text = fs::read_to_string(out.join("demo.toml")).unwrap();
    let spec: toml::Value = toml::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let source = out.join("source").canonicalize().unwrap();
    assert_eq!(
        spec["source"]["repository"].as_str(),
        source.to_str(),
        "{text}"
    );
}
