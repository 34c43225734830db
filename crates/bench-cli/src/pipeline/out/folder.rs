//! The output folder: whose it is, what clibench may read and change in it, and the lock
//! that keeps two runs out of one folder.
//!
//! clibench runs as root and deletes what its state file lists, so it trusts only what it
//! wrote itself: the folder must belong to the effective user and be closed to others, and
//! every file it reads back (state, marker) is opened without following symlinks and
//! checked with `fstat` on the opened descriptor. A folder is adopted only when it is
//! empty or carries clibench's marker: clibench never deletes, chmods or chowns a path it
//! did not create.

use rustix::fs::{AtFlags, FileType, FlockOperation, Mode, OFlags};
use rustix::io::Errno;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// The marker file: written when clibench creates or adopts a folder; holds the run id
/// of the run whose result the folder holds.
pub(crate) const MARKER: &str = ".clibench-out";
/// The lock file: an exclusive `flock` on it is held for the whole run; it holds the pid.
pub(crate) const LOCK: &str = ".clibench-lock";
/// The largest file clibench reads back from the folder.
const MAX_READ_BYTES: u64 = 16 << 20;

/// The output folder cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum OutError {
    /// The folder or a file in it is not clibench's own (another owner, open to others,
    /// a symlink).
    #[error("refusing to use {path}: {why}")]
    Untrusted {
        /// The path.
        path: PathBuf,
        /// Why it is not trusted.
        why: String,
    },
    /// An existing folder that clibench did not make and that is not empty.
    #[error(
        "refusing to write into {path}: it exists, is not empty ({entries}) and was not made by clibench (no {MARKER}); pass a new or empty folder"
    )]
    NotOurs {
        /// The folder.
        path: PathBuf,
        /// A few of its entries.
        entries: String,
    },
    /// Another clibench holds the folder.
    #[error("{path} is in use by another clibench (pid {pid}); wait for it or pass another --out")]
    Locked {
        /// The folder.
        path: PathBuf,
        /// What the lock file says.
        pid: String,
    },
    /// A system call failed.
    #[error("{path}")]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl OutError {
    pub(crate) fn io(path: &Path, source: impl Into<std::io::Error>) -> OutError {
        OutError::Io {
            path: path.to_path_buf(),
            source: source.into(),
        }
    }

    fn untrusted(path: &Path, why: impl Into<String>) -> OutError {
        OutError::Untrusted {
            path: path.to_path_buf(),
            why: why.into(),
        }
    }

    /// Whether this is the caller's mistake (exit 2) rather than a failure.
    pub fn is_input_error(&self) -> bool {
        !matches!(self, OutError::Io { .. })
    }
}

/// The effective uid: the owner of everything clibench makes.
pub(crate) fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Opens the folder itself (never through a symlink) and checks that it belongs to the
/// effective user and that no other user can write into it.
pub(crate) fn open_trusted(out: &Path) -> Result<OwnedFd, OutError> {
    let fd = rustix::fs::open(
        out,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|errno| match errno {
        Errno::LOOP | Errno::NOTDIR => OutError::untrusted(out, "it is a symlink or not a folder"),
        other => OutError::io(out, other),
    })?;
    let stat = rustix::fs::fstat(&fd).map_err(|e| OutError::io(out, e))?;
    if stat.st_uid != euid() {
        return Err(OutError::untrusted(
            out,
            format!(
                "it belongs to uid {}, not to the user running clibench (uid {})",
                stat.st_uid,
                euid()
            ),
        ));
    }
    if stat.st_mode & 0o002 != 0 {
        return Err(OutError::untrusted(
            out,
            format!(
                "every user can write into it (mode {:o}); use a folder of your own",
                stat.st_mode & 0o7777
            ),
        ));
    }
    Ok(fd)
}

