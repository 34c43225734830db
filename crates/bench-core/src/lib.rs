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
//! - [`metric`]: every [`Metric`], its [`Unit`](units::Unit), [`Phase`], [`Direction`] and [`Nature`].
//! - [`result`]: the file format ([`ResultFile`], [`Side`], [`Observation`]), validation, load and save.
//! - [`detail`]: memory over time, screens at ready and staircase steps, for the HTML report.
//! - [`trial`]: [`record`] and [`trial_errors`].
//! - [`stats`]: the statistics over trials, one file per test or estimator: summaries
//!   ([`MetricStats`](stats::MetricStats)), Welch's and the paired t-test, Holm's adjustment,
//!   least-squares slopes, slope changes and the sequential looks of `ab --trials auto`.
//! - [`compare`](mod@compare): two sides compared, with bootstrap intervals and verdicts.
//! - [`report`]: one result file summarized; [`export`]: Markdown, JSON, CSV, text tables,
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
pub mod metric;
pub mod report;
pub mod result;
pub mod rng;
mod skip;
pub mod stats;
#[cfg(test)]
mod test_support;
pub mod text;
pub mod trial;
pub mod units;

pub use compare::{CompareOptions, Comparison, Verdict, compare};
pub use error_chain::error_chain;
pub use export::Format;
pub use metric::{Direction, Metric, Nature, Phase, glossary};
pub use report::Report;
pub use result::{
    LoadError, Observation, ParseError, ProcessMemory, ProcessRole, Request, ResultFile, Role,
    SCHEMA_VERSION, SaveError, SettleEnded, SettleRecord, SettleUntil, Side, StartRecord,
    TerminalWindow, TrialRecord, ValidationError,
};
pub use trial::{Sample, record, trial_errors, trial_errors_without};
