//! The `/proc` walk behind every snapshot: which pids a [`Selector`] names, found for a
//! tree breadth-first through the `children` file of every thread (or, for a large
//! family, one pass over every process's `stat`), and for a uid, session or process
//! group by a scan of every process; kernel threads left out, vanished processes skipped.

use super::{ProcRoot, Selector};
use crate::parse::{self, Stat};
use crate::proc_read_linux::{SnapshotError, read_optional, read_stat, vanished};
use std::collections::{HashMap, HashSet, VecDeque};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// How many `children` files a tree walk reads before it weighs finishing
/// from one pass over every process's `stat` instead (see `ProcRoot::walk_tree`).
const WEIGH_SCAN_AFTER: usize = 16;

/// Decides, from a process's directory (with a scratch buffer) and its `stat`,
/// whether a scan keeps it.
type Keep<'a> = dyn FnMut(&Path, &mut Vec<u8>, &Stat) -> Result<bool, SnapshotError> + 'a;

impl ProcRoot {
    /// Calls `found` with the pid and `stat` of every process the selector
    /// names (zombies included, kernel threads excluded), in discovery order.
    pub(super) fn walk(
        &self,
        selector: &Selector,
        found: &mut dyn FnMut(u32, Stat),
    ) -> Result<(), SnapshotError> {
        match *selector {
            Selector::Tree(root) => self.walk_tree(root, found),
            Selector::Uid(uid) => match &self.kinds {
                Some(kinds) => {
                    let mut kinds = kinds
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    crate::kinds_linux::scan_uid(
                        &self.path,
                        &self.all_pids()?,
                        uid,
                        &mut kinds,
                        self.reuse_uids,
                        found,
                    )
                }
                None => self.scan(found, &mut |dir, buf, _| {
                    Ok(read_optional(&dir.join("status"), buf)?
                        .and_then(parse::parse_status)
                        .is_some_and(|s| s.uid == uid))
                }),
            },
            Selector::Session(sid) => self.scan(found, &mut |_, _, stat| Ok(stat.session == sid)),
            Selector::ProcessGroup(pgid) => {
                self.scan(found, &mut |_, _, stat| Ok(stat.pgrp == pgid))
            }
        }
    }

    /// Breadth-first from `root` through the `children` file of every thread.
    /// `stat` comes first: it says whether the process has one thread (then
    /// `task/PID/children` is the only file to read, no directory listing).
    ///
    /// Each `children` file costs a path lookup and a read per thread, so a
    /// large family of multi-threaded processes is cheaper to finish from one
    /// pass over every `/proc/*/stat` (whose `ppid` names the parent process,
    /// whichever of its threads forked), which also yields the `stat` sampling
    /// needs. After [`WEIGH_SCAN_AFTER`] `children` reads the walk counts the
    /// processes on the system once, and switches to that pass as soon as the
    /// threads still queued (one `children` file each, about as costly as one
    /// `stat`) outnumber them. A small family on a busy machine keeps walking.
    fn walk_tree(&self, root: u32, found: &mut dyn FnMut(u32, Stat)) -> Result<(), SnapshotError> {
        let mut buf = Vec::with_capacity(4096);
        let root_dir = self.path.join(root.to_string());
        let Some(root_stat) = read_stat(&root_dir, &mut buf)? else {
            return Err(SnapshotError::NoSuchProcess { pid: root });
        };
        let mut queue: VecDeque<(u32, Stat)> = VecDeque::from([(root, root_stat)]);
        let mut seen: HashSet<u32> = HashSet::from([root]);
        let mut kids = Vec::new();
        let mut reads = 0usize;
        // Threads of the queued processes: the children files still to read.
        let mut pending_threads = root_stat_threads(&queue);
        let mut system_processes: Option<usize> = None;
        let mut by_parent: Option<HashMap<u32, Vec<(u32, Stat)>>> = None;
        while let Some((pid, stat)) = queue.pop_front() {
            pending_threads -= stat.threads.max(1) as usize;
            if by_parent.is_none() && reads >= WEIGH_SCAN_AFTER {
                let system = match system_processes {
                    Some(count) => count,
                    None => *system_processes.insert(self.all_pids()?.len()),
                };
                if pending_threads >= system {
                    by_parent = Some(self.processes_by_parent(&seen, &mut buf)?);
                }
            }
            if let Some(by_parent) = by_parent.as_mut() {
                let children = if stat.is_zombie() {
                    Vec::new()
                } else {
                    by_parent.remove(&pid).unwrap_or_default()
                };
                found(pid, stat);
                for (child, child_stat) in children {
                    if seen.insert(child) {
                        pending_threads += child_stat.threads.max(1) as usize;
                        queue.push_back((child, child_stat));
                    }
                }
                continue;
            }
            kids.clear();
            if !stat.is_zombie() {
                reads += self.children_of(pid, stat.threads, &mut buf, &mut kids)?;
            }
            found(pid, stat);
            for &child in &kids {
                if !seen.insert(child) {
                    continue;
                }
                if let Some(child_stat) = read_stat(&self.path.join(child.to_string()), &mut buf)? {
                    pending_threads += child_stat.threads.max(1) as usize;
                    queue.push_back((child, child_stat));
                }
            }
        }
        Ok(())
    }

