//! Snapshots of a process family's memory, read from `/proc`.
//!
//! Discovery and sampling are separate: discovery finds the pids a [`Selector`]
//! names (for a tree, through the `children` file of every thread, because
//! runtimes spawn from worker threads), then sampling reads `stat`,
//! `smaps_rollup` and `cmdline` of each, spread over the available cores because
//! `smaps_rollup` is where the kernel spends its time.

use crate::parse::{self, Stat};
pub use crate::proc_read_linux::{SnapshotError, read_proc_file};
use crate::proc_read_linux::{read_file, read_optional, read_stat, vanished};
use serde::Serialize;
use std::collections::{HashMap, HashSet, VecDeque};
use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, mpsc};
use std::time::Duration;

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
    /// Session id: a daemon that called `setsid` has its own.
    pub session: u32,
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
    /// User + system CPU time so far, in seconds, at nanosecond resolution: its
    /// threads' `schedstat`, its exited threads and its reaped children (see
    /// `cpu_linux`).
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

/// How many `children` files a tree walk reads before it weighs finishing
/// from one pass over every process's `stat` instead (see `ProcRoot::walk_tree`).
const WEIGH_SCAN_AFTER: usize = 16;

/// Decides, from a process's directory (with a scratch buffer) and its `stat`,
/// whether a scan keeps it.
type Keep<'a> = dyn FnMut(&Path, &mut Vec<u8>, &Stat) -> Result<bool, SnapshotError> + 'a;

/// The live `/proc` the free functions read, with the uid cache (they measure). One for
/// all of them, so that a family's CPU
/// read by [`family_cpu_seconds`] before a turn and by [`snapshot_with_cpu`] after it
/// follows each process in one account (see `cpu_linux`).
fn live_root() -> &'static ProcRoot {
    // Samplers and the pipeline call this every few milliseconds; the root's facts
    // (page size, clock ticks, the core count, which reads cgroup files) never change.
    static LIVE: std::sync::OnceLock<ProcRoot> = std::sync::OnceLock::new();
    LIVE.get_or_init(|| ProcRoot::live().with_uid_cache())
}

/// Takes a snapshot from the live `/proc`.
pub fn snapshot(selector: &Selector) -> Result<Snapshot, SnapshotError> {
    live_root().snapshot(selector)
}

/// [`ProcRoot::cpu_seconds`] of the live `/proc`.
pub fn family_cpu_seconds(selector: &Selector, exclude: &[u32]) -> Result<f64, SnapshotError> {
    live_root().cpu_seconds(selector, exclude)
}

/// [`ProcRoot::snapshot_with_cpu`] of the live `/proc`.
pub fn snapshot_with_cpu(
    selector: &Selector,
    exclude: &[u32],
) -> Result<(Snapshot, f64), SnapshotError> {
    live_root().snapshot_with_cpu(selector, exclude)
}

/// [`ProcRoot::mark`] of the live `/proc`.
pub fn family_mark(selector: &Selector) -> Result<ProcessMark, SnapshotError> {
    live_root().mark(selector)
}

/// [`ProcRoot::queued_since`] of the live `/proc`.
pub fn family_queued_since(
    selector: &Selector,
    exclude: &[u32],
    mark: &ProcessMark,
) -> Result<Duration, SnapshotError> {
    live_root().queued_since(selector, exclude, mark)
}

/// The processes a selector named at one moment, each by pid and start time (a pid
/// reused later is another process): what [`ProcRoot::queued_since`] leaves out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessMark {
    before: HashSet<(u32, u64)>,
}

/// What [`ProcRoot::stat_totals`] counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatTotals {
    /// Live processes (zombies and kernel threads left out).
    pub process_count: u32,
    /// Sum of the kernel's RSS counters, in bytes.
    pub rss_bytes: u64,
    /// Processes whose main thread is running or runnable (`R`) or in uninterruptible
    /// sleep (`D`, usually paging in or reading a disk).
    pub busy_count: u32,
}

