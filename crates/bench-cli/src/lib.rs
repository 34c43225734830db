//! clibench's pipeline as a library: what `clibench run` does, usable from any Rust tool.
//!
//! A target is described by a TOML [`spec`]; the [`pipeline`] runs its phases
//! (prepare -> install -> measure -> runtime -> ui -> session -> staircase), each trial merging its
//! observations into one `result.json` (the format of `bench_core::ResultFile`). The
//! [`demo`] module writes the built-in demo agent, which needs no network. [`exports`] writes
//! the files `compare` and `startup` export beside what they print.
//! [`standalone`] measures a command given on the command line, without a spec (what
//! `clibench startup`, `kernel`, `mem` and `staircase` do). [`history`] keeps every
//! result in one SQLite file and finds change points in its series. The model endpoint
//! the session and staircase phases start for a trial is the `bench-model` crate.
//!
//! The library never prints and never exits: the [`pipeline::Runner`] reports progress
//! through a [`pipeline::Observer`] and returns typed errors ([`pipeline::Error`]). How a
//! phase runs is a setting ([`pipeline::Execution`]): in this process, or by re-running a
//! given `clibench` binary as `clibench phase NAME`, a process per phase, so that a phase
//! that hangs or crashes cannot take the run down with it.
//!
//! ```no_run
//! use bench_cli::pipeline::{Execution, Plan, Runner, SilentObserver};
//! use std::path::Path;
//!
//! let out = Path::new("/tmp/clibench-demo");
//! let demo = bench_cli::demo::materialise(&out.join("demo"))?;
//! let plan = Plan::for_spec_file(&demo.spec, out)?;
//! let outcome = Runner::new(plan, Execution::InProcess).run(&mut SilentObserver)?;
//! println!("{} step(s) failed", outcome.failed.len());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod demo;
pub mod exports;
pub mod history;
pub mod inputs;
pub mod invoked;
pub mod pipeline;
pub mod spec;
pub mod standalone;
