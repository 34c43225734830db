//! Writing files so that a crash or a full disk never leaves a half-written one,
//! and reading input files that cannot hang or exhaust memory.

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::OsStr;
use std::fs::{self, File};
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
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
    /// What went wrong; an [`UntrustedFolder`] (inside the I/O error) when clibench
    /// refused the folder or the file already there.
    #[source]
    pub source: std::io::Error,
}

/// Why clibench refuses to write a file where it was asked to.
///
/// It writes only into a folder of the effective user that other users cannot write
/// into, or into a sticky folder every user can write into (like `/tmp`), where it
/// replaces only a file of its own: anywhere else another user could put a file or a
/// link where clibench writes, or take its file away.
#[derive(Debug, thiserror::Error)]
pub enum UntrustedFolder {
    /// The folder belongs to another user.
    #[error(
        "refusing to write into {folder}: it belongs to uid {uid}, not to the user running clibench (uid {euid}); write into a folder of your own",
        folder = folder.display()
    )]
    OtherOwner {
        /// The folder.
        folder: PathBuf,
        /// Its owner.
        uid: u32,
        /// The effective uid of clibench.
        euid: u32,
    },
    /// Every user can write into the folder and it is not sticky.
    #[error(
        "refusing to write into {folder}: every user can write into it (mode {mode:o}) and it is not sticky like /tmp; write into a folder of your own",
        folder = folder.display()
    )]
    OpenToOthers {
        /// The folder.
        folder: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// In a sticky folder every user can write into, the name is taken by another user's
    /// file (or link).
    #[error(
        "refusing to replace {path}: it belongs to uid {uid}, and in {folder}, which every user can write into, clibench replaces only its own files",
        path = path.display(),
        folder = folder.display()
    )]
    OthersFile {
        /// The file.
        path: PathBuf,
        /// The folder.
        folder: PathBuf,
        /// The file's owner.
        uid: u32,
    },
}

impl UntrustedFolder {
    fn into_io(self) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::PermissionDenied, self)
    }
}

/// The folder `path` is in, opened and checked as [`write_atomic`] requires, with the
/// file's name in it.
fn open_folder_of(path: &Path) -> std::io::Result<(OwnedFd, std::ffi::OsString)> {
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("path has no file name"))?;
    let dir = rustix::fs::open(
        folder,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    check_folder(&dir, folder, path, name)?;
    Ok((dir, name.to_owned()))
}

/// Writes `bytes` to `path` atomically: a new temporary file in the same folder is
/// written and fsynced, then renamed over `path`, then the folder is fsynced.
/// Readers see either the old file or the new one, never a mix.
///
/// The folder must be the effective user's and closed to other users, or sticky and
/// open to every user (`/tmp`), where only a file of the effective user is replaced
/// (see [`UntrustedFolder`]). The temporary file has an unguessable name and is created
/// exclusively (`O_EXCL`, `O_NOFOLLOW`) through the folder's descriptor, and the rename
/// replaces whatever is at `path` without following it: a link planted at either name
/// is never written through. The new file's mode is 0666 less the umask, as
/// `File::create` would give.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let fail = |source| WriteError {
        path: path.to_path_buf(),
        source,
    };
    let (dir, name) = open_folder_of(path).map_err(fail)?;
    write_atomic_at(&dir, &name, bytes, 0o666).map_err(fail)
}

/// Checks the opened `folder` (see [`UntrustedFolder`]) and, when it is sticky and open
/// to every user, the file already at `name` in it.
fn check_folder(dir: &OwnedFd, folder: &Path, path: &Path, name: &OsStr) -> std::io::Result<()> {
    let euid = rustix::process::geteuid().as_raw();
    let stat = rustix::fs::fstat(dir)?;
    let mode = stat.st_mode & 0o7777;
    let open_to_all = mode & 0o002 != 0;
    let sticky = mode & 0o1000 != 0;
    if open_to_all && sticky {
        // Another user may own the folder (root owns /tmp) and may have put anything at
        // `name`. A link there is replaced by the rename, never followed, but replacing
        // another user's file is not clibench's to do.
        return match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(existing) if existing.st_uid != euid => Err(UntrustedFolder::OthersFile {
                path: path.to_path_buf(),
                folder: folder.to_path_buf(),
                uid: existing.st_uid,
            }
            .into_io()),
            Ok(_) | Err(Errno::NOENT) => Ok(()),
            Err(errno) => Err(errno.into()),
        };
    }
    if stat.st_uid != euid {
        return Err(UntrustedFolder::OtherOwner {
            folder: folder.to_path_buf(),
            uid: stat.st_uid,
            euid,
        }
        .into_io());
    }
    if open_to_all {
        return Err(UntrustedFolder::OpenToOthers {
            folder: folder.to_path_buf(),
            mode,
        }
        .into_io());
    }
    Ok(())
}

