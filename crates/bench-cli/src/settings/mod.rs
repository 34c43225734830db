//! What the command line asks for, resolved into the library's settings: a comparison's
//! thresholds (the flags, then the spec's `[compare] noise` or the floors the results
//! recorded), `ab`'s schedule and sequential plan, and a run's phases and overrides.
//!
//! The `clibench` binary parses its flags into these plain values, calls the library and
//! prints what comes back; every rule about which values go together lives here, so it is
//! tested without a command line and shared by the commands that take the same flags.

mod ab;
mod compare;
mod error;
mod run;

pub use ab::{AbPlan, AbRequest, Trials, ab_settings};
pub use compare::{Drift, FlagValueError, Noise, ThresholdFlags, compare_options, recorded_floors};
pub use error::SettingsError;
pub use run::{parse_phases, with_scenario};
