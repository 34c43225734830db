//! Writing files into a home the target owns, as root, without following anything the
//! target planted there: every folder is opened relative to the previous one with
//! `O_NOFOLLOW`, the file itself too, and a file that is not a plain file with a single
//! link is refused. What is created is handed to the user.

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

/// A write into a home was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum HomeWriteError {
    /// The path is absolute or leaves the home.
    #[error("{path}: must be a relative path inside the home without '..'")]
    Outside {
        /// The path as given.
        path: String,
    },
    /// A symlink (or something else) sits where a folder or file was expected.
    #[error("refusing to write {path}: {what} is a symlink or not a plain {kind}")]
    Planted {
        /// The full path.
        path: PathBuf,
        /// The component that was wrong.
        what: PathBuf,
        /// "folder" or "file".
        kind: &'static str,
    },
    /// A system call failed.
    #[error("writing {path}")]
    Io {
        /// The full path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Who should own what is written: `None` keeps clibench's own ids.
pub(crate) type Owner = Option<(u32, u32)>;

fn components(relative: &Path) -> Result<Vec<&std::ffi::OsStr>, HomeWriteError> {
    let mut parts = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(part) => parts.push(part),
            _ => {
                return Err(HomeWriteError::Outside {
                    path: relative.display().to_string(),
                });
            }
        }
    }
    if parts.is_empty() {
        return Err(HomeWriteError::Outside {
            path: relative.display().to_string(),
        });
    }
    Ok(parts)
}

fn chown(fd: &OwnedFd, owner: Owner) -> rustix::io::Result<()> {
    if let Some((uid, gid)) = owner {
        rustix::fs::fchown(
            fd,
            Some(rustix::fs::Uid::from_raw(uid)),
            Some(rustix::fs::Gid::from_raw(gid)),
        )?;
    }
    Ok(())
}

/// Opens `home` itself; a symlinked home is refused.
fn open_home(home: &Path) -> Result<OwnedFd, HomeWriteError> {
    rustix::fs::open(
        home,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|errno| match errno {
        Errno::LOOP | Errno::NOTDIR => HomeWriteError::Planted {
            path: home.to_path_buf(),
            what: home.to_path_buf(),
            kind: "folder",
        },
        other => HomeWriteError::Io {
            path: home.to_path_buf(),
            source: other.into(),
        },
    })
}

/// Opens (creating when missing) the folders of `parts` under `dir`, one at a time.
fn open_folders(
    home: &Path,
    mut dir: OwnedFd,
    parts: &[&std::ffi::OsStr],
    owner: Owner,
    full: &Path,
) -> Result<OwnedFd, HomeWriteError> {
    let mut so_far = home.to_path_buf();
    for part in parts {
        so_far.push(part);
        let io = |errno: Errno| HomeWriteError::Io {
            path: full.to_path_buf(),
            source: errno.into(),
        };
        let created = match rustix::fs::mkdirat(&dir, *part, Mode::from_raw_mode(0o755)) {
            Ok(()) => true,
            Err(Errno::EXIST) => false,
            Err(errno) => return Err(io(errno)),
        };
        let next = rustix::fs::openat(
            &dir,
            *part,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|errno| match errno {
            Errno::LOOP | Errno::NOTDIR => HomeWriteError::Planted {
                path: full.to_path_buf(),
                what: so_far.clone(),
                kind: "folder",
            },
            other => io(other),
        })?;
        if created {
            chown(&next, owner).map_err(io)?;
        }
        dir = next;
    }
    Ok(dir)
}

/// Creates the folder `relative` (and its parents) under `home`, owned by `owner`.
pub(crate) fn create_dir(
    home: &Path,
    relative: &Path,
    owner: Owner,
) -> Result<PathBuf, HomeWriteError> {
    let parts = components(relative)?;
    let full = home.join(relative);
    let root = open_home(home)?;
    open_folders(home, root, &parts, owner, &full)?;
    Ok(full)
}

