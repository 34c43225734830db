//! What a trial uid may leave outside its home: files in the folders every user can write
//! (the shared folders, see [`shared_folders`]) and SysV IPC objects. Cleanup removes its
//! setuid and setgid files first, then (once the uid's processes are stopped) the rest,
//! and a new trial user never gets a uid that still owns any of them (or a process, or a
//! key), so no trial reads an earlier trial's leftovers.
//!
//! # Shared folders
//! A shared folder is a directory that users other than its owner can write, on a local
//! file system mounted read-write: writable by every user (mode `o+w`, sticky or not), or
//! opened for writing to a named user or group by a POSIX ACL ([`super::acl`]; `0770`
//! with `setfacl -m u:NAME:rwx`). They are found by walking the directories (not
//! the files) of every such mount from its mount point, staying on that mount and not
//! descending into a shared folder found (its whole subtree is walked when files are
//! looked for). Local means not a pseudo file system (proc, sysfs, cgroup, devpts, ...),
//! not a network one (nfs, cifs, ceph, 9p, ...) and not FUSE (a user can mount one that
//! never ends). The walk costs about as much as `find / -xdev -type d` (2 s on a
//! 430,000-entry host), so its result is kept by the uid ledger and renewed at each
//! sweep ([`super::uid_ledger`]); every removal also covers the world-writable mount
//! points at that moment and [`DEFAULT_SHARED_FOLDERS`].

use super::mounts::local_mounts;
use super::setid;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;
use std::collections::BTreeSet;
use std::ffi::CStr;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Shared folders on nearly every Linux machine, covered even before a walk found them.
pub const DEFAULT_SHARED_FOLDERS: [&str; 5] =
    ["/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/dev/mqueue"];
/// How deep a walk goes; deeper folders are reported, not followed (file descriptors are
/// finite and a hostile trial can nest folders without end).
const MAX_DEPTH: usize = 64;

/// What a walk calls for every entry: its folder's descriptor, its name, its path, its
/// type and what `lstat` said of it (owner, mode, inode).
type Visit<'a> = dyn FnMut(&OwnedFd, &CStr, &Path, FileType, &Stat) + 'a;

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
fn walk(root: &Path, visit: &mut Visit<'_>, left: &mut Vec<String>) {
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
    visit: &mut Visit<'_>,
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
            visit(dir, &name, &child, kind, &stat);
        }
    }
}