/// A `/proc` mount (or a fixture tree shaped like one) to walk.
#[derive(Debug, Clone)]
pub struct ProcRoot {
    path: PathBuf,
    page_size_bytes: u64,
    ticks_per_second: u64,
    threads: usize,
    /// Each process's CPU account across reads, by pid and start time (a pid reused by
    /// a new process starts a new account).
    accounts: std::sync::Arc<std::sync::Mutex<CpuAccounts>>,
    /// Whether each process seen by the last uid scan is a kernel thread, by pid and the
    /// inode of its directory; `None` where directories do not name one process for life
    /// (a fixture tree rewritten by a test). See [`ProcRoot::with_kind_cache`].
    kinds: Option<std::sync::Arc<std::sync::Mutex<crate::kinds_linux::Kinds>>>,
    /// Whether uid scans reuse a process's real uid (see [`ProcRoot::with_uid_cache`]).
    reuse_uids: bool,
}

/// The CPU accounts of the processes a [`ProcRoot`] has read.
type CpuAccounts = std::collections::HashMap<(u32, u64), crate::cpu_linux::Account>;

/// How many accounts a [`ProcRoot`] keeps before it drops those of processes gone.
const ACCOUNTS_KEPT: usize = 4096;

impl ProcRoot {
    /// The live `/proc`, with the kind cache ([`ProcRoot::with_kind_cache`]).
    pub fn live() -> ProcRoot {
        ProcRoot::new("/proc").with_kind_cache()
    }

    /// A tree shaped like `/proc` at `path`: `PID/stat`, `PID/status`,
    /// `PID/smaps_rollup`, `PID/cmdline`, `PID/task/TID/children`.
    pub fn new(path: impl Into<PathBuf>) -> ProcRoot {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
        ProcRoot {
            path: path.into(),
            page_size_bytes: rustix::param::page_size() as u64,
            ticks_per_second: rustix::param::clock_ticks_per_second().max(1),
            accounts: Default::default(),
            kinds: None,
            reuse_uids: false,
            threads,
        }
    }

    /// Remembers which processes are kernel threads across uid scans, so that a scan
    /// reads no file of a kernel thread it has seen and no `stat` of a process it has
    /// seen that is not the uid's: only the fact that cannot change while a process
    /// lives is kept (a kernel thread never becomes a user process), keyed by the pid and
    /// its directory's inode number, which the kernel gives anew to a pid reused by a new
    /// process. The uid itself is read from `status` on every scan, as without the cache.
    ///
    /// A session phase scans the trial user's processes three times a turn; on a host
    /// of 105 processes, 60 of them kernel threads, each scan read 150 files.
    pub fn with_kind_cache(mut self) -> ProcRoot {
        self.kinds = Some(Default::default());
        self
    }

    /// The kind cache, and a uid scan reads a process's real uid (`status`, the costly
    /// file) only when it first sees it and when the owner of its `/proc` directory has
    /// changed since: the kernel makes that owner the process's effective uid (root while
    /// it is not dumpable), so an `exec` of a set-uid program, a switch of user followed
    /// by `exec`, or a pid reused (a new inode) reads it again.
    ///
    /// Not seen: a change of the real uid alone, which takes `CAP_SETUID` (a root process
    /// that calls `setreuid` and never `exec`s), or a change within root's non-dumpable
    /// owner. A process of the uid cannot leave the family unseen that way: it stays
    /// counted. For measuring a trial user's family, not for deciding that a uid has no
    /// process left: stopping and leftover checks walk without it.
    pub fn with_uid_cache(mut self) -> ProcRoot {
        self.reuse_uids = true;
        self.with_kind_cache()
    }

    /// Limits how many threads read in parallel (at least 1).
    pub fn with_threads(mut self, threads: usize) -> ProcRoot {
        self.threads = threads.max(1);
        self
    }

