//! Snapshots of a process family's memory, read from `/proc`.
//!
//! Discovery and sampling are separate: discovery finds the pids a [`Selector`]
//! names (for a tree, through the `children` file of every thread, because
//! runtimes spawn from worker threads), then sampling reads `stat`,
//! `smaps_rollup` and `cmdline` of each, spread over the available cores because
//! `smaps_rollup` is where the kernel spends its time.

use crate::parse::{self, Stat};
use serde::Serialize;
use std::collections::HashSet;
use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Which processes a snapshot (or a stop) covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Selector {
    /// A root pid and all its descendants, found through the `children` file of
    /// every thread. A daemon that double-forks leaves this tree unless the root
    /// is a child subreaper (see [`crate::become_subreaper`]).
    Tree(u32),
    /// Every process whose real uid is this one (kernel threads excluded).
    Uid(u32),
    /// Every process of this session id.
    Session(u32),
    /// Every process of this process group id.
    ProcessGroup(u32),
}

/// The memory of one process at one moment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProcessSample {
    /// Process id.
    pub pid: u32,
    /// Parent process id.
    pub ppid: u32,
    /// Kernel name (`comm`, at most 15 bytes).
    pub name: String,
    /// Command line, arguments joined with spaces; empty if unreadable.
    pub cmdline: String,
    /// Resident set size in bytes: `Rss` of `smaps_rollup`, or the kernel's
    /// counter from `stat` when `smaps_rollup` is not readable.
    pub rss_bytes: u64,
    /// Proportional set size in bytes; `None` when `smaps_rollup` was not readable
    /// (another user's process without privilege): unknown, not zero.
    pub pss_bytes: Option<u64>,
    /// Anonymous part of PSS (Linux 5.7+).
    pub pss_anon_bytes: Option<u64>,
    /// File-backed part of PSS (Linux 5.7+).
    pub pss_file_bytes: Option<u64>,
    /// Shared-memory part of PSS (Linux 5.7+).
    pub pss_shmem_bytes: Option<u64>,
    /// Unique set size in bytes: private clean + private dirty.
    pub uss_bytes: Option<u64>,
    /// Swapped-out bytes.
    pub swap_bytes: Option<u64>,
    /// Proportional share of swapped-out bytes.
    pub swap_pss_bytes: Option<u64>,
    /// User + system CPU time so far, in seconds.
    pub cpu_seconds: f64,
    /// Number of threads.
    pub threads: u32,
}

/// The processes a [`Selector`] named at one moment.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Snapshot {
    /// One entry per live process, zombies and kernel threads left out; for a
    /// tree, the root first, then breadth-first.
    pub processes: Vec<ProcessSample>,
}

impl Snapshot {
    /// Sum of RSS in bytes (shared pages counted once per process that maps them).
    pub fn total_rss_bytes(&self) -> u64 {
        self.processes.iter().map(|p| p.rss_bytes).sum()
    }

    /// Sum of PSS in bytes; `None` if any process's PSS was unreadable.
    pub fn total_pss_bytes(&self) -> Option<u64> {
        self.processes.iter().map(|p| p.pss_bytes).sum()
    }

    /// Sum of USS in bytes; `None` if any process's USS was unreadable.
    pub fn total_uss_bytes(&self) -> Option<u64> {
        self.processes.iter().map(|p| p.uss_bytes).sum()
    }

    /// Sum of swap in bytes; `None` if any process's swap was unreadable.
    pub fn total_swap_bytes(&self) -> Option<u64> {
        self.processes.iter().map(|p| p.swap_bytes).sum()
    }

    /// Sum of CPU seconds of the processes alive now.
    pub fn total_cpu_seconds(&self) -> f64 {
        self.processes.iter().map(|p| p.cpu_seconds).sum()
    }

    /// The same snapshot without the given pids (for example the measuring
    /// process itself).
    pub fn without(mut self, pids: &[u32]) -> Snapshot {
        self.processes.retain(|p| !pids.contains(&p.pid));
        self
    }
}

/// Why a snapshot failed. A process that vanishes mid-walk is not an error.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The root of a [`Selector::Tree`] does not exist.
    #[error("process {pid} does not exist")]
    NoSuchProcess {
        /// The missing root.
        pid: u32,
    },
    /// A `/proc` file could not be read for a reason other than the process
    /// having exited or access being denied.
    #[error("failed to read {}", path.display())]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

