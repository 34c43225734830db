//! The one error type of what every phase that starts the measured program shares.

use crate::pipeline::FileError;
use crate::pipeline::isolation::command;
use bench_core::Phase;

/// Opening or closing the program's trial, starting its commands, reading its family's
/// memory or handling its background sessions failed: what the measure, runtime, ui,
/// session and staircase phases share, each phase's error holding it in one variant.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// The phase's context lacks the user, or a placeholder has no value.
    #[error(transparent)]
    Context(#[from] crate::pipeline::ContextError),
    /// The trial user cannot enter a folder the target needs.
    #[error(transparent)]
    Preflight(#[from] super::preflight::PreflightError),
    /// What was left of the trial user's processes from before could not be stopped.
    #[error("stopping the target's processes before the {phase} trial")]
    StopLeftovers {
        /// The phase.
        phase: Phase,
        /// What is left.
        #[source]
        source: command::StopError,
    },
    /// The trial user's processes could not be stopped when the trial closed.
    #[error("stopping the target's processes after the {phase} trial")]
    Stop {
        /// The phase.
        phase: Phase,
        /// What is left.
        #[source]
        source: command::StopError,
    },
    /// The runtime phase's kernel was asked for a terminal's options; it has none.
    #[error("the kernel's trial has no terminal ([measure]) to start a command in")]
    NoTerminal,
    /// A command of the phase (`ui`, `session`) could not start in its terminal.
    #[error("starting the {what} command in a terminal")]
    Spawn {
        /// The phase's command.
        what: &'static str,
        /// Why.
        #[source]
        source: bench_term::TermError,
    },
    /// A command's terminal did not close cleanly after its measurements.
    #[error("closing the {what} terminal")]
    CloseTerminal {
        /// The phase's command.
        what: &'static str,
        /// Why.
        #[source]
        source: bench_term::TermError,
    },
    /// The program's terminal failed while the phase waited on it.
    #[error("{action}")]
    Terminal {
        /// "waiting for the ui command to be ready", "closing the ui terminal".
        action: &'static str,
        /// Why.
        #[source]
        source: bench_term::TermError,
    },
    /// The command to start is empty once expanded.
    #[error("the command is empty")]
    EmptyCommand,
    /// `[measure] quit` names a key that does not exist.
    #[error("[measure] quit")]
    Quit(#[source] bench_term::KeyError),
    /// The target's memory could not be read.
    #[error("reading the memory of {selector}")]
    Snapshot {
        /// The processes, as `Selector`'s debug form.
        selector: String,
        /// Why.
        #[source]
        source: bench_proc::SnapshotError,
    },
    /// Without root, the phase must be a child subreaper to keep the target's daemons.
    #[error("becoming a child subreaper")]
    Subreaper(#[source] bench_proc::SubreaperError),
    /// The session list is not JSON.
    #[error("the session list is not JSON: {tail:?}")]
    SessionsNotJson {
        /// The end of the output.
        tail: String,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// The session list lacks its array.
    #[error("the session list has no array `{field}`: {listing}")]
    NoSessions {
        /// `sessions_field`.
        field: String,
        /// The list.
        listing: String,
    },
    /// A session's stop command failed and the session is still listed.
    #[error("{0}")]
    SessionLeft(String),
    /// The list or stop command did not finish.
    #[error(transparent)]
    Exec(#[from] command::ExecError),
    /// The trial's model endpoint could not start on the run's port.
    #[error("starting the model endpoint on 127.0.0.1:{port} (the port `{{model_url}}` names)")]
    ModelStart {
        /// The run's port.
        port: u16,
        /// Why.
        #[source]
        source: bench_model::ServeError,
    },
    /// The model endpoint's journal could not be written.
    #[error("writing the model endpoint's journal {}", path.display())]
    ModelJournal {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: bench_core::io::WriteError,
    },
    /// A file of the session could not be copied or its folder made.
    #[error(transparent)]
    File(#[from] FileError),
}

impl TargetError {
    /// The error of the program's terminal failing while `action`.
    pub(crate) fn terminal(action: &'static str) -> impl FnOnce(bench_term::TermError) -> Self {
        move |source| TargetError::Terminal { action, source }
    }
}

/// `impl From<ContextError> for $phase_error` through its `Program` variant: a phase's
/// context fails only where the program's trial is set up (its user, its command's
/// placeholders), so the failure is the program's, as every phase that starts it says.
macro_rules! context_error_is_the_programs {
    ($phase_error:ident) => {
        impl From<$crate::pipeline::ContextError> for $phase_error {
            fn from(error: $crate::pipeline::ContextError) -> Self {
                $phase_error::Program(error.into())
            }
        }
    };
}
pub(crate) use context_error_is_the_programs;
