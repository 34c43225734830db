//! Opening the output folder for a whole `clibench run`: created or adopted, locked, no
//! earlier run's state left, a new result with the earlier one set aside. Kept apart from
//! [`folder`](super::folder) because it needs the state file, which itself is read and
//! written through `folder`.

use crate::pipeline::out::folder::{OutError, OutLock, create, lock, set_aside_result};
use crate::pipeline::out::state::{State, StateError};
use std::path::{Path, PathBuf};

/// `OUT/` could not be opened for a run.
#[derive(Debug, thiserror::Error)]
pub enum OpenRunError {
    /// The folder is not clibench's, or is in use.
    #[error(transparent)]
    Out(#[from] OutError),
    /// An earlier run's state is still there.
    #[error(
        "{} holds what an earlier run created (state.json); run `clibench cleanup --out {}` first",
        path.display(),
        path.display()
    )]
    EarlierRun {
        /// The folder.
        path: PathBuf,
    },
    /// The state file could not be read or written.
    #[error(transparent)]
    State(Box<StateError>),
}

impl OpenRunError {
    /// Whether this is the caller's mistake (exit 2) rather than a failure.
    pub fn is_input_error(&self) -> bool {
        match self {
            OpenRunError::Out(error) => error.is_input_error(),
            OpenRunError::EarlierRun { .. } => true,
            OpenRunError::State(_) => false,
        }
    }
}

/// The output folder of a `clibench run`, locked for the whole run.
#[derive(Debug)]
pub(crate) struct RunOut {
    /// The lock; dropping it lets the next run in.
    #[allow(dead_code, reason = "held, not read: dropping it releases the folder")]
    lock: OutLock,
    /// Where a result of an earlier run was moved, if there was one.
    pub previous_result: Option<PathBuf>,
}

/// Opens `out` for `clibench run`: created or adopted (see [`create`]), locked, refused
/// while an earlier run's state is left (its users may be kept or half removed: that is
/// `clibench cleanup`'s to finish), and with a new result, the earlier one set aside. The
/// `clibench phase` processes the run starts share its lock.
pub(crate) fn open_for_run(out: &Path) -> Result<RunOut, OpenRunError> {
    create(out)?;
    let lock = lock(out)?;
    if State::exists(out) {
        return Err(OpenRunError::EarlierRun {
            path: out.to_path_buf(),
        });
    }
    let run_id = State::update(out, |s| s.run_id.clone())
        .map_err(|error| OpenRunError::State(Box::new(error)))?;
    let logs = out.join("logs");
    std::fs::create_dir_all(&logs).map_err(|e| OutError::io(&logs, e))?;
    let previous_result = set_aside_result(out, &run_id)?;
    Ok(RunOut {
        lock,
        previous_result,
    })
}