/// Why a folder clibench recorded (a temporary folder in OUT/, the staging folder, a trial
/// user's home) is not one it may remove.
#[derive(Debug, thiserror::Error)]
pub enum NotOwnFolder {
    /// A symlink (never followed) or something other than a folder.
    #[error("it is a symlink or not a folder")]
    NotAFolder,
    /// A folder of another user than the one clibench made it for (or as).
    #[error("it belongs to uid {uid}, not uid {expected}, so clibench did not make it")]
    OtherOwner {
        /// Its owner.
        uid: u32,
        /// The owner it would have if clibench had made it.
        expected: u32,
    },
    /// It could not be looked at.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Whether `path` is a folder clibench made for `owner`: a real folder (a symlink is not
/// followed) that belongs to uid `owner` (the effective uid for clibench's own folders, the trial
/// user's uid for its home). `Ok(false)`: it does not exist (already removed).
///
/// The mode is not checked: each of these folders is removed, never written into, and
/// removing needs only the owner to be right.
pub(crate) fn is_own_folder(path: &Path, owner: u32) -> Result<bool, NotOwnFolder> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(error) => return Err(error.into()),
    };
    if meta.file_type().is_symlink() || !meta.is_dir() {
        return Err(NotOwnFolder::NotAFolder);
    }
    let uid = std::os::unix::fs::MetadataExt::uid(&meta);
    if uid != owner {
        return Err(NotOwnFolder::OtherOwner {
            uid,
            expected: owner,
        });
    }
    Ok(true)
}

/// Reads `name` in `out` when clibench wrote it: a plain file of the effective user that
/// neither group nor others can write, in a trusted folder. `None` when it does not exist.
pub(crate) fn read_trusted(out: &Path, name: &str) -> Result<Option<Vec<u8>>, OutError> {
    let dir = open_trusted(out)?;
    let path = out.join(name);
    // NONBLOCK: a FIFO planted here must not hang clibench; it is refused below.
    let fd = match rustix::fs::openat(
        &dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(None),
        Err(Errno::LOOP) => return Err(OutError::untrusted(&path, "it is a symlink")),
        Err(errno) => return Err(OutError::io(&path, errno)),
    };
    let stat = rustix::fs::fstat(&fd).map_err(|e| OutError::io(&path, e))?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(OutError::untrusted(&path, "it is not a plain file"));
    }
    if stat.st_uid != euid() {
        return Err(OutError::untrusted(
            &path,
            format!(
                "clibench did not write it: it belongs to uid {}, not {}",
                stat.st_uid,
                euid()
            ),
        ));
    }
    if stat.st_mode & 0o022 != 0 {
        return Err(OutError::untrusted(
            &path,
            format!(
                "other users can write it (mode {:o})",
                stat.st_mode & 0o7777
            ),
        ));
    }
    if stat.st_size as u64 > MAX_READ_BYTES {
        return Err(OutError::untrusted(&path, "it is larger than 16 MiB"));
    }
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .take(MAX_READ_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| OutError::io(&path, e))?;
    Ok(Some(bytes))
}

/// Writes `name` in the trusted folder `out` atomically, readable only by the effective
/// user (0600): a fresh temporary file with an unguessable name, created exclusively
/// without following links, then a rename (see [`bench_core::io::write_atomic_at`]).
pub(crate) fn write_private(out: &Path, name: &str, bytes: &[u8]) -> Result<(), OutError> {
    let dir = open_trusted(out)?;
    bench_core::io::write_atomic_at(&dir, std::ffi::OsStr::new(name), bytes, 0o600)
        .map_err(|error| OutError::io(&out.join(name), error))
}

/// Removes `name` from the trusted folder `out` (not an error when it is gone).
pub(crate) fn remove_file(out: &Path, name: &str) -> Result<(), OutError> {
    let dir = open_trusted(out)?;
    match rustix::fs::unlinkat(&dir, name, AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => Ok(()),
        Err(errno) => Err(OutError::io(&out.join(name), errno)),
    }
}

