//! Reading `/proc` files, and the error of a walk over them: a process that vanished
//! or hides its files is not an error, a short read is not the end of a file. Apart from
//! the walker (`snapshot_linux.rs`) so that the CPU accounting the walker uses reads
//! files the same way without depending on the walker.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// Why a snapshot failed. A process that vanishes mid-walk is not an error.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The root of a [`Selector::Tree`](crate::Selector::Tree) does not exist.
    #[error("process {pid} does not exist")]
    NoSuchProcess {
        /// The missing root.
        pid: u32,
    },
    /// A `/proc` file could not be read for a reason other than the process
    /// having exited or access being denied.
    #[error("failed to read {}", path.display())]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

/// Reads a file as text; `Ok(None)` when the process is gone or access was denied.
pub(crate) fn read_optional<'b>(
    path: &Path,
    buf: &'b mut Vec<u8>,
) -> Result<Option<&'b str>, SnapshotError> {
    match read_file(path, buf) {
        Ok(_) => Ok(Some(std::str::from_utf8(buf).unwrap_or(""))),
        Err(error) if vanished(&error) || error.kind() == io::ErrorKind::PermissionDenied => {
            Ok(None)
        }
        Err(source) => Err(SnapshotError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Reads a whole file into `buf` (reused across calls to spare allocations)
/// and returns it as text; non-UTF-8 content reads as empty.
///
/// Reads until `read` returns 0: a short read is not the end of a `/proc` file.
/// `task/TID/children` is generated a page at a time, so a parent with a
/// thousand children answers the first read with only part of the list.
pub(crate) fn read_file<'b>(path: &Path, buf: &'b mut Vec<u8>) -> io::Result<&'b str> {
    buf.clear();
    // std's read_to_end reads until a read returns 0 (retrying interrupted reads): a short
    // read is not the end of a /proc file, whose `children` comes a page at a time.
    File::open(path)?.read_to_end(buf)?;
    Ok(std::str::from_utf8(buf).unwrap_or(""))
}

/// Reads a `/proc` file (or any file) whole: `std::fs::read`, which reads until a read
/// returns 0. Named so that every reader of `/proc` says so: a short read is not the end
/// of a `/proc` file (`task/TID/children` comes a page at a time), and a hand-made loop
/// that stops at one is how 1,400 children were once measured as 683.
pub fn read_proc_file(path: impl AsRef<Path>) -> io::Result<Vec<u8>> {
    std::fs::read(path)
}

/// ENOENT when the `/proc/PID` directory is gone, ESRCH when the process exited
/// between open and read: both mean it vanished, which is normal.
pub(crate) fn vanished(error: &io::Error) -> bool {
    const ESRCH: i32 = 3;
    error.kind() == io::ErrorKind::NotFound || error.raw_os_error() == Some(ESRCH)
}

/// A process's `stat` in the directory `dir`, parsed; `None` when it vanished or its file
/// is not a `stat` line. The walker and the kind cache both read it this way.
pub(crate) fn read_stat(
    dir: &Path,
    buf: &mut Vec<u8>,
) -> Result<Option<crate::parse::Stat>, SnapshotError> {
    Ok(read_optional(&dir.join("stat"), buf)?.and_then(crate::parse::parse_stat))
}
