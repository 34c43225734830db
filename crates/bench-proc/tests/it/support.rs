//! Spawning the fixture and making sure nothing outlives a test.

use bench_proc::{Selector, stop};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

pub const MIB: u64 = 1 << 20;
const READY_TIMEOUT: Duration = Duration::from_secs(20);

pub fn fixture_command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_bench-proc-fixture"));
    command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .process_group(0);
    command
}

/// A running fixture; dropping it stops its tree and its daemon.
pub struct Fixture {
    pub child: Child,
    pub pid: u32,
    pub children: Vec<u32>,
    pub daemon: Option<u32>,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Fixture {
    pub fn spawn(args: &[&str]) -> Fixture {
        Fixture::start(fixture_command(args))
    }

    pub fn start(mut command: Command) -> Fixture {
        let mut child = command.spawn().expect("spawn bench-proc-fixture");
        let stdout = child.stdout.take().expect("piped stdout");
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let mut fixture = Fixture {
            pid: child.id(),
            stdin: child.stdin.take(),
            child,
            children: Vec::new(),
            daemon: None,
            lines,
        };
        let ready = fixture.line("ready");
        for field in ready.split_ascii_whitespace() {
            match field.split_once('=') {
                Some(("children", list)) => {
                    fixture.children = list.split(',').filter_map(|p| p.parse().ok()).collect();
                }
                Some(("daemon", pid)) => fixture.daemon = pid.parse().ok(),
                _ => {}
            }
        }
        fixture
    }

    /// The next stdout line, which must start with `prefix`.
    pub fn line(&mut self, prefix: &str) -> String {
        let line = self
            .lines
            .recv_timeout(READY_TIMEOUT)
            .unwrap_or_else(|error| {
                panic!("waited {READY_TIMEOUT:?} for a `{prefix}` line from the fixture: {error}")
            });
        assert!(
            line.starts_with(prefix),
            "expected `{prefix}...`, got `{line}`"
        );
        line
    }

    /// Sends one command to a `--serve` fixture and checks the reply.
    pub fn command(&mut self, command: &str, reply: &str) {
        let stdin = self.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{command}").expect("write to the fixture");
        stdin.flush().expect("flush");
        self.line(reply);
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = stop(&Selector::Tree(self.pid), Duration::from_millis(100));
        if let Some(daemon) = self.daemon {
            kill_if_fixture(daemon);
        }
        // stop() may already have reaped it; ECHILD then is fine.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// SIGKILLs a pid only while it is still a fixture (pids get reused).
pub fn kill_if_fixture(pid: u32) {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    if String::from_utf8_lossy(&cmdline).contains("bench-proc-fixture") {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
}

pub fn exists(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|text| bench_proc::parse::parse_stat(&text))
        .is_some_and(|stat| !stat.is_zombie())
}

pub fn within(measured: f64, expected: f64, tolerance: f64) -> bool {
    (measured - expected).abs() <= expected * tolerance
}

pub fn mib(bytes: impl Into<f64>) -> String {
    format!("{:.2} MiB", bytes.into() / MIB as f64)
}
