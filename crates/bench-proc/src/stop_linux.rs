//! Stopping a family: SIGTERM, a grace period, SIGKILL, reaping, verification.

use crate::parse;
use crate::snapshot_linux::{ProcRoot, Selector, SnapshotError};
use rustix::process::{Pid, Signal, WaitOptions};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// How often membership and liveness are polled while waiting.
const POLL: Duration = Duration::from_millis(10);
/// The first wait after SIGTERM; each next one doubles, up to [`POLL`].
const FIRST_POLL: Duration = Duration::from_micros(250);
/// How long SIGKILLed processes get to disappear before they count as survivors.
const KILL_WAIT: Duration = Duration::from_secs(3);

/// What [`stop`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StopReport {
    /// Pids that were sent SIGTERM.
    pub terminated: Vec<u32>,
    /// Pids still alive after the grace period, sent SIGKILL.
    pub killed: Vec<u32>,
    /// Pids that were our children and were reaped.
    pub reaped: Vec<u32>,
    /// From the first SIGTERM until nothing was left.
    pub elapsed: Duration,
}

/// A process still alive after SIGKILL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Survivor {
    /// Process id.
    pub pid: u32,
    /// Kernel name.
    pub name: String,
    /// One-letter state (a `D` survivor is stuck in the kernel).
    pub state: char,
}

