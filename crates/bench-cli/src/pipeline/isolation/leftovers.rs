//! What a trial uid may leave outside its home: files in the folders every user can write
//! (/tmp, /var/tmp, /dev/shm) and SysV IPC objects. Cleanup removes them once the uid's
//! processes are stopped, and a new trial user never gets a uid that still owns any of
//! them (or a process), so no trial reads an earlier trial's leftovers.

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::collections::BTreeSet;
use std::ffi::CStr;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The folders every user can write outside its home.
pub const SHARED_FOLDERS: [&str; 3] = ["/tmp", "/var/tmp", "/dev/shm"];
/// How deep a walk goes; deeper folders are reported, not followed (file descriptors are
/// finite and a hostile trial can nest folders without end).
const MAX_DEPTH: usize = 64;

/// What removing a uid's leftovers did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Removed {
    /// Files, links and folders removed.
    pub entries: usize,
    /// SysV IPC objects removed.
    pub ipc: usize,
    /// What could not be removed, with why.
    pub left: Vec<String>,
}

/// Walks `root` (same filesystem, no symlink followed) and calls `visit` with every entry's
/// folder descriptor, name, type and owner; folders are visited after their contents.
fn walk(
    root: &Path,
    visit: &mut dyn FnMut(&OwnedFd, &CStr, &Path, FileType, u32),
    left: &mut Vec<String>,
) {
    let Ok(fd) = rustix::fs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return;
    };
    let Ok(stat) = rustix::fs::fstat(&fd) else {
        return;
    };
    walk_dir(&fd, root, stat.st_dev, 0, visit, left);
}

fn walk_dir(
    dir: &OwnedFd,
    path: &Path,
    device: u64,
    depth: usize,
    visit: &mut dyn FnMut(&OwnedFd, &CStr, &Path, FileType, u32),
    left: &mut Vec<String>,
) {
    let names: Vec<std::ffi::CString> = match rustix::fs::Dir::read_from(dir) {
        Ok(mut entries) => {
            let mut names = Vec::new();
            while let Some(Ok(entry)) = entries.read() {
                let name = entry.file_name();
                if name.to_bytes() != b"." && name.to_bytes() != b".." {
                    names.push(name.to_owned());
                }
            }
            names
        }
        Err(error) => {
            left.push(format!("{}: {error}", path.display()));
            return;
        }
    };
    for name in names {
        let Ok(stat) = rustix::fs::statat(dir, &name, AtFlags::SYMLINK_NOFOLLOW) else {
            continue;
        };
        let kind = FileType::from_raw_mode(stat.st_mode);
        let child = path.join(std::ffi::OsStr::from_bytes(name.to_bytes()));
        if kind == FileType::Directory && stat.st_dev == device {
            if depth >= MAX_DEPTH {
                left.push(format!(
                    "{}: deeper than {MAX_DEPTH} folders",
                    child.display()
                ));
            } else if let Ok(sub) = rustix::fs::openat(
                dir,
                &name,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                // The folder opened must be the one looked at (nothing swapped in).
                if rustix::fs::fstat(&sub).is_ok_and(|s| s.st_ino == stat.st_ino) {
                    walk_dir(&sub, &child, device, depth + 1, visit, left);
                }
            }
        }
        if stat.st_dev == device {
            visit(dir, &name, &child, kind, stat.st_uid);
        }
    }
}

/// Removes everything `uid` owns in `folders` (never following symlinks, never leaving
/// the folder's filesystem, only entries whose owner is `uid`; a folder of `uid` that still
/// holds someone else's files is left and reported) and its SysV IPC objects. Call it only
/// once the uid's processes are stopped.
pub fn remove_owned_by(uid: u32, folders: &[&str]) -> Removed {
    let mut removed = Removed::default();
    if uid == 0 {
        removed
            .left
            .push("refusing to remove the files of uid 0".to_owned());
        return removed;
    }
    let mut entries = 0;
    let mut left = Vec::new();
    for folder in folders {
        let mut failures = Vec::new();
        walk(
            Path::new(folder),
            &mut |dir, name, path, kind, owner| {
                if owner != uid {
                    return;
                }
                let flags = if kind == FileType::Directory {
                    AtFlags::REMOVEDIR
                } else {
                    AtFlags::empty()
                };
                match rustix::fs::unlinkat(dir, name, flags) {
                    Ok(()) => entries += 1,
                    Err(Errno::NOENT) => {}
                    Err(errno) => failures.push(format!("{}: {errno}", path.display())),
                }
            },
            &mut left,
        );
        left.extend(failures);
    }
    removed.entries = entries;
    let (ipc, ipc_left) = remove_ipc_of(uid);
    removed.ipc = ipc;
    removed.left = left;
    removed.left.extend(ipc_left);
    removed
}

