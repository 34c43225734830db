//! Taking the setuid and setgid bits off a trial uid's files before they are unlinked.
//!
//! Unlinking a setuid file is not enough: a local user who opened it earlier (`O_RDONLY`
//! is all it takes) keeps the inode, and executing `/proc/self/fd/N` later makes them the
//! uid again, possibly when that uid belongs to the next trial. A mode change reaches the
//! inode itself, so every descriptor open on it, held or still to be opened, sees the file
//! without the bits. Two ways to the inode: through the folder that still lists it
//! ([`strip_at`]), and through any process's open descriptor when no folder lists it any
//! more ([`strip_held_files_of`]).
//!
//! A held descriptor may be on a FUSE or network mount, where opening or even a fresh
//! `stat` waits on a daemon any user can run: such files are looked at only through
//! cached attributes (`AT_STATX_DONT_SYNC`) and the mount id in `/proc/PID/fdinfo/N`,
//! never opened, and reported; on a `nosuid` mount the bits do nothing and are left, as
//! on a mount in neither our mount namespace nor the holder's (a memfd's internal mount):
//! the kernel honours the bits only on a mount of the executing process's namespace.

use super::mounts::{Mount, parse_mountinfo};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat, StatxFlags};
use rustix::io::Errno;
use std::collections::BTreeMap;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

/// The mode bits that change who a program runs as.
pub const SETID: u32 = libc::S_ISUID | libc::S_ISGID;

/// How a descriptor is opened only to change its mode: reading (`O_PATH` cannot `fchmod`),
/// never blocking (a FIFO swapped in, or a lease the trial holds on its file), never
/// becoming a controlling terminal, and without touching the access time.
fn open_flags() -> OFlags {
    OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC | OFlags::NOATIME
}

/// Whether `stat` is a regular file of `uid` with a setuid or setgid bit: only a regular
/// file can be executed, so only it can hand out the uid.
pub fn is_setid_file_of(stat: &Stat, uid: u32) -> bool {
    FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile
        && stat.st_uid == uid
        && stat.st_mode & SETID != 0
}

/// Takes the setuid and setgid bits off `name` in `dir`, which was seen as `seen` (a
/// regular file of `uid`): opened without following a link, and changed only when the
/// descriptor's file is still that file and still the uid's.
pub fn strip_at(dir: &OwnedFd, name: &std::ffi::CStr, seen: &Stat, uid: u32) -> Result<(), Errno> {
    let fd = rustix::fs::openat(dir, name, open_flags() | OFlags::NOFOLLOW, Mode::empty())?;
    strip_if_same(&fd, (seen.st_dev, seen.st_ino), uid)
}

/// `fchmod` without the bits, when `fd` is the file `seen` (device, inode) and still a
/// setid file of `uid`. `Err(NOENT)`: it is another file now (nothing of `seen` to change
/// through this name).
fn strip_if_same(fd: &impl AsFd, seen: (u64, u64), uid: u32) -> Result<(), Errno> {
    let now = rustix::fs::fstat(fd)?;
    if (now.st_dev, now.st_ino) != seen || now.st_uid != uid {
        return Err(Errno::NOENT);
    }
    if now.st_mode & SETID == 0 {
        return Ok(());
    }
    rustix::fs::fchmod(fd, Mode::from_raw_mode(now.st_mode & 0o7777 & !SETID))
}

/// Takes the setuid and setgid bits off every file of `uid` that some process holds open,
/// linked in a folder or not (a file the trial unlinked itself), reached through
/// `/proc/PID/fd/N` under `proc_root`. Returns what could not be changed, with why.
pub fn strip_held_files_of(uid: u32, proc_root: &Path) -> Vec<String> {
    let mut left = Vec::new();
    if uid == 0 {
        left.push("refusing to change the files of uid 0".to_owned());
        return left;
    }
    let Ok(processes) = std::fs::read_dir(proc_root) else {
        left.push(format!("{}: cannot be read", proc_root.display()));
        return left;
    };
    let ours = mounts_in(&proc_root.join("self/mountinfo"));
    for process in processes.flatten() {
        let name = process.file_name();
        if !name.as_encoded_bytes().iter().all(u8::is_ascii_digit) {
            continue;
        }
        // A process that ended while we looked is normal: nothing of it to change.
        let Ok(fds) = std::fs::read_dir(process.path().join("fd")) else {
            continue;
        };
        // Read when a descriptor's mount is not one of ours (another mount namespace).
        let mut theirs = None;
        for fd in fds.flatten() {
            let link = fd.path();
            // statx follows the descriptor's magic link to the open file itself, without
            // asking its file system for fresh attributes.
            let Ok(seen) = rustix::fs::statx(
                rustix::fs::CWD,
                &link,
                AtFlags::STATX_DONT_SYNC,
                StatxFlags::TYPE | StatxFlags::MODE | StatxFlags::UID | StatxFlags::INO,
            ) else {
                continue;
            };
            let setid = FileType::from_raw_mode(u32::from(seen.stx_mode)) == FileType::RegularFile
                && seen.stx_uid == uid
                && u32::from(seen.stx_mode) & SETID != 0;
            if !setid {
                continue;
            }
            let mount =
                mount_id(&process.path().join("fdinfo").join(fd.file_name())).and_then(|id| {
                    ours.get(&id).or_else(|| {
                        theirs
                            .get_or_insert_with(|| mounts_in(&process.path().join("mountinfo")))
                            .get(&id)
                    })
                });
            let held = |why: String| {
                format!(
                    "a setuid or setgid file of uid {uid} held open as {}: {why}",
                    link.display()
                )
            };
            match mount {
                // Executing it ignores the bits there.
                Some(mount) if mount.nosuid => continue,
                Some(mount) if mount.is_local() => {}
                Some(mount) => {
                    left.push(held(format!(
                        "not opened, it is on a {} mount",
                        mount.fstype
                    )));
                    continue;
                }
                // A memfd's internal mount: no namespace has it, so no exec honours the bits.
                None => continue,
            }
            let seen_id = (
                rustix::fs::makedev(seen.stx_dev_major, seen.stx_dev_minor),
                seen.stx_ino,
            );
            // Opening the magic link reopens that inode, even one no folder lists.
            let outcome = rustix::fs::open(&link, open_flags(), Mode::empty())
                .and_then(|file| strip_if_same(&file, seen_id, uid));
            match outcome {
                Ok(()) | Err(Errno::NOENT) => {}
                Err(errno) => left.push(held(errno.to_string())),
            }
        }
    }
    left
}

