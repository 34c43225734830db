//! The processes of a terminal session, from bench-proc's walk of `/proc`, and
//! stopping them, on Linux.

use bench_proc::parse::Stat;
use bench_proc::{Leader, ProcRoot};
use rustix::process::{Pid, Signal, WaitOptions};
use std::path::Path;

/// One process of a terminal's session, as `/proc/PID/stat` showed it.
///
/// bench-term's own type rather than bench-proc's `Stat`: callers need the pid,
/// the name and the state, not the parser's two dozen fields, which change with
/// the parser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionProcess {
    /// Process id.
    pub pid: u32,
    /// Kernel name (`comm`), as the process may have set it: text from the target.
    pub name: String,
    /// One-letter state (`R`, `S`, `D`, ...; a `D` process is stuck in the kernel).
    pub state: char,
}

impl From<&Stat> for SessionProcess {
    fn from(stat: &Stat) -> SessionProcess {
        SessionProcess {
            pid: stat.pid,
            name: stat.name.clone(),
            state: stat.state,
        }
    }
}

/// Every process under `proc_root` whose session is `sid`, including zombies.
/// Processes that vanish while the folder is walked are skipped; an unreadable
/// `proc_root` has none.
pub(crate) fn session_processes(proc_root: &Path, sid: u32) -> Vec<Stat> {
    ProcRoot::new(proc_root)
        .stats()
        .unwrap_or_default()
        .into_iter()
        .filter(|stat| stat.session == sid)
        .collect()
}

/// Sends SIGKILL to the leader's process group (only while the leader is
/// unreaped, see [`Leader::kill_group`]) and to every live process of its session
/// (members may have moved to other groups), and reaps the zombies among them
/// that are our own children, except the leader itself, whose status is its
/// [`Leader`]'s. Never signals this process. Returns the members still alive.
pub(crate) fn kill_session(leader: &mut Leader) -> Vec<Stat> {
    let own = std::process::id();
    let sid = leader.pid();
    // Ok(false) only means the group is already gone (or the leader was reaped,
    // and then its ids are not ours to signal).
    let _ = leader.kill_group(Signal::KILL);
    let members = session_processes(Path::new("/proc"), sid);
    for member in &members {
        let Some(pid) = Pid::from_raw(member.pid as i32) else {
            continue;
        };
        if member.pid == own {
            continue;
        }
        if member.is_zombie() {
            if member.ppid == own && member.pid != sid {
                let _ = rustix::process::waitpid(Some(pid), WaitOptions::NOHANG);
            }
        } else {
            let _ = rustix::process::kill_process(pid, Signal::KILL);
        }
    }
    members.into_iter().filter(|m| !m.is_zombie()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walker_reads_a_fixture_tree() {
        let root = tempfile::tempdir().unwrap();
        for (pid, session) in [(10, 10), (11, 10), (12, 99)] {
            let folder = root.path().join(pid.to_string());
            std::fs::create_dir(&folder).unwrap();
            // A whole stat line: pid, name, state, ppid, pgrp, session, then the
            // rest of the fields up to rss.
            std::fs::write(
                folder.join("stat"),
                format!(
                    "{pid} (p {pid}) S 1 {pid} {session} 0 -1 4194304 0 0 0 0 1 2 0 0 20 0 1 0 100 0 7\n"
                ),
            )
            .unwrap();
        }
        std::fs::create_dir(root.path().join("self")).unwrap();
        let mut pids: Vec<u32> = session_processes(root.path(), 10)
            .into_iter()
            .map(|stat| stat.pid)
            .collect();
        pids.sort();
        assert_eq!(pids, vec![10, 11]);
    }
}
