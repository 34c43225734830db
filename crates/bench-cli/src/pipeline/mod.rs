//! The benchmark pipeline: prepare -> install -> measure -> runtime -> ui -> session -> staircase.
//!
//! # Rooms
//! - `phases`: one file per phase.
//! - `program`: the measured program's terminal, process family and sessions, shared by the phases
//!   (not `target/`, the name Cargo gives its build folder, which tools skip).
//! - [`isolation`]: trial users, homes, the staging folder, leftovers of a trial uid, and
//!   running one command as the trial user.
//! - [`out`]: the output folder, its lock, the state file, cleanup, and what a run tells
//!   and adds to a history store when it is done.
//! - [`orchestration`]: the plan, one phase of one trial, the trial loop, A/B schedules,
//!   merging shards, the progress lines a person watching reads.
//! - [`origin`]: the artifact server the trial's installer fetches from.
//! - [`context`]: what a phase gets (spec, OUT/, trial, user, clean environment, placeholders).
//!
//! # Sections
//! - [`Plan`]: what a run will do, checked against the spec before anything runs.
//! - [`Runner`]: the trial loop, in process or a process per step, reporting to an
//!   [`Observer`]; several plans interleaved for an A/B run.
//! - [`run_phase`]: one phase of one trial, merged into `OUT/result.json`.
//! - `cleanup()`: stops and removes what the state file lists.
//!
//! # Errors
//! Every function returns a `thiserror` type naming what failed (file, command, user,
//! key) with its causes as [`std::error::Error::source`]. The runner's surface is
//! [`Error`]; a phase that failed says why in [`PhaseOutcome::failure`], a [`PhaseError`]
//! holding the phase's own type ([`PrepareError`], [`InstallError`], [`MeasureError`],
//! [`RuntimeError`], [`UiError`], [`SessionError`], [`StaircaseError`]) or its [`ContextError`]. The text
//! users see and `result.json` records is the error and its causes joined by `: `.

pub mod artifacts;
pub mod context;
mod error;
mod file_error;
pub mod isolation;
pub mod orchestration;
pub mod origin;
pub mod out;
mod phases;
pub(crate) mod program;
pub mod redact;

pub(crate) use context::PhaseContext;
pub use context::{ContextError, LogFileError};
pub use error::{Error, PhaseError};
pub use file_error::FileError;
pub use isolation::command::StopError;
pub use isolation::staging::StagingError;
pub use isolation::users::UserError;
pub(crate) use orchestration::caches_linux::DROP_CACHES;
pub use orchestration::caches_linux::DropCachesError;
pub use orchestration::phase_child::REPOSITORY_VAR;
pub use orchestration::phase_child::{PhaseChild, PhaseChildError, run_as_phase_child};
pub use orchestration::phase_run::{PhaseOutcome, PhaseRun, run_phase};
pub use orchestration::plan::{
    Plan, PlanSettings, Shard, ShardError, SpecPathError, SpecSource, Step,
};
pub use orchestration::recorded::{Recorded, SideRecord};
pub use orchestration::runner::{
    Execution, Notice, Observer, Progress, RootCause, RunOutcome, Runner, SilentObserver, Skip,
    StepResult,
};
pub use orchestration::skip_rules::headline;
pub(crate) use out::cleanup::cleanup;
pub use out::cleanup::{CleanupError, CleanupReport, cleanup_with, run_folders};
pub use out::report::{WrittenReport, write_report};
pub use out::state::StateError;
pub use out::state::TrialUser;
pub use phases::install::InstallError;
pub use phases::measure::MeasureError;
pub use phases::prepare::PrepareError;
pub use phases::runtime::RuntimeError;
pub use phases::session::SessionError;
pub use phases::staircase::StaircaseError;
pub use phases::ui::{StepError, UiError};
pub use program::TargetError;