/// The mounts of a `mountinfo` file, by id (empty when it cannot be read).
fn mounts_in(mountinfo: &Path) -> BTreeMap<u64, Mount> {
    let text = std::fs::read_to_string(mountinfo).unwrap_or_default();
    parse_mountinfo(&text)
        .into_iter()
        .map(|mount| (mount.id, mount))
        .collect()
}

/// The `mnt_id` of a `/proc/PID/fdinfo/N` file: the mount the descriptor's file is on.
fn mount_id(fdinfo: &Path) -> Option<u64> {
    parse_mount_id(&std::fs::read_to_string(fdinfo).ok()?)
}

/// The `mnt_id:` line of fdinfo text.
fn parse_mount_id(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| line.strip_prefix("mnt_id:"))
        .and_then(|id| id.trim().parse().ok())
}

/// A file of `uid` with `mode` in `dir`, and a descriptor held on it (as a local user
/// who opened it before cleanup holds one).
#[cfg(test)]
pub(crate) fn held_setid_file(dir: &Path, uid: u32, mode: u32) -> (std::path::PathBuf, OwnedFd) {
    let path = dir.join("setuid-copy");
    std::fs::write(&path, "#!/bin/sh\n").unwrap();
    std::os::unix::fs::chown(&path, Some(uid), Some(uid)).unwrap();
    // After the chown, which clears the bits.
    let mode = <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(mode);
    std::fs::set_permissions(&path, mode).unwrap();
    let held = rustix::fs::open(&path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()).unwrap();
    (path, held)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_file_the_trial_unlinked_loses_its_setuid_bit_through_a_held_descriptor() {
        if !rustix::process::geteuid().is_root() {
            bench_core::skip_test!("needs root to own a file as another uid");
        }
        let uid = 4_200_000 + std::process::id() % 100_000;
        let dir = tempfile::tempdir().unwrap();
        let (path, held) = held_setid_file(dir.path(), uid, 0o6755);
        let fdinfo = format!(
            "/proc/self/fdinfo/{}",
            std::os::fd::AsRawFd::as_raw_fd(&held)
        );
        let mount = mount_id(Path::new(&fdinfo)).unwrap();
        if mounts_in(Path::new("/proc/self/mountinfo"))[&mount].nosuid {
            // There the bits do nothing, and are rightly left.
            bench_core::skip_test!("{} is on a nosuid mount", dir.path().display());
        }
        // No folder lists it any more: only the held descriptor reaches it.
        std::fs::remove_file(&path).unwrap();
        let left = strip_held_files_of(uid, Path::new("/proc"));
        assert!(left.is_empty(), "{left:?}");
        let stat = rustix::fs::fstat(&held).unwrap();
        assert_eq!(stat.st_mode & 0o7777, 0o755);
        // Another uid's setuid file is not touched.
        let (_, other) = held_setid_file(dir.path(), uid + 1, 0o4755);
        strip_held_files_of(uid, Path::new("/proc"));
        assert_eq!(rustix::fs::fstat(&other).unwrap().st_mode & 0o7777, 0o4755);
    }

    #[test]
    fn the_mount_of_a_descriptor_comes_from_its_fdinfo() {
        let text = "pos:\t0\nflags:\t0100000\nmnt_id:\t29\nino:\t1234\n";
        assert_eq!(parse_mount_id(text), Some(29));
        assert_eq!(parse_mount_id("pos:\t0\n"), None);
        let file = std::fs::File::open("/proc/self/mountinfo").unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
        let id = mount_id(Path::new(&format!("/proc/self/fdinfo/{fd}"))).unwrap();
        assert_eq!(
            mounts_in(Path::new("/proc/self/mountinfo"))[&id].fstype,
            "proc"
        );
    }

    #[test]
    fn a_file_swapped_after_it_was_seen_is_not_changed() {
        let dir = tempfile::tempdir().unwrap();
        let uid = rustix::process::geteuid().as_raw();
        std::fs::write(dir.path().join("seen"), "").unwrap();
        std::fs::write(dir.path().join("other"), "").unwrap();
        std::fs::set_permissions(
            dir.path().join("other"),
            std::fs::Permissions::from_mode(0o4755),
        )
        .unwrap();
        let seen = rustix::fs::stat(dir.path().join("seen")).unwrap();
        std::fs::rename(dir.path().join("other"), dir.path().join("seen")).unwrap();
        let folder = rustix::fs::open(
            dir.path(),
            OFlags::RDONLY | OFlags::DIRECTORY,
            Mode::empty(),
        )
        .unwrap();
        assert_eq!(strip_at(&folder, c"seen", &seen, uid), Err(Errno::NOENT));
        assert_eq!(
            std::fs::metadata(dir.path().join("seen"))
                .unwrap()
                .permissions()
                .mode()
                & 0o7777,
            0o4755
        );
    }
}