/// A file written as it goes and put in place whole at the end: what [`write_atomic`]
/// does for bytes in memory, for output too large to hold (a long session's journal).
/// The same folder checks and the same exclusive, unguessable temporary name; until
/// [`AtomicFile::commit`] readers see the old file at `path` (or none), and a file
/// dropped without a commit leaves nothing behind.
#[derive(Debug)]
pub struct AtomicFile {
    path: PathBuf,
    dir: OwnedFd,
    name: std::ffi::OsString,
    temporary: String,
    file: Option<File>,
}

impl AtomicFile {
    /// Creates the temporary file beside `path` (mode 0666 less the umask).
    pub fn create(path: &Path) -> Result<AtomicFile, WriteError> {
        let fail = |source| WriteError {
            path: path.to_path_buf(),
            source,
        };
        let (dir, name) = open_folder_of(path).map_err(fail)?;
        let (temporary, fd) = create_temporary(dir.as_fd(), &name, 0o666).map_err(fail)?;
        Ok(AtomicFile {
            path: path.to_path_buf(),
            dir,
            name,
            temporary,
            file: Some(File::from(fd)),
        })
    }

    /// The file being written (write through a `BufWriter` of it for many small writes).
    pub fn file(&self) -> Result<File, WriteError> {
        self.file
            .as_ref()
            .ok_or_else(|| std::io::Error::other("the file was committed"))
            .and_then(File::try_clone)
            .map_err(|source| WriteError {
                path: self.path.clone(),
                source,
            })
    }

    /// Fsyncs the file, renames it over `path` and fsyncs the folder.
    pub fn commit(mut self) -> Result<(), WriteError> {
        let file = self.file.take();
        let committed = (|| -> std::io::Result<()> {
            file.ok_or_else(|| std::io::Error::other("the file was committed"))?
                .sync_all()?;
            rustix::fs::renameat(&self.dir, self.temporary.as_str(), &self.dir, &self.name)?;
            rustix::fs::fsync(&self.dir)?;
            Ok(())
        })();
        committed.map_err(|source| WriteError {
            path: self.path.clone(),
            source,
        })
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // Not committed (or the rename failed): the temporary file goes.
        if self.file.is_some()
            || rustix::fs::statat(
                &self.dir,
                self.temporary.as_str(),
                AtFlags::SYMLINK_NOFOLLOW,
            )
            .is_ok()
        {
            let _ = rustix::fs::unlinkat(&self.dir, self.temporary.as_str(), AtFlags::empty());
        }
    }
}

/// Writes `bytes` as `name` in the folder open as `dir`, atomically: a temporary file
/// with an unguessable name (128 random bits) is created exclusively without following
/// links (`O_CREAT | O_EXCL | O_NOFOLLOW`, `mode` less the umask), written, fsynced and
/// renamed over `name`; then the folder is fsynced. The caller has checked the folder.
pub fn write_atomic_at(
    dir: &impl AsFd,
    name: &OsStr,
    bytes: &[u8],
    mode: u32,
) -> std::io::Result<()> {
    let dir = dir.as_fd();
    let (temporary, fd) = create_temporary(dir, name, mode)?;
    let written = (|| -> std::io::Result<()> {
        let mut file = File::from(fd);
        file.write_all(bytes)?;
        file.sync_all()?;
        rustix::fs::renameat(dir, temporary.as_str(), dir, name)?;
        // The rename is durable only once the folder itself is synced.
        rustix::fs::fsync(dir)?;
        Ok(())
    })();
    if written.is_err() {
        let _ = rustix::fs::unlinkat(dir, temporary.as_str(), AtFlags::empty());
    }
    written
}

/// A new file `.NAME.<32 hex digits>.tmp` in `dir`, created exclusively. The name is
/// cut to stay under the 255 bytes a name may have.
fn create_temporary(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    mode: u32,
) -> std::io::Result<(String, OwnedFd)> {
    let shown = name.to_string_lossy();
    let mut end = shown.len().min(160);
    while !shown.is_char_boundary(end) {
        end -= 1;
    }
    // A name taken means someone guessed 128 random bits or planted it there: try
    // another, a few times, never open what is there.
    let mut last = Errno::EXIST;
    for _ in 0..4 {
        let temporary = format!(".{}.{}.tmp", &shown[..end], random_hex(16)?);
        match rustix::fs::openat(
            dir,
            temporary.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(mode),
        ) {
            Ok(fd) => return Ok((temporary, fd)),
            Err(Errno::EXIST) => last = Errno::EXIST,
            Err(errno) => return Err(errno.into()),
        }
    }
    Err(last.into())
}

