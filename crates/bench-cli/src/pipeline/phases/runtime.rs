//! The runtime phase: the REPL kernel metrics (`kernel_start` ... `restore`) of the spec's
//! kernel command, run as the trial user in the fixture workspace, with bench-term's
//! measurement sequence (`bench_term::kernel::measure::run_all`, the same sequence
//! `clibench kernel` runs) and memory read by bench-proc.

use crate::pipeline::PhaseContext;
use crate::pipeline::isolation::home;
use crate::pipeline::out::state::TrialUser;
use crate::pipeline::program::TargetError;
use crate::pipeline::program::family::process_memory;
use crate::pipeline::program::terminal::resolve_program;
use crate::pipeline::program::trial::{Closing, ProgramTrial};
use bench_core::error_chain;
use bench_core::{Metric, Sample, Side, record};
use bench_term::kernel::KernelOptions;
use bench_term::kernel::measure::{ProbeError, RuntimeOptions, run_all};
use std::path::{Path, PathBuf};

/// The runtime phase failed (a kernel metric that failed is recorded, not returned).
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The spec has no `[runtime]`.
    #[error("the spec has no [runtime] section")]
    NoSection,
    /// The command is empty once expanded.
    #[error("[runtime] command is empty")]
    EmptyCommand,
    /// The kernel's trial (its user, family, context) failed.
    #[error(transparent)]
    Program(#[from] TargetError),
    /// The kernel's state folder could not be created in the home.
    #[error("creating the kernel's state folder in the home")]
    StateDir(#[source] home::HomeWriteError),
    /// The kernel's state folder could not be removed.
    #[error("removing {}", path.display())]
    RemoveStateDir {
        /// The folder.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The kernel did not close cleanly.
    #[error("closing the kernel")]
    Close(#[source] bench_term::kernel::KernelError),
    /// The memory probe found none of the kernel's processes.
    #[error("no kernel process was found for the memory measurement")]
    NoKernelProcess,
}

crate::pipeline::program::context_error_is_the_programs!(RuntimeError);

/// Runs the runtime phase for `ctx.trial`.
pub fn run(ctx: &PhaseContext, side: &mut Side) -> Result<(), RuntimeError> {
    let runtime = ctx.spec.runtime.as_ref().ok_or(RuntimeError::NoSection)?;
    let program = ProgramTrial::open_kernel(ctx)?;
    let made = state_dir(program.user(), ctx.trial);
    let state_dir = made.as_ref().ok().cloned();
    let measured = made.and_then(|dir| kernel(ctx, runtime, &program, &dir, side));
    let closed = program.close(Closing::default(), measured);
    // Removed once nothing of the kernel is left to write into it.
    let removed = state_dir.map_or(Ok(()), |path| {
        std::fs::remove_dir_all(&path)
            .map_err(|source| RuntimeError::RemoveStateDir { path, source })
    });
    closed.and(removed)
}

/// The kernel's state folder in the home, owned by the trial user.
fn state_dir(user: &TrialUser, trial: u32) -> Result<PathBuf, RuntimeError> {
    let relative = format!("runtime-benchmark-{trial}");
    home::create_dir(&user.home, Path::new(&relative), user.home_owner())
        .map_err(RuntimeError::StateDir)
}

/// The kernel's measurements, in bench-term's order, each recorded; the kernel's close
/// error, if any.
fn kernel(
    ctx: &PhaseContext,
    runtime: &crate::spec::Runtime,
    program: &ProgramTrial<'_>,
    state_dir: &Path,
    side: &mut Side,
) -> Result<(), RuntimeError> {
    let (user, family, trial) = (program.user(), program.family(), ctx.trial);
    let values = ctx.values();
    let argv = ctx.expand_command(&runtime.command, &values)?;
    let Some((command, args)) = argv.split_first() else {
        return Err(RuntimeError::EmptyCommand);
    };
    let env = ctx.environment(&runtime.env, &values)?;
    let cwd = ctx.cwd(runtime.cwd.as_ref(), &ctx.default_target_cwd()?, &values)?;
    let mut kernel = KernelOptions::new(resolve_program(command, &env), args, cwd, env);
    kernel.ready_timeout = runtime.timeout.0;
    kernel.request_timeout = runtime.timeout.0;
    if user.dedicated {
        kernel.user = Some(user.identity.clone());
    }
    let mut options = RuntimeOptions::new(kernel, state_dir);
    options.transcript_dir = Some(ctx.logs_dir());
    options.trial = trial as usize;
    options.prelude = (!runtime.setup.is_empty()).then(|| runtime.setup.join("\n"));

    let mut memory = |metric: Metric, pid: u32| -> Result<u64, ProbeError> {
        let snapshot = family.snapshot()?;
        if snapshot.processes.is_empty() {
            return Err(RuntimeError::NoKernelProcess.into());
        }
        // The result keeps only totals; the per-process breakdown beside it in the logs
        // says which process a change in kernel memory came from.
        if let Ok(path) = ctx.log_path(&format!("{}-{trial}.json", metric.name()))
            && let Ok(json) = serde_json::to_string_pretty(&process_memory(&snapshot, Some(pid)))
        {
            let _ = bench_core::io::write_atomic(&path, json.as_bytes());
        }
        Ok(snapshot.total_rss_bytes())
    };
    let report = run_all(&options, &mut memory);

    for &(metric, ref value) in &report.values {
        let sample = match value {
            Ok(value) => Sample::Value(*value),
            Err(error) => Sample::Error(error_chain(error)),
        };
        record(side, metric, trial, sample);
    }
    if let Some(python) = &report.python {
        side.runtime.insert("python".to_owned(), python.clone());
    }
    if let Some(workload) = report.workload {
        side.runtime
            .insert("kernel_workload".to_owned(), workload.name().to_owned());
    }
    match report.close_error {
        Some(error) => Err(RuntimeError::Close(error)),
        None => Ok(()),
    }
}
