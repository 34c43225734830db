//! Exporters: a [`Report`](crate::report::Report) or a
//! [`Comparison`](crate::compare::Comparison) as Markdown, JSON or CSV.
//!
//! Exporters return a `String` and never write: the caller decides where text goes.
//!
//! - [`markdown`]: GitHub-flavoured, ready to post as a pull-request comment
//!   (`412 ms`, `131.2 MiB`, verdicts as words).
//! - [`json`]: the same data with numbers in base units (seconds, bytes).
//! - [`csv`]: one row per metric, numbers in base units.
//! - [`text`]: aligned plain-text tables for a terminal.

pub mod csv;
mod format;
pub mod json;
pub mod markdown;
pub mod text;

pub use format::Format;
