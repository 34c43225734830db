//! `clibench cleanup --out DIR [--keep-users]`: removes the users, homes, staging folder,
//! temporary folders and servers OUT/state.json lists, after a crash, a run with
//! `--keep-users` or a run of single phases. `clibench run` does the same at its end and on
//! Ctrl-C. Only clibench's own state file is read and only what is clibench's is removed;
//! anything else is refused with the reason, and the exit code is then non-zero.

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
    let lock = crate::pipeline::out::folder::open_for_cleanup(&args.out)
        .map_err(crate::pipeline::Error::from)?;
    let Some(_lock) = lock else {
        say!("{} does not exist: nothing to clean up", args.out.display());
        return Ok(ExitCode::SUCCESS);
    };
    // An `ab` folder holds no state of its own: its two sides are runs of their own.
    let folders = crate::pipeline::run_folders(&args.out);
    if folders.is_empty() {
        say!(
            "{} holds no run state (state.json), nor do base/ and head/ under it: nothing to clean up",
            args.out.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    for folder in folders {
        let side_lock = (folder != args.out)
            .then(|| crate::pipeline::out::folder::open_for_cleanup(&folder))
            .transpose()
            .map_err(crate::pipeline::Error::from)?;
        let report = crate::pipeline::cleanup_with(&folder, Some(args.keep_users))?;
        drop(side_lock);
        for line in report.lines() {
            say!("{line}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
