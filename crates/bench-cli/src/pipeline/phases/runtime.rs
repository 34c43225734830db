//! The runtime phase: the REPL kernel metrics (`kernel_start` ... `restore`) of the spec's
//! kernel command, run as the trial user in the fixture workspace, with bench-term's
//! measurement sequence (`bench_term::kernel::measure::run_all`, the same sequence
//! `clibench kernel` runs) and memory read by bench-proc.

use crate::pipeline::PhaseContext;
use crate::pipeline::isolation::command;
use crate::pipeline::isolation::home;
use crate::pipeline::program::TargetError;
use crate::pipeline::program::family::{Family, process_memory};
use crate::pipeline::program::terminal::resolve_program;
use bench_core::error_chain;
use bench_core::{Metric, Sample, Side, record};
use bench_term::kernel::KernelOptions;
use bench_term::kernel::measure::{ProbeError, RuntimeOptions, run_all};
use std::path::Path;

/// The runtime phase failed (a kernel metric that failed is recorded, not returned).
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The spec has no `[runtime]`.
    #[error("the spec has no [runtime] section")]
    NoSection,
    /// The command is empty once expanded.
    #[error("[runtime] command is empty")]
    EmptyCommand,
    /// The phase's context lacks the user, or a placeholder has no value.
    #[error(transparent)]
    Context(#[from] crate::pipeline::ContextError),
    /// The kernel's process family could not be set up.
    #[error(transparent)]
    Family(#[from] TargetError),
    /// The target's or kernel's processes could not be stopped.
    #[error("{action}")]
    Stop {
        /// "stopping the kernel's processes".
        action: &'static str,
        /// What is left.
        #[source]
        source: command::StopError,
    },
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

/// Runs the runtime phase for `ctx.trial`.
pub fn run(ctx: &PhaseContext, side: &mut Side) -> Result<(), RuntimeError> {
    let runtime = ctx.spec.runtime.as_ref().ok_or(RuntimeError::NoSection)?;
    let user = ctx.user()?;
    let family = Family::of(user)?;
    command::stop_user(user).map_err(|source| RuntimeError::Stop {
        action: "stopping the target's processes before the kernel starts",
        source,
    })?;
    let trial = ctx.trial;
    let owner = user
        .dedicated
        .then_some((user.identity.uid, user.identity.gid));
    let state_dir = home::create_dir(
        &user.home,
        Path::new(&format!("runtime-benchmark-{trial}")),
        owner,
    )
    .map_err(RuntimeError::StateDir)?;

    let values = ctx.values();
    let argv = ctx.expand_command(&runtime.command, &values)?;
    let Some((program, args)) = argv.split_first() else {
        return Err(RuntimeError::EmptyCommand);
    };
    let env = ctx.environment(&runtime.env, &values)?;
    let cwd = ctx.cwd(runtime.cwd.as_ref(), &ctx.default_target_cwd()?, &values)?;
    let mut kernel = KernelOptions::new(resolve_program(program, &env), args, cwd, env);
    kernel.ready_timeout = runtime.timeout.0;
    kernel.request_timeout = runtime.timeout.0;
    if user.dedicated {
        kernel.user = Some(user.identity.clone());
    }
    let mut options = RuntimeOptions::new(kernel, &state_dir);
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
    let stopped = command::stop_user(user).map_err(|source| RuntimeError::Stop {
        action: "stopping the kernel's processes",
        source,
    });
    let removed =
        std::fs::remove_dir_all(&state_dir).map_err(|source| RuntimeError::RemoveStateDir {
            path: state_dir.clone(),
            source,
        });
    if let Some(error) = report.close_error {
        return Err(RuntimeError::Close(error));
    }
    stopped?;
    removed
}
