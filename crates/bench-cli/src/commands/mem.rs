//! `clibench mem`: the memory of a process family (RSS, PSS, USS, swap), of a
//! user's processes, or of a command started, settled, measured and stopped.

use super::request::{MemRequest, mem_settings};
use crate::exit::input_error;
use bench_cli::standalone::mem::{self, Error, STOP_GRACE, Target};
use std::ffi::OsString;
use std::process::ExitCode;

/// Flags of `clibench mem`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  clibench mem --pid 4242                 a process and all its descendants
  clibench mem --user benchmark1 --json   a user's processes, JSON on stdout
  clibench mem --settle 5s -- python3 -m http.server
                                          start, settle, measure, stop
  clibench mem --tty -- node              an interactive program, in a PTY

A started COMMAND runs with stdin, stdout and stderr on /dev/null, in its own
process group; with --tty it runs in a pseudo-terminal (its own session) whose
output is read and whose queries are answered while it settles, as a terminal
would. clibench becomes a child subreaper first, so daemons it double-forks
stay in the measured family and are stopped with it.")]
pub struct Args {
    /// Measure this process and all its descendants.
    #[arg(long, value_name = "PID", conflicts_with = "user")]
    pid: Option<u32>,
    /// Measure every process of this user (a name or a numeric uid).
    #[arg(long, value_name = "USER")]
    user: Option<String>,
    /// After starting COMMAND, wait before measuring: auto (the default, as `clibench
    /// run`: until RSS and process count stay within 1% for 100ms, at most 5s),
    /// auto:MAX, auto:max=5s,quiet=100ms,tolerance=1%, or a fixed time (2s, 500ms).
    #[arg(long, default_value = "auto", value_name = "SETTLE")]
    settle: String,
    /// Print the measurement as a result file (the format of `clibench run`, which
    /// `clibench compare` compares) on stdout; the table still goes to stderr.
    #[arg(long)]
    json: bool,
    /// Run COMMAND in a terminal (for REPLs and TUIs, which quit at once when
    /// stdin is /dev/null).
    #[arg(long)]
    tty: bool,
    /// The command to start, measure and stop.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

impl From<Args> for MemRequest {
    fn from(args: Args) -> MemRequest {
        MemRequest {
            pid: args.pid,
            user: args.user,
            command: args.command,
            settle: args.settle,
            tty: args.tty,
        }
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let json = args.json;
    let settings = mem_settings(MemRequest::from(args)).map_err(|e| input_error(e.to_string()))?;
    if let Target::Command(_) = settings.target {
        super::interrupt::stop_family_on_signal(STOP_GRACE)?;
    }
    let measured = mem::measure(&settings).map_err(|error| match error {
        Error::NoSuchProcess { pid } => input_error(format!("--pid: process {pid} does not exist")),
        other => other.into(),
    })?;
    say!("{}", settings.target.title());
    say_part!("{}", bench_core::export::processes::report(&measured.side));
    if json {
        crate::show::json(measured.to_json_string().trim_end());
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_settles_until_quiet_by_default_as_run_does() {
        let args: Args = crate::commands::test_args::parse("mem", &["--", "true"]);
        let settings = mem_settings(MemRequest::from(args)).unwrap();
        assert_eq!(
            settings.settle,
            bench_proc::Settle::Quiet(Default::default())
        );
    }
}