/// Takes a snapshot from the live `/proc`.
pub fn snapshot(selector: &Selector) -> Result<Snapshot, SnapshotError> {
    ProcRoot::live().snapshot(selector)
}

/// A `/proc` mount (or a fixture tree shaped like one) to walk.
#[derive(Debug, Clone)]
pub struct ProcRoot {
    path: PathBuf,
    page_size_bytes: u64,
    ticks_per_second: u64,
    threads: usize,
}

impl ProcRoot {
    /// The live `/proc`.
    pub fn live() -> ProcRoot {
        ProcRoot::new("/proc")
    }

    /// A tree shaped like `/proc` at `path`: `PID/stat`, `PID/status`,
    /// `PID/smaps_rollup`, `PID/cmdline`, `PID/task/TID/children`.
    pub fn new(path: impl Into<PathBuf>) -> ProcRoot {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
        ProcRoot {
            path: path.into(),
            page_size_bytes: rustix::param::page_size() as u64,
            ticks_per_second: rustix::param::clock_ticks_per_second().max(1),
            threads,
        }
    }

    /// Limits how many threads sample in parallel (at least 1).
    pub fn with_threads(mut self, threads: usize) -> ProcRoot {
        self.threads = threads.max(1);
        self
    }

    /// Finds the pids a selector names, then samples each.
    pub fn snapshot(&self, selector: &Selector) -> Result<Snapshot, SnapshotError> {
        let pids = self.discover(selector)?;
        self.sample_all(&pids)
    }

    /// The pids a selector names right now, without reading their memory.
    /// May include zombies; sampling leaves them out.
    pub fn discover(&self, selector: &Selector) -> Result<Vec<u32>, SnapshotError> {
        match *selector {
            Selector::Tree(root) => self.descendants_and_self(root),
            Selector::Uid(uid) => self.scan(|dir, buf| {
                Ok(read_optional(&dir.join("status"), buf)?
                    .and_then(parse::parse_status)
                    .is_some_and(|s| s.uid == uid))
            }),
            Selector::Session(sid) => self.scan(|dir, buf| {
                Ok(read_stat(dir, buf)?.is_some_and(|s| s.session == sid && !s.is_kernel_thread()))
            }),
            Selector::ProcessGroup(pgid) => self.scan(|dir, buf| {
                Ok(read_stat(dir, buf)?.is_some_and(|s| s.pgrp == pgid && !s.is_kernel_thread()))
            }),
        }
    }

    /// Samples one process; `Ok(None)` when it vanished, is a zombie or is a
    /// kernel thread.
    pub fn sample(&self, pid: u32) -> Result<Option<ProcessSample>, SnapshotError> {
        self.sample_with(pid, &mut Vec::with_capacity(4096))
    }

    fn sample_all(&self, pids: &[u32]) -> Result<Snapshot, SnapshotError> {
        // Threads pay off only when there is enough kernel work to share.
        let threads = self.threads.min(pids.len() / 8).max(1);
        if threads == 1 {
            let mut buf = Vec::with_capacity(4096);
            let mut processes = Vec::with_capacity(pids.len());
            for &pid in pids {
                processes.extend(self.sample_with(pid, &mut buf)?);
            }
            return Ok(Snapshot { processes });
        }
        let next = AtomicUsize::new(0);
        let mut slots: Vec<Option<ProcessSample>> = vec![None; pids.len()];
        let results: Vec<Result<Vec<(usize, ProcessSample)>, SnapshotError>> =
            std::thread::scope(|scope| {
                let workers: Vec<_> = (0..threads)
                    .map(|_| {
                        scope.spawn(|| {
                            let mut buf = Vec::with_capacity(4096);
                            let mut found = Vec::new();
                            loop {
                                let index = next.fetch_add(1, Ordering::Relaxed);
                                let Some(&pid) = pids.get(index) else {
                                    return Ok(found);
                                };
                                if let Some(sample) = self.sample_with(pid, &mut buf)? {
                                    found.push((index, sample));
                                }
                            }
                        })
                    })
                    .collect();
                workers
                    .into_iter()
                    .map(|worker| match worker.join() {
                        Ok(result) => result,
                        Err(panic) => std::panic::resume_unwind(panic),
                    })
                    .collect()
            });
        for result in results {
            for (index, sample) in result? {
                slots[index] = Some(sample);
            }
        }
        Ok(Snapshot {
            processes: slots.into_iter().flatten().collect(),
        })
    }

