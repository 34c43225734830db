//! Where the target's processes are found for memory measurements, and their memory in
//! the result's form.

use crate::pipeline::out::state::TrialUser;
use crate::pipeline::program::TargetError;
use bench_core::{ProcessMemory, ProcessRole};
use bench_proc::{Selector, Snapshot};

/// Where the target's processes are found for memory measurements.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Family {
    /// A dedicated trial user: all its processes, daemons included.
    Uid(u32),
    /// Without root the target runs as us: everything below this phase process, which
    /// is a child subreaper so that daemons the target detaches stay below it.
    OwnTree(u32),
}

impl Family {
    /// The family of `user`'s target processes. Without a dedicated user this makes the
    /// phase process a child subreaper.
    pub(crate) fn of(user: &TrialUser) -> Result<Family, TargetError> {
        if user.dedicated {
            Ok(Family::Uid(user.identity.uid))
        } else {
            bench_proc::become_subreaper().map_err(TargetError::Subreaper)?;
            Ok(Family::OwnTree(std::process::id()))
        }
    }

    /// The selector and the pids to leave out.
    pub(crate) fn selector(self) -> (Selector, Vec<u32>) {
        match self {
            Family::Uid(uid) => (Selector::Uid(uid), Vec::new()),
            Family::OwnTree(pid) => (Selector::Tree(pid), vec![pid]),
        }
    }

    /// Memory of the family now.
    pub(crate) fn snapshot(self) -> Result<Snapshot, TargetError> {
        let (selector, exclude) = self.selector();
        let snapshot = bench_proc::snapshot(&selector).map_err(|source| TargetError::Snapshot {
            selector: format!("{selector:?}"),
            source,
        })?;
        Ok(snapshot.without(&exclude))
    }
}

impl Family {
    /// Memory of the family now (PSS too, or RSS alone: `read`) and the CPU seconds it
    /// has spent so far (as [`Family::cpu_seconds`] reads them), from one walk of its
    /// processes.
    pub(crate) fn snapshot_with_cpu(
        self,
        read: bench_proc::MemoryRead,
    ) -> Result<(Snapshot, f64), TargetError> {
        let (selector, exclude) = self.selector();
        bench_proc::snapshot_with_cpu(&selector, &exclude, read).map_err(|source| {
            TargetError::Snapshot {
                selector: format!("{selector:?}"),
                source,
            }
        })
    }

    /// CPU seconds the family has spent so far, at nanosecond resolution, read without
    /// the memory (so it can be read the moment a start is ready).
    pub(crate) fn cpu_seconds(self) -> Result<f64, TargetError> {
        self.cpu_seconds_leaving_out(None)
    }

    /// As [`Family::cpu_seconds`], `pid` left out: a program that exited at ready,
    /// whose time its reaping gives to the microsecond where its zombie has 10 ms ticks.
    pub(crate) fn cpu_seconds_without(self, pid: u32) -> Result<f64, TargetError> {
        self.cpu_seconds_leaving_out(Some(pid))
    }

    fn cpu_seconds_leaving_out(self, pid: Option<u32>) -> Result<f64, TargetError> {
        let (selector, mut exclude) = self.selector();
        exclude.extend(pid);
        bench_proc::family_cpu_seconds(&selector, &exclude).map_err(|source| {
            TargetError::Snapshot {
                selector: format!("{selector:?}"),
                source,
            }
        })
    }

    /// The family's processes now, to measure what the ones a start creates wait for a
    /// CPU ([`Family::queued_since`]).
    pub(crate) fn mark(self) -> Result<bench_proc::ProcessMark, TargetError> {
        let (selector, _) = self.selector();
        bench_proc::family_mark(&selector).map_err(|source| TargetError::Snapshot {
            selector: format!("{selector:?}"),
            source,
        })
    }

