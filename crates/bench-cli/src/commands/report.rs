//! `clibench report`: summarize one result file.
//!
//! The default output is a table for people on stderr; `--format markdown|json|csv`
//! prints that format on stdout instead, for files and pull-request comments.

use crate::exit::input_error;
use bench_core::{Format, Report, ResultFile};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Flags of `clibench report`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  clibench report out/result.json                      table on stderr
  clibench report out/result.json --format markdown    GitHub-flavoured Markdown on stdout
  clibench report out/result.json --format csv > out.csv")]
pub struct Args {
    /// The result file to summarize (a `result.json` written by `clibench run` or `phase`).
    #[arg(value_name = "RESULT.json")]
    result: PathBuf,
    /// Output: a table on stderr, or markdown, json or csv on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    format: OutputFormat,
}

/// Where and how `report` and `compare` print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// An aligned plain-text table for people, on stderr.
    Table,
    /// GitHub-flavoured Markdown on stdout.
    Markdown,
    /// JSON on stdout, numbers in seconds and bytes.
    Json,
    /// CSV on stdout, numbers in seconds and bytes.
    Csv,
}

impl OutputFormat {
    /// The library exporter, or `None` for the plain table.
    pub fn export(self) -> Option<Format> {
        match self {
            OutputFormat::Table => None,
            OutputFormat::Markdown => Some(Format::Markdown),
            OutputFormat::Json => Some(Format::Json),
            OutputFormat::Csv => Some(Format::Csv),
        }
    }
}

/// Runs `clibench report`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let result = load(&args.result)?;
    let report = Report::new(&result);
    match args.format.export() {
        Some(format) => print!("{}", format.report(&report)),
        None => eprint!("{}", bench_core::export::text::report(&report)),
    }
    Ok(ExitCode::SUCCESS)
}

/// Loads a result file; a file that cannot be read or parsed is an input error
/// (exit code 2) naming the file and the JSON path of the problem.
pub fn load(path: &Path) -> anyhow::Result<ResultFile> {
    ResultFile::load(path).map_err(|error| input_error(error.to_string()))
}
