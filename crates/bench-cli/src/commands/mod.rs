//! The subcommands: one file each. Clap structs live here and are turned into
//! plain settings before anything reaches a library crate.

mod ab;
mod bisect;
mod board;
mod calibrate;
mod cleanup;
mod compare;
mod drive;
mod history;
mod interrupt;
#[cfg(test)]
mod test_args;

pub use interrupt::wait_if_interrupted;
mod kernel;
mod mem;
mod merge;
mod model;
mod phase;
mod report;
mod request;
mod run;
mod staircase;
mod startup;
mod usage;

pub use usage::parse;

use crate::settings::{trial_count, trial_number};
use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Benchmark interactive command-line programs the way their users feel them:
/// install time and disk, time until a person can type in a real terminal, memory of
/// the whole process family (RSS and PSS), the cost of one more instance, and how
/// fast a REPL kernel answers; then compare two builds and flag regressions.
#[derive(Debug, Parser)]
#[command(name = "clibench", version, about, long_about = None, after_help = EXAMPLES)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

const EXAMPLES: &str = "\
Examples:
  clibench run
      run the whole pipeline on the built-in demo agent
  clibench run examples/agents/pi.toml --trials 3
      benchmark a real agent CLI described by a spec
  clibench startup --runs 10 -- python3
      time to ready in a PTY, hyperfine-style
  clibench mem -- python3 -m http.server
      memory of a process family (RSS, PSS, USS)
  clibench staircase --tty --count 5 -- node
      marginal memory of one more instance
  clibench kernel
      REPL kernel metrics against the reference kernel
  clibench report out/result.json
      summarize one result file
  clibench compare base.json candidate.json
      compare two builds, with verdicts
  clibench ab --head measure.env.DEMO_AGENT_STARTUP_DELAY_MS=300
      A/B of two variants, in pairs until decided
  clibench model serve
      a scripted model endpoint for agents, offline
  clibench calibrate -- python3 -c pass
      the host's noise, and what 1 and 5 minutes of pairs could detect
  clibench history show cold
      the series of every result added with `history add` or `run --history`";

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the whole pipeline on a target spec (or the built-in demo).
    Run(run::Args),
    /// Run one phase of the pipeline for one trial, merging into OUT/result.json.
    Phase(phase::Args),
    /// Time how long a program takes to become ready in a real terminal.
    Startup(startup::Args),
    /// Measure the memory of a process family, a user's processes, or a command.
    Mem(mem::Args),
    /// Measure the marginal memory of one more instance of a command.
    Staircase(staircase::Args),
    /// Measure a protocol-3 REPL kernel.
    Kernel(kernel::Args),
    /// Summarize one result file.
    Report(report::Args),
    /// Compare two result files (base and candidate) metric by metric.
    Compare(compare::Args),
    /// Benchmark two variants of one spec (base and head) with interleaved trials, then
    /// compare them.
    Ab(ab::Args),
    /// Benchmark N agent CLIs side by side: their trials round-robin, then one table
    /// with a column per agent, each row's best marked where the trials allow it.
    Board(board::Args),
    /// Merge result files of the same target and build (shards run on several machines).
    Merge(merge::Args),
    /// A scripted model endpoint on 127.0.0.1 that speaks the agents' APIs (Anthropic,
    /// OpenAI Responses and Chat Completions, Gemini).
    Model(model::Args),
    /// Find the first commit between a good and a bad one that moved a metric, each step
    /// an ab comparison of two builds.
    Bisect(bisect::Args),
    /// Keep every result in one SQLite file; show series, change points and trends;
    /// check a new result against its history.
    History(history::Args),
    /// Measure the host's noise: CPU drift by gap, and what a budget of pairs could
    /// detect for a command.
    Calibrate(calibrate::Args),
    /// Remove the trial users, homes, staging folder and servers a run (or both sides of
    /// an `ab`) left (after a crash, `--keep-users`, or `clibench phase`).
    Cleanup(cleanup::Args),
}

/// Loads a result file; a file that cannot be read or parsed is an input error (exit
/// code 2) naming the file and the JSON path of the problem.
fn load_result(path: &std::path::Path) -> anyhow::Result<bench_core::ResultFile> {
    bench_cli::inputs::load_result(path)
        .map_err(|error| crate::exit::input_error(error.to_string()))
}

/// Runs the chosen subcommand.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Run(args) => run::run(args),
        Command::Phase(args) => phase::run(args),
        Command::Startup(args) => startup::run(args),
        Command::Mem(args) => mem::run(args),
        Command::Staircase(args) => staircase::run(args),
        Command::Kernel(args) => kernel::run(args),
        Command::Report(args) => report::run(args),
        Command::Compare(args) => compare::run(args),
        Command::Ab(args) => ab::run(args),
        Command::Board(args) => board::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Model(args) => model::run(args),
        Command::Bisect(args) => bisect::run(args),
        Command::History(args) => history::run(args),
        Command::Calibrate(args) => calibrate::run(args),
        Command::Cleanup(args) => cleanup::run(args),
    }
}
