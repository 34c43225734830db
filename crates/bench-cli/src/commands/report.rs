//! `clibench report`.
// Owned by the report work in progress: replace this placeholder wholesale.

use std::process::ExitCode;

/// Flags of `clibench report`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `clibench report`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`clibench report` is not built yet")
}