/// `bytes` random bytes from the kernel (`getrandom`), as lowercase hex digits: names
/// and tokens nobody else on the machine can guess.
pub fn random_hex(bytes: usize) -> std::io::Result<String> {
    let mut buffer = vec![0u8; bytes];
    let mut filled = 0;
    while filled < buffer.len() {
        match rustix::rand::getrandom(&mut buffer[filled..], rustix::rand::GetRandomFlags::empty())
        {
            Ok(count) => filled += count,
            Err(Errno::INTR) => {}
            Err(errno) => return Err(errno.into()),
        }
    }
    Ok(buffer.iter().map(|byte| format!("{byte:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_atomic_file_appears_whole_at_commit_and_not_at_all_without() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("journal.jsonl");
        let atomic = AtomicFile::create(&path).unwrap();
        let mut file = atomic.file().unwrap();
        file.write_all(b"one\n").unwrap();
        assert!(!path.exists(), "visible before the commit");
        file.write_all(b"two\n").unwrap();
        atomic.commit().unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "one\ntwo\n");
        let names = |dir: &Path| -> Vec<String> {
            fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(names(folder.path()), ["journal.jsonl"]);
        let dropped = AtomicFile::create(&folder.path().join("other.jsonl")).unwrap();
        dropped.file().unwrap().write_all(b"lost").unwrap();
        drop(dropped);
        assert_eq!(names(folder.path()), ["journal.jsonl"]);
    }

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
    fn a_link_planted_at_the_old_predictable_temporary_name_is_not_followed() {
        let folder = tempfile::tempdir().unwrap();
        let victim = folder.path().join("victim");
        fs::write(&victim, "precious").unwrap();
        // The name the old write used: `.NAME.PID.tmp`, opened without O_EXCL.
        let planted = folder
            .path()
            .join(format!(".comment.md.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        write_atomic(&folder.path().join("comment.md"), b"new").unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(fs::read(folder.path().join("comment.md")).unwrap(), b"new");
    }

    #[test]
    fn a_link_planted_at_the_destination_is_replaced_not_followed() {
        let folder = tempfile::tempdir().unwrap();
        let victim = folder.path().join("victim");
        fs::write(&victim, "precious").unwrap();
        let destination = folder.path().join("comment.md");
        std::os::unix::fs::symlink(&victim, &destination).unwrap();
        write_atomic(&destination, b"new").unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        let meta = fs::symlink_metadata(&destination).unwrap();
        assert!(meta.file_type().is_file(), "{meta:?}");
        assert_eq!(fs::read(&destination).unwrap(), b"new");
    }

    #[test]
    fn temporary_names_are_unguessable() {
        let folder = tempfile::tempdir().unwrap();
        let dir = File::open(folder.path()).unwrap();
        let (first, _) = create_temporary(dir.as_fd(), OsStr::new("x"), 0o600).unwrap();
        let (second, _) = create_temporary(dir.as_fd(), OsStr::new("x"), 0o600).unwrap();
        assert_ne!(first, second);
        let random = first
            .strip_prefix(".x.")
            .unwrap()
            .strip_suffix(".tmp")
            .unwrap();
        assert_eq!(random.len(), 32, "{first}");
    }

    #[test]
    fn a_folder_every_user_can_write_into_is_refused_unless_sticky() {
        use std::os::unix::fs::PermissionsExt;
        let folder = tempfile::tempdir().unwrap();
        fs::set_permissions(folder.path(), fs::Permissions::from_mode(0o777)).unwrap();
        let path = folder.path().join("result.json");
        let error = write_atomic(&path, b"{}").unwrap_err();
        let cause = std::error::Error::source(&error).unwrap().to_string();
        assert!(
            cause.contains("every user can write into it (mode 777)"),
            "{cause}"
        );
        assert!(!path.exists());
        // Sticky like /tmp: the temporary file and the rename cannot be subverted there.
        fs::set_permissions(folder.path(), fs::Permissions::from_mode(0o1777)).unwrap();
        write_atomic(&path, b"{}").unwrap();
        write_atomic(&path, b"[]").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"[]");
    }

    #[test]
    fn another_users_folder_and_another_users_file_in_tmp_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        if !rustix::process::geteuid().is_root() {
            eprintln!(
                "SKIPPED another_users_folder_and_another_users_file_in_tmp_are_refused: chown needs root"
            );
            return;
        }
        let folder = tempfile::tempdir().unwrap();
        std::os::unix::fs::chown(folder.path(), Some(65534), Some(65534)).unwrap();
        let path = folder.path().join("result.json");
        let error = write_atomic(&path, b"{}").unwrap_err();
        let cause = std::error::Error::source(&error).unwrap().to_string();
        assert!(
            cause.contains("it belongs to uid 65534, not to the user running clibench (uid 0)"),
            "{cause}"
        );
        // Sticky and open to all: writable, but another user's file is not replaced.
        fs::set_permissions(folder.path(), fs::Permissions::from_mode(0o1777)).unwrap();
        let theirs = folder.path().join("comment.md");
        fs::write(&theirs, "theirs").unwrap();
        std::os::unix::fs::lchown(&theirs, Some(65534), Some(65534)).unwrap();
        let error = write_atomic(&theirs, b"mine").unwrap_err();
        let cause = std::error::Error::source(&error).unwrap().to_string();
        assert!(
            cause.contains("clibench replaces only its own files"),
            "{cause}"
        );
        assert_eq!(fs::read_to_string(&theirs).unwrap(), "theirs");
        write_atomic(&path, b"{}").unwrap();
    }

    #[test]
    fn random_hex_has_two_digits_per_byte() {
        let token = random_hex(16).unwrap();
        assert_eq!(token.len(), 32);
        assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(token, random_hex(16).unwrap());
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
