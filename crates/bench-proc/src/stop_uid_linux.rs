//! Stopping every process of a uid, atomically against fork-hopping.
//!
//! A walk of `/proc` followed by `kill(pid)` can be outrun: a process that
//! forks and exits in a loop has a new pid by the time the walk's signal
//! arrives. `kill(-1, SIGKILL)` cannot be outrun: the kernel signals every
//! process the caller may signal while it holds the task list lock, and a
//! fork that races with it is restarted, so after one call no process that
//! existed (nor a child it was forking) runs on. A process may signal exactly
//! the processes whose real or saved uid is its own real or effective uid,
//! so a helper that has become the uid (and lost root's CAP_KILL doing so)
//! signals every process of that uid and nothing else.

#[cfg(doc)]
use crate::snapshot_linux::Selector;
use crate::snapshot_linux::SnapshotError;
use crate::stop_linux::Survivor;
use serde::Serialize;
use std::io;
use std::time::{Duration, Instant};

/// The lowest uid never treated as a system account, whatever login.defs says.
pub const MIN_USER_UID: u32 = 1000;

/// How often the caller looks at the helper and at the uid's processes: dying
/// processes leave the task list within about a millisecond.
const POLL: Duration = Duration::from_micros(200);
/// How long the caller waits for the processes a helper killed to die before it
/// sends another helper (a process another uid started as this one meanwhile).
const HELPER_SETTLE: Duration = Duration::from_millis(20);

/// What [`stop_uid`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct UidStopReport {
    /// The uid that was stopped.
    pub uid: u32,
    /// Dead processes of the uid not yet reaped by their parent (zombies run no
    /// code, but `userdel` counts them until the parent reaps them).
    pub zombies: Vec<u32>,
    /// From the fork of the helper until no process of the uid ran.
    pub elapsed: Duration,
}

/// Why [`stop_uid`] refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum StopUidError {
    /// The uid is root's or a system account's.
    #[error("refusing to stop every process of uid {uid}: a system account (below {uid_min})")]
    SystemUid {
        /// The uid asked for.
        uid: u32,
        /// The first uid that is not a system account here.
        uid_min: u32,
    },
    /// The uid is the caller's own: the helper would signal the caller.
    #[error("refusing to stop every process of uid {uid}: it is the caller's own")]
    OwnUid {
        /// The uid asked for.
        uid: u32,
    },
    /// The helper could not be forked or waited for.
    #[error("failed to run the helper that stops uid {uid}")]
    Helper {
        /// The uid asked for.
        uid: u32,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The helper could not become the uid or still held a privilege, so it
    /// signalled nothing.
    #[error("the helper could not drop to uid {uid} without privileges (exit code {code})")]
    Drop {
        /// The uid asked for.
        uid: u32,
        /// The helper's exit code: 3 setresuid failed, 4 capabilities remained.
        code: i32,
    },
    /// The uid's processes could not be listed afterwards.
    #[error("failed to list the processes of uid {uid}")]
    Discover {
        /// The uid asked for.
        uid: u32,
        /// The underlying error.
        #[source]
        source: SnapshotError,
    },
    /// Processes of the uid were still running when the helper gave up.
    #[error("{} process(es) of uid {uid} still run: {}", survivors.len(), crate::stop_linux::names(survivors))]
    Survivors {
        /// The uid asked for.
        uid: u32,
        /// Who is left.
        survivors: Vec<Survivor>,
    },
}

/// The first uid of ordinary users: `UID_MIN` of `/etc/login.defs` (see
/// [`crate::parse_uid_range`]), never below [`MIN_USER_UID`].
pub fn user_uid_min() -> u32 {
    (*crate::uid_range().start()).max(MIN_USER_UID)
}

