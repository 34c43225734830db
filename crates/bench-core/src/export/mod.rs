//! Exporters: a [`Report`](crate::Report) or a
//! [`Comparison`](crate::compare::Comparison) as text for people and tools.
//!
//! Exporters return a `String` and never write: the caller decides where text goes.
//!
//! - [`markdown`]: GitHub-flavoured, ready to post as a pull-request comment
//!   (`412 ms`, `131.2 MiB`, verdicts as words).
//! - [`json`]: the same data with numbers in base units (seconds, bytes).
//! - [`csv`]: one row per metric, numbers in base units.
//! - [`text`]: aligned plain-text tables for a terminal.
//! - [`bmf`]: Bencher Metric Format, for [Bencher](https://bencher.dev).
//! - [`github_benchmark`]: github-action-benchmark's `customSmallerIsBetter` and
//!   `customBiggerIsBetter` arrays.
//! - [`html`]: one self-contained page with [`charts`] (inline SVG), for people.
//! - [`hyperfine`]: hyperfine's `--export-json` shape, for a result's `ready` times.
//! - [`processes`]: the memory of each process and of the family, as `clibench mem`
//!   shows it.
//! - [`staircase`]: the staircase's steps, as `clibench staircase` shows them.
//! - [`terminal`]: what the terminal received during the session phase, a table that
//!   report.md and the HTML page show.

pub mod bmf;
pub mod board;
mod cells;
#[cfg(feature = "html")]
pub mod charts;
pub mod csv;
mod failures;
mod format;
pub mod github_benchmark;
#[cfg(feature = "html")]
pub mod html;
pub mod hyperfine;
pub mod json;
pub mod markdown;
pub mod processes;
pub mod staircase;
pub mod terminal;
pub mod text;

pub use format::Format;
