//! `clibench staircase`.
// Owned by the staircase work in progress: replace this placeholder wholesale.

use std::process::ExitCode;

/// Flags of `clibench staircase`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `clibench staircase`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`clibench staircase` is not built yet")
}
