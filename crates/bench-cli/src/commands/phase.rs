//! `clibench phase NAME --spec S --out DIR --trial N [--keep-users]`: runs one phase of
//! the pipeline for one trial, merging into OUT/result.json. `clibench run` re-runs this
//! binary this way for each step, so that a phase that hangs or crashes is a process that
//! can be stopped without taking the run down.

use crate::pipeline::{self, PhaseRun};
use crate::spec::Override;
use bench_core::Phase;
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `clibench phase`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The phase: prepare, install, measure, runtime, ui, session or staircase.
    #[arg(value_parser = |name: &str| name.parse::<Phase>())]
    phase: Phase,
    /// The target spec (TOML; see docs/spec.md).
    #[arg(long)]
    spec: PathBuf,
    /// The output folder: result.json, logs, artifacts, homes.
    #[arg(long)]
    out: PathBuf,
    /// The trial number (for install: the install index).
    #[arg(long, default_value_t = 0, value_parser = super::trial_number)]
    trial: u32,
    /// Keep the trial users and homes at cleanup.
    #[arg(long)]
    keep_users: bool,
    /// Fetch the source from this repository instead of the spec's `source.repository`
    /// (`clibench run` passes it in CLIBENCH_REPOSITORY, off the command line).
    #[arg(long)]
    repository: Option<String>,
    /// Build this commit instead of the spec's `source.commit` (a full 40-character sha).
    #[arg(long)]
    commit: Option<String>,
    /// Override a spec key (KEY=VALUE, as `clibench run --set`). Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    overrides: Vec<Override>,
}

/// Runs `clibench phase`: the same contract as a step of `clibench run` re-executed as
/// its own process (the library's phase child), with the hint about what stays behind.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let run = PhaseRun {
        phase: args.phase,
        spec: args.spec,
        out: args.out,
        trial: args.trial,
        keep_users: args.keep_users,
        repository: args
            .repository
            .or_else(|| std::env::var(pipeline::REPOSITORY_VAR).ok()),
        commit: args.commit,
        overrides: args.overrides,
        partner: None,
        together: false,
        caches_dropped: None,
    };
    let code = pipeline::run_as_phase_child(&run, &mut crate::show::InertStderr::default());
    if run.phase == Phase::Install && pipeline::out::state::State::exists(&run.out) {
        say!(
            "the trial user and its home stay for the next phases; remove them with `clibench cleanup --out {}`",
            run.out.display()
        );
    }
    Ok(ExitCode::from(code))
}
