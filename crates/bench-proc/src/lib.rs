//! Memory of process families, process control, disk footprint and host facts.
//!
//! Everything here reads `/proc` (Linux only) and never prints.
#![warn(missing_docs)]