    fn sample_with(
        &self,
        pid: u32,
        buf: &mut Vec<u8>,
    ) -> Result<Option<ProcessSample>, SnapshotError> {
        let dir = self.path.join(pid.to_string());
        let Some(stat) = read_stat(&dir, buf)? else {
            return Ok(None);
        };
        if stat.is_zombie() || stat.is_kernel_thread() {
            return Ok(None);
        }
        let rollup = match read_file(&dir.join("smaps_rollup"), buf) {
            Ok(text) => match parse::parse_smaps_rollup(text) {
                Some(rollup) => Some(rollup),
                // No memory map: the process became a zombie after we read stat.
                None => return Ok(None),
            },
            Err(error) if vanished(&error) => return Ok(None),
            Err(error) if error.kind() == io::ErrorKind::PermissionDenied => None,
            Err(source) => {
                return Err(SnapshotError::Read {
                    path: dir.join("smaps_rollup"),
                    source,
                });
            }
        };
        let cmdline = match read_file(&dir.join("cmdline"), buf) {
            Ok(_) => parse::parse_cmdline(buf),
            Err(_) => String::new(),
        };
        let cpu_ticks = stat.utime_ticks + stat.stime_ticks;
        Ok(Some(ProcessSample {
            pid: stat.pid,
            ppid: stat.ppid,
            name: stat.name,
            cmdline,
            rss_bytes: rollup
                .as_ref()
                .map_or(stat.rss_pages * self.page_size_bytes, |r| r.rss_bytes),
            pss_bytes: rollup.as_ref().map(|r| r.pss_bytes),
            pss_anon_bytes: rollup.as_ref().and_then(|r| r.pss_anon_bytes),
            pss_file_bytes: rollup.as_ref().and_then(|r| r.pss_file_bytes),
            pss_shmem_bytes: rollup.as_ref().and_then(|r| r.pss_shmem_bytes),
            uss_bytes: rollup.as_ref().map(|r| r.uss_bytes),
            swap_bytes: rollup.as_ref().map(|r| r.swap_bytes),
            swap_pss_bytes: rollup.as_ref().map(|r| r.swap_pss_bytes),
            cpu_seconds: cpu_ticks as f64 / self.ticks_per_second as f64,
            threads: stat.threads,
        }))
    }

    fn descendants_and_self(&self, root: u32) -> Result<Vec<u32>, SnapshotError> {
        let root_dir = self.path.join(root.to_string());
        if !root_dir.exists() {
            return Err(SnapshotError::NoSuchProcess { pid: root });
        }
        let mut order = vec![root];
        let mut seen: HashSet<u32> = HashSet::from([root]);
        let mut buf = Vec::with_capacity(512);
        let mut next = 0;
        while let Some(&pid) = order.get(next) {
            next += 1;
            let task_dir = self.path.join(pid.to_string()).join("task");
            let tasks = match std::fs::read_dir(&task_dir) {
                Ok(tasks) => tasks,
                Err(error) if vanished(&error) => continue,
                Err(source) => {
                    return Err(SnapshotError::Read {
                        path: task_dir,
                        source,
                    });
                }
            };
            for task in tasks {
                let Ok(task) = task else { continue };
                let Some(text) = read_optional(&task.path().join("children"), &mut buf)? else {
                    continue;
                };
                for child in parse::parse_children(text) {
                    if seen.insert(child) {
                        order.push(child);
                    }
                }
            }
        }
        Ok(order)
    }

    /// Every numeric entry of the proc root for which `keep` says yes.
    fn scan(
        &self,
        mut keep: impl FnMut(&Path, &mut Vec<u8>) -> Result<bool, SnapshotError>,
    ) -> Result<Vec<u32>, SnapshotError> {
        let entries = std::fs::read_dir(&self.path).map_err(|source| SnapshotError::Read {
            path: self.path.clone(),
            source,
        })?;
        let mut buf = Vec::with_capacity(4096);
        let mut pids = Vec::new();
        for entry in entries {
            let Ok(entry) = entry else { continue };
            let Some(pid) = pid_of(&entry.file_name()) else {
                continue;
            };
            if keep(&entry.path(), &mut buf)? {
                pids.push(pid);
            }
        }
        pids.sort_unstable();
        Ok(pids)
    }
}

