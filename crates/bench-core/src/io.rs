//! Writing files so that a crash or a full disk never leaves a half-written one,
//! and reading input files that cannot hang or exhaust memory.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The largest input file clibench reads (256 MiB): far above any real result
/// file, far below what would exhaust memory.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// Reads a regular file of at most `max_bytes` as UTF-8 text.
///
/// Opens without blocking (a FIFO would otherwise wait for a writer forever),
/// refuses anything that is not a regular file after following links (a link
/// to `/dev/zero` reads forever), refuses a file larger than `max_bytes`, and
/// reads at most `max_bytes + 1` bytes in case it grows while being read.
pub fn read_input_file(path: &Path, max_bytes: u64) -> std::io::Result<String> {
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let metadata = file.metadata()?;
    let file_type = metadata.file_type();
    if !file_type.is_file() {
        let kind = if file_type.is_fifo() {
            "a named pipe"
        } else if file_type.is_char_device() || file_type.is_block_device() {
            "a device"
        } else if file_type.is_socket() {
            "a socket"
        } else if file_type.is_dir() {
            "a folder"
        } else {
            "not a regular file"
        };
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("not a regular file ({kind})"),
        ));
    }
    let too_large = || {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("larger than {} MiB", max_bytes >> 20),
        )
    };
    if metadata.len() > max_bytes {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large());
    }
    String::from_utf8(bytes)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"))
}

/// Whether two paths name the same file (same device and inode), following
/// links. A path that does not exist names no file, so it is never the same.
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (fs::metadata(a), fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// A file could not be written atomically.
#[derive(Debug, thiserror::Error)]
#[error("failed to write {path}", path = path.display())]
pub struct WriteError {
    /// The file that was to be written.
    pub path: PathBuf,
    /// What went wrong.
    #[source]
    pub source: std::io::Error,
}

/// Writes `bytes` to `path` atomically: a temporary file in the same folder is
/// written and fsynced, then renamed over `path`, then the folder is fsynced.
/// Readers see either the old file or the new one, never a mix.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let fail = |source| WriteError {
        path: path.to_path_buf(),
        source,
    };
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| fail(std::io::Error::other("path has no file name")))?;
    let mut temporary = folder.to_path_buf();
    temporary.push(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = (|| {
        let mut file = File::create(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temporary, path)?;
        // The rename is durable only once the folder itself is synced.
        File::open(folder)?.sync_all()
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written.map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_names_the_file_and_chains_the_cause() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("missing/result.json");
        let error = write_atomic(&path, b"{}").unwrap_err();
        // The cause is the source, which printers chain: not also in the message.
        assert_eq!(
            error.to_string(),
            format!("failed to write {}", path.display())
        );
        let source = std::error::Error::source(&error).expect("the I/O error");
        assert!(source.to_string().contains("No such file"), "{source}");
    }

    #[test]
    fn replaces_content_and_leaves_no_temporary_file() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("result.json");
        write_atomic(&path, b"old").unwrap();
        write_atomic(&path, b"new").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        let entries: Vec<_> = fs::read_dir(folder.path()).unwrap().collect();
        assert_eq!(entries.len(), 1);
    }

    #[test]
    fn missing_folder_is_an_error_naming_the_file() {
        let error = write_atomic(Path::new("/nonexistent-folder/x.json"), b"x").unwrap_err();
        assert!(error.to_string().contains("/nonexistent-folder/x.json"));
    }
}

#[cfg(test)]
mod input_tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        let error = read_input_file(&fifo, MAX_INPUT_BYTES).unwrap_err();
        assert_eq!(error.to_string(), "not a regular file (a named pipe)");
    }

    #[test]
    fn a_link_to_a_device_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("zero.json");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let error = read_input_file(&link, MAX_INPUT_BYTES).unwrap_err();
        assert_eq!(error.to_string(), "not a regular file (a device)");
    }

    #[test]
    fn a_file_over_the_cap_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.json");
        fs::write(&path, vec![b' '; 3 << 20]).unwrap();
        let error = read_input_file(&path, 2 << 20).unwrap_err();
        assert_eq!(error.to_string(), "larger than 2 MiB");
        assert_eq!(read_input_file(&path, 3 << 20).unwrap().len(), 3 << 20);
    }

    #[test]
    fn same_file_follows_links_and_ignores_missing_paths() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        fs::write(&a, "{}").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&a, &link).unwrap();
        assert!(same_file(&a, &link));
        assert!(same_file(&a, &dir.path().join(".").join("a.json")));
        assert!(!same_file(&a, &dir.path().join("missing.json")));
    }
}
