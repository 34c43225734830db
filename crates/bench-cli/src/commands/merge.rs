//! `clibench merge OUT... --out DIR`: merges the result files of shards (`--shard K/N`
//! on several machines) of the same target and build into one, with its report.

use crate::exit::input_error;
use crate::pipeline::orchestration::merge::{hosts_note, hosts_warning, load_inputs, merge};
use anyhow::Context;
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `clibench merge`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  clibench merge shard-1 shard-2 shard-3 --out merged
  clibench merge shard-*/head/result.json --out merged-head

Each input is a result file or a run's output folder holding result.json.
Results merge only when they are the same target, build and overrides; trials
are renumbered and keep the host they ran on.")]
pub struct Args {
    /// Result files, or output folders holding result.json.
    #[arg(required = true, value_name = "OUT")]
    inputs: Vec<PathBuf>,
    /// Where to write the merged result.json and report.md.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

/// Runs `clibench merge`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let results = load_inputs(&args.inputs).map_err(|error| input_error(error.to_string()))?;
    let merged = merge(&results).map_err(|error| input_error(error.to_string()))?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let path = args.out.join("result.json");
    merged
        .save(&path)
        .with_context(|| format!("saving {}", path.display()))?;
    let notes: Vec<String> = hosts_note(&merged.side).into_iter().collect();
    let written = crate::pipeline::write_report(&args.out, &notes)?;
    out!("{}", written.markdown);
    if let Some(warning) = hosts_warning(&merged.side) {
        say!("{warning}");
    }
    say!(
        "clibench merge: merged {} result(s) into {}",
        results.len(),
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}
