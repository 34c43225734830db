//! Integration tests of the `clibench` binary: one module per command, each
//! running the built binary as a user would.

mod ab;
mod bisect;
mod board;
mod calibrate;
mod compare;
mod demo_chat;
mod history;
mod in_a_terminal;
mod inert_output;
mod kernel;
mod leftovers;
mod limits;
mod mem;
mod model;
mod newcomer;
mod pipeline_install;
mod pipeline_outcome;
mod pipeline_prepare;
mod pipeline_run;
mod pipeline_skip;
mod readme;
mod report;
mod root_safety;
mod safe_writes;
mod scenarios;
mod session;
mod signals;
mod spec_errors;
mod spec_examples;
mod spec_releases;
mod staircase;
mod startup;
mod target;
mod terminal_bytes;

use std::path::PathBuf;
use std::process::{Command, Output};

/// Whether the tests run as root (CI does): tests that need root say SKIPPED otherwise.
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// A system tool (`useradd`, `runuser`, ...) from the system's folders, as clibench
/// itself finds them: the tests must pass with a PATH that has no /usr/sbin.
pub fn system_tool(name: &str) -> Command {
    let program = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
        .iter()
        .map(|folder| std::path::Path::new(folder).join(name))
        .find(|path| path.is_file())
        .unwrap_or_else(|| PathBuf::from(name));
    Command::new(program)
}

/// Runs useradd, userdel or groupdel, retrying while another test holds the user
/// database's lock.
pub fn shadow_tool(command: &mut Command) -> Output {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let output = command.output().unwrap();
        let busy = String::from_utf8_lossy(&output.stderr).contains("lock");
        if output.status.success() || !busy || std::time::Instant::now() > deadline {
            return output;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The built `clibench` binary.
pub fn clibench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_clibench"))
}

/// One of the example result files shipped in `examples/results/`.
pub fn example_result(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/results")
        .join(format!("{name}.json"))
}

/// The exit code, stdout and stderr of a finished command, for assertions.
pub struct Run {
    /// The exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// Standard output as text.
    pub stdout: String,
    /// Standard error as text.
    pub stderr: String,
}

/// Runs `command` to completion and captures its output.
pub fn run(command: &mut Command) -> Run {
    let Output {
        status,
        stdout,
        stderr,
    } = command.output().expect("failed to start clibench");
    Run {
        code: status.code(),
        stdout: String::from_utf8(stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(stderr).expect("stderr is UTF-8"),
    }
}
