//! The processes of a terminal session, read from `/proc/<pid>/stat` with
//! bench-proc's one stat parser, and stopping them, on Linux.

use bench_proc::parse::{Stat, parse_stat};
use rustix::process::{Pid, Signal, WaitOptions};
use std::path::Path;

/// Every process under `proc_root` whose session is `sid`, including zombies.
/// Processes that vanish while the folder is walked are skipped.
pub(crate) fn session_processes(proc_root: &Path, sid: u32) -> Vec<Stat> {
    let Ok(entries) = std::fs::read_dir(proc_root) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|name| name.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|entry| bench_proc::read_proc_file(entry.path().join("stat")).ok())
        .filter_map(|bytes| parse_stat(std::str::from_utf8(&bytes).ok()?))
        .filter(|line| line.session == sid)
        .collect()
}

/// Sends SIGKILL to the process group `sid` and to every live process of session
/// `sid` (members may have moved to other groups), and reaps the zombies among
/// them that are our own children, except the session leader `sid` itself, whose
/// status belongs to its `std::process::Child`. Never signals this process.
pub(crate) fn kill_session(sid: u32) -> Vec<Stat> {
    let own = std::process::id();
    if let Some(group) = Pid::from_raw(sid as i32) {
        // ESRCH only means the group is already gone.
        let _ = rustix::process::kill_process_group(group, Signal::KILL);
    }
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