/// Makes `out` ready for a run or a phase: a missing folder is created (mode 0700, the
/// caller's alone) with clibench's marker; an existing one is accepted only when it is
/// clibench's own (the marker) or empty, and is then never chmodded. Anything else is
/// refused, and nothing in it is touched.
pub(crate) fn create(out: &Path) -> Result<(), OutError> {
    match std::fs::symlink_metadata(out) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(|e| OutError::io(parent, e))?;
            }
            match rustix::fs::mkdir(out, Mode::from_raw_mode(0o700)) {
                Ok(()) => {}
                // Made meanwhile by someone else: judged like any existing folder below.
                Err(Errno::EXIST) => return create(out),
                Err(errno) => return Err(OutError::io(out, errno)),
            }
            write_private(out, MARKER, b"")
        }
        Err(error) => Err(OutError::io(out, error)),
        Ok(_) => {
            open_trusted(out)?;
            if read_trusted(out, MARKER)?.is_some() {
                return Ok(());
            }
            let entries: Vec<String> = std::fs::read_dir(out)
                .map_err(|e| OutError::io(out, e))?
                .filter_map(|entry| entry.ok())
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect();
            if !entries.is_empty() {
                let mut shown: Vec<String> = entries.iter().take(3).cloned().collect();
                if entries.len() > 3 {
                    shown.push(format!("and {} more", entries.len() - 3));
                }
                return Err(OutError::NotOurs {
                    path: out.to_path_buf(),
                    entries: shown.join(", "),
                });
            }
            write_private(out, MARKER, b"")
        }
    }
}

/// Whether `out` carries clibench's marker (so clibench made it or adopted it empty).
#[cfg(test)]
fn is_ours(out: &Path) -> bool {
    matches!(read_trusted(out, MARKER), Ok(Some(_)))
}

/// How many results of earlier runs a folder keeps (`result.previous-*.json`): the newest,
/// so that iterating on a spec into one folder does not pile them up without end.
pub(crate) const KEEP_PREVIOUS_RESULTS: usize = 5;

/// Starts a new result for run `run_id`: a `result.json` left by another run is renamed to
/// `result.previous-<its run id>.json`, so that the new run never merges the old one's
/// trials, and only the [`KEEP_PREVIOUS_RESULTS`] newest such files are kept. Returns the
/// new name of the old result, if there was one.
pub(crate) fn set_aside_result(out: &Path, run_id: &str) -> Result<Option<PathBuf>, OutError> {
    let dir = open_trusted(out)?;
    let previous = read_trusted(out, MARKER)?
        .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_owned())
        .unwrap_or_default();
    let mut moved = None;
    let exists = rustix::fs::statat(&dir, "result.json", AtFlags::SYMLINK_NOFOLLOW).is_ok();
    if exists && previous != run_id {
        let label = if is_run_id(&previous) {
            previous
        } else {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or_default();
            format!("unknown-{now}")
        };
        let name = format!("result.previous-{label}.json");
        rustix::fs::renameat(&dir, "result.json", &dir, name.as_str())
            .map_err(|e| OutError::io(&out.join("result.json"), e))?;
        moved = Some(out.join(name));
        prune_previous_results(&dir, out)?;
    }
    write_private(out, MARKER, format!("{run_id}\n").as_bytes())?;
    Ok(moved)
}

/// Removes all but the [`KEEP_PREVIOUS_RESULTS`] newest (by modification time) regular
/// files named `result.previous-*.json` in the folder open as `dir`.
fn prune_previous_results(dir: &OwnedFd, out: &Path) -> Result<(), OutError> {
    let entries = rustix::fs::Dir::read_from(dir).map_err(|e| OutError::io(out, e))?;
    let mut previous = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| OutError::io(out, e))?;
        let Ok(name) = entry.file_name().to_str() else {
            continue;
        };
        if !(name.starts_with("result.previous-") && name.ends_with(".json")) {
            continue;
        }
        // Without following a link: only our own regular files are counted and removed.
        let Ok(stat) = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) else {
            continue;
        };
        if FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile {
            previous.push(((stat.st_mtime, stat.st_mtime_nsec), name.to_owned()));
        }
    }
    previous.sort_unstable_by(|a, b| b.cmp(a));
    for (_, name) in previous.into_iter().skip(KEEP_PREVIOUS_RESULTS) {
        match rustix::fs::unlinkat(dir, name.as_str(), AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(errno) => return Err(OutError::io(&out.join(&name), errno)),
        }
    }
    Ok(())
}

