//! The files `clibench compare` and `clibench startup` export beside what they print:
//! which flag writes what, refused when it would replace an input, each written
//! atomically. The binary hands over the paths the flags named.

use bench_core::compare::Comparison;
use bench_core::export::Format;
use bench_core::export::{bmf, github_benchmark, hyperfine, markdown};
use bench_core::io::{WriteError, write_atomic};
use bench_core::{Report, ResultFile};
use std::path::{Path, PathBuf};

/// Why an export was not written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The export would replace one of the command's inputs.
    #[error("{flag} {} is the input {}; refusing to overwrite it", .export.display(), .input.display())]
    WouldOverwriteInput {
        /// The flag that named the export.
        flag: &'static str,
        /// The export's path.
        export: PathBuf,
        /// The input at that path.
        input: PathBuf,
    },
    /// A comparison export could not be written.
    #[error("failed to export the {what} as {format}")]
    Write {
        /// "comparison".
        what: &'static str,
        /// "Markdown", "BMF", ...
        format: &'static str,
        /// Why.
        #[source]
        source: WriteError,
    },
    /// A startup export could not be written (the error names the file).
    #[error(transparent)]
    File(#[from] WriteError),
    /// A result file (`--export-json`) could not be saved.
    #[error(transparent)]
    Save(#[from] bench_core::SaveError),
}

impl ExportError {
    /// Whether the error is in what was asked (exit code 2).
    pub fn is_input(&self) -> bool {
        matches!(self, ExportError::WouldOverwriteInput { .. })
    }
}

/// `clibench compare`'s `--export-*` files.
#[derive(Debug, Default)]
pub struct ComparisonExports {
    /// `--export-markdown`: the comparison as a pull-request comment.
    pub markdown: Option<PathBuf>,
    /// `--export-bmf`: the candidate's medians in Bencher Metric Format.
    pub bmf: Option<PathBuf>,
    /// `--export-github-benchmark`: github-action-benchmark's arrays.
    pub github_benchmark: Option<PathBuf>,
    /// `--export-html`: a self-contained page.
    pub html: Option<PathBuf>,
}

impl ComparisonExports {
    /// Refuses an export that names one of `inputs`: writing it would replace the input
    /// with the comparison.
    pub fn check_inputs(&self, inputs: &[&Path]) -> Result<(), ExportError> {
        let exports = [
            ("--export-markdown", &self.markdown),
            ("--export-bmf", &self.bmf),
            ("--export-github-benchmark", &self.github_benchmark),
        ];
        for (flag, export) in exports {
            let Some(export) = export else { continue };
            if let Some(input) = inputs
                .iter()
                .find(|input| bench_core::io::same_file(export, input))
            {
                return Err(ExportError::WouldOverwriteInput {
                    flag,
                    export: export.clone(),
                    input: input.to_path_buf(),
                });
            }
        }
        Ok(())
    }

    /// Writes every export asked for.
    pub fn write(&self, comparison: &Comparison) -> Result<(), ExportError> {
        let write = |path: &Path, format, text: &str| {
            write_atomic(path, text.as_bytes()).map_err(|source| ExportError::Write {
                what: "comparison",
                format,
                source,
            })
        };
        if let Some(path) = &self.markdown {
            write(path, "Markdown", &Format::Markdown.comparison(comparison))?;
        }
        if let Some(path) = &self.bmf {
            write(path, "BMF", &bmf::comparison(comparison))?;
        }
        if let Some(path) = &self.github_benchmark {
            let documents = github_benchmark::comparison(comparison);
            let format = "github-action-benchmark JSON";
            write(path, format, &documents.smaller_is_better)?;
            if let Some(bigger) = &documents.bigger_is_better {
                write(&bigger_path(path), format, bigger)?;
            }
        }
        if let Some(path) = &self.html {
            write(
                path,
                "HTML",
                &bench_core::export::html::comparison(comparison),
            )?;
        }
        Ok(())
    }
}

/// Where the customBiggerIsBetter array goes: `bench.json` -> `bench-bigger.json`.
fn bigger_path(path: &Path) -> PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let name = match path.extension() {
        Some(extension) => format!("{stem}-bigger.{}", extension.to_string_lossy()),
        None => format!("{stem}-bigger"),
    };
    path.with_file_name(name)
}

/// `clibench startup`'s and `clibench kernel`'s export files (`--export-json -`, stdout,
/// is the binary's).
#[derive(Debug, Default)]
pub struct StartupExports {
    /// `--export-json FILE`: the runs as a result file.
    pub json: Option<PathBuf>,
    /// `--export-markdown`: the summary as a Markdown table.
    pub markdown: Option<PathBuf>,
    /// `--export-hyperfine`: the times to ready in hyperfine's shape.
    pub hyperfine: Option<PathBuf>,
}

impl StartupExports {
    /// Writes every export asked for; `command` is the measured command as one line.
    /// Returns a warning for a hyperfine export with no time to ready to hold.
    pub fn write(&self, result: &ResultFile, command: &str) -> Result<Option<String>, ExportError> {
        if let Some(path) = &self.json {
            result.save(path)?;
        }
        if let Some(path) = &self.markdown {
            write_atomic(path, markdown::report(&Report::new(result)).as_bytes())?;
        }
        if let Some(path) = &self.hyperfine {
            match hyperfine::side(&result.side, command) {
                Some(json) => write_atomic(path, json.as_bytes())?,
                None => {
                    return Ok(Some(format!(
                        "warning: no run got ready, so there is nothing to export to {}",
                        path.display()
                    )));
                }
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bigger_is_better_file_sits_beside_the_export() {
        assert_eq!(
            bigger_path(Path::new("out/bench.json")),
            Path::new("out/bench-bigger.json")
        );
        assert_eq!(bigger_path(Path::new("bench")), Path::new("bench-bigger"));
    }

    #[test]
    fn an_export_over_an_input_is_refused_as_input() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("base.json");
        std::fs::write(&base, "{}").unwrap();
        let exports = ComparisonExports {
            bmf: Some(base.clone()),
            ..ComparisonExports::default()
        };
        let error = exports.check_inputs(&[&base]).unwrap_err();
        assert!(error.is_input());
        assert!(error.to_string().starts_with("--export-bmf "), "{error}");
        let elsewhere = ComparisonExports {
            bmf: Some(dir.path().join("bmf.json")),
            ..ComparisonExports::default()
        };
        assert!(elsewhere.check_inputs(&[&base]).is_ok());
    }
}
