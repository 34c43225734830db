//! The pipeline's public error: what went wrong before, around or inside a phase.

use bench_core::Phase;
use std::path::PathBuf;

/// Why the pipeline could not do what it was asked.
///
/// [`Error::is_input`] tells errors caused by what the caller gave (a spec that does not
/// parse, a bad override, a result file that is not clibench's) from failures of the
/// target or the machine, so a command line can pick its exit code.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The spec does not parse or is invalid; the message names its file, line and key.
    #[error(transparent)]
    Spec(#[from] crate::spec::SpecError),
    /// `repository` or `commit` was overridden on a spec without a `[source]`.
    #[error("{}: --repository and --commit need a [source] section in the spec", spec.display())]
    NoSource {
        /// The spec file.
        spec: PathBuf,
    },
    /// An overridden commit that is not a full sha.
    #[error("--commit must be a full 40-character sha (got \"{commit}\")")]
    CommitNotSha {
        /// What was given.
        commit: String,
    },
    /// A phase was asked for that the spec does not describe.
    #[error("--phases: {phase} needs a [{phase}] section, which {} does not have", spec.display())]
    PhaseNotDescribed {
        /// The phase asked for.
        phase: Phase,
        /// The spec file.
        spec: PathBuf,
    },
    /// `--phases` asks for a phase without the earlier ones it needs (a run starts in a
    /// folder of its own, so nothing was prepared or installed there before).
    #[error(
        "--phases {asked}: {phase} needs {needs}, and a run starts in a fresh folder; use \
         `--phases {suggested}`, or run single phases into one folder with `clibench phase`"
    )]
    PhasesNeedInstall {
        /// The phases as asked, comma-separated.
        asked: String,
        /// The first phase that lacks what it needs.
        phase: Phase,
        /// What it needs, in words.
        needs: &'static str,
        /// The phases that would work, comma-separated.
        suggested: String,
    },
    /// `--drop-caches` cannot work here (not root, or `/proc/sys` read-only).
    #[error(transparent)]
    DropCaches(#[from] crate::pipeline::orchestration::caches_linux::DropCachesError),
    /// A trial or install count of zero.
    #[error("--{what} must be at least 1")]
    ZeroCount {
        /// `trials` or `installs`.
        what: &'static str,
    },
    /// The result file exists but cannot be read as a clibench result; it is left as it is.
    /// The load error names the file and says why, so it is the whole message.
    #[error(transparent)]
    ResultUnreadable(bench_core::LoadError),
    /// Saving the result file failed.
    #[error("failed to save {}", path.display())]
    ResultSave {
        /// The result file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: bench_core::SaveError,
    },
    /// No phase wrote a result file.
    #[error("no phase recorded a result; the phase logs are in {}", logs.display())]
    NoResult {
        /// The folder holding the phase logs.
        logs: PathBuf,
    },
    /// A file-system operation on the output folder failed.
    #[error("failed to {action} {}", path.display())]
    Io {
        /// What was being done ("create", "write").
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The built-in demo could not be written.
    #[error(transparent)]
    Demo(#[from] crate::demo::DemoError),
    /// Running a phase process failed (it could not be started or waited for).
    #[error("failed to {action} clibench phase for {step}")]
    Spawn {
        /// What was being done.
        action: &'static str,
        /// The step, e.g. "measure trial 1".
        step: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Becoming a child subreaper failed.
    #[error(transparent)]
    Subreaper(#[from] bench_proc::SubreaperError),
    /// Writing a report failed.
    #[error(transparent)]
    Write(#[from] bench_core::io::WriteError),
    /// Cleaning up users, homes and servers failed; what is left is in the message.
    #[error("cleaning up users, homes and servers")]
    Cleanup(#[source] crate::pipeline::out::cleanup::CleanupError),
    /// The output folder is not clibench's, is in use, or holds an earlier run's state.
    #[error(transparent)]
    Out(#[from] crate::pipeline::out::folder::OutError),
    /// The output folder could not be opened for a run.
    #[error(transparent)]
    OpenRun(#[from] crate::pipeline::out::run::OpenRunError),
    /// A phase could not start (its context, state or user could not be set up).
    #[error("{phase}")]
    Phase {
        /// The phase.
        phase: Phase,
        /// The cause (boxed: it is large, and rare).
        #[source]
        source: Box<PhaseError>,
    },
}

impl Error {
    /// Whether the caller's input caused it (exit code 2 on a command line).
    pub fn is_input(&self) -> bool {
        if let Error::Out(error) = self {
            return error.is_input_error();
        }
        if let Error::OpenRun(error) = self {
            return error.is_input_error();
        }
        matches!(
            self,
            Error::Spec(_)
                | Error::NoSource { .. }
                | Error::CommitNotSha { .. }
                | Error::PhaseNotDescribed { .. }
                | Error::PhasesNeedInstall { .. }
                | Error::ZeroCount { .. }
                | Error::DropCaches(_)
                | Error::ResultUnreadable(_)
        )
    }
}

/// Why a phase failed: its own error, or its context's, each naming what failed (the
/// file, command, user or key) with its causes as [`std::error::Error::source`].
#[derive(Debug, thiserror::Error)]
pub enum PhaseError {
    /// The phase's context (output folder, state, trial user, staging folder).
    #[error(transparent)]
    Context(#[from] crate::pipeline::ContextError),
    /// The state file could not be updated before the phase.
    #[error(transparent)]
    State(#[from] crate::pipeline::out::state::StateError),
    /// Prepare failed.
    #[error(transparent)]
    Prepare(#[from] crate::pipeline::phases::prepare::PrepareError),
    /// Install failed.
    #[error(transparent)]
    Install(#[from] crate::pipeline::phases::install::InstallError),
    /// Measure failed.
    #[error(transparent)]
    Measure(#[from] crate::pipeline::phases::measure::MeasureError),
    /// Runtime failed.
    #[error(transparent)]
    Runtime(#[from] crate::pipeline::phases::runtime::RuntimeError),
    /// The ui phase failed.
    #[error(transparent)]
    Ui(#[from] crate::pipeline::phases::ui::UiError),
    /// The session phase failed.
    #[error(transparent)]
    Session(#[from] crate::pipeline::phases::session::SessionError),
    /// The staircase failed.
    #[error(transparent)]
    Staircase(#[from] crate::pipeline::phases::staircase::StaircaseError),
    /// A phase that cannot pair was asked to run as a pair: only measure trials run as a
    /// tight pair, and runtime, ui and session trials only as a duet.
    #[error(
        "{0} trials do not run as a pair (measure pairs its starts; runtime, ui and session pair as a duet)"
    )]
    PairedPhase(Phase),
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_unreadable_result_file_is_named_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("result.json");
        std::fs::write(&path, "garbage").unwrap();
        let error =
            super::Error::ResultUnreadable(bench_core::ResultFile::load(&path).unwrap_err());
        let message = bench_core::error_chain(&error);
        assert!(message.starts_with("invalid result file "), "{message}");
        assert_eq!(
            message.matches(&path.display().to_string()).count(),
            1,
            "{message}"
        );
        assert!(error.is_input());
    }
}
