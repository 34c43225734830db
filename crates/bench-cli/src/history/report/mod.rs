//! The history as a person or another tool reads it.
//!
//! - [`render`]: the terminal table and sparkline; [`page`]: the HTML page;
//!   [`bmf`]: Bencher Metric Format.
//!
//! What each `clibench history` subcommand tells a person is the binary's (`src/text/`).

pub mod bmf;
pub mod page;
pub mod render;
