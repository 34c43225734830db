//! The history as a person or another tool reads it.
//!
//! - [`render`]: the terminal table and sparkline; [`page`]: the HTML page;
//!   [`bmf`]: Bencher Metric Format.
//! - [`told`]: what each `clibench history` subcommand tells a person.

pub mod bmf;
pub mod page;
pub mod render;
pub mod told;
