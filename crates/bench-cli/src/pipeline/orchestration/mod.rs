//! Running phases in order: the plan (`Plan`) checked before anything runs, one phase of
//! one trial merged into `OUT/result.json` (`phase_run`), what it recorded handed to the
//! runner rather than read back (`recorded`), the contract of a re-executed
//! phase child ([`phase_child`]), the trial loop (`runner`), the interleaved order of an
//! A/B run ([`schedule`], [`ab`]) and when it may stop sampling ([`auto_trials`]), a
//! board's rounds and how long they should take ([`board_rounds`], [`board_estimate`]),
//! merging shards ([`merge`]),
//! the identifier each invocation gives its results (`invocation`), the circumstances each
//! trial records ([`circumstances`]), runtime, ui and session trials of both sides run at
//! once (`trial_duet`) and dropping page caches
//! before a cold start (`caches_linux`).

pub mod ab;
pub mod auto_trials;
pub mod board;
pub mod board_estimate;
pub mod board_rounds;
pub(crate) mod caches_linux;
pub mod circumstances;
pub(crate) mod invocation;
pub mod merge;
pub mod phase_child;
pub(crate) mod phase_run;
pub(crate) mod plan;
pub(crate) mod recorded;
pub(crate) mod runner;
pub mod schedule;
pub(crate) mod skip_rules;
pub(crate) mod trial_duet;