/// Writes `content` to `relative` under `home` with `mode`, creating the folders on
/// the way, owned by `owner`. An existing plain file is replaced in place; a symlink,
/// a folder, a device or a hard-linked file at any step is refused.
pub(crate) fn write_file(
    home: &Path,
    relative: &Path,
    content: &[u8],
    mode: u32,
    owner: Owner,
) -> Result<PathBuf, HomeWriteError> {
    let parts = components(relative)?;
    let full = home.join(relative);
    let (name, folders) = parts.split_last().ok_or_else(|| HomeWriteError::Outside {
        path: relative.display().to_string(),
    })?;
    let root = open_home(home)?;
    let dir = open_folders(home, root, folders, owner, &full)?;
    let io = |errno: Errno| HomeWriteError::Io {
        path: full.clone(),
        source: errno.into(),
    };
    let planted = || HomeWriteError::Planted {
        path: full.clone(),
        what: full.clone(),
        kind: "file",
    };
    // NONBLOCK: a FIFO planted here must not hang clibench; it is refused below.
    let fd = rustix::fs::openat(
        &dir,
        *name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::from_raw_mode(mode),
    )
    .map_err(|errno| match errno {
        Errno::LOOP | Errno::ISDIR | Errno::NXIO => planted(),
        other => io(other),
    })?;
    let stat = rustix::fs::fstat(&fd).map_err(io)?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile || stat.st_nlink != 1 {
        return Err(planted());
    }
    rustix::fs::ftruncate(&fd, 0).map_err(io)?;
    let mut file = std::fs::File::from(fd);
    std::io::Write::write_all(&mut file, content).map_err(|source| HomeWriteError::Io {
        path: full.clone(),
        source,
    })?;
    let fd = OwnedFd::from(file);
    rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode)).map_err(io)?;
    chown(&fd, owner).map_err(io)?;
    // The folder's entry must still be the file we wrote (nothing swapped it meanwhile).
    let check = rustix::fs::statat(&dir, *name, AtFlags::SYMLINK_NOFOLLOW).map_err(io)?;
    if check.st_ino != stat.st_ino || check.st_dev != stat.st_dev {
        return Err(planted());
    }
    Ok(full)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_replaces_a_plain_file_creating_folders() {
        let home = tempfile::tempdir().unwrap();
        let path = write_file(home.path(), Path::new("a/b/c.json"), b"one", 0o644, None).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
        write_file(home.path(), Path::new("a/b/c.json"), b"2", 0o644, None).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"2");
    }

    #[test]
    fn symlinked_file_is_not_followed() {
        let home = tempfile::tempdir().unwrap();
        let target = home.path().join("target.txt");
        std::fs::write(&target, "precious").unwrap();
        std::os::unix::fs::symlink(&target, home.path().join("settings.json")).unwrap();
        let error =
            write_file(home.path(), Path::new("settings.json"), b"x", 0o644, None).unwrap_err();
        assert!(matches!(error, HomeWriteError::Planted { .. }), "{error}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
    }

    #[test]
    fn symlinked_folder_is_not_followed() {
        let home = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), home.path().join(".config")).unwrap();
        let error =
            write_file(home.path(), Path::new(".config/x.json"), b"x", 0o644, None).unwrap_err();
        assert!(matches!(error, HomeWriteError::Planted { .. }), "{error}");
        assert!(!elsewhere.path().join("x.json").exists());
    }

    #[test]
    fn hard_linked_file_is_refused() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("a"), "precious").unwrap();
        std::fs::hard_link(home.path().join("a"), home.path().join("b")).unwrap();
        assert!(write_file(home.path(), Path::new("b"), b"x", 0o644, None).is_err());
        assert_eq!(
            std::fs::read_to_string(home.path().join("a")).unwrap(),
            "precious"
        );
    }

    #[test]
    fn paths_leaving_the_home_are_refused() {
        let home = tempfile::tempdir().unwrap();
        for path in ["../x", "/etc/x", "a/../../x", ""] {
            assert!(
                matches!(
                    write_file(home.path(), Path::new(path), b"x", 0o644, None),
                    Err(HomeWriteError::Outside { .. })
                ),
                "{path}"
            );
        }
    }
}
