//! Keeping double-forked daemons in the family: `PR_SET_CHILD_SUBREAPER`.

use std::io;

/// Why the subreaper attribute could not be set.
#[derive(Debug, thiserror::Error)]
#[error("failed to become a child subreaper (prctl PR_SET_CHILD_SUBREAPER)")]
pub struct SubreaperError {
    #[source]
    source: io::Error,
}

/// Makes the calling process a child subreaper (Linux 3.4+): an orphan among its
/// descendants, such as a daemon that double-forks, re-parents to this process
/// instead of to init, so it stays in [`crate::Selector::Tree`] of this process
/// and [`crate::stop`] can reap it.
///
/// The attribute is process-wide and inherited by nothing; call it once, early,
/// in the process that owns the family (in tests: a test that runs in its own
/// process, as under nextest, or a fixture child).
pub fn become_subreaper() -> Result<(), SubreaperError> {
    rustix::process::set_child_subreaper(Some(rustix::process::getpid())).map_err(|errno| {
        SubreaperError {
            source: errno.into(),
        }
    })
}

/// Whether the calling process is a child subreaper.
pub fn is_subreaper() -> Result<bool, SubreaperError> {
    rustix::process::child_subreaper()
        .map(|pid| pid.is_some())
        .map_err(|errno| SubreaperError {
            source: errno.into(),
        })
}
