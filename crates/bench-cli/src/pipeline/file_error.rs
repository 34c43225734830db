//! A file-system call that failed, naming what was being done: the one error every
//! phase and the pipeline's own files share, kept apart from the pipeline's [`Error`]
//! (which wraps every phase's) so that a phase depends on it and not on the others.
//!
//! [`Error`]: crate::pipeline::Error

/// A file-system call of a phase that failed, with what was being done
/// ("copying /src/a.tgz to /stage/artifacts").
#[derive(Debug, thiserror::Error)]
#[error("{action}")]
pub struct FileError {
    /// What was being done, naming the path(s).
    pub action: String,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

impl FileError {
    /// A `map_err` for an `io::Error`: `.map_err(FileError::doing(format!("removing {}", …)))`.
    pub(crate) fn doing(action: String) -> impl FnOnce(std::io::Error) -> FileError {
        move |source| FileError { action, source }
    }
}
