//! Confining the calling thread (and every thread and process it starts afterwards) to one
//! CPU: a duet's two programs pinned to the same CPU share its run queue, so whatever else
//! the machine runs delays both alike.

use rustix::thread::{CpuSet, sched_getaffinity, sched_setaffinity};

/// The calling thread's CPUs could not be read or set.
#[derive(Debug, thiserror::Error)]
pub enum AffinityError {
    /// `sched_getaffinity` failed.
    #[error("reading the CPUs this thread may run on")]
    Read(#[source] std::io::Error),
    /// `sched_setaffinity` failed.
    #[error("confining this thread to CPU {cpu}")]
    Set {
        /// The CPU asked for.
        cpu: usize,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// The CPUs the calling thread may run on, in ascending order.
pub fn allowed_cpus() -> Result<Vec<usize>, AffinityError> {
    let set = sched_getaffinity(None).map_err(|errno| AffinityError::Read(errno.into()))?;
    Ok(cpus_in(&set))
}

/// The CPUs of `set`, in ascending order.
fn cpus_in(set: &CpuSet) -> Vec<usize> {
    (0..CpuSet::MAX_CPU)
        .filter(|&cpu| set.is_set(cpu))
        .collect()
}

/// A thread confined to one CPU until dropped, when its earlier CPUs are given back.
/// Threads and processes started meanwhile inherit the one CPU and keep it.
#[derive(Debug)]
pub struct Pinned {
    before: CpuSet,
    cpu: usize,
}

impl Pinned {
    /// Confines the calling thread to the `index`-th of the CPUs it may run on (counted
    /// round, so that successive indices take the CPUs in turn).
    pub fn to_nth_allowed(index: usize) -> Result<Pinned, AffinityError> {
        let before = sched_getaffinity(None).map_err(|errno| AffinityError::Read(errno.into()))?;
        let allowed = cpus_in(&before);
        // A thread always may run somewhere; an empty set would be the kernel's bug.
        let cpu = match allowed.len() {
            0 => 0,
            count => allowed[index % count],
        };
        let mut one = CpuSet::new();
        one.set(cpu);
        sched_setaffinity(None, &one).map_err(|errno| AffinityError::Set {
            cpu,
            source: errno.into(),
        })?;
        Ok(Pinned { before, cpu })
    }

    /// The CPU the thread is confined to.
    pub fn cpu(&self) -> usize {
        self.cpu
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // Giving the CPUs back can only fail if they went offline; the thread then keeps
        // the one it has, which is still a CPU it may run on.
        let _ = sched_setaffinity(None, &self.before);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_thread_and_its_children_run_on_one_cpu_until_dropped() {
        let before = allowed_cpus().unwrap();
        assert!(!before.is_empty());
        let wanted = before[1 % before.len()];
        let pinned = Pinned::to_nth_allowed(1).unwrap();
        assert_eq!(pinned.cpu(), wanted);
        assert_eq!(allowed_cpus().unwrap(), vec![wanted]);
        // A thread started now inherits the one CPU.
        let inherited = std::thread::spawn(|| allowed_cpus().unwrap())
            .join()
            .unwrap();
        assert_eq!(inherited, vec![wanted]);
        // So does a process: its status names the CPUs it may use.
        let status = std::process::Command::new("grep")
            .args(["Cpus_allowed_list", "/proc/self/status"])
            .output()
            .unwrap();
        let listed = String::from_utf8_lossy(&status.stdout);
        assert!(
            listed.trim_end().ends_with(&format!("\t{wanted}")),
            "{listed}"
        );
        drop(pinned);
        assert_eq!(allowed_cpus().unwrap(), before);
    }
}