fn is_run_id(text: &str) -> bool {
    !text.is_empty() && text.len() <= 16 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// An exclusive lock on an output folder, held until dropped.
#[derive(Debug)]
pub struct OutLock {
    /// The locked file; `None` when the lock belongs to this process's `clibench run`
    /// (its parent, or itself for phases run in process).
    #[allow(dead_code, reason = "held, not read: closing it releases the lock")]
    file: Option<std::fs::File>,
}

/// Takes the exclusive lock on `out` for this process, or fails at once naming the
/// holder. The lock file holds the holder's pid: a `clibench phase` whose parent (or own
/// process, for phases run in process) holds the lock runs under that lock.
pub(crate) fn lock(out: &Path) -> Result<OutLock, OutError> {
    let dir = open_trusted(out)?;
    let path = out.join(LOCK);
    let fd = rustix::fs::openat(
        &dir,
        LOCK,
        OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::from_raw_mode(0o600),
    )
    .map_err(|errno| match errno {
        Errno::LOOP => OutError::untrusted(&path, "it is a symlink"),
        other => OutError::io(&path, other),
    })?;
    let stat = rustix::fs::fstat(&fd).map_err(|e| OutError::io(&path, e))?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile
        || stat.st_uid != euid()
        || stat.st_mode & 0o022 != 0
    {
        return Err(OutError::untrusted(
            &path,
            "it is not a plain file of the user running clibench, closed to others",
        ));
    }
    match rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {}
        Err(Errno::WOULDBLOCK) => {
            let mut holder = String::new();
            let _ = std::fs::File::from(fd).take(64).read_to_string(&mut holder);
            let holder = holder.trim().to_owned();
            let own = std::process::id().to_string();
            let parent = rustix::process::getppid()
                .map(|pid| pid.as_raw_nonzero().to_string())
                .unwrap_or_default();
            if holder == own || holder == parent {
                return Ok(OutLock { file: None });
            }
            return Err(OutError::Locked {
                path: out.to_path_buf(),
                pid: if holder.is_empty() {
                    "unknown".to_owned()
                } else {
                    holder
                },
            });
        }
        Err(errno) => return Err(OutError::io(&path, errno)),
    }
    rustix::fs::ftruncate(&fd, 0).map_err(|e| OutError::io(&path, e))?;
    let mut file = std::fs::File::from(fd);
    std::io::Seek::rewind(&mut file).map_err(|e| OutError::io(&path, e))?;
    writeln!(file, "{}", std::process::id()).map_err(|e| OutError::io(&path, e))?;
    Ok(OutLock { file: Some(file) })
}

/// Opens `out` for one `clibench phase`: created or adopted, and locked (or run under the
/// lock of the `clibench run` that started the phase).
pub(crate) fn open_for_phase(out: &Path) -> Result<OutLock, OutError> {
    create(out)?;
    lock(out)
}

