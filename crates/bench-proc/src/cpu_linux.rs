//! CPU time of a process at nanosecond resolution, for every CPU metric.
//!
//! `/proc/PID/stat` counts CPU time in clock ticks of 10 ms, too coarse for a
//! start-up that costs 80 ms. The scheduler's own account is in nanoseconds, per
//! thread: `/proc/PID/task/TID/schedstat` (`/proc/PID/schedstat` covers the main
//! thread only, so every thread's file is read and summed).
//!
//! # What a process's CPU time is
//! - its live threads' run time from `schedstat`, in nanoseconds;
//! - plus its exited threads' run time. The kernel folds that into `utime + stime`
//!   of `stat`, but only in ticks, so an [`Account`] kept across reads follows it
//!   instead: a thread seen at one read and gone at the next adds its last run time,
//!   and what had exited before the first read is `utime + stime` minus the live
//!   threads then, a constant. Taking "at least `utime + stime`" at every read, as
//!   clibench did first, put every process with one exited thread (the demo's chat
//!   worker, after its first turn) back on 10 ms ticks: an idle window read 0.
//!   When `stat` shows more than a tick beyond the account (a thread that lived and
//!   exited between two reads), the account takes the difference once;
//! - plus `cutime + cstime`: children it has waited for. Their time survives only
//!   there, in ticks; that is the kernel's only record of an exited, reaped child.
//!
//! A child reaped by a process outside the family (clibench's own subreaper) is
//! lost; a child still alive is counted as a process of the family itself.

use crate::parse::{self, Stat};
use crate::proc_read_linux::{SnapshotError, read_optional};
use std::path::Path;

/// Nanoseconds per second.
const NS_PER_SECOND: u64 = 1_000_000_000;

/// What one process's earlier reads showed: its threads' last run times and the run
/// time of those that exited since (see the [module documentation](self)).
#[derive(Debug, Clone, Default)]
pub(crate) struct Account {
    /// Live threads at the last read: thread id and run time, nanoseconds.
    threads: Vec<(u32, u64)>,
    /// Run time of the threads that exited: seen, then gone; nanoseconds.
    exited_ns: u64,
    /// Run time the reads cannot see thread by thread: threads that exited before the
    /// first read, or lived only between two reads; nanoseconds.
    unseen_ns: u64,
    /// Whether a read has been made.
    seen: bool,
}

/// The CPU time of the process whose directory is `dir` and whose `stat` is `stat`,
/// in nanoseconds (see the [module documentation](self)); `account` is what earlier
/// reads of this process found (`None`: the first). A thread that vanishes while its
/// siblings are read counts as exited.
pub(crate) fn process_cpu_ns(
    dir: &Path,
    stat: &Stat,
    ticks_per_second: u64,
    account: Option<&mut Account>,
    buf: &mut Vec<u8>,
) -> Result<u64, SnapshotError> {
    let tick_ns = NS_PER_SECOND / ticks_per_second.max(1);
    let ticks_ns = (stat.utime_ticks + stat.stime_ticks) * tick_ns;
    let children_ns = (stat.children_utime_ticks + stat.children_stime_ticks) * tick_ns;
    let live = threads_run_ns(dir, buf)?;
    let live_ns: u64 = live.iter().map(|&(_, ns)| ns).sum();
    let mut first = Account::default();
    let account = match account {
        Some(account) => account,
        None => &mut first,
    };
    let seen_before = std::mem::replace(&mut account.seen, true);
    for &(tid, last_ns) in &account.threads {
        if !live.iter().any(|&(live_tid, _)| live_tid == tid) {
            account.exited_ns = account.exited_ns.saturating_add(last_ns);
        }
    }
    account.threads = live;
    let counted = live_ns
        .saturating_add(account.exited_ns)
        .saturating_add(account.unseen_ns);
    if !seen_before {
        // What exited before this first read, to within a tick: a constant from now on.
        account.unseen_ns = ticks_ns.saturating_sub(live_ns);
    } else if ticks_ns > counted.saturating_add(tick_ns) {
        // stat is floored to ticks, so only more than a tick beyond is time we missed.
        account.unseen_ns = account.unseen_ns.saturating_add(ticks_ns - counted);
    }
    let total = live_ns
        .saturating_add(account.exited_ns)
        .saturating_add(account.unseen_ns);
    Ok(total.saturating_add(children_ns))
}

