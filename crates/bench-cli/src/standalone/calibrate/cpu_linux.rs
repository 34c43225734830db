//! The CPU half of `clibench calibrate`: one thread pinned to each CPU this process may
//! use, all at once, each timing a fixed loop back to back and averaging its log times
//! in windows aligned to one shared clock, so that window `k` of two CPUs is the same
//! moment.

use rustix::thread::{CpuSet, sched_getaffinity, sched_setaffinity};
use std::time::{Duration, Instant};

/// The steps of one timed chunk of the fixed loop: tens of microseconds, so a window
/// holds hundreds of them.
const CHUNK_STEPS: u64 = 1 << 13;

/// Why the CPUs could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum CpuError {
    /// The CPUs this process may run on could not be read.
    #[error("failed to read this process's CPU affinity")]
    Affinity(#[source] std::io::Error),
    /// A measuring thread could not be pinned to its CPU.
    #[error("failed to pin a thread to CPU {cpu}")]
    Pin {
        /// The CPU.
        cpu: usize,
        /// The system error.
        #[source]
        source: std::io::Error,
    },
    /// A measuring thread could not be started.
    #[error("failed to start the thread for CPU {cpu}")]
    Thread {
        /// The CPU.
        cpu: usize,
        /// The system error.
        #[source]
        source: std::io::Error,
    },
    /// A measuring thread panicked.
    #[error("the thread measuring CPU {cpu} panicked")]
    Panicked {
        /// The CPU.
        cpu: usize,
    },
}

/// One CPU's windows: the mean log time (in nanoseconds) of the chunks that started in
/// each window, `None` for a window without a chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuWindows {
    /// The CPU's number.
    pub cpu: usize,
    /// Window `k` covers `[k · window, (k + 1) · window)` from the shared start.
    pub windows: Vec<Option<f64>>,
    /// How many chunks were timed.
    pub chunks: u64,
}

/// The CPUs this process may run on, in order.
pub fn allowed_cpus() -> Result<Vec<usize>, CpuError> {
    let set = sched_getaffinity(None).map_err(|e| CpuError::Affinity(e.into()))?;
    Ok((0..CpuSet::MAX_CPU)
        .filter(|&cpu| set.is_set(cpu))
        .collect())
}

/// Times the fixed loop on every CPU of `cpus` at once for `duration`, in windows of
/// `window`.
pub fn measure(
    cpus: &[usize],
    duration: Duration,
    window: Duration,
) -> Result<Vec<CpuWindows>, CpuError> {
    let count = (duration.as_nanos() / window.as_nanos().max(1)) as usize;
    let start = Instant::now();
    std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for &cpu in cpus {
            let handle = std::thread::Builder::new()
                .name(format!("calibrate-cpu{cpu}"))
                .spawn_scoped(scope, move || one_cpu(cpu, start, window, count))
                .map_err(|source| CpuError::Thread { cpu, source })?;
            handles.push((cpu, handle));
        }
        handles
            .into_iter()
            .map(|(cpu, handle)| handle.join().map_err(|_| CpuError::Panicked { cpu })?)
            .collect()
    })
}

/// The loop of one pinned thread: chunks until the last window ends.
fn one_cpu(
    cpu: usize,
    start: Instant,
    window: Duration,
    count: usize,
) -> Result<CpuWindows, CpuError> {
    let mut set = CpuSet::new();
    set.set(cpu);
    sched_setaffinity(None, &set).map_err(|e| CpuError::Pin {
        cpu,
        source: e.into(),
    })?;
    let mut sums = vec![(0.0f64, 0u32); count];
    let mut chunks = 0;
    loop {
        let began = Instant::now();
        let index = (began.duration_since(start).as_nanos() / window.as_nanos().max(1)) as usize;
        let Some(slot) = sums.get_mut(index) else {
            break;
        };
        std::hint::black_box(bench_core::compare::speed_probe::xorshift_steps(
            std::hint::black_box(CHUNK_STEPS),
        ));
        let took = began.elapsed().as_nanos().max(1) as f64;
        slot.0 += took.ln();
        slot.1 += 1;
        chunks += 1;
    }
    let windows = sums
        .into_iter()
        .map(|(sum, n)| (n > 0).then(|| sum / f64::from(n)))
        .collect();
    Ok(CpuWindows {
        cpu,
        windows,
        chunks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_allowed_cpu_gets_its_windows() {
        let cpus = allowed_cpus().unwrap();
        assert!(!cpus.is_empty());
        let measured =
            measure(&cpus, Duration::from_millis(200), Duration::from_millis(50)).unwrap();
        assert_eq!(measured.len(), cpus.len());
        for cpu in &measured {
            assert_eq!(cpu.windows.len(), 4);
            // A busy machine may leave a window without a chunk, never all of them.
            assert!(cpu.windows.iter().flatten().count() > 0);
            assert!(
                cpu.windows
                    .iter()
                    .flatten()
                    .all(|log| log.is_finite() && *log > 0.0)
            );
        }
    }
}