    /// Every process not in `known`, grouped by parent pid, kernel threads left out.
    fn processes_by_parent(
        &self,
        known: &HashSet<u32>,
        buf: &mut Vec<u8>,
    ) -> Result<HashMap<u32, Vec<(u32, Stat)>>, SnapshotError> {
        let mut by_parent: HashMap<u32, Vec<(u32, Stat)>> = HashMap::new();
        for pid in self.all_pids()? {
            if known.contains(&pid) {
                continue;
            }
            if let Some(stat) = read_stat(&self.path.join(pid.to_string()), buf)?
                && !stat.is_kernel_thread()
            {
                by_parent.entry(stat.ppid).or_default().push((pid, stat));
            }
        }
        Ok(by_parent)
    }

    /// Every numeric entry of the proc root, in pid order.
    fn all_pids(&self) -> Result<Vec<u32>, SnapshotError> {
        let entries = std::fs::read_dir(&self.path).map_err(|source| SnapshotError::Read {
            path: self.path.clone(),
            source,
        })?;
        let mut pids: Vec<u32> = entries
            .filter_map(|entry| pid_of(&entry.ok()?.file_name()))
            .collect();
        pids.sort_unstable();
        Ok(pids)
    }

    /// Appends the children of every thread of `pid` to `kids`; returns how
    /// many `children` files that took.
    fn children_of(
        &self,
        pid: u32,
        threads: u32,
        buf: &mut Vec<u8>,
        kids: &mut Vec<u32>,
    ) -> Result<usize, SnapshotError> {
        let task_dir = self.path.join(pid.to_string()).join("task");
        if threads <= 1 {
            let children = task_dir.join(pid.to_string()).join("children");
            if let Some(text) = read_optional(&children, buf)? {
                kids.extend(parse::parse_children(text));
            }
            return Ok(1);
        }
        let tasks = match std::fs::read_dir(&task_dir) {
            Ok(tasks) => tasks,
            Err(error) if vanished(&error) => return Ok(0),
            Err(source) => {
                return Err(SnapshotError::Read {
                    path: task_dir,
                    source,
                });
            }
        };
        let mut reads = 0;
        for task in tasks {
            let Ok(task) = task else { continue };
            reads += 1;
            if let Some(text) = read_optional(&task.path().join("children"), buf)? {
                kids.extend(parse::parse_children(text));
            }
        }
        Ok(reads)
    }

    /// Every numeric entry of the proc root that is not a kernel thread and
    /// for which `keep` says yes, in pid order.
    pub(super) fn scan(
        &self,
        found: &mut dyn FnMut(u32, Stat),
        keep: &mut Keep<'_>,
    ) -> Result<(), SnapshotError> {
        let mut buf = Vec::with_capacity(4096);
        for pid in self.all_pids()? {
            let dir = self.path.join(pid.to_string());
            let Some(stat) = read_stat(&dir, &mut buf)? else {
                continue;
            };
            if !stat.is_kernel_thread() && keep(&dir, &mut buf, &stat)? {
                found(pid, stat);
            }
        }
        Ok(())
    }
}

fn root_stat_threads(queue: &VecDeque<(u32, Stat)>) -> usize {
    queue
        .iter()
        .map(|(_, stat)| stat.threads.max(1) as usize)
        .sum()
}

fn pid_of(name: &OsStr) -> Option<u32> {
    let bytes = name.as_bytes();
    if bytes.is_empty() || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(bytes).ok()?.parse().ok()
}
