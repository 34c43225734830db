//! Stopping a family: SIGTERM, a grace period, SIGKILL, reaping, verification.

use crate::parse;
use crate::snapshot_linux::{ProcRoot, Selector, SnapshotError};
use rustix::process::{Pid, Signal, WaitOptions};
use serde::Serialize;
use std::collections::BTreeMap;
use std::os::fd::OwnedFd;
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

    terminate_new(discover, &protected, &mut members, &mut report)?;
    let deadline = started + grace;
    // Most programs are gone within a millisecond of SIGTERM: the first looks come soon
    // after it, doubling up to POLL, so that a stop costs what the program takes to exit
    // rather than a whole POLL (a staircase stops 21 instances, a demo run dozens).
    let mut pause = FIRST_POLL;
    loop {
        reap(&members, &mut report);
        terminate_new(discover, &protected, &mut members, &mut report)?;
        if alive(&members).is_empty() || Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(pause.min(deadline.saturating_duration_since(Instant::now())));
        pause = (pause * 2).min(POLL);
    }

    let kill_deadline = Instant::now() + KILL_WAIT;
    loop {
        terminate_new(discover, &protected, &mut members, &mut report)?;
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
            signal_member(pid, members[&pid], Signal::KILL);
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

/// How many processes younger than their walk [`admit`] holds a pidfd for at once: well
/// under the usual limit of 1,024 open descriptors.
const PIN_BATCH: usize = 256;

/// Makes members of the processes `discover` finds that are not members yet (see
/// [`admit`]) and sends each SIGTERM.
fn terminate_new(
    discover: &dyn Fn() -> Result<Vec<u32>, SnapshotError>,
    protected: &[u32],
    members: &mut BTreeMap<u32, u64>,
    report: &mut StopReport,
) -> Result<(), StopError> {
    for (pid, start_ticks) in admit(discover, protected, members)? {
        members.insert(pid, start_ticks);
        signal_member(pid, start_ticks, Signal::TERM);
        report.terminated.push(pid);
    }
    Ok(())
}

/// The processes `discover` finds that are not members yet, each with its start time,
/// once it is sure each is the process the walk found.
///
/// A walk's pid is only a number by the time it is used: the process may have left the
/// family and exited since, and its pid been given to a stranger, which a stat read then
/// would describe and a signal reach. So each candidate's pidfd is opened (it names one
/// process whatever becomes of the number) and its stat read; a process that started
/// before the walk began and is still there after its stat was read held that pid all
/// along, so it is the walk's. One that started since may be a stranger: it is kept only
/// when a second walk, made while its pidfd is open, finds it too. Nothing is signalled
/// before every candidate is checked, so no orphan of a signalled parent is lost to the
/// second walk of a tree. Without pidfds (Linux before 5.3) a pid is taken as it stands.
fn admit(
    discover: &dyn Fn() -> Result<Vec<u32>, SnapshotError>,
    protected: &[u32],
    members: &BTreeMap<u32, u64>,
) -> Result<Vec<(u32, u64)>, StopError> {
    let walked_at = boot_ticks_now();
    let candidates = walk(discover)?
        .into_iter()
        .filter(|pid| !protected.contains(pid) && !members.contains_key(pid));
    let mut admitted = Vec::new();
    let mut young = Vec::new();
    for pid in candidates {
        let pinned = open_pidfd(pid);
        if matches!(pinned, Pinned::Gone) {
            continue;
        }
        let Some(stat) = process_stat(pid) else {
            continue;
        };
        match pinned {
            Pinned::Open(pidfd) if still_there(&pidfd) => {
                if stat.start_ticks < walked_at {
                    admitted.push((pid, stat.start_ticks));
                } else if young.len() < PIN_BATCH {
                    young.push((pid, stat.start_ticks, pidfd));
                }
                // Past the batch: the next walk finds it again, if it is a member.
            }
            Pinned::Unsupported => admitted.push((pid, stat.start_ticks)),
            _ => {}
        }
    }
    if !young.is_empty() {
        let confirmed: std::collections::HashSet<u32> = walk(discover)?.into_iter().collect();
        admitted.extend(
            young
                .into_iter()
                .filter(|(pid, _, pidfd)| confirmed.contains(pid) && still_there(pidfd))
                .map(|(pid, start_ticks, _)| (pid, start_ticks)),
        );
    }
    Ok(admitted)
}

/// Now, in the clock ticks since boot that `/proc/PID/stat` gives start times in;
/// `u64::MAX` (every process counts as older) if the clock cannot be read.
fn boot_ticks_now() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the struct it is given.
    if unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut now) } != 0 {
        return u64::MAX;
    }
    let ticks = rustix::param::clock_ticks_per_second().max(1);
    let nanos = u128::from(now.tv_sec as u64) * 1_000_000_000 + now.tv_nsec as u128;
    u64::try_from(nanos * u128::from(ticks) / 1_000_000_000).unwrap_or(u64::MAX)
}

