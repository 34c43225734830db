//! The result file: one JSON document per side (one build of the target under test).
//!
//! The format is public and documented by `docs/result.schema.json`, generated
//! from these types. Loading rejects unknown fields and checks every limit below,
//! naming the JSON path of the offending field; saving checks the same limits and
//! writes atomically.
//!
//! ```
//! use bench_core::{record, Metric, Request, ResultFile, Role, Sample};
//!
//! let mut result = ResultFile::new(Request::new("0123abc", Role::Candidate));
//! record(&mut result.side, Metric::Cold, 0, Sample::Value(0.412));
//! record(&mut result.side, Metric::Cold, 1, Sample::Error("timed out".into()));
//! let text = result.to_json_string();
//! assert_eq!(ResultFile::from_json_str(&text).unwrap(), result);
//! ```

mod errors;
mod file;
mod limits;
mod observation;
mod request;
mod side;
#[cfg(test)]
mod tests;
mod trial_record;
mod validate;

pub use errors::{LoadError, ParseError, SaveError, ValidationError};
pub use file::ResultFile;
#[cfg(feature = "schema")]
pub use file::json_schema;
pub(crate) use limits::truncate_chars;
pub use limits::{
    MAX_CMDLINE_CHARS, MAX_ERROR_CHARS, MAX_HOST_CHARS, MAX_NAME_CHARS, MAX_PROCESSES, MAX_SETTLES,
    MAX_STARTS, MAX_TERMINAL_WINDOWS, MAX_TRIAL, MAX_TRIAL_RECORDS, SCHEMA_VERSION,
};
pub use observation::{Observation, ProcessMemory, ProcessRole};
pub use request::{OVERRIDES_KEY, Request, Role};
pub use side::Side;
pub use trial_record::{
    SettleEnded, SettleRecord, SettleUntil, StartRecord, TerminalWindow, TrialRecord,
};