/// Why [`stop`] failed.
#[derive(Debug, thiserror::Error)]
pub enum StopError {
    /// The processes to stop could not be found.
    #[error("failed to list the processes to stop")]
    Discover(#[source] SnapshotError),
    /// Stopping every process of root (uid 0) would take the machine down.
    #[error("refusing to stop every process of uid 0")]
    RootUid,
    /// Some processes were still alive after SIGKILL.
    #[error("{} process(es) survived SIGKILL: {}", survivors.len(), names(survivors))]
    Survivors {
        /// Who is left, with the partial report of what was done.
        survivors: Vec<Survivor>,
        /// What was done before giving up.
        report: StopReport,
    },
}

pub(crate) fn names(survivors: &[Survivor]) -> String {
    survivors
        .iter()
        .map(|s| format!("{} ({}, state {})", s.pid, s.name, s.state))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Stops every process the selector names: SIGTERM to all, up to `grace` for
/// them to exit, SIGKILL to whoever is left, then waits (up to 3 s) for them to
/// disappear. Zombies that are our children are reaped along the way, so a
/// caller holding a [`std::process::Child`] for one of them sees `ECHILD`
/// from `wait` and should treat it as "already reaped".
///
/// Membership is re-read on every poll and only grows, so a child forked during
/// the grace period, or orphaned when its parent died, is still stopped. A pid
/// is remembered with its start time, so a reused pid is never signalled.
/// Never signals the calling process, its ancestors or pid 1; refuses
/// [`Selector::Uid`] of 0.
pub fn stop(selector: &Selector, grace: Duration) -> Result<StopReport, StopError> {
    stop_in(&ProcRoot::live(), selector, grace)
}

/// Stops every process whose environment holds exactly `entry` (`NAME=value`, e.g.
/// `HOME=/tmp/run/home-0`) and all their descendants, as one family: one SIGTERM to all,
/// one `grace`, SIGKILL to whoever is left. Membership is re-read on every poll, so a
/// process that starts with that environment while the stop runs is caught too.
///
/// This is how a caller without a uid of its own finds what a target left behind
/// (daemons included): every process it started got that entry. Processes whose
/// environment cannot be read (another user's, without root) are not found.
pub fn stop_environment(entry: &[u8], grace: Duration) -> Result<StopReport, StopError> {
    let root = ProcRoot::live();
    stop_found(
        &|| {
            let mut pids = Vec::new();
            let mut found = std::collections::HashSet::new();
            for pid in pids_with_environment(Path::new("/proc"), entry) {
                // Children inherit the entry: a pid already found is in a tree walked
                // already, and walking it again would only repeat that work.
                if found.contains(&pid) {
                    continue;
                }
                match root.discover(&Selector::Tree(pid)) {
                    Ok(tree) => {
                        found.extend(tree.iter().copied());
                        pids.extend(tree);
                    }
                    // Gone since the scan: nothing of it to stop.
                    Err(SnapshotError::NoSuchProcess { .. }) => {}
                    Err(error) => return Err(error),
                }
            }
            pids.sort_unstable();
            pids.dedup();
            Ok(pids)
        },
        grace,
    )
}

/// Pids under `proc_root` whose environment holds exactly `entry` (`NAME=value`).
/// Processes whose environment cannot be read are skipped.
pub fn pids_with_environment(proc_root: &Path, entry: &[u8]) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir(proc_root) else {
        return Vec::new();
    };
    let mut pids: Vec<u32> = entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .filter(|pid: &u32| {
            crate::read_proc_file(proc_root.join(pid.to_string()).join("environ"))
                .is_ok_and(|environ| environ.split(|b| *b == 0).any(|e| e == entry))
        })
        .collect();
    pids.sort_unstable();
    pids
}

fn stop_in(root: &ProcRoot, selector: &Selector, grace: Duration) -> Result<StopReport, StopError> {
    if *selector == Selector::Uid(0) {
        return Err(StopError::RootUid);
    }
    stop_found(&|| root.discover(selector), grace)
}

/// The stop itself, over whatever `discover` finds on each poll.
fn stop_found(
    discover: &dyn Fn() -> Result<Vec<u32>, SnapshotError>,
    grace: Duration,
) -> Result<StopReport, StopError> {
    let protected = protected_pids();
    let started = Instant::now();
    let mut report = StopReport::default();
    // pid -> start time, the identity of the process we mean.
    let mut members: BTreeMap<u32, u64> = BTreeMap::new();

    let refresh = |members: &mut BTreeMap<u32, u64>| -> Result<Vec<u32>, StopError> {
        let mut fresh = Vec::new();
        // A vanished tree root just means the tree is gone; its orphans are
        // already in `members`.
        let found = match discover() {
            Ok(pids) => pids,
            Err(SnapshotError::NoSuchProcess { .. }) => Vec::new(),
            Err(error) => return Err(StopError::Discover(error)),
        };
        for pid in found {
            if protected.contains(&pid) || members.contains_key(&pid) {
                continue;
            }
            if let Some(stat) = process_stat(pid) {
                members.insert(pid, stat.start_ticks);
                fresh.push(pid);
            }
        }
        Ok(fresh)
    };

    for pid in refresh(&mut members)? {
        signal(pid, Signal::TERM);
        report.terminated.push(pid);
    }
    let deadline = started + grace;
    // Most programs are gone within a millisecond of SIGTERM: the first looks come soon
    // after it, doubling up to POLL, so that a stop costs what the program takes to exit
    // rather than a whole POLL (a staircase stops 21 instances, a demo run dozens).
    let mut pause = FIRST_POLL;
    loop {
        reap(&members, &mut report);
        for pid in refresh(&mut members)? {
            signal(pid, Signal::TERM);
            report.terminated.push(pid);
        }
        if alive(&members).is_empty() || Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(pause.min(deadline.saturating_duration_since(Instant::now())));
        pause = (pause * 2).min(POLL);
    }

    let kill_deadline = Instant::now() + KILL_WAIT;
    loop {
        refresh(&mut members)?;
        let left = alive(&members);
        if left.is_empty() {
            break;
        }
        for pid in left {
            if !report.killed.contains(&pid) {
                report.killed.push(pid);
            }
            // Repeated on every poll: a process forked after the first SIGKILL
            // round must get one too, and SIGKILL to a dying process is harmless.
            signal(pid, Signal::KILL);
        }
        reap(&members, &mut report);
        if Instant::now() >= kill_deadline {
            break;
        }
        std::thread::sleep(POLL);
    }
    reap(&members, &mut report);
    report.elapsed = started.elapsed();
    let survivors: Vec<Survivor> = alive(&members)
        .into_iter()
        .filter_map(|pid| {
            process_stat(pid).map(|stat| Survivor {
                pid,
                name: stat.name,
                state: stat.state,
            })
        })
        .collect();
    if survivors.is_empty() {
        Ok(report)
    } else {
        Err(StopError::Survivors { survivors, report })
    }
}

/// Ourselves, our ancestors and pid 1.
fn protected_pids() -> Vec<u32> {
    let mut protected = vec![1, std::process::id()];
    let mut pid = std::process::id();
    while let Some(stat) = process_stat(pid) {
        if stat.ppid == 0 || protected.contains(&stat.ppid) {
            break;
        }
        protected.push(stat.ppid);
        pid = stat.ppid;
    }
    protected
}

/// The `/proc/PID/stat` of a live process (zombies included), read whole; `None` when
/// it is gone. The one place clibench reads a single process's stat.
pub fn process_stat(pid: u32) -> Option<parse::Stat> {
    let bytes = crate::read_proc_file(format!("/proc/{pid}/stat")).ok()?;
    parse::parse_stat(std::str::from_utf8(&bytes).ok()?)
}

/// Members that still exist as the same process and are not zombies.
fn alive(members: &BTreeMap<u32, u64>) -> Vec<u32> {
    members
        .iter()
        .filter(|&(&pid, &start)| {
            process_stat(pid).is_some_and(|stat| stat.start_ticks == start && !stat.is_zombie())
        })
        .map(|(&pid, _)| pid)
        .collect()
}

/// Reaps the members that are our zombie children.
fn reap(members: &BTreeMap<u32, u64>, report: &mut StopReport) {
    let me = std::process::id();
    for (&pid, &start) in members {
        let Some(stat) = process_stat(pid) else {
            continue;
        };
        if stat.ppid != me || !stat.is_zombie() || stat.start_ticks != start {
            continue;
        }
        let Some(target) = Pid::from_raw(pid as i32) else {
            continue;
        };
        if let Ok(Some(_)) = rustix::process::waitpid(Some(target), WaitOptions::NOHANG) {
            report.reaped.push(pid);
        }
    }
}

fn signal(pid: u32, sig: Signal) {
    if let Some(target) = Pid::from_raw(pid as i32) {
        // ESRCH (already gone) is the outcome we want; EPERM leaves the process
        // alive, and the final check names it as a survivor.
        let _ = rustix::process::kill_process(target, sig);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_parent_and_init_are_protected() {
        let protected = protected_pids();
        assert!(protected.contains(&1));
        assert!(protected.contains(&std::process::id()));
        let parent = rustix::process::getppid().map_or(0, |p| p.as_raw_nonzero().get() as u32);
        assert!(protected.contains(&parent));
    }

    #[test]
    fn environment_match_is_exact() {
        let dir = tempfile::tempdir().unwrap();
        for (pid, environ) in [
            ("10", &b"A=1\0HOME=/h/x\0"[..]),
            ("11", b"HOME=/h/xy\0"),
            ("12", b"HOME=/h/x"),
        ] {
            std::fs::create_dir(dir.path().join(pid)).unwrap();
            std::fs::write(dir.path().join(pid).join("environ"), environ).unwrap();
        }
        std::fs::create_dir(dir.path().join("self")).unwrap();
        assert_eq!(
            pids_with_environment(dir.path(), b"HOME=/h/x"),
            vec![10, 12]
        );
    }

    #[test]
    fn uid_zero_is_refused() {
        assert!(matches!(
            stop(&Selector::Uid(0), Duration::from_millis(1)),
            Err(StopError::RootUid)
        ));
    }

    #[test]
    fn survivors_are_named() {
        let error = StopError::Survivors {
            survivors: vec![Survivor {
                pid: 42,
                name: "agent".into(),
                state: 'D',
            }],
            report: StopReport::default(),
        };
        assert_eq!(
            error.to_string(),
            "1 process(es) survived SIGKILL: 42 (agent, state D)"
        );
    }
}
