//! `clibench compare`.
// Owned by the compare work in progress: replace this placeholder wholesale.

use std::process::ExitCode;

/// Flags of `clibench compare`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `clibench compare`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`clibench compare` is not built yet")
}