/// Removes everything `uid` owns in `folders` (never following symlinks, never leaving
/// the folder's filesystem, only entries whose owner is `uid`; a folder of `uid` that still
/// holds someone else's files is left and reported) and its SysV IPC objects; a setuid or
/// setgid file loses those bits before it is unlinked ([`setid`]). Call it only once the
/// uid's processes are stopped.
pub fn remove_owned_by<S: AsRef<str>>(uid: u32, folders: &[S]) -> Removed {
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
            Path::new(folder.as_ref()),
            &mut |dir, name, path, kind, stat| {
                if stat.st_uid != uid {
                    return;
                }
                if setid::is_setid_file_of(stat, uid) {
                    // Not unlinked with its bits: a descriptor held on it would keep them.
                    match setid::strip_at(dir, name, stat, uid) {
                        Ok(()) | Err(Errno::NOENT) => {}
                        Err(errno) => {
                            failures.push(format!("{}: {errno}", path.display()));
                            return;
                        }
                    }
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

/// Removes the setuid and setgid files `uid` owns in `folders`, before its processes are
/// stopped: a local user who runs one becomes the uid again, after the stop and in the
/// next trial with that uid. Each loses those bits first, so that a descriptor a local
/// user holds on it executes as its caller, not as the uid; one whose bits cannot be
/// taken off is left in place, for the removal after the stop to try again. Returns
/// what could not be removed.
pub fn remove_setid_files_of<S: AsRef<str>>(uid: u32, folders: &[S]) -> Vec<String> {
    let mut left = Vec::new();
    if uid == 0 {
        left.push("refusing to remove the files of uid 0".to_owned());
        return left;
    }
    for folder in folders {
        let mut failures = Vec::new();
        walk(
            Path::new(folder.as_ref()),
            &mut |dir, name, path, kind, stat| {
                if stat.st_uid != uid
                    || kind == FileType::Directory
                    || stat.st_mode & setid::SETID == 0
                {
                    return;
                }
                if kind == FileType::RegularFile {
                    match setid::strip_at(dir, name, stat, uid) {
                        Ok(()) => {}
                        // Another file is there now: the walk after the stop sees it.
                        Err(Errno::NOENT) => return,
                        Err(errno) => {
                            failures.push(format!("{}: {errno}", path.display()));
                            return;
                        }
                    }
                }
                match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
                    Ok(()) | Err(Errno::NOENT) => {}
                    Err(errno) => failures.push(format!("{}: {errno}", path.display())),
                }
            },
            &mut left,
        );
        left.extend(failures);
    }
    left
}

/// Whether `path` is a shared folder: a directory (not a link) writable by every user or
/// through an ACL.
fn shared_dir(path: &Path) -> bool {
    rustix::fs::lstat(path).is_ok_and(|stat| {
        FileType::from_raw_mode(stat.st_mode) == FileType::Directory
            && (stat.st_mode & 0o002 != 0 || super::acl::path_opens_writing(path))
    })
}

/// Whether the open folder `fd`, whose mode is `mode`, is shared: writable by every user
/// or through an ACL.
fn is_shared(fd: &OwnedFd, mode: u32) -> bool {
    mode & 0o002 != 0 || super::acl::opens_writing(fd)
}

/// The shared folders cheap to know at any moment: [`DEFAULT_SHARED_FOLDERS`] that exist
/// and every local read-write mount point that is shared (a tmpfs on /run/user/..., a
/// scratch disk).
pub fn quick_shared_folders() -> BTreeSet<String> {
    let mut folders: BTreeSet<String> = DEFAULT_SHARED_FOLDERS
        .iter()
        .filter(|f| shared_dir(Path::new(f)))
        .map(|f| (*f).to_owned())
        .collect();
    folders.extend(
        local_mounts()
            .into_iter()
            .filter(|m| shared_dir(Path::new(&m.point)))
            .map(|m| m.point),
    );
    folders
}

/// Every shared folder (see the module's doc): the directories of every local read-write
/// mount that others can write, found by walking directories only.
pub fn shared_folders() -> BTreeSet<String> {
    let mut found = quick_shared_folders();
    for mount in local_mounts() {
        let Ok(fd) = rustix::fs::open(
            mount.point.as_str(),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        ) else {
            continue;
        };
        let Ok(stat) = rustix::fs::fstat(&fd) else {
            continue;
        };
        if is_shared(&fd, stat.st_mode) {
            found.insert(mount.point.clone());
            continue;
        }
        find_shared(&fd, Path::new(&mount.point), stat.st_dev, 0, &mut found);
    }
    found
}

fn find_shared(
    dir: &OwnedFd,
    path: &Path,
    device: u64,
    depth: usize,
    found: &mut BTreeSet<String>,
) {
    let Ok(mut entries) = rustix::fs::Dir::read_from(dir) else {
        return;
    };
    let mut folders = Vec::new();
    while let Some(Ok(entry)) = entries.read() {
        let name = entry.file_name();
        if name.to_bytes() == b"." || name.to_bytes() == b".." {
            continue;
        }
        // The entry's type from the directory itself: files cost no stat.
        let kind = entry.file_type();
        if kind == FileType::Directory || kind == FileType::Unknown {
            folders.push(name.to_owned());
        }
    }
    for name in folders {
        let Ok(stat) = rustix::fs::statat(dir, &name, AtFlags::SYMLINK_NOFOLLOW) else {
            continue;
        };
        if FileType::from_raw_mode(stat.st_mode) != FileType::Directory || stat.st_dev != device {
            continue;
        }
        let child = path.join(std::ffi::OsStr::from_bytes(name.to_bytes()));
        // Opened before it is judged: its ACL is read through the descriptor, and only
        // the folder opened, not one swapped in since the stat, is judged and walked.
        let Ok(sub) = rustix::fs::openat(
            dir,
            &name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        ) else {
            continue;
        };
        let Ok(opened) = rustix::fs::fstat(&sub) else {
            continue;
        };
        if opened.st_ino != stat.st_ino || opened.st_dev != stat.st_dev {
            continue;
        }
        if is_shared(&sub, opened.st_mode) {
            found.insert(child.to_string_lossy().into_owned());
            continue;
        }
        if depth < MAX_DEPTH {
            find_shared(&sub, &child, device, depth + 1, found);
        }
    }
}

/// Every uid that owns an entry in `folders`.
pub fn owners_in<S: AsRef<str>>(folders: &[S]) -> BTreeSet<u32> {
    let mut owners = BTreeSet::new();
    let mut left = Vec::new();
    for folder in folders {
        walk(
            Path::new(folder.as_ref()),
            &mut |_, _, _, _, stat| {
                owners.insert(stat.st_uid);
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

/// Every uid that may still have something on the machine, found without walking the
/// shared folders: in /etc/passwd, held by a process (any of its four uids), owning an
/// entry directly in `homes`, a SysV IPC object or a key (`/proc/key-users`). What a
/// uid owns in the shared folders comes from the uid ledger's sweep.
pub fn busy_uids_without_files(passwd: &[u32], homes: &Path) -> BTreeSet<u32> {
    let mut busy: BTreeSet<u32> = passwd.iter().copied().collect();
    busy.extend(process_uids());
    busy.extend(top_level_owners(homes));
    for object in ipc_objects() {
        busy.insert(object.uid);
        busy.insert(object.cuid);
    }
    // Unreadable key-users: every uid could own keys, so none is free.
    match bench_proc::key_users() {
        Ok(owners) => busy.extend(owners),
        Err(_) => busy.extend(0..=u32::MAX - 1),
    }
    busy
}

/// Whether anything of `uid` is left outside the shared folders' files: a process, an
/// IPC object, a key. What [`remove_owned_by`] reports covers the files.
pub fn traces_of(uid: u32) -> Vec<String> {
    let mut traces = Vec::new();
    if process_uids().contains(&uid) {
        traces.push(format!("a process of uid {uid}"));
    }
    if ipc_objects().iter().any(|o| o.uid == uid || o.cuid == uid) {
        traces.push(format!("a SysV IPC object of uid {uid}"));
    }
    if bench_proc::key_users().map_or(true, |owners| owners.contains(&uid)) {
        traces.push(format!("keys of uid {uid} (/proc/key-users)"));
    }
    traces
}

#[cfg(test)]
#[path = "leftovers_tests.rs"]
mod tests;