/// Every uid that owns an entry in `folders`.
pub fn owners_in(folders: &[&str]) -> BTreeSet<u32> {
    let mut owners = BTreeSet::new();
    let mut left = Vec::new();
    for folder in folders {
        walk(
            Path::new(folder),
            &mut |_, _, _, _, owner| {
                owners.insert(owner);
            },
            &mut left,
        );
    }
    owners
}

/// The uids that own the entries directly in `folder` (such as /home).
pub fn top_level_owners(folder: &Path) -> BTreeSet<u32> {
    std::fs::read_dir(folder)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| Some(std::fs::symlink_metadata(entry.path()).ok()?.uid()))
        .collect()
}

/// The real, effective, saved and filesystem uids of every process.
pub fn process_uids() -> BTreeSet<u32> {
    let mut uids = BTreeSet::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        if let Some(line) = status.lines().find(|l| l.starts_with("Uid:")) {
            uids.extend(
                line.split_whitespace()
                    .skip(1)
                    .filter_map(|u| u.parse::<u32>().ok()),
            );
        }
    }
    uids
}

/// One SysV IPC object from /proc/sysvipc.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpcObject {
    /// Which table.
    pub kind: IpcKind,
    /// Its id (for `*ctl(id, IPC_RMID)`).
    pub id: i32,
    /// Owner uid.
    pub uid: u32,
    /// Creator uid.
    pub cuid: u32,
}

/// The three SysV IPC tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpcKind {
    /// Shared memory segments.
    Shm,
    /// Semaphore sets.
    Sem,
    /// Message queues.
    Msg,
}

impl IpcKind {
    const ALL: [IpcKind; 3] = [IpcKind::Shm, IpcKind::Sem, IpcKind::Msg];

    fn file(self) -> &'static str {
        match self {
            IpcKind::Shm => "/proc/sysvipc/shm",
            IpcKind::Sem => "/proc/sysvipc/sem",
            IpcKind::Msg => "/proc/sysvipc/msg",
        }
    }
}

/// Parses a /proc/sysvipc table: the header names the columns (`shmid`/`semid`/`msqid`,
/// `uid`, `cuid`), so the parser does not depend on the kernel's column order.
pub fn parse_sysvipc(kind: IpcKind, text: &str) -> Vec<IpcObject> {
    let mut lines = text.lines();
    let Some(header) = lines.next() else {
        return Vec::new();
    };
    let columns: Vec<&str> = header.split_whitespace().collect();
    let find = |names: &[&str]| columns.iter().position(|c| names.contains(c));
    let (Some(id), Some(uid), Some(cuid)) = (
        find(&["shmid", "semid", "msqid"]),
        find(&["uid"]),
        find(&["cuid"]),
    ) else {
        return Vec::new();
    };
    lines
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            Some(IpcObject {
                kind,
                id: fields.get(id)?.parse().ok()?,
                uid: fields.get(uid)?.parse().ok()?,
                cuid: fields.get(cuid)?.parse().ok()?,
            })
        })
        .collect()
}

/// Every SysV IPC object on the system.
pub fn ipc_objects() -> Vec<IpcObject> {
    IpcKind::ALL
        .iter()
        .flat_map(|&kind| {
            let text = std::fs::read_to_string(kind.file()).unwrap_or_default();
            parse_sysvipc(kind, &text)
        })
        .collect()
}

/// Removes the IPC objects `uid` owns or created, checking the owner again on the object
/// itself (`IPC_STAT`) right before `IPC_RMID`.
fn remove_ipc_of(uid: u32) -> (usize, Vec<String>) {
    let mut removed = 0;
    let mut left = Vec::new();
    for object in ipc_objects() {
        if object.uid != uid && object.cuid != uid {
            continue;
        }
        // SAFETY: the *_ds structs are plain data filled by the kernel; the ids are only
        // used as numbers.
        let outcome = unsafe {
            match object.kind {
                IpcKind::Shm => {
                    let mut ds: libc::shmid_ds = std::mem::zeroed();
                    if libc::shmctl(object.id, libc::IPC_STAT, &mut ds) == 0
                        && (ds.shm_perm.uid == uid || ds.shm_perm.cuid == uid)
                    {
                        libc::shmctl(object.id, libc::IPC_RMID, std::ptr::null_mut())
                    } else {
                        continue;
                    }
                }
                IpcKind::Sem => {
                    let mut ds: libc::semid_ds = std::mem::zeroed();
                    if libc::semctl(object.id, 0, libc::IPC_STAT, &mut ds) == 0
                        && (ds.sem_perm.uid == uid || ds.sem_perm.cuid == uid)
                    {
                        libc::semctl(object.id, 0, libc::IPC_RMID)
                    } else {
                        continue;
                    }
                }
                IpcKind::Msg => {
                    let mut ds: libc::msqid_ds = std::mem::zeroed();
                    if libc::msgctl(object.id, libc::IPC_STAT, &mut ds) == 0
                        && (ds.msg_perm.uid == uid || ds.msg_perm.cuid == uid)
                    {
                        libc::msgctl(object.id, libc::IPC_RMID, std::ptr::null_mut())
                    } else {
                        continue;
                    }
                }
            }
        };
        if outcome == 0 {
            removed += 1;
        } else {
            left.push(format!(
                "SysV {:?} {}: {}",
                object.kind,
                object.id,
                std::io::Error::last_os_error()
            ));
        }
    }
    (removed, left)
}