/// The run times of `dir`'s live threads (thread id, nanoseconds); none when the
/// process vanished.
fn threads_run_ns(dir: &Path, buf: &mut Vec<u8>) -> Result<Vec<(u32, u64)>, SnapshotError> {
    let task = dir.join("task");
    let entries = match std::fs::read_dir(&task) {
        Ok(entries) => entries,
        Err(_) => return Ok(Vec::new()),
    };
    let mut threads = Vec::new();
    for entry in entries.flatten() {
        let Some(tid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let path = entry.path().join("schedstat");
        if let Some(schedstat) = read_optional(&path, buf)?.and_then(parse::parse_schedstat) {
            threads.push((tid, schedstat.run_ns));
        }
    }
    Ok(threads)
}

/// How long the main thread of the process whose directory is `dir` has waited in a run
/// queue for a CPU since it started (`schedstat`'s second field), nanoseconds; nothing for
/// a process that vanished.
///
/// The main thread only: it is the one a start to ready waits on, in a shell, a Python
/// or a Node program alike, and the run-queue waits of its helper threads (a compiler or
/// collector thread waiting while the main thread runs) are no delay of the start.
pub(crate) fn main_thread_queued_ns(dir: &Path, buf: &mut Vec<u8>) -> Result<u64, SnapshotError> {
    Ok(read_optional(&dir.join("schedstat"), buf)?
        .and_then(parse::parse_schedstat)
        .map_or(0, |schedstat| schedstat.wait_ns))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn stat(utime: u64, stime: u64, cutime: u64, cstime: u64) -> Stat {
        let line = format!(
            "7 (agent) S 1 7 7 0 -1 0 0 0 0 0 {utime} {stime} {cutime} {cstime} 20 0 3 0 100 0 10"
        );
        parse::parse_stat(&line).unwrap()
    }

    #[test]
    fn the_main_threads_wait_for_a_cpu_is_read() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("schedstat"), "5 30000123 3\n").unwrap();
        let mut buf = Vec::new();
        assert_eq!(
            main_thread_queued_ns(dir.path(), &mut buf).unwrap(),
            30_000_123
        );
        assert_eq!(
            main_thread_queued_ns(&dir.path().join("gone"), &mut buf).unwrap(),
            0
        );
    }

    #[test]
    fn threads_are_summed_in_nanoseconds_and_reaped_children_added() {
        let dir = tempfile::tempdir().unwrap();
        for (tid, run) in [(7, 81_234_567u64), (8, 1_000_001), (9, 5)] {
            let thread = dir.path().join(format!("task/{tid}"));
            fs::create_dir_all(&thread).unwrap();
            fs::write(thread.join("schedstat"), format!("{run} 10 3\n")).unwrap();
        }
        // A thread directory whose file is gone, as when it exits mid-walk.
        fs::create_dir_all(dir.path().join("task/10")).unwrap();
        let mut buf = Vec::new();
        // stat says 8 ticks (80 ms), less than the threads' 82.2 ms.
        let ns = process_cpu_ns(dir.path(), &stat(5, 3, 0, 0), 100, None, &mut buf).unwrap();
        assert_eq!(ns, 82_234_573);
        // A reaped child's 20 ms, in ticks, comes on top.
        let ns = process_cpu_ns(dir.path(), &stat(5, 3, 1, 1), 100, None, &mut buf).unwrap();
        assert_eq!(ns, 82_234_573 + 20_000_000);
        // Threads that exited before a first read are in stat only, in ticks.
        let ns = process_cpu_ns(dir.path(), &stat(30, 0, 0, 0), 100, None, &mut buf).unwrap();
        assert_eq!(ns, 300_000_000);
    }

    /// Writes the live threads of a fixture process: (thread id, run time ns).
    fn threads(dir: &Path, live: &[(u32, u64)]) {
        let _ = fs::remove_dir_all(dir.join("task"));
        for (tid, run) in live {
            let thread = dir.join(format!("task/{tid}"));
            fs::create_dir_all(&thread).unwrap();
            fs::write(thread.join("schedstat"), format!("{run} 10 3\n")).unwrap();
        }
    }

    #[test]
    fn an_exited_thread_keeps_the_count_in_nanoseconds_not_ticks() {
        let dir = tempfile::tempdir().unwrap();
        let mut buf = Vec::new();
        let mut account = Account::default();
        let mut read = |live: &[(u32, u64)], ticks: u64| {
            threads(dir.path(), live);
            process_cpu_ns(
                dir.path(),
                &stat(ticks, 0, 0, 0),
                100,
                Some(&mut account),
                &mut buf,
            )
            .unwrap()
        };
        // 25 ms of an exited worker before the first read: stat has 12 ticks (120 ms)
        // for the main thread's 95.5 ms and the worker.
        let first = read(&[(7, 95_500_000)], 12);
        assert_eq!(first, 120_000_000);
        // The main thread runs 37 µs more: so does the count, though stat stays at 12
        // ticks (the old floor kept it at 120 ms: an idle window read 0).
        assert_eq!(read(&[(7, 95_537_000)], 12) - first, 37_000);
        // A worker seen at one read and gone at the next keeps its 4 ms.
        let with_worker = read(&[(7, 95_537_000), (9, 4_000_000)], 12);
        assert_eq!(read(&[(7, 95_600_000)], 12) - with_worker, 63_000);
        // stat 3 ticks beyond the account: a thread that lived between two reads.
        let before = read(&[(7, 95_600_000)], 12);
        let after = read(&[(7, 95_600_000)], 15);
        assert_eq!(after, before + (150_000_000 - before));
    }

    #[test]
    fn a_vanished_process_falls_back_to_its_stat() {
        let dir = tempfile::tempdir().unwrap();
        let mut buf = Vec::new();
        let ns = process_cpu_ns(
            &dir.path().join("gone"),
            &stat(2, 1, 0, 0),
            100,
            None,
            &mut buf,
        );
        assert_eq!(ns.unwrap(), 30_000_000);
    }

    #[test]
    fn the_live_count_has_nanosecond_resolution() {
        // Burn some CPU on a second thread, so both threads' files count.
        let burn = || {
            let started = std::time::Instant::now();
            let mut x = 0u64;
            while started.elapsed() < std::time::Duration::from_millis(30) {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
            }
            x
        };
        let worker = std::thread::spawn(burn);
        burn();
        let dir = Path::new("/proc/self");
        let mut buf = Vec::new();
        // The live threads' own count: under `cargo test` other tests' threads come and
        // go in this process, and the ticks of those that exited (the floor
        // process_cpu_ns takes from stat) may exceed what the live threads add up to.
        let ns: u64 = threads_run_ns(dir, &mut buf)
            .unwrap()
            .iter()
            .map(|&(_, ns)| ns)
            .sum();
        worker.join().unwrap();
        assert!(ns > 0);
        // Ticks would be a multiple of 10 ms; the scheduler's count almost never is.
        assert_ne!(ns % 10_000_000, 0, "{ns}");
    }
}
