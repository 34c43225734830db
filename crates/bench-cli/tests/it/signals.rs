//! SIGINT, SIGTERM and SIGHUP to the measuring commands stop everything they
//! started, detached daemons included, and exit 128 + the signal.

use crate::clibench;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Pids of live (not zombie) processes whose command line is exactly `args`.
fn running(args: &[&str]) -> Vec<u32> {
    let wanted: Vec<u8> = args
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).ok() == Some(wanted.clone()))
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                !stat
                    .rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
        })
        .collect()
}

fn kill(pids: &[u32]) {
    for pid in pids {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
}

/// Starts `clibench ARGS -- sh -c SCRIPT` where the script leaves a detached
/// daemon (`setsid` in a subshell that exits: it re-parents) and execs a
/// foreground program, waits until both run, sends `signal`, and checks the
/// exit code and that neither outlived clibench.
fn signal_stops_everything(args: &[&str], signal: &str, code: i32, marker: u32) {
    let daemon = ["sleep", &format!("{marker}.1")];
    let foreground = ["sleep", &format!("{marker}.2")];
    let script = format!(
        "(setsid {} {} &); exec {} {}",
        daemon[0], daemon[1], foreground[0], foreground[1]
    );
    let mut child = clibench()
        .args(args)
        .args(["--", "sh", "-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while running(&daemon).is_empty() || running(&foreground).is_empty() {
        if started.elapsed() > Duration::from_secs(60) || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            let output = child.wait_with_output().unwrap();
            kill(&running(&daemon));
            kill(&running(&foreground));
            panic!(
                "{args:?} never started both programs: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    let left: Vec<u32> = [running(&daemon), running(&foreground)].concat();
    kill(&left);
    assert_eq!(
        output.status.code(),
        Some(code),
        "{args:?} after SIG{signal}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        left.is_empty(),
        "{args:?} after SIG{signal} left {left:?} running"
    );
}

#[test]
fn sigterm_to_mem_stops_the_command_and_its_daemon() {
    signal_stops_everything(&["mem", "--settle", "10m"], "TERM", 143, 4101);
}

#[test]
fn sigint_to_staircase_stops_the_instances_and_their_daemons() {
    signal_stops_everything(
        &["staircase", "--count", "1", "--settle", "10m"],
        "INT",
        130,
        4102,
    );
}

#[test]
fn sighup_to_startup_stops_the_program_and_its_daemon() {
    signal_stops_everything(
        &[
            "startup",
            "--runs",
            "1",
            "--warmup",
            "0",
            "--timeout",
            "10m",
        ],
        "HUP",
        129,
        4103,
    );
}
