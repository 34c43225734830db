//! The phases of one trial, one file each, in the order a run takes them: [`prepare`]
//! (fetch, build, pack), [`install`] (a fresh home, the artifacts checked, the installer),
//! [`measure`] (cold and warm start, memory, disk; its `pair` runs both sides' timed starts of an A/B run's tight pair), [`runtime`] (the REPL kernel), [`ui`]
//! (the spec's steps and keystroke latency), [`session`] (the agent at work, turn by
//! turn, against the trial's model endpoint) and [`staircase`] (one more instance at a
//! time). Each phase gets a [`PhaseContext`](super::PhaseContext) and records into a
//! `Side`; the measured program's toolkit they share lives in [`program`](super::program).

pub(crate) mod install;
pub(crate) mod measure;
pub(crate) mod prepare;
pub(crate) mod runtime;
pub(crate) mod session;
pub(crate) mod staircase;
pub(crate) mod ui;
