//! What the [`Runner`](super::Runner) tells an [`Observer`] while it runs (where the
//! run is, how each step ended, notices), and the [`RunOutcome`] it returns.

use crate::pipeline::CleanupReport;
use crate::pipeline::orchestration::plan::Step;
use std::path::PathBuf;
use std::time::Duration;

/// Where the run is, for an [`Observer`].
#[derive(Debug, Clone)]
pub struct Progress {
    /// 0-based position of the step in the run.
    pub index: usize,
    /// Steps in the run.
    pub total: usize,
    /// The side's label in an interleaved run ("base", "head"), `None` for a single plan.
    pub side: Option<String>,
    /// The phase and trial that is running.
    pub step: Step,
    /// Since the step started.
    pub step_elapsed: Duration,
    /// Since the run started.
    pub run_elapsed: Duration,
    /// How far a session step is, when it says ([`crate::pipeline::out::turns`]).
    pub turns: Option<crate::pipeline::out::turns::TurnCount>,
}

impl Progress {
    /// "head: measure trial 1", or "measure trial 1" for a single plan.
    pub fn label(&self) -> String {
        match &self.side {
            Some(side) => format!("{side}: {}", self.step.label()),
            None => self.step.label(),
        }
    }
}

/// How a step ended.
#[derive(Debug, Clone)]
pub enum StepResult {
    /// The trial succeeded.
    Succeeded,
    /// The trial failed; `message` is its last error line, `log` the phase's whole log.
    Failed {
        /// The error.
        message: String,
        /// The phase's log.
        log: PathBuf,
    },
    /// The step did not run: "install trial 0 failed", "same failure as measure trial 0: ...".
    Skipped {
        /// Why, naming the step whose failure caused it.
        reason: String,
    },
}

/// Something worth telling that is not a step's result.
#[derive(Debug, Clone)]
pub enum Notice {
    /// Prepare failed, so nothing else of that side can run.
    PrepareFailed {
        /// The side's label, for an interleaved run.
        side: Option<String>,
    },
    /// The folder held the result of an earlier run: it was moved here, and this run
    /// starts a new one.
    PreviousResult {
        /// Where the earlier result is now.
        path: PathBuf,
    },
    /// Install trial 0 failed: there is no installation, so the later phases of that side
    /// are skipped.
    InstallFailed {
        /// The side's label, for an interleaved run.
        side: Option<String>,
    },
    /// `--drop-caches`: the page cache is dropped before each measure trial (told once).
    DropsCaches,
    /// Stopping processes failed (they are listed in the message); the run goes on.
    StopFailed {
        /// What `bench_proc::stop` said.
        message: String,
    },
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Notice::PrepareFailed { side: None } => {
                f.write_str("prepare failed; nothing else can run")
            }
            Notice::PrepareFailed { side: Some(side) } => {
                write!(f, "{side}: prepare failed; nothing else of {side} can run")
            }
            Notice::PreviousResult { path } => write!(
                f,
                "the earlier run's result was moved to {}; this run starts a new one (the \
                 folder keeps the {} newest earlier results)",
                path.display(),
                crate::pipeline::out::folder::KEEP_PREVIOUS_RESULTS
            ),
            Notice::InstallFailed { side: None } => {
                f.write_str("install trial 0 failed; the later phases cannot run and are skipped")
            }
            Notice::InstallFailed { side: Some(side) } => write!(
                f,
                "{side}: install trial 0 failed; the later phases of {side} cannot run and are skipped"
            ),
            Notice::DropsCaches => f.write_str(
                "--drop-caches: dropping the page cache before each measure trial; this affects the whole machine (every program's cached files are read again)",
            ),
            Notice::StopFailed { message } => write!(f, "stopping leftover processes: {message}"),
        }
    }
}

/// Receives the runner's progress. Every method does nothing by default.
pub trait Observer {
    /// A step starts.
    fn step_started(&mut self, _progress: &Progress) {}
    /// A step is still running (called about every 50 ms when phases run in their own
    /// process).
    fn waiting(&mut self, _progress: &Progress) {}
    /// A step ended.
    fn step_finished(&mut self, _progress: &Progress, _result: &StepResult) {}
    /// Something happened that is not a step's result.
    fn notice(&mut self, _notice: &Notice) {}
}

/// An [`Observer`] that ignores everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct SilentObserver;

impl Observer for SilentObserver {}

/// A step that did not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skip {
    /// The index of its plan.
    pub side: usize,
    /// The phase and trial that did not run.
    pub step: Step,
    /// Why, as [`StepResult::Skipped`] says.
    pub reason: String,
}

/// A failure that made later steps skip: the run's root cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootCause {
    /// The index of its plan.
    pub side: usize,
    /// The step that failed.
    pub step: Step,
    /// Its error.
    pub message: String,
    /// How many later steps were skipped because of it.
    pub skipped: usize,
}

/// What a run did.
#[derive(Debug, Default)]
pub struct RunOutcome {
    /// The steps that failed, with the index of their plan.
    pub failed: Vec<(usize, Step)>,
    /// The steps that did not run, in order.
    pub skipped: Vec<Skip>,
    /// The failures that made later steps skip, in order: what a summary leads with.
    pub root_causes: Vec<RootCause>,
    /// Whether the run was interrupted (everything was stopped and cleaned up).
    pub interrupted: bool,
    /// How long the steps took.
    pub elapsed: Duration,
    /// Each plan's cleanup, in plan order.
    pub cleanups: Vec<CleanupReport>,
    /// Each plan's spec file (for the demo, the one written into `OUT/demo`).
    pub specs: Vec<PathBuf>,
}
