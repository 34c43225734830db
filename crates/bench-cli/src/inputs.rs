//! The files the commands read: result files, with a plain answer when a file is the
//! export of an earlier clibench rather than a result.

use bench_core::{LoadError, ResultFile};
use std::path::{Path, PathBuf};

/// A result file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// It is a `startup` or `kernel` export of an earlier clibench.
    #[error(
        "{} is {what}, not a result file: `clibench report` and `clibench compare` read the result.json that `clibench run` (or `clibench phase`) writes. {summary}",
        path.display()
    )]
    OtherExport {
        /// The file.
        path: PathBuf,
        /// What it is.
        what: String,
        /// How it differs from a result file.
        summary: String,
    },
    /// It cannot be read or parsed; the message names the file and the JSON path.
    #[error(transparent)]
    Load(#[from] LoadError),
}

/// `clibench report --explain`'s glossary: every metric, or only those `result` has
/// samples of.
pub fn glossary_of(result: Option<&ResultFile>) -> String {
    let metrics: Vec<bench_core::Metric> = match result {
        None => bench_core::Metric::ALL.to_vec(),
        Some(result) => result.side.metrics.keys().copied().collect(),
    };
    if metrics.is_empty() {
        return "the result file has no metric\n".to_string();
    }
    bench_core::glossary(&metrics)
}

/// Loads a result file; one that cannot be read or parsed is named with the JSON path
/// of the problem, or said to be an earlier clibench's export when it is one.
pub fn load_result(path: &Path) -> Result<ResultFile, InputError> {
    ResultFile::load(path).map_err(|error| {
        // Read with the same guards as the result itself: a FIFO or a device must not
        // hang here after ResultFile::load refused it.
        let text = bench_core::io::read_input_file(path, bench_core::io::MAX_INPUT_BYTES)
            .unwrap_or_default();
        match other_export(&text) {
            Some((what, summary)) => InputError::OtherExport {
                path: path.to_path_buf(),
                what,
                summary,
            },
            None => InputError::Load(error),
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
