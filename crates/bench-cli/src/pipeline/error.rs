//! The pipeline's public error: what went wrong before, around or inside a phase.

use bench_core::Phase;
use std::fmt;
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
    /// `--drop-caches` cannot work here (not root, or `/proc/sys` read-only).
    #[error(transparent)]
    DropCaches(#[from] super::caches_linux::DropCachesError),
    /// A trial or install count of zero.
    #[error("--{what} must be at least 1")]
    ZeroCount {
        /// `trials` or `installs`.
        what: &'static str,
    },
    /// The result file exists but cannot be read as a clibench result; it is left as it is.
    #[error("{}: {source}", path.display())]
    ResultUnreadable {
        /// The result file.
        path: PathBuf,
        /// Why it cannot be used.
        #[source]
        source: bench_core::result::LoadError,
    },
    /// Saving the result file failed.
    #[error("failed to save {}", path.display())]
    ResultSave {
        /// The result file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: bench_core::result::SaveError,
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
    Cleanup(#[source] super::cleanup::CleanupError),
    /// The output folder is not clibench's, is in use, or holds an earlier run's state.
    #[error(transparent)]
    Out(#[from] super::out_dir::OutError),
    /// A phase could not start (its context, state or user could not be set up).
    #[error("{phase}: {source}")]
    Phase {
        /// The phase.
        phase: Phase,
        /// The cause, with its whole chain.
        #[source]
        source: Failure,
    },
}

impl Error {
    /// Whether the caller's input caused it (exit code 2 on a command line).
    pub fn is_input(&self) -> bool {
        if let Error::Out(error) = self {
            return error.is_input_error();
        }
        matches!(
            self,
            Error::Spec(_)
                | Error::NoSource { .. }
                | Error::CommitNotSha { .. }
                | Error::PhaseNotDescribed { .. }
                | Error::ZeroCount { .. }
                | Error::DropCaches(_)
                | Error::ResultUnreadable { .. }
        )
    }
}

/// An error with every cause below it on one line (`installing: running install.sh:
/// timed out`), as a phase's message and the result file record it.
pub(crate) fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(error) = cause {
        text.push_str(": ");
        text.push_str(&error.to_string());
        cause = error.source();
    }
    text
}

/// A failure inside a phase or the cleanup, with the chain of what was being done
/// ("installing: running install.sh as clibench-1a2b: timed out after 20.0 s").
///
/// The phases carry many kinds of causes (commands, /proc, terminals, kernels, files);
/// this type keeps the whole chain for [`std::error::Error::source`] and the message,
/// without making each of them part of the public API.
pub struct Failure(anyhow::Error);

impl Failure {
    pub(crate) fn new(error: anyhow::Error) -> Failure {
        Failure(error)
    }
}

impl fmt::Debug for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The whole chain on one line: a phase's message is its error and every cause.
        write!(f, "{:#}", self.0)
    }
}

impl std::error::Error for Failure {}
