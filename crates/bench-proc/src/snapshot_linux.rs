//! Snapshots of a process family's memory, read from `/proc`.
//!
//! Discovery and sampling are separate: discovery finds the pids a [`Selector`]
//! names (for a tree, through the `children` file of every thread, because
//! runtimes spawn from worker threads), then sampling reads `stat`,
//! `smaps_rollup` and `cmdline` of each, spread over the available cores because
//! `smaps_rollup` is where the kernel spends its time.
//!
//! This file holds the snapshot types and the sampling; the walk that discovers the
//! pids is in `walk`.

use crate::parse::{self, Stat};
pub use crate::proc_read_linux::{SnapshotError, read_proc_file};
use crate::proc_read_linux::{read_file, read_stat, vanished};
use serde::Serialize;
use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, mpsc};
use std::time::Duration;

mod walk;

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

/// How much of each process's memory a walk reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryRead {
    /// `smaps_rollup`: RSS, PSS, USS and swap. The kernel walks every page table of the
    /// process to answer, which grows with what it maps: a third of what clibench spent
    /// at turn 200 of a pi soak (node, a few hundred MiB).
    Proportional,
    /// RSS only, the kernel's counter in `stat`, which the walk reads anyway: no page
    /// table is walked. PSS, USS and swap are `None`.
    Resident,
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
    read: MemoryRead,
) -> Result<(Snapshot, f64), SnapshotError> {
    live_root().snapshot_with_cpu(selector, exclude, read)
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
    /// `read` says whether each process's `smaps_rollup` is read ([`MemoryRead`]).
    pub fn snapshot_with_cpu(
        &self,
        selector: &Selector,
        exclude: &[u32],
        read: MemoryRead,
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
                self.sample_read(pid, stat, &mut buf, read)
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
        self.sample_read(pid, stat, buf, MemoryRead::Proportional)
    }

    /// [`ProcRoot::sample_stat`], reading `smaps_rollup` only when `read` asks for it.
    fn sample_read(
        &self,
        pid: u32,
        stat: Stat,
        buf: &mut Vec<u8>,
        read: MemoryRead,
    ) -> Result<Option<ProcessSample>, SnapshotError> {
        if stat.is_zombie() || stat.is_kernel_thread() {
            return Ok(None);
        }
        let dir = self.path.join(pid.to_string());
        let rollup = match read {
            MemoryRead::Resident => None,
            MemoryRead::Proportional => match read_file(&dir.join("smaps_rollup"), buf) {
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
            },
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
}

#[cfg(test)]
mod tests;