/// SIGKILLs every process whose uid is `uid` and returns once none runs.
///
/// A helper process forks, becomes the uid (real, effective and saved, which
/// drops root's capabilities) and calls `kill(-1, SIGKILL)` once, which no
/// process of the uid outruns, however it forks. Whether anything is left is
/// then read from `/proc` ([`uid_holders`]: a process with the uid as its real,
/// effective, saved or filesystem uid), as soon as the killed processes are
/// gone, so a uid without processes costs one helper and one look at `/proc`.
/// A process that holds the uid only as its effective or filesystem uid cannot
/// be signalled by the helper; it is killed by pid. No grace period: call
/// [`crate::stop`] with [`Selector::Uid`] first to let the processes exit
/// cleanly.
///
/// Refuses uid 0, system uids (below [`user_uid_min`]) and the caller's own
/// uid. Needs the privilege to change uid (root). Fails with the processes
/// still running when `timeout` passed.
pub fn stop_uid(uid: u32, timeout: Duration) -> Result<UidStopReport, StopUidError> {
    let uid_min = user_uid_min();
    if uid < uid_min {
        return Err(StopUidError::SystemUid { uid, uid_min });
    }
    if uid == rustix::process::getuid().as_raw() || uid == rustix::process::geteuid().as_raw() {
        return Err(StopUidError::OwnUid { uid });
    }
    let started = Instant::now();
    let deadline = started + timeout;
    loop {
        run_helper(uid, deadline)?;
        // Whatever the helper did, the verdict is what /proc shows: a SIGKILLed
        // process takes a moment to leave, and a process another uid started as
        // this one after the helper's kill needs another helper.
        let settled = Instant::now() + HELPER_SETTLE;
        loop {
            let (survivors, zombies) = processes_of(uid)?;
            if survivors.is_empty() {
                return Ok(UidStopReport {
                    uid,
                    zombies,
                    elapsed: started.elapsed(),
                });
            }
            // Those the helper may not signal: only an effective or filesystem
            // uid of ours, real and saved uid someone else's.
            for survivor in &survivors {
                kill_holder(survivor.pid, uid);
            }
            if Instant::now() >= deadline {
                return Err(StopUidError::Survivors { uid, survivors });
            }
            if Instant::now() >= settled {
                break;
            }
            std::thread::sleep(POLL);
        }
    }
}

/// SIGKILLs `pid` through a pidfd, after checking on that pidfd's process that it
/// still holds `uid`: a pid read from /proc may have been reused meanwhile.
fn kill_holder(pid: u32, uid: u32) {
    // SAFETY: pidfd_open on a plain number; the descriptor is ours and closed below.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    if pidfd < 0 {
        return;
    }
    let pidfd = pidfd as libc::c_int;
    // With the pidfd open, the pid names the same process until it is reaped:
    // the status read now is that process's.
    if holds(pid, uid) {
        // SAFETY: signals the process the pidfd refers to; no siginfo.
        unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                pidfd,
                libc::SIGKILL,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            );
        }
    }
    // SAFETY: closes the descriptor opened above.
    unsafe {
        libc::close(pidfd);
    }
}

/// Whether process `pid` has `uid` as any of its four uids.
fn holds(pid: u32, uid: u32) -> bool {
    crate::read_proc_file(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|bytes| crate::parse::parse_status_uids(&String::from_utf8_lossy(&bytes)))
        .is_some_and(|uids| uids.contains(&uid))
}

/// Every process (zombies included, kernel threads have uid 0) that has `uid`
/// as its real, effective, saved or filesystem uid: what can still act as that
/// uid. A process that vanishes during the walk is skipped.
pub fn uid_holders(uid: u32) -> io::Result<Vec<u32>> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc")? {
        let Ok(entry) = entry else { continue };
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<u32>().ok())
        else {
            continue;
        };
        if holds(pid, uid) {
            pids.push(pid);
        }
    }
    Ok(pids)
}

/// Forks the helper and waits for it (killing it at `deadline`).
fn run_helper(uid: u32, deadline: Instant) -> Result<(), StopUidError> {
    let helper_error = |source| StopUidError::Helper { uid, source };
    // SAFETY: the child calls only async-signal-safe system calls (setresuid,
    // capget, kill, _exit) through `helper_main`, so forking from a
    // multithreaded process is sound.
    let helper = unsafe { libc::fork() };
    if helper < 0 {
        return Err(helper_error(io::Error::last_os_error()));
    }
    if helper == 0 {
        // SAFETY: we are the freshly forked child; `helper_main` never returns.
        unsafe { helper_main(uid) }
    }
    let code = loop {
        let mut status = 0;
        // SAFETY: waits for our own child; `status` is a valid out pointer.
        let waited = unsafe { libc::waitpid(helper, &mut status, libc::WNOHANG) };
        if waited == helper {
            break if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                -1
            };
        }
        if waited < 0 {
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::Interrupted {
                return Err(helper_error(error));
            }
        }
        if Instant::now() >= deadline {
            // SAFETY: the helper is our unreaped child, so the pid is still it.
            unsafe {
                libc::kill(helper, libc::SIGKILL);
                libc::waitpid(helper, &mut status, 0);
            }
            break 1;
        }
        std::thread::sleep(POLL);
    };
    match code {
        3 | 4 => Err(StopUidError::Drop { uid, code }),
        _ => Ok(()),
    }
}

