//! The benchmark pipeline: prepare -> install -> measure -> runtime -> ui -> staircase,
//! one file per phase, and the driver and trial loop that run them.
//!
//! # Sections
//! - [`Plan`]: what a run will do, checked against the spec before anything runs.
//! - [`Runner`]: the trial loop, in process or a process per step, reporting to an
//!   [`Observer`]; several plans interleaved for an A/B run.
//! - [`run_phase`]: one phase of one trial, merged into `OUT/result.json`.
//! - [`context`]: what a phase gets (spec, OUT/, trial, user, clean environment, placeholders).
//! - [`state`]: `OUT/state.json`, every user, home, folder and server clibench created.
//! - [`exec`]: running one command with a timeout, as the trial user, logged.
//! - [`cleanup()`]: stops and removes what the state file lists.

pub mod ab;
pub mod circumstances;
mod cleanup;
pub mod context;
mod driver;
mod error;
pub mod exec;
pub mod home;
mod install;
mod measure;
pub mod merge;
pub mod origin;
mod plan;
mod prepare;
mod runner;
mod runtime;
pub mod schedule;
mod staircase;
pub mod state;
mod ui;
pub mod users;

pub use cleanup::{CleanupReport, cleanup, cleanup_with};
pub use context::{PhaseContext, TrialUser};
pub use driver::{PhaseOutcome, PhaseRun, load_spec, override_source, request_for, run_phase};
pub use error::{Error, Failure};
pub use plan::{Plan, PlanSettings, Shard, SpecSource, Step, describes};
pub use runner::{
    Execution, Notice, Observer, Progress, RunOutcome, Runner, SilentObserver, StepResult,
    write_report,
};
