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

use crate::snapshot_linux::{ProcRoot, Selector, SnapshotError};
use crate::stop_linux::Survivor;
use serde::Serialize;
use std::io;
use std::time::{Duration, Instant};

/// The lowest uid never treated as a system account, whatever login.defs says.
pub const MIN_USER_UID: u32 = 1000;

/// How many `kill(-1, SIGKILL)` rounds the helper makes before it gives up.
const HELPER_ROUNDS: u32 = 100;
/// The helper's pause between rounds (1 ms: dying processes need a moment to
/// leave the task list).
const HELPER_PAUSE_NS: i64 = 1_000_000;
/// How often the caller looks at the helper and the uid's processes.
const POLL: Duration = Duration::from_millis(5);

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

/// The first uid of ordinary users: `UID_MIN` from `/etc/login.defs`, never
/// below [`MIN_USER_UID`].
pub fn user_uid_min() -> u32 {
    std::fs::read_to_string("/etc/login.defs")
        .ok()
        .and_then(|text| parse_uid_min(&text))
        .unwrap_or(MIN_USER_UID)
        .max(MIN_USER_UID)
}

/// `UID_MIN` of a login.defs text, if it sets one.
pub fn parse_uid_min(login_defs: &str) -> Option<u32> {
    login_defs.lines().find_map(|line| {
        let mut words = line.split_ascii_whitespace();
        (words.next()? == "UID_MIN").then(|| words.next()?.parse().ok())?
    })
}

/// SIGKILLs every process whose uid is `uid` and returns once none runs.
///
/// A helper process forks, becomes the uid (real, effective and saved, which
/// drops root's capabilities) and calls `kill(-1, SIGKILL)` until
/// `kill(-1, 0)` finds nothing left to signal, so a process that keeps forking
/// cannot escape. No grace period: call [`crate::stop`] with
/// [`Selector::Uid`] first to let the processes exit cleanly.
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
        // Whatever the helper saw (it cannot tell a zombie from a process), the
        // verdict is what /proc shows: a SIGKILLed process may take a moment to
        // leave, and a process another uid started as this one after the helper
        // ended needs another helper.
        let (survivors, zombies) = processes_of(uid)?;
        if survivors.is_empty() {
            return Ok(UidStopReport {
                uid,
                zombies,
                elapsed: started.elapsed(),
            });
        }
        if Instant::now() >= deadline {
            return Err(StopUidError::Survivors { uid, survivors });
        }
        std::thread::sleep(POLL);
    }
}

/// Forks the helper and waits for it (killing it at `deadline`).
fn run_helper(uid: u32, deadline: Instant) -> Result<(), StopUidError> {
    let helper_error = |source| StopUidError::Helper { uid, source };
    // SAFETY: the child calls only async-signal-safe system calls (setresuid,
    // capget, kill, nanosleep, _exit) through `helper_main`, so forking from a
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
    let pids = ProcRoot::live()
        .discover(&Selector::Uid(uid))
        .map_err(|source| StopUidError::Discover { uid, source })?;
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
/// process of the uid until none is left. Exit codes: 0 none left, 1 gave up,
/// 3 setresuid failed, 4 a capability remained.
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
        let pause = libc::timespec {
            tv_sec: 0,
            tv_nsec: HELPER_PAUSE_NS,
        };
        for _ in 0..HELPER_ROUNDS {
            libc::kill(-1, libc::SIGKILL);
            // ESRCH: nothing left we may signal (zombies still count, so the
            // caller, not this loop, decides what a zombie means).
            if libc::kill(-1, 0) != 0 && *libc::__errno_location() == libc::ESRCH {
                libc::_exit(0);
            }
            libc::nanosleep(&pause, std::ptr::null_mut());
        }
        libc::_exit(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uid_min_is_read_from_login_defs() {
        let text = "# UID_MIN 5\nMAIL_DIR /var/mail\nUID_MIN\t\t\t 1000\nUID_MAX 60000\n";
        assert_eq!(parse_uid_min(text), Some(1000));
        assert_eq!(parse_uid_min("SYS_UID_MIN 100\n"), None);
        assert_eq!(parse_uid_min("UID_MIN lots\n"), None);
    }

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
    fn own_uid_is_refused() {
        let own = rustix::process::getuid().as_raw();
        if own >= user_uid_min() {
            assert!(matches!(
                stop_uid(own, Duration::from_secs(1)),
                Err(StopUidError::OwnUid { .. })
            ));
        } else {
            eprintln!("skipped the own-uid case: running as system uid {own}");
        }
    }
}