    /// Finds the processes a selector names and samples each.
    ///
    /// With more than one thread, discovery runs on the calling thread and
    /// hands each process to sampling workers as soon as it is found, so
    /// reading `smaps_rollup` (the kernel's expensive part) overlaps the walk.
    pub fn snapshot(&self, selector: &Selector) -> Result<Snapshot, SnapshotError> {
        if self.threads == 1 {
            let mut buf = Vec::with_capacity(4096);
            let mut processes = Vec::new();
            let mut failure = None;
            self.walk(selector, &mut |pid, stat| {
                if failure.is_some() {
                    return;
                }
                match self.sample_stat(pid, stat, &mut buf) {
                    Ok(sample) => processes.extend(sample),
                    Err(error) => failure = Some(error),
                }
            })?;
            return match failure {
                Some(error) => Err(error),
                None => Ok(Snapshot { processes }),
            };
        }
        let (send, receive) = mpsc::channel::<(usize, u32, Stat)>();
        let receive = Mutex::new(receive);
        // Takes the next process to sample; `None` once discovery finished and
        // the queue is empty.
        let next = || match receive.lock() {
            Ok(guard) => guard.recv().ok(),
            Err(poisoned) => poisoned.into_inner().recv().ok(),
        };
        let drain = || -> Result<Vec<(usize, ProcessSample)>, SnapshotError> {
            let mut buf = Vec::with_capacity(4096);
            let mut found = Vec::new();
            while let Some((index, pid, stat)) = next() {
                if let Some(sample) = self.sample_stat(pid, stat, &mut buf)? {
                    found.push((index, sample));
                }
            }
            Ok(found)
        };
        let mut parts: Vec<Result<Vec<(usize, ProcessSample)>, SnapshotError>> = Vec::new();
        let walked = std::thread::scope(|scope| {
            let workers: Vec<_> = (1..self.threads).map(|_| scope.spawn(drain)).collect();
            let mut index = 0;
            let walked = self.walk(selector, &mut |pid, stat| {
                // A send fails only if every worker is gone, which happens
                // only after an error that is reported below anyway.
                let _ = send.send((index, pid, stat));
                index += 1;
            });
            drop(send);
            // The calling thread helps with what is left.
            parts.push(drain());
            for worker in workers {
                match worker.join() {
                    Ok(part) => parts.push(part),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            walked
        });
        walked?;
        let mut indexed = Vec::new();
        for part in parts {
            indexed.extend(part?);
        }
        indexed.sort_unstable_by_key(|(index, _)| *index);
        Ok(Snapshot {
            processes: indexed.into_iter().map(|(_, sample)| sample).collect(),
        })
    }

    /// The CPU seconds of the processes a selector names, `exclude` left out, at
    /// nanosecond resolution, without reading their memory: what CPU metrics read at
    /// a moment that must not wait for `smaps_rollup` (a start becoming ready).
    /// Zombies count (their time is in their `stat` until they are reaped).
    pub fn cpu_seconds(&self, selector: &Selector, exclude: &[u32]) -> Result<f64, SnapshotError> {
        let mut buf = Vec::with_capacity(512);
        let mut total_ns = 0u64;
        let mut failure = None;
        self.walk(selector, &mut |pid, stat| {
            if failure.is_some() || exclude.contains(&pid) {
                return;
            }
            let dir = self.path.join(pid.to_string());
            match self.process_cpu_ns(&dir, &stat, &mut buf) {
                Ok(ns) => total_ns = total_ns.saturating_add(ns),
                Err(error) => failure = Some(error),
            }
        })?;
        match failure {
            Some(error) => Err(error),
            None => Ok(total_ns as f64 / 1e9),
        }
    }

    /// The processes a selector names now, to measure what the ones started after it
    /// wait for a CPU ([`ProcRoot::queued_since`]).
    pub fn mark(&self, selector: &Selector) -> Result<ProcessMark, SnapshotError> {
        let mut before = HashSet::new();
        self.walk(selector, &mut |pid, stat| {
            before.insert((pid, stat.start_ticks));
        })?;
        Ok(ProcessMark { before })
    }

    /// How long the main threads of the processes a selector names, started since `mark`
    /// and `exclude` left out, have waited in a run queue for a CPU (`schedstat`'s second
    /// field): the part of a start's wall time it spent runnable but not running, behind
    /// the machine's other work or a partner sharing its CPU. Processes that were there
    /// at the mark (a daemon of an earlier start) are not the start's; processes that
    /// exited took their wait with them, so this is at most the start's whole wait.
    pub fn queued_since(
        &self,
        selector: &Selector,
        exclude: &[u32],
        mark: &ProcessMark,
    ) -> Result<Duration, SnapshotError> {
        let mut buf = Vec::with_capacity(128);
        let mut total_ns = 0u64;
        let mut failure = None;
        self.walk(selector, &mut |pid, stat| {
            if failure.is_some()
                || exclude.contains(&pid)
                || mark.before.contains(&(pid, stat.start_ticks))
            {
                return;
            }
            let dir = self.path.join(pid.to_string());
            match crate::cpu_linux::main_thread_queued_ns(&dir, &mut buf) {
                Ok(ns) => total_ns = total_ns.saturating_add(ns),
                Err(error) => failure = Some(error),
            }
        })?;
        match failure {
            Some(error) => Err(error),
            None => Ok(Duration::from_nanos(total_ns)),
        }
    }

    /// A snapshot of the processes a selector names and their CPU seconds as
    /// [`ProcRoot::cpu_seconds`] counts them (zombies included), `exclude` left out of
    /// both, from one walk on the calling thread: what a session reads after every turn,
    /// where a walk of a uid's processes reads the `status` of every process on the host.
    pub fn snapshot_with_cpu(
        &self,
        selector: &Selector,
        exclude: &[u32],
    ) -> Result<(Snapshot, f64), SnapshotError> {
        let mut buf = Vec::with_capacity(4096);
        let mut processes = Vec::new();
        let mut zombies_ns = 0u64;
        let mut failure = None;
        self.walk(selector, &mut |pid, stat| {
            if failure.is_some() || exclude.contains(&pid) {
                return;
            }
            let read = if stat.is_zombie() {
                let dir = self.path.join(pid.to_string());
                self.process_cpu_ns(&dir, &stat, &mut buf)
                    .map(|ns| zombies_ns = zombies_ns.saturating_add(ns))
            } else {
                self.sample_stat(pid, stat, &mut buf)
                    .map(|sample| processes.extend(sample))
            };
            if let Err(error) = read {
                failure = Some(error);
            }
        })?;
        if let Some(error) = failure {
            return Err(error);
        }
        let snapshot = Snapshot { processes };
        let cpu_seconds = snapshot.total_cpu_seconds() + zombies_ns as f64 / 1e9;
        Ok((snapshot, cpu_seconds))
    }

    /// A process's CPU time, nanoseconds, with its account from earlier reads.
    fn process_cpu_ns(
        &self,
        dir: &Path,
        stat: &Stat,
        buf: &mut Vec<u8>,
    ) -> Result<u64, SnapshotError> {
        let key = (stat.pid, stat.start_ticks);
        // Taken out while the process's files are read, so parallel samplers do not wait
        // on each other; a poisoned lock only means another reader panicked.
        let lock = || {
            self.accounts
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        let mut account = lock().remove(&key).unwrap_or_default();
        let ns = crate::cpu_linux::process_cpu_ns(
            dir,
            stat,
            self.ticks_per_second,
            Some(&mut account),
            buf,
        )?;
        let mut accounts = lock();
        if accounts.len() > ACCOUNTS_KEPT {
            let root = &self.path;
            accounts.retain(|(pid, _), _| root.join(pid.to_string()).exists());
        }
        accounts.insert(key, account);
        Ok(ns)
    }

    /// The pids a selector names right now, without reading their memory.
    /// Includes zombies; sampling leaves them out.
    pub fn discover(&self, selector: &Selector) -> Result<Vec<u32>, SnapshotError> {
        let mut pids = Vec::new();
        self.walk(selector, &mut |pid, _| pids.push(pid))?;
        Ok(pids)
    }

    /// The number of live processes a selector names, the sum of their RSS as the
    /// kernel counts it in `stat` (no `smaps_rollup` read) and how many are running or
    /// in uninterruptible sleep, `exclude_pids` left out: cheap enough to watch a family
    /// every few milliseconds.
    pub fn stat_totals(
        &self,
        selector: &Selector,
        exclude_pids: &[u32],
    ) -> Result<StatTotals, SnapshotError> {
        let mut totals = StatTotals::default();
        let mut rss_pages = 0u64;
        self.walk(selector, &mut |pid, stat| {
            if stat.is_zombie() || stat.is_kernel_thread() || exclude_pids.contains(&pid) {
                return;
            }
            totals.process_count = totals.process_count.saturating_add(1);
            if matches!(stat.state, 'R' | 'D') {
                totals.busy_count = totals.busy_count.saturating_add(1);
            }
            rss_pages = rss_pages.saturating_add(stat.rss_pages);
        })?;
        totals.rss_bytes = rss_pages.saturating_mul(self.page_size_bytes);
        Ok(totals)
    }

    /// The parsed `stat` of every process now, zombies included, kernel threads
    /// left out, in pid order. A process that vanishes during the walk is skipped.
    pub fn stats(&self) -> Result<Vec<Stat>, SnapshotError> {
        let mut stats = Vec::new();
        self.scan(&mut |_, stat| stats.push(stat), &mut |_, _, _| Ok(true))?;
        Ok(stats)
    }

    /// Samples one process; `Ok(None)` when it vanished, is a zombie or is a
    /// kernel thread.
    pub fn sample(&self, pid: u32) -> Result<Option<ProcessSample>, SnapshotError> {
        let mut buf = Vec::with_capacity(4096);
        let Some(stat) = read_stat(&self.path.join(pid.to_string()), &mut buf)? else {
            return Ok(None);
        };
        self.sample_stat(pid, stat, &mut buf)
    }

    /// Reads `smaps_rollup` and `cmdline` of a process whose `stat` was read
    /// during discovery.
    fn sample_stat(
        &self,
        pid: u32,
        stat: Stat,
        buf: &mut Vec<u8>,
    ) -> Result<Option<ProcessSample>, SnapshotError> {
        if stat.is_zombie() || stat.is_kernel_thread() {
            return Ok(None);
        }
        let dir = self.path.join(pid.to_string());
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
        let cpu_ns = self.process_cpu_ns(&dir, &stat, buf)?;
        Ok(Some(ProcessSample {
            pid: stat.pid,
            ppid: stat.ppid,
            session: stat.session,
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
            cpu_seconds: cpu_ns as f64 / 1e9,
            threads: stat.threads,
        }))
    }

    /// Calls `found` with the pid and `stat` of every process the selector
    /// names (zombies included, kernel threads excluded), in discovery order.
    fn walk(
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
    fn scan(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tree::{children, process, set_threads};
    use std::fs;
    use std::io::Read;

    #[test]
    fn stats_lists_every_process_with_zombies_and_skips_what_vanished() {
        let root = tempfile::tempdir().unwrap();
        process(root.path(), 10, 1, 'S', 0, 400);
        process(root.path(), 11, 10, 'Z', 0, 0);
        process(root.path(), 12, 1, 'R', 0, 400);
        // 13 vanished between the listing and the read of its stat.
        fs::create_dir(root.path().join("13")).unwrap();
        fs::create_dir(root.path().join("self")).unwrap();
        let stats = ProcRoot::new(root.path()).stats().unwrap();
        let seen: Vec<(u32, char)> = stats.iter().map(|s| (s.pid, s.state)).collect();
        assert_eq!(seen, [(10, 'S'), (11, 'Z'), (12, 'R')]);
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
    fn snapshot_with_cpu_counts_zombies_cpu_but_not_their_memory() {
        let root = tempfile::tempdir().unwrap();
        process(root.path(), 10, 1, 'S', 1001, 400);
        process(root.path(), 11, 10, 'Z', 1001, 0);
        process(root.path(), 12, 1, 'S', 0, 400);
        let proc_root = ProcRoot::new(root.path());
        let selector = Selector::Uid(1001);
        let (snap, cpu) = proc_root.snapshot_with_cpu(&selector, &[]).unwrap();
        let pids: Vec<u32> = snap.processes.iter().map(|p| p.pid).collect();
        assert_eq!(pids, [10]);
        // Each fixture process has 150 ticks of stat CPU and no schedstat: 1.5 s.
        assert!((cpu - 3.0).abs() < 1e-9, "{cpu}");
        let alone = proc_root.cpu_seconds(&selector, &[]).unwrap();
        assert!((cpu - alone).abs() < 1e-9, "{cpu} against {alone}");
        let (snap, cpu) = proc_root.snapshot_with_cpu(&selector, &[10]).unwrap();
        assert!(snap.processes.is_empty());
        assert!((cpu - 1.5).abs() < 1e-9, "{cpu}");
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
    fn stat_totals_count_live_processes_and_their_stat_rss() {
        let root = tempfile::tempdir().unwrap();
        process(root.path(), 10, 1, 'S', 0, 400);
        process(root.path(), 11, 10, 'S', 0, 800);
        process(root.path(), 12, 10, 'Z', 0, 0);
        children(root.path(), 10, 10, "11 12");
        let proc_root = ProcRoot::new(root.path());
        let page = rustix::param::page_size() as u64;
        // The fixture's stat says rss_kib / 4 pages.
        process(root.path(), 13, 10, 'R', 0, 4);
        children(root.path(), 10, 10, "11 12 13");
        assert_eq!(
            proc_root.stat_totals(&Selector::Tree(10), &[]).unwrap(),
            StatTotals {
                process_count: 3,
                rss_bytes: (100 + 200 + 1) * page,
                busy_count: 1,
            }
        );
        assert_eq!(
            proc_root
                .stat_totals(&Selector::Tree(10), &[10, 13])
                .unwrap(),
            StatTotals {
                process_count: 1,
                rss_bytes: 200 * page,
                busy_count: 0,
            }
        );
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
    fn large_tree_of_threaded_processes_finishes_from_the_ppid_scan() {
        let root = tempfile::tempdir().unwrap();
        process(root.path(), 10, 1, 'S', 0, 400);
        process(root.path(), 5, 1, 'S', 0, 400); // not in the tree
        let kids: Vec<String> = (100..200).map(|pid| pid.to_string()).collect();
        children(root.path(), 10, 10, &kids.join(" "));
        for pid in 100..200 {
            process(root.path(), pid, 10, 'S', 0, 8);
            set_threads(root.path(), pid, 8);
            let grandchild = pid + 1000;
            process(root.path(), grandchild, pid, 'S', 0, 8);
            // Late grandchildren are known only by their ppid: found only if
            // the walk switched to the scan (800 queued threads > 202 processes).
            if pid < 150 {
                children(root.path(), pid, pid, &grandchild.to_string());
            }
        }
        let mut pids = ProcRoot::new(root.path())
            .discover(&Selector::Tree(10))
            .unwrap();
        assert_eq!(pids[0], 10);
        pids.sort_unstable();
        let mut expected: Vec<u32> = std::iter::once(10)
            .chain(100..200)
            .chain(1100..1200)
            .collect();
        expected.sort_unstable();
        assert_eq!(pids, expected);
    }

    #[test]
    fn small_tree_keeps_walking_children_files() {
        let root = tempfile::tempdir().unwrap();
        process(root.path(), 10, 1, 'S', 0, 400);
        let kids: Vec<String> = (100..120).map(|pid| pid.to_string()).collect();
        children(root.path(), 10, 10, &kids.join(" "));
        for pid in 100..120 {
            process(root.path(), pid, 10, 'S', 0, 8);
        }
        // Many unrelated processes: a scan would cost more than the walk.
        for pid in 2000..2400 {
            process(root.path(), pid, 1, 'S', 0, 8);
        }
        // A process that claims 10 as parent but no children file lists it
        // is found only by a scan, so the walk must not have switched.
        process(root.path(), 3000, 10, 'S', 0, 8);
        let pids = ProcRoot::new(root.path())
            .discover(&Selector::Tree(10))
            .unwrap();
        assert_eq!(pids.len(), 21);
        assert!(!pids.contains(&3000));
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
    fn long_files_are_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cmdline");
        let text: String = (0..20_000)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        fs::write(&path, &text).unwrap();
        let mut buf = Vec::new();
        assert_eq!(read_file(&path, &mut buf).unwrap(), text);
        fs::write(&path, "short").unwrap();
        assert_eq!(read_file(&path, &mut buf).unwrap(), "short");
    }

    /// Yields its text a few bytes per read, as `task/TID/children` does a
    /// page at a time.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(out.len()).min(7);
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn short_reads_are_not_the_end_of_the_file() {
        let text = "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 ";
        let mut buf = Vec::new();
        Trickle(text.as_bytes()).read_to_end(&mut buf).unwrap();
        assert_eq!(buf, text.as_bytes());
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
