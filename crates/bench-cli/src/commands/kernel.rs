//! `clibench kernel`.
// Owned by the kernel work in progress: replace this placeholder wholesale.

use std::process::ExitCode;

/// Flags of `clibench kernel`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `clibench kernel`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`clibench kernel` is not built yet")
}
