//! What the command line asks for, resolved into the library's settings: a comparison's
//! thresholds (the flags, then the spec's `[compare] noise` or the floors the results
//! recorded), `ab`'s schedule and sequential plan, `board`'s rounds and board file, a
//! run's phases and overrides, and the trial counts the result format can hold, and the
//! fix for a command given without `--`.
//!
//! The `clibench` binary parses its flags into these plain values, calls the library and
//! prints what comes back; every rule about which values go together lives here, so it is
//! tested without a command line and shared by the commands that take the same flags.

mod ab;
mod board;
mod compare;
mod error;
mod limits;
mod run;
mod separator;

pub use ab::{AbPlan, AbRequest, Trials, ab_settings};
pub use board::{BoardRequest, board_settings};
pub use compare::{Drift, FlagValueError, Noise, ThresholdFlags, compare_options, recorded_floors};
pub use error::SettingsError;
pub use limits::{budget, duration, metric, pair_count, store, trial_count, trial_number};
pub use run::{parse_phases, scenario_tool, with_scenario};
pub use separator::separator_hint;
