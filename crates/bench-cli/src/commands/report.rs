//! `clibench report`: summarize one result file.
//!
//! The default output is a table for people on stderr; `--format markdown|json|csv`
//! prints that format on stdout instead, for files and pull-request comments.

use crate::exit::input_error;
use crate::table::{Align, render};
use anyhow::Context;
use bench_core::stats::MetricStats;
use bench_core::{Format, Report, ResultFile};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Flags of `clibench report`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  clibench report out/result.json                      table on stderr
  clibench report out/result.json --format markdown    GitHub-flavoured Markdown on stdout
  clibench report out/result.json --format csv > out.csv
  clibench report out/result.json --export-bmf bmf.json    Bencher Metric Format")]
pub struct Args {
    /// The result file to summarize (a `result.json` written by `clibench run` or `phase`).
    #[arg(value_name = "RESULT.json")]
    result: PathBuf,
    /// Output: a table on stderr, or markdown, json or csv on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    format: OutputFormat,
    /// Also write every metric's median and range in Bencher Metric Format to FILE.
    #[arg(long, value_name = "FILE")]
    export_bmf: Option<PathBuf>,
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
        None => eprint!("{}", table(&report)),
    }
    if let Some(path) = &args.export_bmf {
        bench_core::io::write_atomic(path, bench_core::export::bmf::report(&report).as_bytes())
            .with_context(|| "failed to export the report as BMF")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Loads a result file; a file that cannot be read or parsed is an input error
/// (exit code 2) naming the file and the JSON path of the problem.
pub fn load(path: &Path) -> anyhow::Result<ResultFile> {
    ResultFile::load(path).map_err(|error| input_error(error.to_string()))
}

/// The plain-text report: a header line, one row per metric, then the failures.
fn table(report: &Report) -> String {
    let mut out = format!("{} ({})\n\n", report.sha, report.request.role);
    if report.metrics.is_empty() {
        out.push_str("no metric was recorded\n");
    } else {
        let rows: Vec<Vec<String>> = report.metrics.iter().map(row).collect();
        out.push_str(&render(
            &[
                "metric", "median", "mean", "± sd", "min", "max", "trials", "failed", "outliers",
            ],
            &[
                Align::Left,
                Align::Right,
                Align::Right,
                Align::Right,
                Align::Right,
                Align::Right,
                Align::Right,
                Align::Right,
                Align::Left,
            ],
            &rows,
        ));
    }
    if let Some(error) = &report.error {
        out.push_str(&format!("\nrun error: {error}\n"));
    }
    if !report.failures.is_empty() {
        out.push('\n');
        for failure in &report.failures {
            out.push_str(&format!(
                "failed: {} trial {}: {}\n",
                failure.metric, failure.trial, failure.error
            ));
        }
    }
    out
}

fn row(stats: &MetricStats) -> Vec<String> {
    let unit = stats.unit;
    let numbers = match &stats.summary {
        Some(s) => [s.median, s.mean, s.std_dev, s.min, s.max].map(|value| unit.format(value)),
        None => std::array::from_fn(|_| "-".to_string()),
    };
    let mut row = vec![stats.metric.to_string()];
    row.extend(numbers);
    row.push(stats.n().to_string());
    row.push(stats.errored.to_string());
    row.push(
        stats
            .outlier_trials
            .iter()
            .map(|trial| format!("#{trial}"))
            .collect::<Vec<_>>()
            .join(" "),
    );
    row
}
