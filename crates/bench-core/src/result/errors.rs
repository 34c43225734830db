//! Why a result file could not be parsed, loaded or saved.

use super::SCHEMA_VERSION;
use crate::io::WriteError;
use std::path::PathBuf;

/// A result file's text could not be turned into a valid [`ResultFile`](crate::ResultFile).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Not JSON, or JSON of the wrong shape (a missing or unknown field, a wrong type).
    #[error("at `{path}`: {problem}")]
    Syntax {
        /// The JSON path of the offending value (`side.metrics.cold[2].value`), `.` for the root.
        path: String,
        /// What was wrong, with line and column.
        problem: String,
    },
    /// Well-formed JSON whose `schema_version` is not one this crate reads.
    #[error(
        "at `schema_version`: unsupported version {found} (this clibench reads {SCHEMA_VERSION})"
    )]
    Version {
        /// The version found in the file.
        found: u64,
    },
    /// Well-formed JSON that breaks a limit of the format.
    #[error(transparent)]
    Invalid(#[from] ValidationError),
}

impl ParseError {
    /// The JSON path of the offending field.
    pub fn path(&self) -> &str {
        match self {
            ParseError::Syntax { path, .. } => path,
            ParseError::Version { .. } => "schema_version",
            ParseError::Invalid(error) => &error.path,
        }
    }
}

/// A value that breaks a limit of the format, with its JSON path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at `{path}`: {problem}")]
pub struct ValidationError {
    /// The JSON path of the offending value (`side.metrics.cold[2].trial`).
    pub path: String,
    /// What is wrong with it.
    pub problem: String,
}

/// A result file could not be loaded.
///
/// The message is complete on its own (``invalid result file out/result.json: at
/// `side.metrics.cold[1].trial`: trial 101 is above 100``), because it is what a user
/// sees whether it is printed with `{}` or as an error chain; the cause is kept in
/// a field rather than as the error's `source`, so chains do not repeat it.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("failed to read {path}: {cause}", path = path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        cause: std::io::Error,
    },
    /// The file was read but is not a valid result file.
    #[error("invalid result file {path}: {cause}", path = path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the JSON path.
        cause: ParseError,
    },
    /// The file is a valid result file for another build than the one being measured.
    #[error(
        "{path} holds results for sha `{found}`, not `{expected}`; use another output folder",
        path = path.display()
    )]
    OtherSha {
        /// The file.
        path: PathBuf,
        /// The sha in the file.
        found: String,
        /// The sha being measured.
        expected: String,
    },
}

/// A result file could not be saved. Like [`LoadError`], the message is complete on its own.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    /// The result breaks a limit of the format; nothing was written.
    #[error("refusing to write an invalid result to {path}: {cause}", path = path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        cause: ValidationError,
    },
    /// Writing failed; the earlier file, if any, is unchanged.
    #[error(transparent)]
    Write(#[from] WriteError),
}
