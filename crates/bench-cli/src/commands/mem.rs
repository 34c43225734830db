//! `clibench mem`.
// Owned by the mem work in progress: replace this placeholder wholesale.

use std::process::ExitCode;

/// Flags of `clibench mem`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `clibench mem`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`clibench mem` is not built yet")
}
