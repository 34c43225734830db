//! `clibench calibrate [--duration 20s] [--json] [-- COMMAND...]`: the host's noise
//! profile (see [`bench_cli::standalone::calibrate`], which measures). This file turns
//! the flags into settings and prints the table, or the report as JSON.

use crate::exit::input_error;
use anyhow::Context;
use bench_cli::standalone::calibrate::{self, Settings};
use bench_core::units::parse_duration;
use std::ffi::OsString;
use std::process::ExitCode;
use std::time::Duration;

/// Flags of `clibench calibrate`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  clibench calibrate
  clibench calibrate --duration 1m -- python3 -c 'import json'
  clibench calibrate --json -- /bin/true > noise.json

A fixed CPU loop runs on every CPU at once, timed in 50 ms windows: how much
each CPU's speed spreads, how far two windows differ by their gap (back to back,
100 ms, 800 ms apart; on one CPU and across two), and how a window correlates
with later ones. With a COMMAND, the second half of the duration starts it back
to back (stdio on /dev/null, timed to its exit): its own spread, the spread of
the log ratio of back-to-back pairs, and the smallest change 1 and 5 minutes of
such pairs could detect (80% power, 5% two-sided, one metric). Run it on an
otherwise idle machine: anything else running shows up as drift.")]
pub struct Args {
    /// How long to measure (e.g. 20s, 1m); half of it starts the COMMAND when one is
    /// given.
    #[arg(long, default_value = "20s", value_name = "DURATION")]
    duration: String,
    /// Print the report as JSON on stdout instead of the table on stderr.
    #[arg(long)]
    json: bool,
    /// Kill one start of the COMMAND after this long and fail.
    #[arg(long, default_value = "30s", value_name = "DURATION")]
    timeout: String,
    /// A command that exits by itself, whose starts to time.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

/// Runs `clibench calibrate`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let duration = duration_flag("--duration", &args.duration)?;
    let start_timeout = duration_flag("--timeout", &args.timeout)?;
    let settings = Settings {
        duration,
        command: args.command,
        start_timeout,
    };
    let report = calibrate::calibrate(&settings).context("clibench calibrate")?;
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        say_part!("{}", calibrate::render(&report));
    }
    Ok(ExitCode::SUCCESS)
}

/// A duration flag, a usage error when it does not parse.
fn duration_flag(flag: &str, text: &str) -> anyhow::Result<Duration> {
    parse_duration(text).map_err(|e| input_error(format!("{flag} {text:?}: {e}")))
}
