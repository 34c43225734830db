//! `clibench report`: summarize one result file.
//!
//! The default output is a table for people on stderr; `--format markdown|json|csv|html`
//! prints that format on stdout instead, for files and pull-request comments.
//! `--explain` prints what each metric means (the glossary), for the file's metrics
//! when a file is given.

use crate::exit::input_error;
use anyhow::Context;
use bench_core::{Format, Metric, Report, ResultFile};
use std::path::{Path, PathBuf};
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
    /// One self-contained HTML page with charts on stdout.
    Html,
}

impl OutputFormat {
    /// The library exporter, or `None` for the plain table and for HTML (which needs the
    /// whole result, not only its summary).
    pub fn export(self) -> Option<Format> {
        match self {
            OutputFormat::Table => None,
            OutputFormat::Markdown => Some(Format::Markdown),
            OutputFormat::Json => Some(Format::Json),
            OutputFormat::Csv => Some(Format::Csv),
            OutputFormat::Html => None,
        }
    }
}

/// Runs `clibench report`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let result = args.result.as_deref().map(load).transpose()?;
    if args.explain {
        out!("{}", explain(result.as_ref()));
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

/// The glossary: every metric, or only those `result` has samples of.
fn explain(result: Option<&ResultFile>) -> String {
    let metrics: Vec<Metric> = match result {
        None => Metric::ALL.to_vec(),
        Some(result) => result.side.metrics.keys().copied().collect(),
    };
    if metrics.is_empty() {
        return "the result file has no metric\n".to_string();
    }
    bench_core::glossary(&metrics)
}

/// Loads a result file; a file that cannot be read or parsed is an input error
/// (exit code 2) naming the file and the JSON path of the problem.
pub fn load(path: &Path) -> anyhow::Result<ResultFile> {
    ResultFile::load(path).map_err(|error| {
        // Read with the same guards as the result itself: a FIFO or a device must not
        // hang here after ResultFile::load refused it.
        let text = bench_core::io::read_input_file(path, bench_core::io::MAX_INPUT_BYTES)
            .unwrap_or_default();
        match other_export(&text) {
            Some((what, summary)) => input_error(format!(
                "{} is {what}, not a result file: `clibench report` and `clibench compare` read the result.json that `clibench run` (or `clibench phase`) writes. {summary}",
                path.display()
            )),
            None => input_error(error.to_string()),
        }
    })
}

/// What a JSON file is when it is an export of `clibench startup --export-json` or
/// `clibench kernel --export-json` from before they wrote result files: summaries in a
/// format of their own.
fn other_export(text: &str) -> Option<(String, String)> {
    let json: serde_json::Value = serde_json::from_str(text).ok()?;
    let object = json.as_object()?;
    let command = object
        .get("command")?
        .as_array()?
        .iter()
        .filter_map(|word| word.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let (export, holds) = if object.contains_key("ready_mode") {
        (
            "clibench startup",
            "its `summary` holds each figure's statistics",
        )
    } else if object.contains_key("reference_kernel") {
        (
            "clibench kernel",
            "its `metrics` hold each metric's statistics",
        )
    } else {
        return None;
    };
    Some((
        format!("a `{export} --export-json` file of an earlier clibench (of `{command}`)"),
        format!(
            "That file is a summary in the earlier format ({holds}); this clibench's `{export} --export-json` writes a result file that both read."
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn startup_and_kernel_exports_are_named_not_parsed_as_results() {
        let startup =
            r#"{"schema_version": 1, "command": ["python3"], "ready_mode": "probe", "runs": []}"#;
        let (what, _) = other_export(startup).unwrap();
        assert_eq!(
            what,
            "a `clibench startup --export-json` file of an earlier clibench (of `python3`)"
        );
        let kernel = r#"{"schema_version": 1, "command": ["python3", "-m", "k"], "reference_kernel": false}"#;
        let (what, summary) = other_export(kernel).unwrap();
        assert_eq!(
            what,
            "a `clibench kernel --export-json` file of an earlier clibench (of `python3 -m k`)"
        );
        assert!(
            summary
                .contains("this clibench's `clibench kernel --export-json` writes a result file"),
            "{summary}"
        );
        assert_eq!(other_export(r#"{"command": ["x"]}"#), None);
        assert_eq!(other_export("not json"), None);
    }
}
