//! The result file as a whole: parsing, loading, creating and saving it.

use super::{LoadError, ParseError, Request, SCHEMA_VERSION, SaveError, Side};
use crate::io::write_atomic;
use std::path::Path;

/// A result file: the request and what was measured for it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", schemars(title = "clibench result"))]
pub struct ResultFile {
    /// The format's version; this clibench reads and writes 1.
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = 1)))]
    pub schema_version: u32,
    /// What was asked for.
    pub request: Request,
    /// What was measured.
    pub side: Side,
}

impl ResultFile {
    /// A new result with an empty side for the request's sha.
    pub fn new(request: Request) -> ResultFile {
        let side = Side::new(request.sha.clone());
        ResultFile {
            schema_version: SCHEMA_VERSION,
            request,
            side,
        }
    }

    /// Parses and validates a result file's text.
    pub fn from_json_str(text: &str) -> Result<ResultFile, ParseError> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let parsed: Result<ResultFile, _> = serde_path_to_error::deserialize(&mut deserializer);
        let result = match parsed {
            Ok(result) => result,
            Err(error) => {
                // A file from another format version fails for reasons that would only
                // confuse; say the version instead when it can be read.
                if let Some(found) = schema_version_of(text)
                    && found != u64::from(SCHEMA_VERSION)
                {
                    return Err(ParseError::Version { found });
                }
                return Err(ParseError::Syntax {
                    path: error.path().to_string(),
                    problem: error.into_inner().to_string(),
                });
            }
        };
        deserializer.end().map_err(|error| ParseError::Syntax {
            path: ".".into(),
            problem: error.to_string(),
        })?;
        if result.schema_version != SCHEMA_VERSION {
            return Err(ParseError::Version {
                found: result.schema_version.into(),
            });
        }
        result.validate()?;
        Ok(result)
    }

    /// The result as pretty-printed JSON with a final newline.
    pub fn to_json_string(&self) -> String {
        // Invariant: serde_json fails only on maps whose keys are not strings (ours are
        // strings or unit enum variants) and on failing Serialize impls (ours are
        // derived). Non-finite numbers become `null`, and `validate` rejects them
        // before saving.
        let mut text =
            serde_json::to_string_pretty(self).expect("a ResultFile always serializes to JSON");
        text.push('\n');
        text
    }

    /// Reads and validates the result file at `path`.
    pub fn load(path: &Path) -> Result<ResultFile, LoadError> {
        // Bounded and non-blocking: a FIFO, a device or a huge file is refused,
        // not waited on or read until memory runs out.
        let text =
            crate::io::read_input_file(path, crate::io::MAX_INPUT_BYTES).map_err(|cause| {
                LoadError::Read {
                    path: path.to_path_buf(),
                    cause,
                }
            })?;
        ResultFile::from_json_str(&text).map_err(|cause| LoadError::Parse {
            path: path.to_path_buf(),
            cause,
        })
    }

    /// Loads `path` when it exists, so that phases running as separate processes
    /// merge into one file; otherwise starts a new result for `request`.
    ///
    /// A file that exists but does not parse is an error (and is never touched), as
    /// is a file for another sha. The loaded file keeps its own request.
    pub fn load_or_create(path: &Path, request: &Request) -> Result<ResultFile, LoadError> {
        match std::fs::metadata(path) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(ResultFile::new(request.clone()));
            }
            _ => {}
        }
        let result = ResultFile::load(path)?;
        if result.request.sha != request.sha {
            return Err(LoadError::OtherSha {
                path: path.to_path_buf(),
                found: result.request.sha,
                expected: request.sha.clone(),
            });
        }
        Ok(result)
    }

    /// Validates the result and writes it to `path` atomically.
    pub fn save(&self, path: &Path) -> Result<(), SaveError> {
        self.validate().map_err(|cause| SaveError::Invalid {
            path: path.to_path_buf(),
            cause,
        })?;
        write_atomic(path, self.to_json_string().as_bytes())?;
        Ok(())
    }
}

/// The JSON Schema of result files, generated from the types, as pretty-printed
/// JSON with a final newline. It is checked in at `docs/result.schema.json`.
#[cfg(feature = "schema")]
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(ResultFile);
    // Invariant: a schemars Schema is a serde_json::Value, which always serializes.
    let mut text = serde_json::to_string_pretty(&schema).expect("a JSON Schema serializes");
    text.push('\n');
    text
}

fn schema_version_of(text: &str) -> Option<u64> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    value.get("schema_version")?.as_u64()
}