/// Every uid that may still have something on the machine: in /etc/passwd, running a
/// process, owning an entry in the shared folders or directly in `homes`, or owning a
/// SysV IPC object. A new trial user gets none of them.
pub fn busy_uids(passwd: &[u32], homes: &Path) -> BTreeSet<u32> {
    let mut busy: BTreeSet<u32> = passwd.iter().copied().collect();
    busy.extend(process_uids());
    busy.extend(owners_in(&SHARED_FOLDERS));
    busy.extend(top_level_owners(homes));
    for object in ipc_objects() {
        busy.insert(object.uid);
        busy.insert(object.cuid);
    }
    busy
}

/// The lowest uid in `range` that is not busy, skipping the first `skip` free ones (to get
/// past a uid another process took between the scan and `useradd`).
pub fn free_uid(
    busy: &BTreeSet<u32>,
    range: std::ops::RangeInclusive<u32>,
    skip: usize,
) -> Option<u32> {
    range.filter(|uid| !busy.contains(uid)).nth(skip)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysvipc_tables_are_read_by_their_header() {
        let shm = "       key      shmid perms                  size  cpid  lpid nattch   uid   gid  cuid  cgid      atime      dtime      ctime                   rss                  swap\n\
                   1234 5 600 4096 10 0 0 1001 1001 1002 1002 0 0 0 0 0\n";
        assert_eq!(
            parse_sysvipc(IpcKind::Shm, shm),
            [IpcObject {
                kind: IpcKind::Shm,
                id: 5,
                uid: 1001,
                cuid: 1002
            }]
        );
        let sem = "       key      semid perms      nsems   uid   gid  cuid  cgid      otime      ctime\n\
                   0 7 600 1 1003 1003 1003 1003 0 0\n";
        assert_eq!(parse_sysvipc(IpcKind::Sem, sem)[0].id, 7);
        assert_eq!(parse_sysvipc(IpcKind::Msg, ""), []);
        assert_eq!(parse_sysvipc(IpcKind::Msg, "garbage\n1 2 3\n"), []);
    }

    #[test]
    fn a_free_uid_skips_every_busy_one() {
        let busy: BTreeSet<u32> = [1000, 1001, 1003].into();
        assert_eq!(free_uid(&busy, 1000..=2000, 0), Some(1002));
        assert_eq!(free_uid(&busy, 1000..=2000, 1), Some(1004));
        assert_eq!(free_uid(&busy, 1000..=1001, 0), None);
    }

    #[test]
    fn only_the_uids_entries_are_removed_and_symlinks_are_not_followed() {
        if !rustix::process::geteuid().is_root() {
            eprintln!("skipped: needs root to own files as another uid");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let uid = 4_000_123;
        let theirs = dir.path().join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        std::fs::write(theirs.join("file"), "x").unwrap();
        std::os::unix::fs::symlink("/etc", theirs.join("link")).unwrap();
        std::fs::write(dir.path().join("keep"), "root's").unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("precious"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("rootlink")).unwrap();
        for path in [&theirs, &theirs.join("file")] {
            std::os::unix::fs::chown(path, Some(uid), Some(uid)).unwrap();
        }
        std::os::unix::fs::lchown(theirs.join("link"), Some(uid), Some(uid)).unwrap();
        let folder = dir.path().to_str().unwrap();
        assert!(owners_in(&[folder]).contains(&uid));
        let removed = remove_owned_by(uid, &[folder]);
        assert_eq!(removed.entries, 3, "{removed:?}");
        assert!(!theirs.exists());
        assert!(dir.path().join("keep").exists());
        assert!(outside.path().join("precious").exists());
        assert!(Path::new("/etc/passwd").exists());
    }
}
