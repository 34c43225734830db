//! CPU time of a process at nanosecond resolution, for every CPU metric.
//!
//! `/proc/PID/stat` counts CPU time in clock ticks of 10 ms, too coarse for a
//! start-up that costs 80 ms. The scheduler's own account is in nanoseconds, per
//! thread: `/proc/PID/task/TID/schedstat` (`/proc/PID/schedstat` covers the main
//! thread only, so every thread's file is read and summed).
//!
//! # What a process's CPU time is
//! - its live threads' run time from `schedstat`, in nanoseconds;
//! - but at least its `utime + stime` from `stat`: threads that already exited
//!   are in those (the kernel folds them into the process), though in ticks. Agents'
//!   threads are long-lived pools, so this floor rarely decides anything;
//! - plus `cutime + cstime`: children it has waited for. Their time survives only
//!   there, in ticks; that is the kernel's only record of an exited, reaped child.
//!
//! A child reaped by a process outside the family (clibench's own subreaper) is
//! lost; a child still alive is counted as a process of the family itself.

use crate::parse::{self, Stat};
use crate::snapshot_linux::{SnapshotError, read_optional};
use std::path::Path;

/// Nanoseconds per second.
const NS_PER_SECOND: u64 = 1_000_000_000;

/// The CPU time of the process whose directory is `dir` and whose `stat` is `stat`,
/// in nanoseconds (see the [module documentation](self)). A thread that vanishes
/// while its siblings are read is skipped.
pub(crate) fn process_cpu_ns(
    dir: &Path,
    stat: &Stat,
    ticks_per_second: u64,
    buf: &mut Vec<u8>,
) -> Result<u64, SnapshotError> {
    let tick_ns = NS_PER_SECOND / ticks_per_second.max(1);
    let own_ticks_ns = (stat.utime_ticks + stat.stime_ticks) * tick_ns;
    let children_ns = (stat.children_utime_ticks + stat.children_stime_ticks) * tick_ns;
    let threads_ns = threads_run_ns(dir, buf)?;
    Ok(threads_ns.max(own_ticks_ns) + children_ns)
}

/// The sum of the run times of `dir`'s live threads; 0 when the process vanished.
fn threads_run_ns(dir: &Path, buf: &mut Vec<u8>) -> Result<u64, SnapshotError> {
    let task = dir.join("task");
    let entries = match std::fs::read_dir(&task) {
        Ok(entries) => entries,
        Err(_) => return Ok(0),
    };
    let mut total = 0u64;
    for entry in entries.flatten() {
        let path = entry.path().join("schedstat");
        if let Some(schedstat) = read_optional(&path, buf)?.and_then(parse::parse_schedstat) {
            total = total.saturating_add(schedstat.run_ns);
        }
    }
    Ok(total)
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
        let ns = process_cpu_ns(dir.path(), &stat(5, 3, 0, 0), 100, &mut buf).unwrap();
        assert_eq!(ns, 82_234_573);
        // A reaped child's 20 ms, in ticks, comes on top.
        let ns = process_cpu_ns(dir.path(), &stat(5, 3, 1, 1), 100, &mut buf).unwrap();
        assert_eq!(ns, 82_234_573 + 20_000_000);
        // Exited threads' time, in stat only, is the floor.
        let ns = process_cpu_ns(dir.path(), &stat(30, 0, 0, 0), 100, &mut buf).unwrap();
        assert_eq!(ns, 300_000_000);
    }

    #[test]
    fn a_vanished_process_falls_back_to_its_stat() {
        let dir = tempfile::tempdir().unwrap();
        let mut buf = Vec::new();
        let ns = process_cpu_ns(&dir.path().join("gone"), &stat(2, 1, 0, 0), 100, &mut buf);
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
        let ns = threads_run_ns(dir, &mut buf).unwrap();
        worker.join().unwrap();
        assert!(ns > 0);
        // Ticks would be a multiple of 10 ms; the scheduler's count almost never is.
        assert_ne!(ns % 10_000_000, 0, "{ns}");
    }
}
