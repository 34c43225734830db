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
//!   seconds and threads of a tree, a uid, a session or a process group.
#![warn(missing_docs)]

pub mod parse;
mod snapshot_linux;

pub use snapshot_linux::{ProcRoot, ProcessSample, Selector, Snapshot, SnapshotError, snapshot};
