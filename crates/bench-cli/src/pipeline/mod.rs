//! The benchmark pipeline: prepare -> install -> measure -> runtime -> ui -> staircase,
//! one file per phase. Each phase is `run(&PhaseContext, &mut Side)`, run alone by
//! `clibench phase NAME` (a separate process per phase and trial, as in the seed).
//!
//! # Sections
//! - [`context`]: what a phase gets (spec, OUT/, trial, user, clean environment, placeholders).
//! - [`state`]: `OUT/state.json`, every user, home, folder and server clibench created.
//! - [`exec`]: running one command with a timeout, as the trial user, logged.
//! - [`cleanup()`]: stops and removes what the state file lists.

mod cleanup;
pub mod context;
pub mod exec;
pub mod home;
mod install;
mod measure;
pub mod origin;
mod prepare;
mod runtime;
mod staircase;
pub mod state;
mod ui;
pub mod users;

#[allow(
    unused_imports,
    reason = "the pipeline's interface for `clibench run` and the phases"
)]
pub use cleanup::{CleanupReport, cleanup, cleanup_with};
#[allow(
    unused_imports,
    reason = "the pipeline's interface for `clibench run` and the phases"
)]
pub use context::{PhaseContext, TrialUser};
pub use measure::ready_screen_section;

use bench_core::{Phase, Side};

/// Runs one phase: the dispatch `clibench phase NAME` uses.
pub fn run_phase(ctx: &PhaseContext, side: &mut Side) -> anyhow::Result<()> {
    match ctx.phase {
        Phase::Prepare => prepare::run(ctx, side),
        Phase::Install => install::run(ctx, side),
        Phase::Measure => measure::run(ctx, side),
        Phase::Runtime => runtime::run(ctx, side),
        Phase::Ui => ui::run(ctx, side),
        Phase::Staircase => staircase::run(ctx, side),
    }
}
