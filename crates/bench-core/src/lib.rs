//! The result format of clibench, and what is computed from it.
//!
//! A result file describes one *side*: one build of the target under test,
//! with every metric's observations over trials. `bench-core` owns that file
//! format, the statistics over trials, the comparison of two sides, and the
//! exporters that turn them into text (see [`export`]).
//!
//! ```
//! use bench_core::{record, trial_errors, Metric, Phase, Request, ResultFile, Role, Sample};
//!
//! let mut result = ResultFile::new(Request::new("0123abc", Role::Candidate));
//! record(&mut result.side, Metric::Install, 0, Sample::Value(12.5));
//! assert!(trial_errors(&result.side, Phase::Install, 0).is_empty());
//! assert_eq!(
//!     trial_errors(&result.side, Phase::Install, 1),
//!     ["install: measurement missing"]
//! );
//! ```
//!
//! # Sections
//! Each item has one path. The result model is at the crate's root; the rest is in a
//! namespace of its own.
//! - At the root: every [`Metric`], its [`Phase`], [`Direction`] and [`Nature`]; the file
//!   format ([`ResultFile`], [`Side`], [`Observation`], [`TrialRecord`], the `MAX_*`
//!   limits), its validation, load and save; [`record`] and [`trial_errors`]; one result
//!   file summarized ([`Report`]).
//! - [`detail`]: memory over time, screens at ready and staircase steps, for the HTML report.
//! - [`stats`]: the statistics over trials, one file per test or estimator: summaries
//!   ([`MetricStats`](stats::MetricStats)), Welch's and the paired t-test, Holm's adjustment,
//!   least-squares slopes, slope changes and the sequential looks of `ab --trials auto`.
//! - [`compare`](mod@compare): two sides compared, with intervals and verdicts, and what a
//!   comparison reads besides the samples (duet pairs, the host's speed, thresholds).
//! - [`board`]: N targets side by side, each metric's best said only where the trials allow it.
//! - [`export`]: Markdown, JSON, CSV, text tables,
//!   HTML with SVG charts (the `html` feature), Bencher's BMF, github-action-benchmark's JSON,
//!   hyperfine's JSON, and the process, staircase and terminal tables (what `clibench mem`
//!   and `clibench staircase` show, and what the terminal received during a session).
//! - [`units`], [`io`]: formatting for people, atomic writes; [`duration`]: the
//!   [`Duration`](duration::Duration) a spec or a model script writes as `"150ms"`.
//! - [`text`]: target and file text made [inert](text::inert) before it reaches a terminal.
#![warn(missing_docs)]

pub mod board;
pub mod busy;
pub mod compare;
pub mod detail;
pub mod duration;
mod error_chain;
pub mod export;
pub mod io;
mod metric;
mod report;
mod result;
pub mod rng;
mod skip;
pub mod stats;
#[cfg(test)]
mod test_support;
pub mod text;
mod trial;
pub mod units;

pub use error_chain::error_chain;
pub use metric::{CPU_TICK_SECONDS, Direction, Metric, Nature, Phase, UnknownName, glossary};
pub use report::{CACHES_DROPPED_KEY, CheckpointRow, Checkpoints, Report};
#[cfg(feature = "schema")]
pub use result::json_schema;
pub use result::{
    LoadError, MAX_CMDLINE_CHARS, MAX_ERROR_CHARS, MAX_HOST_CHARS, MAX_NAME_CHARS, MAX_PROCESSES,
    MAX_SETTLES, MAX_STARTS, MAX_TERMINAL_WINDOWS, MAX_TRIAL, MAX_TRIAL_RECORDS, OVERRIDES_KEY,
    Observation, ParseError, ProcessMemory, ProcessRole, Request, ResultFile, Role, SCHEMA_VERSION,
    SaveError, SettleEnded, SettleRecord, SettleUntil, Side, StartRecord, TerminalWindow,
    TrialRecord, ValidationError,
};
pub use trial::{Sample, record, trial_errors, trial_errors_without};
