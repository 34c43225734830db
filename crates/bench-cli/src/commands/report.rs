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
    ResultFile::load(path).map_err(|error| {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        match other_export(&text) {
            Some((what, summary)) => input_error(format!(
                "{} is {what}, not a result file: `clibench report` and `clibench compare` read the result.json that `clibench run` (or `clibench phase`) writes. {summary}",
                path.display()
            )),
            None => input_error(error.to_string()),
        }
    })
}

/// What a JSON file is when it is one of clibench's other exports: `clibench startup
/// --export-json` or `clibench kernel --export-json`, which are their own summaries.
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
        format!("a `{export} --export-json` file (of `{command}`)"),
        format!(
            "That file is already a summary ({holds}); `{export} --export-markdown` writes it as a table."
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
            "a `clibench startup --export-json` file (of `python3`)"
        );
        let kernel = r#"{"schema_version": 1, "command": ["python3", "-m", "k"], "reference_kernel": false}"#;
        let (what, summary) = other_export(kernel).unwrap();
        assert_eq!(
            what,
            "a `clibench kernel --export-json` file (of `python3 -m k`)"
        );
        assert!(
            summary.contains("clibench kernel --export-markdown"),
            "{summary}"
        );
        assert_eq!(other_export(r#"{"command": ["x"]}"#), None);
        assert_eq!(other_export("not json"), None);
    }
}
