//! `examples/startup_time.rs`: times a shell's start-up in a PTY.

use crate::example;

/// Durations vary per run; everything else is fixed.
fn redact(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let timed = ["first byte   ", "first frame  ", "ready        "]
            .iter()
            .any(|label| line.starts_with(label));
        match line.get(..13) {
            Some(label) if timed => out.push_str(&format!("{label}[duration]")),
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[test]
fn times_a_shell_until_its_first_frame() {
    let output = example("startup_time")
        .args([
            "--ready",
            "first-frame",
            "--",
            "sh",
            "-c",
            "echo hello from sh; sleep 30",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    insta::assert_snapshot!(redact(&String::from_utf8(output.stdout).unwrap()), @r"
    ready by first-frame
    first byte   [duration]
    first frame  [duration]
    ready        [duration]
    closed       by its quit keys
    screen:
      | hello from sh
    ");
}

#[test]
fn probe_mode_waits_for_bash_to_read_keys() {
    let output = example("startup_time")
        .args(["--", "bash", "--norc", "--noprofile"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.starts_with("ready by probe\n"), "{stdout}");
    // The probe was typed, seen and erased again: the screen ends with the bare
    // prompt (`bash-5.2#` or `bash-5.2$`), nothing typed after it.
    let prompt = stdout.lines().last().unwrap();
    let prompt = prompt.strip_prefix("  | ").unwrap();
    assert!(prompt.starts_with("bash"), "{stdout}");
    assert!(prompt.ends_with('#') || prompt.ends_with('$'), "{stdout}");
    assert!(!prompt.contains(' '), "{stdout}");
}

#[test]
fn a_program_that_exits_first_is_an_error() {
    let output = example("startup_time")
        .args(["--", "sh", "-c", "exit 4"])
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("exit status: 4"), "{stderr}");
}

#[test]
fn without_arguments_it_times_python_to_its_prompt() {
    let output = example("startup_time").output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.starts_with("ready by pattern:>>> $\n"), "{stdout}");
    assert!(stdout.contains("| >>>"), "{stdout}");
}