/// The pids `discover` finds now; a vanished tree root means the tree is gone (its
/// orphans are members already).
fn walk(discover: &dyn Fn() -> Result<Vec<u32>, SnapshotError>) -> Result<Vec<u32>, StopError> {
    match discover() {
        Ok(pids) => Ok(pids),
        Err(SnapshotError::NoSuchProcess { .. }) => Ok(Vec::new()),
        Err(error) => Err(StopError::Discover(error)),
    }
}

/// A pidfd opened on a pid, or why there is none.
enum Pinned {
    /// It names the process that had the pid when it was opened.
    Open(OwnedFd),
    /// No process has the pid.
    Gone,
    /// This kernel has no pidfds (or no descriptor was left): the pid is all there is.
    Unsupported,
}

fn open_pidfd(pid: u32) -> Pinned {
    let Some(target) = Pid::from_raw(pid as i32) else {
        return Pinned::Gone;
    };
    match rustix::process::pidfd_open(target, rustix::process::PidfdFlags::empty()) {
        Ok(pidfd) => Pinned::Open(pidfd),
        Err(rustix::io::Errno::SRCH) => Pinned::Gone,
        Err(_) => Pinned::Unsupported,
    }
}

/// Whether the pidfd's process has not been reaped (a zombie still is): while it has
/// not, its pid is its own. One we may not signal is there too: it is admitted, and the
/// stop names it as a survivor, as before pidfds.
fn still_there(pidfd: &OwnedFd) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: signal 0 through a descriptor we own: nothing is sent, the kernel only
    // checks that the process exists; no siginfo.
    let sent = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            0,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    sent == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Sends `sig` to member `pid` only while it is the process that started at
/// `start_ticks`: through a pidfd, opened before that check, so that the process
/// checked is the one signalled.
fn signal_member(pid: u32, start_ticks: u64, sig: Signal) {
    match open_pidfd(pid) {
        Pinned::Open(pidfd) => {
            if process_stat(pid).is_some_and(|stat| stat.start_ticks == start_ticks) {
                let _ = rustix::process::pidfd_send_signal(&pidfd, sig);
            }
        }
        Pinned::Unsupported => signal(pid, sig),
        Pinned::Gone => {}
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
    fn a_pid_given_to_a_new_process_during_the_walk_is_not_signalled() {
        // During a walk a member can exit and its pid go to a new process, which the walk
        // then names. Modelled by a discovery that starts a process of no family and names
        // it (the stale walk), and never names it again.
        let stranger: std::cell::RefCell<Option<std::process::Child>> = Default::default();
        let discover = || {
            let mut stranger = stranger.borrow_mut();
            if stranger.is_some() {
                return Ok(Vec::new());
            }
            let child = std::process::Command::new("sleep")
                .arg("30")
                .spawn()
                .unwrap();
            let pid = child.id();
            *stranger = Some(child);
            Ok(vec![pid])
        };
        let report = stop_found(&discover, Duration::from_millis(20));
        let mut stranger = stranger.take().unwrap();
        // Reaped by the stop (its child) when the stop signalled it.
        let untouched = matches!(stranger.try_wait(), Ok(None));
        let _ = stranger.kill();
        let status = stranger.wait();
        assert!(untouched, "the new process was signalled: {report:?}");
        // Killed by the test, not by the stop (whose SIGTERM, had it come first, would
        // have decided how it ended).
        assert_eq!(
            status
                .ok()
                .and_then(|s| std::os::unix::process::ExitStatusExt::signal(&s)),
            Some(libc::SIGKILL)
        );
        assert!(report.unwrap().terminated.is_empty());
    }

    #[test]
    fn a_member_whose_pid_started_again_is_not_signalled() {
        let mut stranger = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let start = process_stat(stranger.id()).unwrap().start_ticks;
        // The member that had this pid started at another time: no SIGTERM for this one.
        signal_member(stranger.id(), start + 1, Signal::TERM);
        // The kernel settles a process's end at the first deadly signal it is sent, so
        // the status names the one that got through first.
        signal_member(stranger.id(), start, Signal::KILL);
        let status = stranger.wait().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(libc::SIGKILL),
            "a process of another start time was signalled"
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
