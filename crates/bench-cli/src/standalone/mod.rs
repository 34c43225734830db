//! Measurements of a command given on the command line, without a spec, as
//! `clibench startup`, `kernel`, `mem` and `staircase` make them, and the host's own
//! noise as `clibench calibrate` measures it.
//!
//! Each module takes plain settings (durations as [`std::time::Duration`]), returns
//! typed errors and never prints; renderers return the text a person reads.

pub mod calibrate;
pub mod kernel;
pub mod mem;
pub mod program;
pub mod serve;
pub mod spawn;
pub mod staircase;
pub mod startup;
