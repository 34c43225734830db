//! `clibench phase`.
// Owned by the phase work in progress: replace this placeholder wholesale.

use std::process::ExitCode;

/// Flags of `clibench phase`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `clibench phase`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`clibench phase` is not built yet")
}
