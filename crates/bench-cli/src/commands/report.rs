//! `clibench report`: summarize one result file.
//!
//! The default output is a table for people on stderr; `--format markdown|json|csv|html`
//! prints that format on stdout instead, for files and pull-request comments.
//! `--explain` prints what each metric means (the glossary), for the file's metrics
//! when a file is given.

use crate::show::OutputFormat;
use anyhow::Context;
use bench_core::Report;
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `clibench report`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  clibench report out/result.json                     table on stderr
  clibench report out/result.json --format markdown   Markdown on stdout
  clibench report out/result.json --format csv > out.csv
  clibench report out/result.json --export-bmf bmf.json
                                                      Bencher Metric Format
  clibench report out/result.json --format html > report.html
  clibench report --explain                           what every metric means
  clibench report out/result.json --explain           what this file's mean")]
pub struct Args {
    /// The result file to summarize (a `result.json` written by `clibench run` or `phase`).
    #[arg(value_name = "RESULT.json", required_unless_present = "explain")]
    result: Option<PathBuf>,
    /// Output: a table on stderr, or markdown, json, csv or html on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    format: OutputFormat,
    /// Also write every metric's median and range in Bencher Metric Format to FILE.
    #[arg(long, value_name = "FILE")]
    export_bmf: Option<PathBuf>,
    /// Print what each metric means, its unit and which way is better (only the
    /// file's metrics when a file is given), instead of the report.
    #[arg(long, conflicts_with = "format")]
    explain: bool,
}

/// Runs `clibench report`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let result = args.result.as_deref().map(super::load_result).transpose()?;
    if args.explain {
        out!("{}", bench_cli::inputs::glossary_of(result.as_ref()));
        return Ok(ExitCode::SUCCESS);
    }
    // Invariant: clap requires the file unless --explain is given.
    let result = result.context("a result file is required")?;
    let report = Report::new(&result);
    match args.format.export() {
        Some(format) => crate::show::export(format, &format.report(&report)),
        None if args.format == OutputFormat::Html => {
            out!("{}", bench_core::export::html::report(&result));
        }
        None => say_part!(
            "{}",
            bench_core::export::text::report_fit(&report, crate::show::stderr_columns())
        ),
    }
    if let Some(path) = &args.export_bmf {
        bench_core::io::write_atomic(path, bench_core::export::bmf::report(&report).as_bytes())
            .with_context(|| "failed to export the report as BMF")?;
    }
    Ok(ExitCode::SUCCESS)
}
