//! Plain-text tables for people, printed on stderr by the commands: bench-core's text
//! exporter, the one renderer every table uses.

pub use bench_core::export::text::{Align, render};