fn pid_of(name: &OsStr) -> Option<u32> {
    let bytes = name.as_bytes();
    if bytes.is_empty() || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(bytes).ok()?.parse().ok()
}

fn read_stat(dir: &Path, buf: &mut Vec<u8>) -> Result<Option<Stat>, SnapshotError> {
    Ok(read_optional(&dir.join("stat"), buf)?.and_then(parse::parse_stat))
}

/// Reads a file as text; `Ok(None)` when the process is gone or access was denied.
fn read_optional<'b>(path: &Path, buf: &'b mut Vec<u8>) -> Result<Option<&'b str>, SnapshotError> {
    match read_file(path, buf) {
        Ok(_) => Ok(Some(std::str::from_utf8(buf).unwrap_or(""))),
        Err(error) if vanished(&error) || error.kind() == io::ErrorKind::PermissionDenied => {
            Ok(None)
        }
        Err(source) => Err(SnapshotError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Reads a whole file into `buf` (reused across calls to spare allocations)
/// and returns it as text; non-UTF-8 content reads as empty.
fn read_file<'b>(path: &Path, buf: &'b mut Vec<u8>) -> io::Result<&'b str> {
    buf.clear();
    File::open(path)?.read_to_end(buf)?;
    Ok(std::str::from_utf8(buf).unwrap_or(""))
}

