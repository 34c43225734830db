//! The ui phase: the spec's interactive steps, each timed (wall clock, and the CPU time of
//! the target's whole process family), then the family's RSS, then the keystroke-to-screen
//! latency distribution.
//!
//! Records `ui_steps` (total wall seconds of the steps), `ui_cpu` (CPU seconds of the family
//! during them), `ui_rss` (family RSS after them) and `keystroke` (median latency); the
//! timings get `ui:<step>` (wall), `ui:<step>:cpu`, and `keystroke:min|p95|max`; every
//! keystroke's latency goes to OUT/logs/keystrokes-<trial>.json.

use super::PhaseContext;
use super::exec;
use super::measure::{
    Family, close_quietly, keep_start_files, ready_guard, spawn_options, stop_agents,
};
use super::recording::{Recording, keep_screen};
use anyhow::{Context, bail};
use bench_core::{Metric, Phase, Sample, Side, record};
use bench_term::Terminal;
use std::time::{Duration, Instant};

/// Runs the ui phase for `ctx.trial`.
pub fn run(ctx: &PhaseContext, side: &mut Side) -> anyhow::Result<()> {
    let ui = ctx
        .spec
        .ui
        .as_ref()
        .context("the spec has no [ui] section")?;
    let measure = ctx
        .spec
        .measure
        .as_ref()
        .context("the ui phase needs [measure] (the ready mode, size and sessions)")?;
    if ui.steps.is_empty() {
        bail!("[ui] has no steps");
    }
    let user = ctx.user()?;
    let family = Family::of(user)?;
    exec::stop_user(user).context("stopping the target's processes before the ui steps")?;
    let command = ui.command.as_ref().unwrap_or(&measure.command);
    let options = spawn_options(
        ctx,
        command,
        ui.cwd.as_ref(),
        &ui.env,
        measure,
        &ctx.log_path(&format!("ui-{}", ctx.trial))?,
    )?;
    let recording = Recording::start(family, Phase::Ui, ctx.trial, "ui");
    let mut ready_after = None;
    let outcome = Terminal::spawn(&options)
        .context("starting the ui command in a terminal")
        .and_then(|mut terminal| {
            let measured = steps(ctx, side, &mut terminal, family, &mut ready_after);
            match measured {
                Ok(()) => terminal
                    .close()
                    .map(drop)
                    .context("closing the ui terminal"),
                Err(error) => {
                    close_quietly(&mut terminal);
                    Err(error)
                }
            }
        });
    recording.finish(side, ready_after);
    let kept = keep_start_files(ctx, &["ui"]);
    let stopped_agents = stop_agents(ctx, measure, user);
    let stopped = exec::stop_user(user).context("stopping the target's processes");
    outcome?;
    kept?;
    stopped_agents?;
    stopped
}

/// Ready, the steps, the family's RSS and the keystroke latency, each recorded as it is
/// measured; the first failure is recorded under the metric it stopped and ends the phase
/// (as the seed records a failed measurement rather than failing the phase as a whole).
fn steps(
    ctx: &PhaseContext,
    side: &mut Side,
    terminal: &mut Terminal,
    family: Family,
    ready_after: &mut Option<Duration>,
) -> anyhow::Result<()> {
    let ui = ctx
        .spec
        .ui
        .as_ref()
        .context("the spec has no [ui] section")?;
    let measure = ctx
        .spec
        .measure
        .as_ref()
        .context("the spec has no [measure] section")?;
    let trial = ctx.trial;
    let fail = |side: &mut Side, metric: Metric, error: &anyhow::Error| {
        record(side, metric, trial, Sample::Error(format!("{error:#}")));
    };
    let mode = measure.ready.clone();
    let guard = ready_guard(measure)?;
    match terminal.ready_guarded(&mode, measure.ready_timeout.0, &guard) {
        Ok(elapsed) => {
            *ready_after = Some(elapsed);
            keep_screen(side, Phase::Ui, trial, "ui", terminal.screen_text());
        }
        Err(error) => {
            let error =
                anyhow::Error::from(error).context("waiting for the ui command to be ready");
            fail(side, Metric::UiSteps, &error);
            return Ok(());
        }
    }
    // Let start-up work (daemons, first paints) finish so that it is not billed to step one.
    if let Err(error) = terminal.settle(measure.settle.0) {
        let error = anyhow::Error::from(error).context("letting the ui command settle");
        fail(side, Metric::UiSteps, &error);
        return Ok(());
    }

    let mut wall_seconds = 0.0;
    let mut cpu_seconds = 0.0;
    for step in &ui.steps {
        let pattern = regex::Regex::new(&step.expect)
            .with_context(|| format!("[[ui.steps]] '{}': expect is not a regex", step.name))?;
        let timed = (|| -> anyhow::Result<(f64, f64)> {
            let cpu_before = family.snapshot()?.total_cpu_seconds();
            let started = Instant::now();
            terminal.type_text(&step.keys)?;
            terminal
                .wait_for(&pattern, step.timeout.0)
                .with_context(|| format!("waiting for /{}/ after typing", step.expect))?;
            let wall = started.elapsed().as_secs_f64();
            let cpu_after = family.snapshot()?.total_cpu_seconds();
            Ok((wall, (cpu_after - cpu_before).max(0.0)))
        })();
        match timed {
            Ok((wall, cpu)) => {
                side.timings.insert(format!("ui:{}", step.name), wall);
                side.timings.insert(format!("ui:{}:cpu", step.name), cpu);
                wall_seconds += wall;
                cpu_seconds += cpu;
            }
            Err(error) => {
                let error = error.context(format!("ui step '{}'", step.name));
                fail(side, Metric::UiSteps, &error);
                fail(side, Metric::UiCpu, &error);
                return Ok(());
            }
        }
    }
    record(side, Metric::UiSteps, trial, Sample::Value(wall_seconds));
    record(side, Metric::UiCpu, trial, Sample::Value(cpu_seconds));

    match family.snapshot() {
        Ok(snapshot) if !snapshot.processes.is_empty() => record(
            side,
            Metric::UiRss,
            trial,
            Sample::Value(snapshot.total_rss_bytes() as f64),
        ),
        Ok(_) => record(
            side,
            Metric::UiRss,
            trial,
            Sample::Error("no process of the target was found".to_owned()),
        ),
        Err(error) => fail(side, Metric::UiRss, &error),
    }

    let samples = usize::try_from(ui.keystrokes).unwrap_or(usize::MAX).max(1);
    match terminal.keystroke_latency(samples) {
        Ok(latencies) => {
            let seconds: Vec<f64> = latencies.iter().map(|d| d.as_secs_f64()).collect();
            // The whole distribution, in seconds, next to the transcripts.
            let path = ctx.log_path(&format!("keystrokes-{trial}.json"))?;
            let json = serde_json::to_string(&seconds).context("serializing the latencies")?;
            bench_core::io::write_atomic(&path, json.as_bytes())
                .with_context(|| format!("writing {}", path.display()))?;
            let summary = bench_core::stats::Summary::from_values(&seconds)
                .context("no keystroke latency was measured")?;
            record(
                side,
                Metric::Keystroke,
                trial,
                Sample::Value(summary.median),
            );
            side.timings.insert("keystroke:min".to_owned(), summary.min);
            side.timings.insert("keystroke:p95".to_owned(), summary.p95);
            side.timings.insert("keystroke:max".to_owned(), summary.max);
        }
        Err(error) => {
            let error = anyhow::Error::from(error).context("measuring keystroke latency");
            fail(side, Metric::Keystroke, &error);
        }
    }
    Ok(())
}
