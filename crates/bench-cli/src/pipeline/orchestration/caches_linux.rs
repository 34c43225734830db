//! Dropping the kernel's page cache before a cold start (`clibench run --drop-caches`), so
//! that "cold" means the target's files are read from disk, not from memory left by the
//! install or an earlier trial. It affects the whole machine: every other program's cached
//! files must be read again too.

use std::path::Path;

/// The file that drops the caches when written (Linux, root only).
pub(crate) const DROP_CACHES: &str = "/proc/sys/vm/drop_caches";

/// The result's `runtime` key that says whether caches were dropped.
pub const RUNTIME_KEY: &str = bench_core::CACHES_DROPPED_KEY;

/// The [`RUNTIME_KEY`] value a measure trial records: "cold" means a cold cache only when
/// it says yes.
pub(crate) fn runtime_value(dropped: bool) -> &'static str {
    if dropped {
        "yes: before each measure trial"
    } else {
        "no"
    }
}

/// The page cache could not be dropped.
#[derive(Debug, thiserror::Error)]
pub enum DropCachesError {
    /// Not running as root.
    #[error(
        "--drop-caches needs root (it writes {DROP_CACHES}, which drops the page cache of the whole machine)"
    )]
    NotRoot,
    /// `sync` or the write failed.
    #[error("failed to {action}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

/// Checks up front that caches can be dropped: running as root, and (when `control` is
/// given) the control file opens for writing, which it does not in a container whose
/// `/proc/sys` is read-only. Nothing is written.
pub fn check_can_drop(control: Option<&Path>) -> Result<(), DropCachesError> {
    if !rustix::process::geteuid().is_root() {
        return Err(DropCachesError::NotRoot);
    }
    if let Some(control) = control {
        std::fs::OpenOptions::new()
            .write(true)
            .open(control)
            .map_err(|source| DropCachesError::Io {
                action: "open /proc/sys/vm/drop_caches for writing",
                source,
            })?;
    }
    Ok(())
}

/// Writes dirty pages out (`sync`), then drops the page cache, dentries and inodes
/// (writes `3` to `control`, normally [`DROP_CACHES`]). Dirty pages cannot be dropped,
/// hence the sync first.
pub fn drop_caches(control: &Path) -> Result<(), DropCachesError> {
    check_can_drop(None)?;
    rustix::fs::sync();
    std::fs::write(control, b"3\n").map_err(|source| DropCachesError::Io {
        action: "write 3 to /proc/sys/vm/drop_caches",
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropping_writes_3_to_the_control_file_as_root_and_is_refused_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        let control = dir.path().join("drop_caches");
        let result = drop_caches(&control);
        if rustix::process::geteuid().is_root() {
            result.unwrap();
            assert_eq!(std::fs::read_to_string(&control).unwrap(), "3\n");
        } else {
            assert!(matches!(result, Err(DropCachesError::NotRoot)));
            assert!(!control.exists());
        }
    }
}
