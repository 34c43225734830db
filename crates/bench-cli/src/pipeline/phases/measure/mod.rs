//! The measure phase: cold then warm start in a real terminal to ready; after the cold start
//! settles, the memory of all the target's processes (RSS, PSS, the per-process breakdown);
//! then the agent's background sessions are stopped through its own list/stop commands; on
//! trial 0, `disk` = the home's footprint now minus before the install, whether or not the
//! starts succeeded. The trial's set-up and close are the program's
//! ([`ProgramTrial`]).

pub(crate) mod pair;
use crate::pipeline::PhaseContext;
use crate::pipeline::context::LogFileError;
use crate::pipeline::program::TargetError;
use crate::pipeline::program::family::{Family, process_memory};
use crate::pipeline::program::recording::{Recording, keep_screen};
use crate::pipeline::program::start::{Ready, ReadyWait, Started, spawn_to_ready};
use crate::pipeline::program::terminal::{
    close_quietly, options_line, settle_terminal, terminal_output,
};
use crate::pipeline::program::trial::{Closing, ProgramTrial};
use crate::spec::{self};
use bench_core::error_chain;
use bench_core::{Metric, Phase, Sample, Side, record};
use bench_proc::{SettleEnd, Snapshot};
use bench_term::{ReadyMode, Terminal};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The measure phase failed.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    /// The spec has no section for the phase.
    #[error("the spec has no [{0}] section")]
    NoSection(&'static str),
    /// The install whose home this trial uses failed, so there is nothing to start.
    #[error("install {0} must succeed before interactive measurements")]
    NoInstallation(u32),
    /// The process breakdown could not be kept in `OUT/logs`.
    #[error(transparent)]
    Log(#[from] LogFileError),
    /// The target's terminal could not be started.
    #[error("starting `{command}` in a terminal")]
    Spawn {
        /// The command line.
        command: String,
        /// Why.
        #[source]
        source: bench_term::TermError,
    },
    /// The cold start did not settle (its terminal failed meanwhile).
    #[error(transparent)]
    Settle(bench_term::TermError),
    /// No process of the target was there to measure.
    #[error("no process of the target was found for the memory measurement")]
    NoProcesses,
    /// Install trial 0 did not record the home's size before the install.
    #[error("install trial 0 did not record the home's size before the install")]
    NoHomeBefore,
    /// The run's state could not be read.
    #[error(transparent)]
    State(#[from] crate::pipeline::out::state::StateError),
    /// The home's footprint could not be measured.
    #[error("measuring the footprint of {}", home.display())]
    Disk {
        /// The home.
        home: PathBuf,
        /// Why.
        #[source]
        source: bench_proc::DiskError,
    },
    /// The program's trial, its terminal, family or sessions failed.
    #[error(transparent)]
    Program(#[from] TargetError),
}

crate::pipeline::program::context_error_is_the_programs!(MeasureError);

/// What closing a measure trial keeps: both starts' screens at ready and recordings. The
/// starts' background sessions are stopped between them, not at close.
pub(crate) const CLOSING: Closing<'static> = Closing {
    keep: &["cold", "warm"],
    stop_agents: false,
};

/// Checks that the trial can start (a `[measure]` section, a successful install) and
/// opens the program's trial. A lone trial and each side of a tight pair start from here.
pub(crate) fn ready_to_start<'a>(
    ctx: &'a PhaseContext,
    side: &Side,
) -> Result<(&'a spec::Measure, ProgramTrial<'a>), MeasureError> {
    let measure = ctx
        .spec
        .measure
        .as_ref()
        .ok_or(MeasureError::NoSection("measure"))?;
    if !install_succeeded(side, ctx.install, ctx.spec.install.command.is_some()) {
        return Err(MeasureError::NoInstallation(ctx.install));
    }
    Ok((measure, ProgramTrial::open(ctx, measure)?))
}

/// Runs the measure phase for `ctx.trial`.
pub fn run(ctx: &PhaseContext, side: &mut Side) -> Result<(), MeasureError> {
    let (measure, program) = ready_to_start(ctx, side)?;
    let user = program.user();
    let outcome = starts(ctx, measure, side, &program);
    let closed = program.close(CLOSING, outcome);
    // The footprint is the installation's, whether or not the target then started.
    if ctx.trial == 0 {
        let sample = match disk_growth(ctx, &user.home) {
            Ok(bytes) => Sample::Value(bytes as f64),
            Err(error) => Sample::Error(error_chain(&error)),
        };
        record(side, Metric::Disk, 0, sample);
    }
    closed.map(drop)
}

/// Whether install `install` succeeded: it recorded a time, or (for a target with no
/// installer, which records none) it recorded no error.
fn install_succeeded(side: &Side, install: u32, has_installer: bool) -> bool {
    let mut samples = side
        .metrics
        .get(&Metric::Install)
        .into_iter()
        .flatten()
        .filter(|sample| sample.trial == install);
    if has_installer {
        samples.any(|sample| sample.value.is_some())
    } else {
        samples.all(|sample| sample.error.is_none())
    }
}

/// The two starts of a measure trial, in the order a lone trial runs them: the metric of
/// its time, the metric of its CPU, and its name in logs.
pub(crate) const STARTS: [(Metric, Metric, &str); 2] = [
    (Metric::Cold, Metric::ColdCpu, "cold"),
    (Metric::Warm, Metric::WarmCpu, "warm"),
];

/// How one start to ready ended.
pub(crate) enum Start {
    /// Ready, its CPU, screen and terminal output at ready recorded, its program still
    /// running.
    Ready {
        /// From the spawn to ready.
        elapsed: Duration,
        /// What the program had written to its terminal at ready.
        ready_output: bench_term::OutputCounts,
        /// The program's terminal (boxed: it is most of the enum's size).
        terminal: Box<Terminal>,
        /// The recording of its output, to finish.
        recording: Recording,
        /// Its command line, for messages.
        command: String,
    },
    /// Ready was the program's exit: its time (or its failing status) is recorded.
    Exited,
    /// It never became ready: the error is recorded under the start's metrics.
    NeverReady,
}

/// Starts the measure command in a terminal and waits for ready; records the start's CPU
/// at ready and its screen, or its error. What a lone trial and a tight pair share.
pub(crate) fn start(
    ctx: &PhaseContext,
    measure: &spec::Measure,
    side: &mut Side,
    program: &ProgramTrial<'_>,
    (metric, cpu_metric, name): (Metric, Metric, &'static str),
) -> Result<Start, MeasureError> {
    let trial = ctx.trial;
    let family = &program.family();
    let options = program.spawn_options(
        &measure.command,
        measure.cwd.as_ref(),
        &measure.env,
        &ctx.log_path(&format!("{name}-{trial}"))?,
    )?;
    let command = options_line(&options);
    let recording = Recording::start(*family, Phase::Measure, trial, name);
    side.trial_record_mut(Phase::Measure, trial)
        .push_start(bench_core::StartRecord {
            session: name.to_owned(),
            spawned_unix_us: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |since| since.as_micros() as u64),
            shared_cpu: None,
        });
    // What lives before the spawn (a daemon of the cold start) is not the start's: its
    // waits for a CPU are left out of `*_unqueued`.
    // A program that exits at ready leaves no threads to read: no mark to take.
    let before = (!matches!(measure.ready, ReadyMode::Exit)).then(|| family.mark());
    let Started {
        mut terminal,
        ready,
    } = spawn_to_ready(&options, ReadyWait::from(measure)).map_err(|source| {
        MeasureError::Spawn {
            command: command.clone(),
            source,
        }
    })?;
    let ready = match ready {
        Ok(ready) => ready,
        Err(error) => {
            record(side, metric, trial, Sample::Error(error_chain(&error)));
            record(side, cpu_metric, trial, Sample::Error(error_chain(&error)));
            close_quietly(&mut terminal);
            recording.finish(side, None);
            return Ok(Start::NeverReady);
        }
    };
    record_at_ready(
        side,
        measure,
        (family, before.as_ref()),
        &terminal,
        (metric, cpu_metric, name),
        (trial, ready.elapsed()),
    );
    keep_screen(side, Phase::Measure, trial, name, terminal.screen_text());
    let elapsed = match ready {
        Ready::Running(elapsed) => elapsed,
        Ready::Exited { elapsed, status } => {
            // Ready is the exit: the start's time, and nothing left to settle or measure.
            // A failing status fails the start, as hyperfine fails a command that does.
            recording.finish(side, Some(elapsed));
            let sample = match status {
                Some(status) if status.success() => Sample::Value(elapsed.as_secs_f64()),
                status => Sample::Error(format!(
                    "`{command}` exited ({}) after {:.3} s",
                    status.map_or_else(|| "status unknown".to_owned(), |s| s.to_string()),
                    elapsed.as_secs_f64()
                )),
            };
            record(side, metric, trial, sample);
            close_quietly(&mut terminal);
            add_reaped_cpu(side, cpu_metric, trial, &terminal, *family);
            return Ok(Start::Exited);
        }
    };
    Ok(Start::Ready {
        elapsed,
        ready_output: terminal.output_counts(),
        terminal: Box::new(terminal),
        recording,
        command,
    })
}

/// Records a start at ready, `elapsed` after its spawn: its CPU, what it wrote to its
/// terminal, and (with a mark taken `before` the spawn) its time not spent waiting for a
/// CPU.
fn record_at_ready(
    side: &mut Side,
    measure: &spec::Measure,
    (family, before): (
        &Family,
        Option<&Result<bench_proc::ProcessMark, TargetError>>,
    ),
    terminal: &Terminal,
    (metric, cpu_metric, name): (Metric, Metric, &str),
    (trial, elapsed): (u32, Duration),
) {
    // Read right at ready: every millisecond later adds the program's idle work after
    // ready to what its start cost. A program that exited is left out, its time taken
    // when it is reaped (see `add_reaped_cpu`).
    let cpu = match measure.ready {
        ReadyMode::Exit => family.cpu_seconds_without(terminal.pid()),
        _ => family.cpu_seconds(),
    };
    let cpu = match cpu {
        Ok(seconds) => Sample::Value(seconds),
        Err(error) => Sample::Error(error_chain(&error)),
    };
    record(side, cpu_metric, trial, cpu);
    side.trial_record_mut(Phase::Measure, trial)
        .push_terminal(bench_core::TerminalWindow {
            window: format!("{name} to ready"),
            seconds: elapsed.as_secs_f64(),
            output: terminal_output(&terminal.output_counts()),
        });
    if let Some(before) = before {
        record_unqueued(side, (family, before), metric, trial, elapsed);
    }
}

/// Adds to the CPU time of a start that exited at ready (the rest of its family, read at
/// ready) the program's own and its waited-for children's, which its reaping gave to
/// the microsecond. Reaped by something else (no rusage): the family read again with
/// it, as the zombie's ticks if it is still there.
fn add_reaped_cpu(
    side: &mut Side,
    cpu_metric: Metric,
    trial: u32,
    terminal: &Terminal,
    family: Family,
) {
    let rest = side
        .metrics
        .get(&cpu_metric)
        .and_then(|samples| samples.iter().find(|sample| sample.trial == trial))
        .and_then(|sample| sample.value);
    // The family could not be read at ready: its error stands.
    let Some(rest) = rest else {
        return;
    };
    let total = match terminal.reaped_cpu_time() {
        Some(reaped) => Sample::Value(rest + reaped.as_secs_f64()),
        None => match family.cpu_seconds() {
            Ok(seconds) => Sample::Value(seconds),
            Err(error) => Sample::Error(error_chain(&error)),
        },
    };
    record(side, cpu_metric, trial, total);
}

/// Records a ready start's time less the time the main threads of the processes it
/// created waited for a CPU (`cold_unqueued`, `warm_unqueued`). A program that exits at
/// ready has no threads left to read.
fn record_unqueued(
    side: &mut Side,
    (family, before): (&Family, &Result<bench_proc::ProcessMark, TargetError>),
    metric: Metric,
    trial: u32,
    elapsed: Duration,
) {
    let unqueued = match metric {
        Metric::Cold => Metric::ColdUnqueued,
        Metric::Warm => Metric::WarmUnqueued,
        _ => return,
    };
    let queued = match before {
        Ok(mark) => family
            .queued_since(mark)
            .map_err(|error| error_chain(&error)),
        Err(error) => Err(error_chain(error)),
    };
    let sample = match queued {
        Ok(queued) => Sample::Value(elapsed.saturating_sub(queued).as_secs_f64()),
        Err(error) => Sample::Error(error),
    };
    record(side, unqueued, trial, sample);
}

/// The cold and warm starts: a failed start is recorded as that
/// metric's error and ends the phase; a failure after the cold start was ready is recorded
/// under `rss`. Returns whether the cold start became ready.
fn starts(
    ctx: &PhaseContext,
    measure: &spec::Measure,
    side: &mut Side,
    program: &ProgramTrial<'_>,
) -> Result<bool, MeasureError> {
    let (trial, family) = (ctx.trial, &program.family());
    let mut cold_ready = false;
    for (metric, cpu_metric, name) in STARTS {
        let (elapsed, ready_output, mut terminal, recording, command) =
            match start(ctx, measure, side, program, (metric, cpu_metric, name))? {
                Start::Ready {
                    elapsed,
                    ready_output,
                    terminal,
                    recording,
                    command,
                } => (elapsed, ready_output, *terminal, recording, command),
                Start::Exited => continue,
                Start::NeverReady => return Ok(cold_ready),
            };
        if !reads_memory(measure, trial) {
            recording.finish(side, Some(elapsed));
            timed_only_close(side, trial, (metric, name), elapsed, terminal)?;
            if metric == Metric::Cold {
                // As after a settled cold start: its background sessions must not warm the
                // warm one.
                program.stop_agents()?;
            }
            cold_ready |= metric == Metric::Cold;
            continue;
        }
        let (settled, closed_early) = settle_start(
            side,
            (trial, name),
            &measure.settle,
            *family,
            &mut terminal,
            (elapsed, &ready_output),
        );
        // A program that restores the terminal and then dies can echo a probe on its way
        // out; a start that did not survive its settle time was no start.
        if closed_early || terminal.session_processes().is_empty() {
            // When it was seen gone, not when it went: an upper bound on its life after ready.
            let seen_gone = terminal.elapsed();
            recording.finish(side, Some(elapsed));
            let error = gone_after_ready(&mut terminal, &command, elapsed, seen_gone);
            record(side, metric, trial, Sample::Error(error));
            return Ok(cold_ready);
        }
        record(side, metric, trial, Sample::Value(elapsed.as_secs_f64()));
        if metric == Metric::Cold {
            cold_ready = true;
            let memory = settled
                .map_err(MeasureError::Settle)
                .and_then(|()| family.snapshot().map_err(MeasureError::from))
                .and_then(|snapshot| record_memory(ctx, side, &snapshot, terminal.pid()));
            recording.finish(side, Some(elapsed));
            let closed = terminal.close();
            if let Err(error) = memory {
                record(side, Metric::Rss, trial, Sample::Error(error_chain(&error)));
                return Ok(cold_ready);
            }
            closed.map_err(TargetError::terminal("closing the cold start's terminal"))?;
            // The cold start's background sessions must not make the warm start warmer
            // than a person's second start would be, so they are stopped between the two.
            program.stop_agents()?;
        } else {
            recording.finish(side, Some(elapsed));
            let closed = terminal.close();
            if let Err(error) = settled {
                side.set_error(format!("warm settle: {}", error_chain(&error)));
            }
            closed.map_err(TargetError::terminal("closing the warm start's terminal"))?;
        }
    }
    Ok(cold_ready)
}

/// Lets a start that became ready `elapsed` after its spawn settle, and records the
/// settle and what the program wrote while idle after ready (`ready_output` is what it
/// had written at ready). Whether it settled, and whether it closed its terminal
/// meanwhile: a settle ends as closed only then.
fn settle_start(
    side: &mut Side,
    (trial, name): (u32, &str),
    settle: &spec::Settle,
    family: Family,
    terminal: &mut Terminal,
    (elapsed, ready_output): (Duration, &bench_term::OutputCounts),
) -> (Result<(), bench_term::TermError>, bool) {
    let settled = settle_terminal(terminal, family, settle);
    if let Ok(report) = &settled {
        let record = side.trial_record_mut(Phase::Measure, trial);
        record.push_settle(report.record(name));
        // The settle is the program idle after ready: a spinner or a clock it redraws
        // for nobody shows here.
        record.push_terminal(bench_core::TerminalWindow {
            window: format!("{name} idle after ready"),
            seconds: terminal.elapsed().saturating_sub(elapsed).as_secs_f64(),
            output: terminal_output(&terminal.output_counts().since(ready_output)),
        });
    }
    let closed_early = matches!(&settled, Ok(report) if report.end == SettleEnd::Closed);
    (settled.map(drop), closed_early)
}

/// The error of a start whose program was seen gone at `seen_gone` after it looked ready
/// at `ready` (both since the spawn): its command, its exit status (the terminal is
/// closed to read it) and its last screen.
fn gone_after_ready(
    terminal: &mut Terminal,
    command: &str,
    ready: Duration,
    seen_gone: Duration,
) -> String {
    let screen = terminal.screen_text();
    let status = match terminal.close().ok().and_then(|report| report.status) {
        Some(status) => format!(" ({status})"),
        None => String::new(),
    };
    exited_after_ready(
        command,
        &status,
        seen_gone.saturating_sub(ready),
        ready,
        &screen,
    )
}

/// Whether measure trial `trial` settles and reads memory: the first `memory_trials`
/// trials do (every trial when the spec sets none).
fn reads_memory(measure: &spec::Measure, trial: u32) -> bool {
    measure.memory_trials.is_none_or(|trials| trial < trials)
}

/// A start of a timed-only trial (past `memory_trials`): its time is recorded and its
/// terminal closed at once, with no settle and no memory walk, so that the next timed
/// start (this side's warm, or the other side's in a tight pair) follows it closely.
/// The program is not watched after ready, so one that dies just after it still counts.
/// A cold start's background sessions are the caller's to stop (a tight pair stops both
/// sides' after both cold starts, so that nothing sits between them).
pub(crate) fn timed_only_close(
    side: &mut Side,
    trial: u32,
    (metric, name): (Metric, &str),
    elapsed: Duration,
    mut terminal: Terminal,
) -> Result<(), MeasureError> {
    record(side, metric, trial, Sample::Value(elapsed.as_secs_f64()));
    terminal
        .close()
        .map_err(TargetError::terminal(if name == "cold" {
            "closing the cold start's terminal"
        } else {
            "closing the warm start's terminal"
        }))?;
    Ok(())
}

/// The error of a start whose program was gone during its settle: how long after ready it
/// was seen gone, and when ready was, which are two different times.
fn exited_after_ready(
    command: &str,
    status: &str,
    after_ready: Duration,
    ready: Duration,
    screen: &str,
) -> String {
    format!(
        "`{command}` exited{status} within {:.3} s after it looked ready (ready {:.3} s after \
         it started); its last screen:\n{}",
        after_ready.as_secs_f64(),
        ready.as_secs_f64(),
        screen.trim_end()
    )
}

/// Records `rss`, `pss` (when every process's PSS was readable) and the process breakdown,
/// and keeps the breakdown in `OUT/logs/memory-<trial>.json`.
fn record_memory(
    ctx: &PhaseContext,
    side: &mut Side,
    snapshot: &Snapshot,
    program: u32,
) -> Result<(), MeasureError> {
    if snapshot.processes.is_empty() {
        return Err(MeasureError::NoProcesses);
    }
    let trial = ctx.trial;
    record(
        side,
        Metric::Rss,
        trial,
        Sample::Value(snapshot.total_rss_bytes() as f64),
    );
    match snapshot.total_pss_bytes() {
        Some(pss) => record(side, Metric::Pss, trial, Sample::Value(pss as f64)),
        None => record(
            side,
            Metric::Pss,
            trial,
            Sample::Error("the PSS of some process was unreadable".to_owned()),
        ),
    }
    // A comparison flags a count that changes between trials: a daemon came or went.
    side.trial_record_mut(Phase::Measure, trial).process_count =
        Some(u32::try_from(snapshot.processes.len()).unwrap_or(u32::MAX));
    let processes = process_memory(snapshot, Some(program));
    ctx.write_log_json(&format!("memory-{trial}.json"), &processes)?;
    side.set_processes(processes);
    Ok(())
}

/// The home's growth since before the install, with the spec's excludes.
fn disk_growth(ctx: &PhaseContext, home: &Path) -> Result<u64, MeasureError> {
    let before = crate::pipeline::out::state::State::load(&ctx.out)?
        .home_before_install_bytes
        .ok_or(MeasureError::NoHomeBefore)?;
    let excludes: Vec<&str> = ctx.spec.disk.exclude.iter().map(String::as_str).collect();
    let after = bench_proc::disk_usage(home, &excludes).map_err(|source| MeasureError::Disk {
        home: home.to_path_buf(),
        source,
    })?;
    Ok(after.saturating_sub(before))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exit_after_ready_says_both_when_it_was_ready_and_how_long_it_lived_after() {
        let error = exited_after_ready(
            "/usr/bin/node",
            " (signal: 15 (SIGTERM))",
            Duration::from_millis(412),
            Duration::from_millis(60),
            "> \n",
        );
        assert_eq!(
            error,
            "`/usr/bin/node` exited (signal: 15 (SIGTERM)) within 0.412 s after it looked ready \
             (ready 0.060 s after it started); its last screen:\n>"
        );
    }
}