/// Opens an existing `out` for `clibench cleanup`: trusted and locked, never created.
/// `None` when the folder does not exist (nothing to clean up).
pub fn open_for_cleanup(out: &Path) -> Result<Option<OutLock>, OutError> {
    if std::fs::symlink_metadata(out).is_err() {
        return Ok(None);
    }
    lock(out).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn an_own_folder_is_a_real_folder_of_the_effective_user() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("mine");
        std::fs::create_dir(&folder).unwrap();
        assert!(is_own_folder(&folder, euid()).unwrap());
        assert!(!is_own_folder(&dir.path().join("gone"), euid()).unwrap());
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&folder, &link).unwrap();
        assert!(matches!(
            is_own_folder(&link, euid()),
            Err(NotOwnFolder::NotAFolder)
        ));
        let file = dir.path().join("file");
        std::fs::write(&file, "").unwrap();
        assert!(matches!(
            is_own_folder(&file, euid()),
            Err(NotOwnFolder::NotAFolder)
        ));
        // A dangling symlink is still a symlink, not a folder that is gone.
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("gone"), &dangling).unwrap();
        assert!(matches!(
            is_own_folder(&dangling, euid()),
            Err(NotOwnFolder::NotAFolder)
        ));
    }

    #[test]
    fn a_folder_of_another_owner_than_the_expected_one_is_refused() {
        // The expected owner is the caller's to say: our own folder is not the home of a
        // trial user with another uid, which needs no root to check.
        let dir = tempfile::tempdir().unwrap();
        let other = euid().wrapping_add(1);
        let error = is_own_folder(dir.path(), other).unwrap_err();
        assert!(
            matches!(error, NotOwnFolder::OtherOwner { uid, expected } if uid == euid() && expected == other),
            "{error}"
        );
        // A folder of another user: root's /, unless the tests run as root.
        if euid() != 0 {
            assert!(matches!(
                is_own_folder(Path::new("/"), euid()),
                Err(NotOwnFolder::OtherOwner { uid: 0, .. })
            ));
        }
    }

    #[test]
    fn a_folder_of_another_user_is_not_our_own() {
        if euid() != 0 {
            bench_core::skip_test!("chown needs root");
        }
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("theirs");
        std::fs::create_dir(&folder).unwrap();
        rustix::fs::chown(&folder, Some(rustix::fs::Uid::from_raw(65534)), None).unwrap();
        let error = is_own_folder(&folder, 0).unwrap_err();
        assert!(matches!(
            error,
            NotOwnFolder::OtherOwner {
                uid: 65534,
                expected: 0
            }
        ));
        assert_eq!(
            error.to_string(),
            "it belongs to uid 65534, not uid 0, so clibench did not make it"
        );
        // The same folder is the own folder of the user it belongs to (a trial user's home).
        assert!(is_own_folder(&folder, 65534).unwrap());
    }

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_new_folder_is_private_and_marked() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("a/out");
        create(&out).unwrap();
        let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        assert!(is_ours(&out));
        // Created once, adopted again.
        create(&out).unwrap();
    }

    #[test]
    fn an_existing_folder_of_someone_elses_files_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("demo"), "mine").unwrap();
        chmod(dir.path(), 0o700);
        let error = create(dir.path()).unwrap_err();
        assert!(matches!(error, OutError::NotOurs { .. }), "{error}");
        assert!(error.to_string().contains("demo"), "{error}");
        assert_eq!(
            std::fs::metadata(dir.path()).unwrap().permissions().mode() & 0o7777,
            0o700
        );
        assert!(!dir.path().join(MARKER).exists());
    }

    #[test]
    fn an_empty_existing_folder_is_adopted_without_chmod() {
        let dir = tempfile::tempdir().unwrap();
        chmod(dir.path(), 0o750);
        create(dir.path()).unwrap();
        assert_eq!(
            std::fs::metadata(dir.path()).unwrap().permissions().mode() & 0o7777,
            0o750
        );
        assert!(is_ours(dir.path()));
    }

    #[test]
    fn a_world_writable_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        chmod(dir.path(), 0o1777);
        let error = create(dir.path()).unwrap_err();
        assert!(matches!(error, OutError::Untrusted { .. }), "{error}");
        assert_eq!(
            std::fs::metadata(dir.path()).unwrap().permissions().mode() & 0o7777,
            0o1777
        );
    }

    #[test]
    fn files_others_can_write_or_symlinks_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        chmod(dir.path(), 0o700);
        std::fs::write(dir.path().join("open"), "x").unwrap();
        chmod(&dir.path().join("open"), 0o666);
        assert!(matches!(
            read_trusted(dir.path(), "open"),
            Err(OutError::Untrusted { .. })
        ));
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("link")).unwrap();
        assert!(matches!(
            read_trusted(dir.path(), "link"),
            Err(OutError::Untrusted { .. })
        ));
        write_private(dir.path(), "mine", b"ok").unwrap();
        assert_eq!(read_trusted(dir.path(), "mine").unwrap().unwrap(), b"ok");
        assert!(read_trusted(dir.path(), "missing").unwrap().is_none());
    }

    #[test]
    fn private_writes_use_a_new_unguessable_name_and_never_a_planted_one() {
        let dir = tempfile::tempdir().unwrap();
        chmod(dir.path(), 0o700);
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        // The old name, `.NAME.PID.tmp`: it was unlinked first, then made; a planted
        // one must now be left alone, never used or removed.
        let planted = dir
            .path()
            .join(format!(".state.json.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        write_private(dir.path(), "state.json", b"{}").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(
            std::fs::symlink_metadata(&planted)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        let meta = std::fs::symlink_metadata(dir.path().join("state.json")).unwrap();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
            0o600
        );
    }

    #[test]
    fn a_lock_held_by_another_process_is_refused_naming_its_pid() {
        let dir = tempfile::tempdir().unwrap();
        chmod(dir.path(), 0o700);
        let held = lock(dir.path()).unwrap();
        assert!(held.file.is_some());
        // This process's own lock is shared (phases run in process, under the run's lock).
        assert!(lock(dir.path()).unwrap().file.is_none());
        // Another process holding it: a pid that is neither ours nor our parent's.
        std::fs::write(dir.path().join(LOCK), "1\n").unwrap();
        let error = lock(dir.path()).unwrap_err();
        assert!(matches!(error, OutError::Locked { .. }), "{error}");
        assert!(error.to_string().contains("(pid 1)"), "{error}");
        drop(held);
        assert!(lock(dir.path()).unwrap().file.is_some());
    }

    #[test]
    fn a_result_of_another_run_is_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        chmod(dir.path(), 0o700);
        create(dir.path()).unwrap();
        set_aside_result(dir.path(), "aaaaaa").unwrap();
        std::fs::write(dir.path().join("result.json"), "{}").unwrap();
        // The same run keeps its result.
        assert_eq!(set_aside_result(dir.path(), "aaaaaa").unwrap(), None);
        let moved = set_aside_result(dir.path(), "bbbbbb").unwrap().unwrap();
        assert_eq!(moved, dir.path().join("result.previous-aaaaaa.json"));
        assert!(!dir.path().join("result.json").exists());
    }

    #[test]
    fn only_the_newest_previous_results_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        chmod(dir.path(), 0o700);
        create(dir.path()).unwrap();
        let runs: Vec<String> = (0..KEEP_PREVIOUS_RESULTS + 3)
            .map(|n| format!("{:06x}", n + 1))
            .collect();
        for (n, run) in runs.iter().enumerate() {
            set_aside_result(dir.path(), run).unwrap();
            let result = dir.path().join("result.json");
            std::fs::write(&result, "{}").unwrap();
            // Distinct times, oldest first, whatever the file system's clock resolution.
            let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000 + n as u64);
            std::fs::File::options()
                .write(true)
                .open(&result)
                .unwrap()
                .set_modified(when)
                .unwrap();
        }
        set_aside_result(dir.path(), "ffffff").unwrap();
        let mut kept: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .filter(|name| name.starts_with("result.previous-"))
            .collect();
        kept.sort();
        let newest: Vec<String> = runs[runs.len() - KEEP_PREVIOUS_RESULTS..]
            .iter()
            .map(|run| format!("result.previous-{run}.json"))
            .collect();
        assert_eq!(kept, newest);
    }
}
