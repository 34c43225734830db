//! The runtime phase: the REPL kernel metrics (`kernel_start` ... `restore`) of the spec's
//! kernel command, run as the trial user in the fixture workspace, with bench-term's
//! measurement sequence (`bench_term::kernel::measure::run_all`, the seed's `runtime()`)
//! and memory read by bench-proc.

use super::PhaseContext;
use super::exec;
use super::home;
use super::measure::{Family, process_memory, resolve_program};
use anyhow::{Context, bail};
use bench_core::{Metric, Sample, Side, record};
use bench_term::kernel::KernelOptions;
use bench_term::kernel::measure::{RuntimeOptions, run_all};
use std::path::Path;

/// Runs the runtime phase for `ctx.trial`.
pub fn run(ctx: &PhaseContext, side: &mut Side) -> anyhow::Result<()> {
    let runtime = ctx
        .spec
        .runtime
        .as_ref()
        .context("the spec has no [runtime] section")?;
    let user = ctx.user()?;
    let family = Family::of(user)?;
    exec::stop_user(user).context("stopping the target's processes before the kernel starts")?;
    let trial = ctx.trial;
    let owner = user
        .dedicated
        .then_some((user.identity.uid, user.identity.gid));
    let state_dir = home::create_dir(
        &user.home,
        Path::new(&format!("runtime-benchmark-{trial}")),
        owner,
    )
    .context("creating the kernel's state folder in the home")?;

    let values = ctx.values();
    let argv = ctx.expand_command(&runtime.command, &values)?;
    let Some((program, args)) = argv.split_first() else {
        bail!("[runtime] command is empty");
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

    let mut memory = |metric: Metric, _pid: u32| -> Result<u64, String> {
        let snapshot = family.snapshot().map_err(|error| format!("{error:#}"))?;
        if snapshot.processes.is_empty() {
            return Err("no kernel process was found for the memory measurement".to_owned());
        }
        // The seed keeps the breakdown of each memory reading next to the result.
        if let Ok(path) = ctx.log_path(&format!("{}-{trial}.json", metric.name()))
            && let Ok(json) = serde_json::to_string_pretty(&process_memory(&snapshot))
        {
            let _ = bench_core::io::write_atomic(&path, json.as_bytes());
        }
        Ok(snapshot.total_rss_bytes())
    };
    let report = run_all(&options, &mut memory);

    for &(metric, ref value) in &report.values {
        let sample = match value {
            Ok(value) => Sample::Value(*value),
            Err(error) => Sample::Error(error.clone()),
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
    let stopped = exec::stop_user(user).context("stopping the kernel's processes");
    let removed = std::fs::remove_dir_all(&state_dir)
        .with_context(|| format!("removing {}", state_dir.display()));
    if let Some(error) = report.close_error {
        bail!("closing the kernel: {error}");
    }
    stopped?;
    removed
}
