//! Integration tests of the `clibench` binary: one module per command, each
//! running the built binary as a user would.

mod ab;
mod compare;
mod kernel;
mod limits;
mod mem;
mod newcomer;
mod pipeline_install;
mod pipeline_prepare;
mod pipeline_run;
mod pipeline_skip;
mod readme;
mod report;
mod root_safety;
mod signals;
mod spec_errors;
mod spec_examples;
mod staircase;
mod startup;
mod target;

use std::path::PathBuf;
use std::process::{Command, Output};

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
