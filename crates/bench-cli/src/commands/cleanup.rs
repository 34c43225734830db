//! `clibench cleanup --out DIR [--keep-users]` (hidden): removes the users, homes,
//! temporary folders and servers OUT/state.json lists, after a crash or a run of
//! single phases. `clibench run` does the same at its end and on Ctrl-C.

use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `clibench cleanup`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The output folder of the run.
    #[arg(long)]
    out: PathBuf,
    /// Stop the users' processes but keep the users and their homes.
    #[arg(long)]
    keep_users: bool,
}

/// Runs `clibench cleanup`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let report = crate::pipeline::cleanup_with(&args.out, Some(args.keep_users))?;
    for name in &report.removed_users {
        eprintln!("removed {name}");
    }
    for name in &report.kept_users {
        eprintln!("kept {name}");
    }
    for folder in &report.removed_folders {
        eprintln!("removed {folder}");
    }
    for pid in &report.stopped_servers {
        eprintln!("stopped server process {pid}");
    }
    Ok(ExitCode::SUCCESS)
}
