//! `clibench startup`.
// Owned by the startup work in progress: replace this placeholder wholesale.

use std::process::ExitCode;

/// Flags of `clibench startup`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `clibench startup`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`clibench startup` is not built yet")
}
