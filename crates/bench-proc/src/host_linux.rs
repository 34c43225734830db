//! Facts about the machine, for result headers.

use serde::Serialize;
use std::io;
use std::path::PathBuf;

/// The machine a measurement ran on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostFacts {
    /// `model name` from `/proc/cpuinfo` (or the closest field on non-x86
    /// machines), `"unknown"` if none.
    pub cpu_model: String,
    /// CPUs this process may run on (affinity and cgroup quota respected).
    pub cores: u32,
    /// `MemTotal` from `/proc/meminfo`, in bytes.
    pub memory_bytes: u64,
    /// `uname -r`.
    pub kernel_release: String,
    /// `uname -m`, e.g. `x86_64`.
    pub arch: String,
    /// Size of a memory page in bytes.
    pub page_size_bytes: u64,
}

/// Why host facts could not be read.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// A `/proc` file could not be read.
    #[error("failed to read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// `/proc/meminfo` has no `MemTotal` line.
    #[error("no MemTotal in /proc/meminfo")]
    NoMemTotal,
}

impl HostFacts {
    /// Reads the live machine's facts.
    pub fn read() -> Result<HostFacts, HostError> {
        let read = |path: &str| {
            crate::read_proc_file(path)
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                .map_err(|source| HostError::Read {
                    path: path.into(),
                    source,
                })
        };
        let cpuinfo = read("/proc/cpuinfo")?;
        let meminfo = read("/proc/meminfo")?;
        let uname = rustix::system::uname();
        Ok(HostFacts {
            cpu_model: cpu_model(&cpuinfo).unwrap_or_else(|| "unknown".into()),
            cores: std::thread::available_parallelism()
                .map_or(1, |n| u32::try_from(n.get()).unwrap_or(u32::MAX)),
            memory_bytes: mem_total_bytes(&meminfo).ok_or(HostError::NoMemTotal)?,
            kernel_release: uname.release().to_string_lossy().into_owned(),
            arch: uname.machine().to_string_lossy().into_owned(),
            page_size_bytes: rustix::param::page_size() as u64,
        })
    }
}

/// The CPU model from `/proc/cpuinfo`: `model name` on x86, else `Model`,
/// `Hardware`, `cpu model` or `cpu` (ARM, MIPS, POWER).
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    ["model name", "Model", "Hardware", "cpu model", "cpu"]
        .iter()
        .find_map(|wanted| {
            cpuinfo.lines().find_map(|line| {
                let (key, value) = line.split_once(':')?;
                (key.trim() == *wanted && !value.trim().is_empty())
                    .then(|| value.trim().to_string())
            })
        })
}

/// `MemTotal` of `/proc/meminfo` in bytes.
pub fn mem_total_bytes(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|line| line.starts_with("MemTotal:"))?;
    let kib: u64 = line["MemTotal:".len()..]
        .split_ascii_whitespace()
        .next()?
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x86_model_name_is_read() {
        let text = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel\t\t: 85\n\
                    model name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n";
        assert_eq!(
            cpu_model(text).as_deref(),
            Some("Intel(R) Xeon(R) CPU @ 2.20GHz")
        );
    }

    #[test]
    fn arm_falls_back_to_model() {
        let text =
            "processor\t: 0\nBogoMIPS\t: 108.00\n\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n";
        assert_eq!(
            cpu_model(text).as_deref(),
            Some("Raspberry Pi 4 Model B Rev 1.4")
        );
        assert_eq!(cpu_model("processor : 0\n"), None);
    }

    #[test]
    fn mem_total_is_bytes() {
        let text = "MemTotal:        8024564 kB\nMemFree:          123 kB\n";
        assert_eq!(mem_total_bytes(text), Some(8_024_564 * 1024));
        assert_eq!(mem_total_bytes("MemFree: 1 kB\n"), None);
    }

    #[test]
    fn live_facts_are_plausible() {
        let facts = HostFacts::read().unwrap();
        assert!(facts.cores >= 1);
        assert!(facts.memory_bytes > 64 << 20);
        assert!(facts.page_size_bytes >= 4096);
        assert_eq!(facts.arch, std::env::consts::ARCH);
        assert!(!facts.kernel_release.is_empty());
    }
}