/// The uid's processes that still run, and its zombies.
fn processes_of(uid: u32) -> Result<(Vec<Survivor>, Vec<u32>), StopUidError> {
    let pids = uid_holders(uid).map_err(|source| StopUidError::Discover {
        uid,
        source: SnapshotError::Read {
            path: "/proc".into(),
            source,
        },
    })?;
    let mut zombies = Vec::new();
    let mut survivors = Vec::new();
    for pid in pids {
        let Some(stat) = crate::process_stat(pid) else {
            continue;
        };
        if stat.is_zombie() {
            zombies.push(pid);
        } else {
            survivors.push(Survivor {
                pid,
                name: stat.name,
                state: stat.state,
            });
        }
    }
    Ok((survivors, zombies))
}

/// `struct __user_cap_header_struct` of `<linux/capability.h>` (the libc crate
/// does not define it).
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

/// `struct __user_cap_data_struct`; version 3 takes two of them (64 bits).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// The helper: become `uid`, check that no capability is left (with CAP_KILL,
/// `kill(-1)` would signal every process on the machine), then SIGKILL every
/// process of the uid once. Exit codes: 0 signalled, 3 setresuid failed, 4 a
/// capability remained.
///
/// # Safety
/// Only in the child right after `fork`: it uses raw system calls only.
unsafe fn helper_main(uid: u32) -> ! {
    // SAFETY: raw, async-signal-safe system calls on valid arguments (live
    // structs of the kernel's layout); `_exit` never returns.
    unsafe {
        let ruid = uid as libc::uid_t;
        // Without the saved uid changing too, root could regain CAP_KILL.
        if libc::syscall(libc::SYS_setresuid, ruid, ruid, ruid) != 0 {
            libc::_exit(3);
        }
        let mut header = CapHeader {
            version: LINUX_CAPABILITY_VERSION_3,
            pid: 0,
        };
        let mut data = [CapData::default(); 2];
        if libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) != 0
            || data.iter().any(|d| d.effective != 0 || d.permitted != 0)
        {
            libc::_exit(4);
        }
        // One call is enough: the kernel signals every process we may signal
        // under the task list lock, and a fork racing with it is undone, so no
        // process of the uid that existed runs on. kill(-1) counts processes it
        // may not signal as found, so its result says nothing about the uid;
        // the caller reads /proc instead.
        libc::kill(-1, libc::SIGKILL);
        libc::_exit(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_and_system_uids_are_refused() {
        for uid in [0, 1, 999] {
            assert!(matches!(
                stop_uid(uid, Duration::from_secs(1)),
                Err(StopUidError::SystemUid { .. })
            ));
        }
    }

    #[test]
    fn a_process_holding_the_uid_only_as_its_effective_uid_is_stopped() {
        if !rustix::process::geteuid().is_root() {
            eprintln!(
                "SKIPPED a_process_holding_the_uid_only_as_its_effective_uid_is_stopped: needs root"
            );
            return;
        }
        // What a local user gets from a setuid file of the uid: real and saved
        // uid its own, effective uid the trial's. Neither a walk by real uid nor
        // the helper's kill(-1) finds it.
        let uid = 3_600_000 + std::process::id() % 100_000;
        let other = uid + 100_000;
        let script = format!(
            "import os, sys, time\nos.setresuid({other}, {uid}, {other})\n\
             sys.stdout.write('ready\\n'); sys.stdout.flush()\ntime.sleep(60)\n"
        );
        let mut child = std::process::Command::new("python3")
            .args(["-c", &script])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        assert_eq!(line, "ready\n");
        assert_eq!(uid_holders(uid).unwrap(), [child.id()]);
        let stopped = stop_uid(uid, Duration::from_secs(5));
        let still_running = child.try_wait().unwrap().is_none()
            && crate::process_stat(child.id()).is_some_and(|s| !s.is_zombie());
        if still_running {
            let _ = child.kill();
        }
        let _ = child.wait();
        assert!(!still_running, "the effective-uid holder survived");
        stopped.unwrap();
        assert_eq!(uid_holders(uid).unwrap(), Vec::<u32>::new());
    }

    #[test]
    fn own_uid_is_refused() {
        let own = rustix::process::getuid().as_raw();
        if own >= user_uid_min() {
            assert!(matches!(
                stop_uid(own, Duration::from_secs(1)),
                Err(StopUidError::OwnUid { .. })
            ));
        } else {
            eprintln!(
                "SKIPPED own_uid_is_refused: running as system uid {own}, which is refused as a system uid first"
            );
        }
    }
}
