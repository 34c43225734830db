//! `clibench run`.
// Owned by the run work in progress: replace this placeholder wholesale.

use std::process::ExitCode;

/// Flags of `clibench run`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `clibench run`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`clibench run` is not built yet")
}
