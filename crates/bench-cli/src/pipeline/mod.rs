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
//! - [`out_dir`]: the output folder's ownership, marker and lock.
//! - [`cleanup()`]: stops and removes what the state file lists.
//!
//! # Errors
//! Every function returns a `thiserror` type naming what failed (file, command, user,
//! key) with its causes as [`std::error::Error::source`]. The runner's surface is
//! [`Error`]; a phase that failed says why in [`PhaseOutcome::failure`], a [`PhaseError`]
//! holding the phase's own type ([`PrepareError`], [`InstallError`], [`MeasureError`],
//! [`RuntimeError`], [`UiError`], [`StaircaseError`]) or its [`ContextError`]. The text
//! users see and `result.json` records is the error and its causes joined by `: `.

pub mod ab;
mod caches_linux;
pub mod circumstances;
mod cleanup;
pub mod context;
mod driver;
mod error;
pub mod exec;
pub mod home;
mod install;
mod leftovers;
mod measure;
pub mod merge;
pub mod origin;
pub mod out_dir;
mod plan;
mod prepare;
mod recording;
pub mod redact;
mod runner;
mod runtime;
pub mod schedule;
mod staging;
mod staircase;
pub mod state;
mod ui;
pub mod users;

pub use caches_linux::{DROP_CACHES, DropCachesError};
pub use cleanup::{CleanupError, CleanupReport, cleanup, cleanup_with};
pub use context::{ContextError, PhaseContext, TrialUser};
pub use driver::{
    PhaseOutcome, PhaseRun, SpecFacts, load_spec, override_source, record_skip, request_for,
    run_phase, trial_failure,
};
pub use error::{Error, FileError, PhaseError};
pub use exec::StopError;
pub use install::InstallError;
pub use measure::MeasureError;
pub use measure::ready_screen_section;
pub use plan::{Plan, PlanSettings, Shard, ShardError, SpecPathError, SpecSource, Step, describes};
pub use prepare::PrepareError;
pub use runner::{
    Execution, Notice, Observer, Progress, REPOSITORY_VAR, RootCause, RunOutcome, Runner,
    SilentObserver, Skip, StepResult, WrittenReport, headline, write_report,
};
pub use runtime::RuntimeError;
pub use staging::StagingError;
pub use staircase::StaircaseError;
pub use state::StateError;
pub use ui::{StepError, UiError};
pub use users::UserError;