    /// How long the main threads of the family's processes started since `mark` have
    /// waited in a run queue for a CPU (see [`bench_proc::ProcRoot::queued_since`]).
    pub(crate) fn queued_since(
        self,
        mark: &bench_proc::ProcessMark,
    ) -> Result<std::time::Duration, TargetError> {
        let (selector, exclude) = self.selector();
        bench_proc::family_queued_since(&selector, &exclude, mark).map_err(|source| {
            TargetError::Snapshot {
                selector: format!("{selector:?}"),
                source,
            }
        })
    }
}

/// The per-process breakdown in the result's form, each process with its command line
/// and its role towards `program`, the pid clibench started (none when unknown).
pub(crate) fn process_memory(snapshot: &Snapshot, program: Option<u32>) -> Vec<ProcessMemory> {
    let family: Vec<Kin> = snapshot
        .processes
        .iter()
        .map(|p| Kin {
            pid: p.pid,
            ppid: p.ppid,
            session: p.session,
        })
        .collect();
    snapshot
        .processes
        .iter()
        .map(|process| ProcessMemory {
            pid: process.pid,
            ppid: Some(process.ppid),
            name: process.name.clone(),
            rss: process.rss_bytes,
            pss: process.pss_bytes,
            uss: process.uss_bytes,
            swap: process.swap_bytes,
            cpu_seconds: Some(process.cpu_seconds),
            threads: Some(process.threads),
            cmdline: (!process.cmdline.is_empty()).then(|| process.cmdline.clone()),
            role: program.map(|program| role(&family, program, process.pid)),
        })
        .collect()
}

/// A process's place in the family: enough to tell the program, its children and daemons.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Kin {
    pub(crate) pid: u32,
    pub(crate) ppid: u32,
    pub(crate) session: u32,
}

/// What `pid` is to `program`: the program itself; a child when its parent chain inside
/// the family reaches the program and it kept the program's session; otherwise a daemon
/// (it made its own session, or its parent died and it was reparented, so it can outlive
/// the program). Without the program in the family every other process is a daemon.
pub(crate) fn role(family: &[Kin], program: u32, pid: u32) -> ProcessRole {
    if pid == program {
        return ProcessRole::Program;
    }
    let find = |pid: u32| family.iter().find(|k| k.pid == pid);
    let (Some(leader), Some(me)) = (find(program), find(pid)) else {
        return ProcessRole::Daemon;
    };
    if me.session != leader.session {
        return ProcessRole::Daemon;
    }
    // Bounded by the family's size: a parent loop (pid reuse mid-walk) cannot spin.
    let mut parent = me.ppid;
    for _ in 0..family.len() {
        if parent == program {
            return ProcessRole::Child;
        }
        match find(parent) {
            Some(kin) => parent = kin.ppid,
            None => break,
        }
    }
    ProcessRole::Daemon
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kin(pid: u32, ppid: u32, session: u32) -> Kin {
        Kin { pid, ppid, session }
    }

    #[test]
    fn roles_tell_the_program_its_children_and_daemons() {
        // 10 is the program (its own session, parent outside the family); 11 its child,
        // 12 a grandchild; 13 a child that called setsid; 14 reparented to init.
        let family = [
            kin(10, 5, 10),
            kin(11, 10, 10),
            kin(12, 11, 10),
            kin(13, 10, 13),
            kin(14, 1, 10),
        ];
        let roles: Vec<ProcessRole> = family.iter().map(|k| role(&family, 10, k.pid)).collect();
        assert_eq!(
            roles,
            [
                ProcessRole::Program,
                ProcessRole::Child,
                ProcessRole::Child,
                ProcessRole::Daemon,
                ProcessRole::Daemon,
            ]
        );
    }

    #[test]
    fn without_the_program_everything_left_is_a_daemon() {
        let family = [kin(11, 1, 10), kin(12, 11, 10)];
        assert_eq!(role(&family, 10, 11), ProcessRole::Daemon);
        assert_eq!(role(&family, 10, 12), ProcessRole::Daemon);
    }

    #[test]
    fn a_parent_loop_ends() {
        let family = [kin(10, 5, 10), kin(20, 21, 10), kin(21, 20, 10)];
        assert_eq!(role(&family, 10, 20), ProcessRole::Daemon);
    }
}
