//! Memory of process families, process control, disk footprint and host facts.
//!
//! Everything here reads `/proc` (Linux only) and never prints.
//!
//! ```no_run
//! use bench_proc::{snapshot, Selector};
//!
//! let family = snapshot(&Selector::Tree(std::process::id()))?;
//! println!("{} bytes RSS, {:?} bytes PSS", family.total_rss_bytes(), family.total_pss_bytes());
//! # Ok::<(), bench_proc::SnapshotError>(())
//! ```
//!
//! # Sections
//! - [`snapshot`] and [`ProcRoot`]: RSS, PSS (anon/file/shmem), USS, swap, CPU
//!   seconds (nanosecond resolution, from `schedstat`; [`family_cpu_seconds`] reads
//!   them alone, [`family_queued_since`] how long the processes started since a
//!   [`family_mark`] waited for a CPU) and threads
//!   of a tree, a uid, a session or a process group.
//! - [`Sampler`]: the family's totals every N ms in the background, with peaks.
//! - [`become_subreaper`]: keep double-forked daemons in the tree.
//! - [`Leader`]: a child leading its own process group, looked at without
//!   reaping, its group signalled only while its pid is still ours.
//! - [`Identity`]: the uid, gid and groups a child switches to before exec;
//!   [`uid_range`]: ordinary users' uids, from `/etc/login.defs`.
//! - [`stop`]: SIGTERM, grace, SIGKILL, reap, verify.
//! - [`stop_uid`]: every process of a uid, atomically against fork-hopping;
//!   [`uid_holders`]: the processes that hold a uid in any of their ids.
//! - [`detach`]: a child's own session and no inherited descriptor above 2.
//! - [`clear_keyrings`]: a uid's kernel keyrings emptied and dropped;
//!   [`key_users`]: the uids that own keys.
//! - [`disk_usage`]: apparent size of a directory tree, like `du --apparent-size`.
//! - [`HostFacts`]: cpu model, cores, memory, kernel, architecture, page size.
//! - [`settle`]: waiting until a family's memory is quiet (or a fixed time).
//! - [`staircase`]: the marginal memory of one more instance, and its report recorded
//!   in a result ([`staircase::record_report`]).
#![warn(missing_docs)]

mod affinity_linux;
mod cpu_linux;
mod disk;
mod host_linux;
mod identity;
mod isolate_linux;
mod keyrings_linux;
mod kinds_linux;
mod leader;
mod login_defs;
pub mod parse;
mod proc_read_linux;
mod sampler;
pub mod settle;
mod signals_linux;
mod snapshot_linux;
pub mod staircase;
mod stop_linux;
mod stop_uid_linux;
mod subreaper_linux;
#[cfg(test)]
mod test_tree;
mod trim_linux;

pub use affinity_linux::{AffinityError, Pinned, allowed_cpus};
pub use disk::{DEFAULT_EXCLUDES, DiskError, disk_usage, wildcard_match};
pub use host_linux::{HostError, HostFacts, cpu_model, mem_total_bytes};
pub use identity::{Identity, IdentitySwitch};
pub use isolate_linux::{close_descriptors_above_stderr, detach, new_session};
pub use keyrings_linux::{KeyringError, clear_keyrings, key_users, parse_key_users};
pub use leader::Leader;
pub use login_defs::{parse_uid_range, uid_range};
pub use sampler::{SamplePoint, Sampler, SamplerOptions, SamplerReport};
pub use settle::{Settle, SettleEnd, SettleReport};
pub use signals_linux::{SignalWatchError, TERMINATION_SIGNALS, on_termination_signal};
pub use snapshot_linux::{
    MemoryRead, ProcRoot, ProcessMark, ProcessSample, Selector, Snapshot, SnapshotError,
    StatTotals, family_cpu_seconds, family_mark, family_queued_since, read_proc_file, snapshot,
    snapshot_with_cpu,
};
pub use staircase::{Instances, StageSettle, StaircaseOptions, StaircaseReport};
pub use stop_linux::{
    StopError, StopReport, Survivor, pids_with_environment, process_stat, stop, stop_environment,
};
pub use stop_uid_linux::{
    MIN_USER_UID, StopUidError, UidStopReport, stop_uid, uid_holders, user_uid_min,
};
pub use subreaper_linux::{SubreaperError, become_subreaper, is_subreaper};
pub use trim_linux::release_free_memory;
