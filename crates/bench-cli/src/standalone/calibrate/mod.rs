//! `clibench calibrate`: the host's noise profile, before any target runs. How much a
//! fixed CPU loop's speed drifts on each CPU and between CPUs, how two events correlate
//! by their gap, and, for a command, how much its starts spread and what change a
//! 1-minute and a 5-minute budget of tight pairs could detect for it (see
//! `docs/verdicts.md`). The measurement of `scripts/host-drift.py`, in Rust.
//!
//! [`calibrate`] takes [`Settings`] and returns a [`Report`]; [`render`] is the table a
//! person reads.

mod cpu_linux;
mod measure;
mod report;
mod spread;
mod start_linux;

pub use cpu_linux::CpuError;
pub use measure::{CalibrateError, Settings, calibrate};
pub use report::{CorrelationAtGap, CpuDrift, DriftAtGap, Report, StartNoise, render};
pub use spread::BudgetPower;
pub use start_linux::StartError;
