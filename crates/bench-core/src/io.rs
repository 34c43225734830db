//! Writing files so that a crash or a full disk never leaves a half-written one.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A file could not be written atomically.
#[derive(Debug, thiserror::Error)]
#[error("failed to write {path}: {source}", path = path.display())]
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
