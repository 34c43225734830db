//! The uid scan with the caches of [`ProcRoot::with_kind_cache`](crate::ProcRoot::with_kind_cache)
//! and [`ProcRoot::with_uid_cache`](crate::ProcRoot::with_uid_cache): every process of a
//! uid, reading `stat` only of the uid's processes and of pids not seen before, no file of
//! a kernel thread seen before, and, with the uid cache, no `status` of a process whose
//! `/proc` directory kept its inode and owner.

use crate::parse::{self, Stat};
use crate::proc_read_linux::{SnapshotError, read_optional, read_stat, vanished};
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Whether a process is a kernel thread, by pid, with the inode number of its `/proc`
/// directory when that was learnt.
pub(crate) type Kinds = HashMap<u32, Kind>;

/// What a scan learnt of one process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Kind {
    /// The inode number of `/proc/PID`: a pid reused by a new process gets a new one.
    inode: u64,
    /// Whether it is a kernel thread: true for its whole life.
    kernel_thread: bool,
    /// The owner of `/proc/PID` when its real uid was read: its effective uid, or root
    /// while it is not dumpable.
    owner: u32,
    /// Its real uid, from `status`; `None` when unread or unreadable.
    real_uid: Option<u32>,
}

/// Calls `found` with the pid and `stat` of every process among `pids` whose real uid is
/// `uid` (zombies included, kernel threads excluded), in the order of `pids`, and leaves
/// in `kinds` what this scan learnt of each (pids no longer listed are dropped, so it
/// never holds more than the host's processes).
///
/// With `reuse_uids` a process's real uid is read again only when its directory's owner
/// changed since (see [`ProcRoot::with_uid_cache`](crate::ProcRoot::with_uid_cache)).
pub(crate) fn scan_uid(
    root: &Path,
    pids: &[u32],
    uid: u32,
    kinds: &mut Kinds,
    reuse_uids: bool,
    found: &mut dyn FnMut(u32, Stat),
) -> Result<(), SnapshotError> {
    let mut buf = Vec::with_capacity(4096);
    let mut learnt = Kinds::with_capacity(pids.len());
    for &pid in pids {
        let dir = root.join(pid.to_string());
        // One `statx` of the directory instead of reading a file: a lookup, no text made.
        let (inode, owner) = match std::fs::metadata(&dir) {
            Ok(metadata) => (metadata.ino(), metadata.uid()),
            Err(error) if vanished(&error) => continue,
            Err(source) => return Err(SnapshotError::Read { path: dir, source }),
        };
        let known = kinds.get(&pid).filter(|kind| kind.inode == inode).copied();
        let mut stat = None;
        let kernel_thread = match known {
            Some(kind) => kind.kernel_thread,
            None => {
                let Some(read) = read_stat(&dir, &mut buf)? else {
                    continue;
                };
                let kernel_thread = read.is_kernel_thread();
                stat = Some(read);
                kernel_thread
            }
        };
        let mut kind = Kind {
            inode,
            kernel_thread,
            owner,
            real_uid: None,
        };
        if kernel_thread {
            learnt.insert(pid, kind);
            continue;
        }
        kind.real_uid = match known {
            Some(known) if reuse_uids && known.owner == owner && known.real_uid.is_some() => {
                known.real_uid
            }
            _ => read_optional(&dir.join("status"), &mut buf)?
                .and_then(parse::parse_status)
                .map(|status| status.uid),
        };
        learnt.insert(pid, kind);
        if kind.real_uid != Some(uid) {
            continue;
        }
        let stat = match stat {
            Some(stat) => Some(stat),
            None => read_stat(&dir, &mut buf)?,
        };
        if let Some(stat) = stat {
            found(pid, stat);
        }
    }
    *kinds = learnt;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::test_tree::process;
    use crate::{ProcRoot, Selector};
    use std::fs;

    /// Marks a fixture process as a kernel thread (`PF_KTHREAD` in its `stat` flags).
    fn make_kernel_thread(root: &std::path::Path, pid: u32) {
        let path = root.join(pid.to_string()).join("stat");
        let stat = fs::read_to_string(&path).unwrap();
        fs::write(&path, stat.replace(" 4194560 ", " 2097152 ")).unwrap();
    }

    fn uid_pids(proc_root: &ProcRoot, uid: u32) -> Vec<u32> {
        proc_root.discover(&Selector::Uid(uid)).unwrap()
    }

    #[test]
    fn the_uid_scan_with_the_cache_finds_what_the_plain_scan_finds() {
        let root = tempfile::tempdir().unwrap();
        process(root.path(), 10, 1, 'S', 1001, 400);
        process(root.path(), 11, 10, 'Z', 1001, 0);
        process(root.path(), 12, 1, 'S', 0, 400);
        process(root.path(), 13, 2, 'S', 0, 0);
        make_kernel_thread(root.path(), 13);
        let plain = ProcRoot::new(root.path());
        for cached in [
            ProcRoot::new(root.path()).with_kind_cache(),
            ProcRoot::new(root.path()).with_uid_cache(),
        ] {
            for _ in 0..2 {
                assert_eq!(uid_pids(&cached, 1001), uid_pids(&plain, 1001));
                assert_eq!(uid_pids(&cached, 0), [12]);
            }
        }
        assert_eq!(uid_pids(&plain, 1001), [10, 11]);
    }

    #[test]
    fn a_kernel_thread_seen_once_is_not_read_again_while_its_directory_lives() {
        let root = tempfile::tempdir().unwrap();
        process(root.path(), 13, 2, 'S', 1001, 0);
        make_kernel_thread(root.path(), 13);
        let cached = ProcRoot::new(root.path()).with_kind_cache();
        assert!(uid_pids(&cached, 1001).is_empty());
        // Its `stat` replaced by a folder: a scan that reads it fails, as the scan
        // without the cache does below; the cached scan does not read it.
        fs::remove_file(root.path().join("13/stat")).unwrap();
        fs::create_dir(root.path().join("13/stat")).unwrap();
        assert!(uid_pids(&cached, 1001).is_empty());
        assert!(
            ProcRoot::new(root.path())
                .discover(&Selector::Uid(1001))
                .is_err()
        );
    }

    #[test]
    fn a_pid_reused_by_a_new_process_is_read_again() {
        let root = tempfile::tempdir().unwrap();
        process(root.path(), 13, 2, 'S', 1001, 0);
        make_kernel_thread(root.path(), 13);
        let cached = ProcRoot::new(root.path()).with_kind_cache();
        assert!(uid_pids(&cached, 1001).is_empty());
        // The kernel thread exited and a process of uid 1001 got its pid: a new
        // directory, a new inode.
        fs::rename(root.path().join("13"), root.path().join("old-13")).unwrap();
        process(root.path(), 13, 1, 'S', 1001, 400);
        assert_eq!(uid_pids(&cached, 1001), [13]);
    }

    #[test]
    fn with_the_uid_cache_a_uid_is_read_again_when_the_owner_changes() {
        let root = tempfile::tempdir().unwrap();
        process(root.path(), 10, 1, 'S', 0, 400);
        let cached = ProcRoot::new(root.path()).with_uid_cache();
        assert!(uid_pids(&cached, 1001).is_empty());
        let status = root.path().join("10/status");
        let text = fs::read_to_string(&status).unwrap();
        fs::write(
            &status,
            text.replace("Uid:\t0\t0\t0\t0", "Uid:\t1001\t1001\t1001\t1001"),
        )
        .unwrap();
        // The directory's owner (the effective uid) is the same: the uid is not read.
        assert!(uid_pids(&cached, 1001).is_empty());
        // A spawner that switched to the trial user and ran its program: the kernel
        // gives /proc/PID the new effective uid.
        if !rustix::process::geteuid().is_root() {
            eprintln!("SKIPPED: giving a fixture folder to uid 1001 needs root");
            return;
        }
        std::os::unix::fs::chown(root.path().join("10"), Some(1001), None).unwrap();
        assert_eq!(uid_pids(&cached, 1001), [10]);
    }

    #[test]
    fn without_the_uid_cache_the_uid_is_read_on_every_scan() {
        let root = tempfile::tempdir().unwrap();
        process(root.path(), 10, 1, 'S', 0, 400);
        let cached = ProcRoot::new(root.path()).with_kind_cache();
        assert!(uid_pids(&cached, 1001).is_empty());
        // A root process that switched to the trial user (a spawner before its exec).
        let status = root.path().join("10/status");
        let text = fs::read_to_string(&status).unwrap();
        fs::write(
            &status,
            text.replace("Uid:\t0\t0\t0\t0", "Uid:\t1001\t1001\t1001\t1001"),
        )
        .unwrap();
        assert_eq!(uid_pids(&cached, 1001), [10]);
    }
}
