//! The ui phase: the spec's interactive steps, each timed (wall clock, and the CPU time of
//! the target's whole process family), then the family's RSS, then the keystroke-to-screen
//! latency distribution.
//!
//! Records `ui_steps` (total wall seconds of the steps), `ui_cpu` (CPU seconds of the family
//! during them), `ui_rss` (family RSS after them) and `keystroke` (median latency); the
//! timings get `ui:<step>` (wall), `ui:<step>:cpu`, and `keystroke:min|p95|max`; every
//! keystroke's latency goes to `OUT/logs/keystrokes-<trial>.json`.

use crate::pipeline::PhaseContext;
use crate::pipeline::context::LogFileError;
use crate::pipeline::program::TargetError;
use crate::pipeline::program::family::Family;
use crate::pipeline::program::recording::{Recording, keep_screen};
use crate::pipeline::program::terminal::terminal_output;
use crate::pipeline::program::trial::{Closing, ProgramTrial, in_terminal};
use bench_core::error_chain;
use bench_core::{Metric, Phase, Sample, Side, record};
use bench_term::Terminal;
use std::time::{Duration, Instant};

/// The ui phase failed.
#[derive(Debug, thiserror::Error)]
pub enum UiError {
    /// The spec has no `[ui]`.
    #[error("the spec has no [ui] section")]
    NoSection,
    /// The spec has no `[measure]`, whose ready mode, size and sessions the phase uses.
    #[error("the ui phase needs [measure] (the ready mode, size and sessions)")]
    NoMeasure,
    /// `[ui]` lists no steps.
    #[error("[ui] has no steps")]
    NoSteps,
    /// The program's trial, its terminal, family or sessions failed.
    #[error(transparent)]
    Program(#[from] TargetError),
    /// A step's `expect` is not a regex.
    #[error("[[ui.steps]] '{step}': expect is not a regex")]
    StepRegex {
        /// The step's name.
        step: String,
        /// Why.
        #[source]
        source: regex::Error,
    },
    /// A step failed.
    #[error("ui step '{step}'")]
    Step {
        /// The step's name.
        step: String,
        /// Why (boxed: it holds a terminal error).
        #[source]
        source: Box<StepError>,
    },
    /// The latencies could not be kept in `OUT/logs`.
    #[error(transparent)]
    Log(#[from] LogFileError),
    /// Not one keystroke's latency was measured.
    #[error("no keystroke latency was measured")]
    NoLatency,
}

/// Why one ui step failed.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// The family's CPU time could not be read.
    #[error(transparent)]
    Family(#[from] TargetError),
    /// The keys could not be typed.
    #[error(transparent)]
    Type(bench_term::TermError),
    /// The screen did not match in time.
    #[error("waiting for /{expect}/ after typing")]
    Wait {
        /// The pattern.
        expect: String,
        /// Why.
        #[source]
        source: bench_term::TermError,
    },
}

crate::pipeline::program::context_error_is_the_programs!(UiError);

/// What closing a ui trial does besides stopping the user and finishing the journal:
/// the ui command's screen at ready and recording are kept, and the agent's background
/// sessions stopped through its own commands.
const CLOSING: Closing<'static> = Closing {
    keep: &["ui"],
    stop_agents: true,
};

/// Runs the ui phase for `ctx.trial`.
pub fn run(ctx: &PhaseContext, side: &mut Side) -> Result<(), UiError> {
    let ui = ctx.spec.ui.as_ref().ok_or(UiError::NoSection)?;
    let measure = ctx.spec.measure.as_ref().ok_or(UiError::NoMeasure)?;
    if ui.steps.is_empty() {
        return Err(UiError::NoSteps);
    }
    let program = ProgramTrial::open(ctx, measure)?;
    let measured = spawn_and_measure(ctx, side, &program, (ui, measure));
    program.close(CLOSING, measured)
}

/// Starts the ui command in its terminal and measures it (see [`steps`]).
fn spawn_and_measure(
    ctx: &PhaseContext,
    side: &mut Side,
    program: &ProgramTrial<'_>,
    (ui, measure): (&crate::spec::Ui, &crate::spec::Measure),
) -> Result<(), UiError> {
    let options = program.spawn_options(
        ui.command.as_ref().unwrap_or(&measure.command),
        ui.cwd.as_ref(),
        &ui.env,
        &ctx.log_path(&format!("ui-{}", ctx.trial))?,
    )?;
    let family = program.family();
    let recording = Recording::start(family, Phase::Ui, ctx.trial, "ui");
    in_terminal(
        side,
        &options,
        ("ui", recording),
        |side, terminal, _, ready| steps(ctx, side, terminal, family, ready),
    )
}

/// Ready, the steps, the family's RSS and the keystroke latency, each recorded as it is
/// measured; the first failure is recorded under the metric it stopped and ends the phase
/// (a failed measurement is recorded rather than failing the phase as a whole, so the
/// metrics measured before it keep their samples).
fn steps(
    ctx: &PhaseContext,
    side: &mut Side,
    terminal: &mut Terminal,
    family: Family,
    ready_after: &mut Option<Duration>,
) -> Result<(), UiError> {
    let ui = ctx.spec.ui.as_ref().ok_or(UiError::NoSection)?;
    let measure = ctx.spec.measure.as_ref().ok_or(UiError::NoMeasure)?;
    let trial = ctx.trial;
    if !ready_and_settled(side, terminal, family, (measure, trial), ready_after) {
        return Ok(());
    }
    if !timed_steps(side, terminal, family, &ui.steps, trial)? {
        return Ok(());
    }
    family_rss(side, family, trial);
    keystrokes(ctx, side, terminal, ui.keystrokes, trial)
}

/// Records a failed measurement of `metric` with the error's whole chain.
fn fail(side: &mut Side, metric: Metric, trial: u32, error: &(dyn std::error::Error + 'static)) {
    record(side, metric, trial, Sample::Error(error_chain(error)));
}

/// Waits until the program is ready (keeping the screen and the time in `ready_after`)
/// and lets start-up work settle; `false` after recording why not under `ui_steps`.
fn ready_and_settled(
    side: &mut Side,
    terminal: &mut Terminal,
    family: Family,
    (measure, trial): (&crate::spec::Measure, u32),
    ready_after: &mut Option<Duration>,
) -> bool {
    match terminal.ready_guarded(
        &measure.ready,
        measure.ready_timeout.0,
        &measure.ready_guard,
    ) {
        Ok(elapsed) => {
            *ready_after = Some(elapsed);
            keep_screen(side, Phase::Ui, trial, "ui", terminal.screen_text());
        }
        Err(error) => {
            let error = TargetError::terminal("waiting for the ui command to be ready")(error);
            fail(side, Metric::UiSteps, trial, &error);
            return false;
        }
    }
    // Let start-up work (daemons, first paints) finish so that it is not billed to step one.
    match crate::pipeline::program::terminal::settle_terminal(terminal, family, &measure.settle) {
        Ok(report) => side
            .trial_record_mut(Phase::Ui, trial)
            .push_settle(report.record("ui")),
        Err(error) => {
            let error = TargetError::terminal("letting the ui command settle")(error);
            fail(side, Metric::UiSteps, trial, &error);
            return false;
        }
    }
    true
}

/// Runs the steps in order, each timed by the wall clock and the family's CPU time, and
/// records their totals; `false` after recording the first step that failed.
fn timed_steps(
    side: &mut Side,
    terminal: &mut Terminal,
    family: Family,
    steps: &[crate::spec::UiStep],
    trial: u32,
) -> Result<bool, UiError> {
    let mut wall_seconds = 0.0;
    let mut cpu_seconds = 0.0;
    for step in steps {
        let pattern = regex::Regex::new(&step.expect).map_err(|source| UiError::StepRegex {
            step: step.name.clone(),
            source,
        })?;
        match timed_step(terminal, family, step, &pattern) {
            Ok((wall, cpu, output)) => {
                side.timings.insert(format!("ui:{}", step.name), wall);
                side.timings.insert(format!("ui:{}:cpu", step.name), cpu);
                side.trial_record_mut(Phase::Ui, trial)
                    .push_terminal(bench_core::TerminalWindow {
                        window: format!("step {}", step.name),
                        seconds: wall,
                        output: terminal_output(&output),
                    });
                wall_seconds += wall;
                cpu_seconds += cpu;
            }
            Err(error) => {
                let error = UiError::Step {
                    step: step.name.clone(),
                    source: Box::new(error),
                };
                fail(side, Metric::UiSteps, trial, &error);
                fail(side, Metric::UiCpu, trial, &error);
                return Ok(false);
            }
        }
    }
    record(side, Metric::UiSteps, trial, Sample::Value(wall_seconds));
    record(side, Metric::UiCpu, trial, Sample::Value(cpu_seconds));
    Ok(true)
}

/// One step: its keys typed until the screen matches `pattern`; the wall and CPU
/// seconds it took and what the program wrote meanwhile.
fn timed_step(
    terminal: &mut Terminal,
    family: Family,
    step: &crate::spec::UiStep,
    pattern: &regex::Regex,
) -> Result<(f64, f64, bench_term::OutputCounts), StepError> {
    let cpu_before = family.cpu_seconds()?;
    let output_before = terminal.output_counts();
    let started = Instant::now();
    terminal.type_text(&step.keys).map_err(StepError::Type)?;
    terminal
        .wait_for(pattern, step.timeout.0)
        .map_err(|source| StepError::Wait {
            expect: step.expect.clone(),
            source,
        })?;
    let wall = started.elapsed().as_secs_f64();
    let output = terminal.output_counts().since(&output_before);
    let cpu_after = family.cpu_seconds()?;
    Ok((wall, (cpu_after - cpu_before).max(0.0), output))
}

/// Records the family's RSS after the steps.
fn family_rss(side: &mut Side, family: Family, trial: u32) {
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
        Err(error) => fail(side, Metric::UiRss, trial, &error),
    }
}

/// Measures `keystrokes` keystroke-to-screen latencies: the median recorded, min, p95
/// and max as timings, every one in `keystrokes-<trial>.json` beside the transcripts.
fn keystrokes(
    ctx: &PhaseContext,
    side: &mut Side,
    terminal: &mut Terminal,
    keystrokes: u32,
    trial: u32,
) -> Result<(), UiError> {
    let samples = usize::try_from(keystrokes).unwrap_or(usize::MAX).max(1);
    let latencies = match terminal.keystroke_latency(samples) {
        Ok(latencies) => latencies,
        Err(error) => {
            let error = TargetError::terminal("measuring keystroke latency")(error);
            fail(side, Metric::Keystroke, trial, &error);
            return Ok(());
        }
    };
    let seconds: Vec<f64> = latencies.iter().map(|d| d.as_secs_f64()).collect();
    ctx.write_log_json(&format!("keystrokes-{trial}.json"), &seconds)?;
    let summary = bench_core::stats::Summary::from_values(&seconds).ok_or(UiError::NoLatency)?;
    record(
        side,
        Metric::Keystroke,
        trial,
        Sample::Value(summary.median),
    );
    side.timings.insert("keystroke:min".to_owned(), summary.min);
    side.timings.insert("keystroke:p95".to_owned(), summary.p95);
    side.timings.insert("keystroke:max".to_owned(), summary.max);
    Ok(())
}
