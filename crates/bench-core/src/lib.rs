//! The result format of clibench, and what is computed from it.
//!
//! A result file describes one *side*: one build of the target under test,
//! with every metric's observations over trials. `bench-core` owns that file
//! format, the statistics over trials, the comparison of two sides, and the
//! exporters (Markdown, JSON, CSV) that turn them into text.
#![warn(missing_docs)]

pub mod io;
pub mod stats;
pub mod units;