/// ENOENT when the `/proc/PID` directory is gone, ESRCH when the process exited
/// between open and read: both mean it vanished, which is normal.
fn vanished(error: &io::Error) -> bool {
    const ESRCH: i32 = 3;
    error.kind() == io::ErrorKind::NotFound || error.raw_os_error() == Some(ESRCH)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// Writes one fake process into a fixture proc root.
    fn process(root: &Path, pid: u32, ppid: u32, state: char, uid: u32, rss_kib: u64) {
        let dir = root.join(pid.to_string());
        fs::create_dir_all(dir.join("task").join(pid.to_string())).unwrap();
        fs::write(
            dir.join("stat"),
            format!(
                "{pid} (p{pid}) {state} {ppid} {pid} 77 0 -1 4194560 0 0 0 0 \
                 100 50 0 0 20 0 2 0 1000 0 {} 0 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
                rss_kib / 4
            ),
        )
        .unwrap();
        fs::write(
            dir.join("status"),
            format!("Name:\tp{pid}\nState:\t{state}\nPPid:\t{ppid}\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\nThreads:\t2\n"),
        )
        .unwrap();
        let rollup = if state == 'Z' {
            String::new()
        } else {
            format!(
                "Rss: {rss_kib} kB\nPss: {} kB\nPss_Anon: {} kB\nPss_File: 0 kB\nPss_Shmem: 0 kB\n\
                 Private_Clean: 0 kB\nPrivate_Dirty: {} kB\nSwap: 0 kB\nSwapPss: 0 kB\n",
                rss_kib / 2,
                rss_kib / 2,
                rss_kib / 4
            )
        };
        fs::write(dir.join("smaps_rollup"), rollup).unwrap();
        fs::write(dir.join("cmdline"), format!("p{pid}\0--flag\0")).unwrap();
        fs::write(dir.join("task").join(pid.to_string()).join("children"), "").unwrap();
    }

    fn children(root: &Path, pid: u32, tid: u32, list: &str) {
        let dir = root
            .join(pid.to_string())
            .join("task")
            .join(tid.to_string());
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("children"), list).unwrap();
    }

    #[test]
    fn tree_follows_children_of_every_thread() {
        let root = tempfile::tempdir().unwrap();
        process(root.path(), 10, 1, 'S', 0, 400);
        process(root.path(), 11, 10, 'S', 0, 400);
        process(root.path(), 12, 10, 'S', 0, 400);
        process(root.path(), 13, 12, 'S', 0, 400);
        process(root.path(), 99, 1, 'S', 0, 400);
        children(root.path(), 10, 10, "11 ");
        // A worker thread of 10 spawned 12; only its own children file says so.
        children(root.path(), 10, 15, "12");
        children(root.path(), 12, 12, "13");
        let snap = ProcRoot::new(root.path())
            .snapshot(&Selector::Tree(10))
            .unwrap();
        let pids: Vec<u32> = snap.processes.iter().map(|p| p.pid).collect();
        assert_eq!(pids, [10, 11, 12, 13]);
        assert_eq!(snap.total_rss_bytes(), 4 * 400 * 1024);
        assert_eq!(snap.total_pss_bytes(), Some(4 * 200 * 1024));
        assert_eq!(snap.total_uss_bytes(), Some(4 * 100 * 1024));
        let first = &snap.processes[0];
        assert_eq!(first.cmdline, "p10 --flag");
        assert_eq!(first.ppid, 1);
        assert_eq!(first.threads, 2);
    }

    #[test]
    fn zombie_is_not_counted() {
        let root = tempfile::tempdir().unwrap();
        process(root.path(), 10, 1, 'S', 0, 400);
        process(root.path(), 11, 10, 'Z', 0, 0);
        children(root.path(), 10, 10, "11");
        let snap = ProcRoot::new(root.path())
            .snapshot(&Selector::Tree(10))
            .unwrap();
        assert_eq!(snap.processes.len(), 1);
        assert_eq!(snap.processes[0].pid, 10);
    }

    #[test]
    fn vanished_process_is_skipped() {
        let root = tempfile::tempdir().unwrap();
        process(root.path(), 10, 1, 'S', 0, 400);
        // 11 is listed as a child, but its /proc directory is already gone.
        children(root.path(), 10, 10, "11");
        let snap = ProcRoot::new(root.path())
            .snapshot(&Selector::Tree(10))
            .unwrap();
        assert_eq!(snap.processes.len(), 1);
    }

    #[test]
    fn missing_root_is_an_error() {
        let root = tempfile::tempdir().unwrap();
        let error = ProcRoot::new(root.path())
            .snapshot(&Selector::Tree(10))
            .unwrap_err();
        assert!(matches!(error, SnapshotError::NoSuchProcess { pid: 10 }));
    }

    #[test]
    fn uid_and_session_select_by_status_and_stat() {
        let root = tempfile::tempdir().unwrap();
        process(root.path(), 10, 1, 'S', 1001, 400);
        process(root.path(), 20, 1, 'S', 1002, 400);
        process(root.path(), 30, 1, 'S', 1001, 400);
        fs::create_dir(root.path().join("self")).unwrap();
        let proc_root = ProcRoot::new(root.path());
        let uid: Vec<u32> = proc_root
            .snapshot(&Selector::Uid(1001))
            .unwrap()
            .processes
            .iter()
            .map(|p| p.pid)
            .collect();
        assert_eq!(uid, [10, 30]);
        // The fixture puts every process in session 77.
        assert_eq!(
            proc_root.discover(&Selector::Session(77)).unwrap(),
            [10, 20, 30]
        );
        assert_eq!(
            proc_root.discover(&Selector::Session(78)).unwrap(),
            Vec::<u32>::new()
        );
        assert_eq!(
            proc_root.discover(&Selector::ProcessGroup(20)).unwrap(),
            [20]
        );
    }

    #[test]
    fn parallel_sampling_keeps_discovery_order() {
        let root = tempfile::tempdir().unwrap();
        process(root.path(), 10, 1, 'S', 0, 400);
        let kids: Vec<String> = (100..160).map(|pid| pid.to_string()).collect();
        for pid in 100..160 {
            process(root.path(), pid, 10, 'S', 0, 8);
        }
        children(root.path(), 10, 10, &kids.join(" "));
        let sequential = ProcRoot::new(root.path())
            .with_threads(1)
            .snapshot(&Selector::Tree(10));
        let parallel = ProcRoot::new(root.path())
            .with_threads(4)
            .snapshot(&Selector::Tree(10));
        let sequential = sequential.unwrap();
        assert_eq!(sequential.processes.len(), 61);
        assert_eq!(sequential, parallel.unwrap());
    }

    #[test]
    fn live_snapshot_of_self_has_memory() {
        let snap = snapshot(&Selector::Tree(std::process::id())).unwrap();
        let me = &snap.processes[0];
        assert_eq!(me.pid, std::process::id());
        assert!(me.rss_bytes > 0);
        assert!(
            me.pss_bytes
                .is_some_and(|pss| pss > 0 && pss <= me.rss_bytes)
        );
        assert!(me.uss_bytes.is_some_and(|uss| uss > 0));
        assert!(me.threads >= 1);
    }
}
