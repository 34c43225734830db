//! The processes of a terminal session, read from `/proc/<pid>/stat`, and
//! stopping them, on Linux.
//!
//! bench-term does not depend on bench-proc: this is the small part of process
//! control it needs to leave nothing behind.

use rustix::process::{Pid, Signal, WaitOptions};
use std::path::Path;

/// The fields of `/proc/<pid>/stat` that place a process in a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatLine {
    /// Process id.
    pub pid: u32,
    /// Command name (`comm`), at most 15 bytes.
    pub name: String,
    /// State letter: `R`, `S`, `D`, `Z` (zombie), `X` (dead), ...
    pub state: char,
    /// Parent pid.
    pub ppid: u32,
    /// Process group id.
    pub pgrp: u32,
    /// Session id.
    pub session: u32,
}

impl StatLine {
    /// Whether the process has exited and only waits to be reaped (or is gone).
    pub fn is_dead(&self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// Parses one `/proc/<pid>/stat` line. The name sits in parentheses and may itself
/// contain spaces and parentheses, so the fields after it are found from the last `)`.
pub fn parse_stat(text: &str) -> Option<StatLine> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    let name = text.get(open + 1..close)?.to_owned();
    let mut fields = text.get(close + 1..)?.split_ascii_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    let session = fields.next()?.parse().ok()?;
    Some(StatLine {
        pid,
        name,
        state,
        ppid,
        pgrp,
        session,
    })
}

/// Every process under `proc_root` whose session is `sid`, including zombies.
/// Processes that vanish while the folder is walked are skipped.
pub fn session_processes(proc_root: &Path, sid: u32) -> Vec<StatLine> {
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
        .filter_map(|entry| std::fs::read_to_string(entry.path().join("stat")).ok())
        .filter_map(|text| parse_stat(&text))
        .filter(|line| line.session == sid)
        .collect()
}

/// Sends SIGKILL to the process group `sid` and to every live process of session
/// `sid` (members may have moved to other groups), and reaps the zombies among
/// them that are our own children, except the session leader `sid` itself, whose
/// status belongs to its `std::process::Child`. Never signals this process.
pub(crate) fn kill_session(sid: u32) -> Vec<StatLine> {
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
        if member.is_dead() {
            if member.ppid == own && member.pid != sid {
                let _ = rustix::process::waitpid(Some(pid), WaitOptions::NOHANG);
            }
        } else {
            let _ = rustix::process::kill_process(pid, Signal::KILL);
        }
    }
    members.into_iter().filter(|m| !m.is_dead()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_spaces_and_parentheses_parse() {
        let line = "4242 (my (odd) name) S 1 4242 4242 34816 4242 4194560 0 0";
        assert_eq!(
            parse_stat(line),
            Some(StatLine {
                pid: 4242,
                name: "my (odd) name".into(),
                state: 'S',
                ppid: 1,
                pgrp: 4242,
                session: 4242,
            })
        );
    }

    #[test]
    fn truncated_lines_are_rejected() {
        assert_eq!(parse_stat("12 (sh) S 1"), None);
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn zombies_count_as_dead() {
        let zombie = parse_stat("7 (x) Z 1 7 7 0").unwrap();
        assert!(zombie.is_dead());
        assert!(!parse_stat("7 (x) D 1 7 7 0").unwrap().is_dead());
    }

    #[test]
    fn the_walker_reads_a_fixture_tree() {
        let root = tempfile::tempdir().unwrap();
        for (pid, session) in [(10, 10), (11, 10), (12, 99)] {
            let folder = root.path().join(pid.to_string());
            std::fs::create_dir(&folder).unwrap();
            std::fs::write(
                folder.join("stat"),
                format!("{pid} (p{pid}) S 1 {pid} {session} 0\n"),
            )
            .unwrap();
        }
        std::fs::create_dir(root.path().join("self")).unwrap();
        let mut pids: Vec<u32> = session_processes(root.path(), 10)
            .into_iter()
            .map(|l| l.pid)
            .collect();
        pids.sort();
        assert_eq!(pids, vec![10, 11]);
    }
}
