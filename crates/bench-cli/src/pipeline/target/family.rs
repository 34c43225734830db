//! Where the target's processes are found for memory measurements, and their memory in
//! the result's form.

use crate::pipeline::out::state::UserRecord;
use crate::pipeline::target::TargetError;
use bench_core::ProcessMemory;
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
    pub(crate) fn of(user: &UserRecord) -> Result<Family, TargetError> {
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
    /// CPU seconds the family has spent so far, at nanosecond resolution, read without
    /// the memory (so it can be read the moment a start is ready).
    pub(crate) fn cpu_seconds(self) -> Result<f64, TargetError> {
        let (selector, exclude) = self.selector();
        bench_proc::family_cpu_seconds(&selector, &exclude).map_err(|source| {
            TargetError::Snapshot {
                selector: format!("{selector:?}"),
                source,
            }
        })
    }
}

/// The per-process breakdown in the result's form.
pub(crate) fn process_memory(snapshot: &Snapshot) -> Vec<ProcessMemory> {
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
        })
        .collect()
}
