//! A tight pair: one measure trial of each side of an A/B run, run by one process so that
//! the two sides' timed starts follow each other with nothing between them but closing
//! the one before. Cold starts run first-then-second, warm starts second-then-first (an
//! ABBA inside the pair), each closed at ready: no settle, no memory walk. The machine's
//! drift over the half second between two such starts is what both sides share, so the
//! pair's ratio keeps the start's own noise and little of the machine's.
//!
//! Together (`ab --schedule duet`), both sides' programs start at the same moment, each
//! from its own thread, cold with cold and then warm with warm, confined to one CPU (the
//! trial's turn of the CPUs clibench may use): the two wait in the same run queue for
//! whatever else the machine runs, which on a loaded VM cut the pairs' spread of `cold`
//! from 0.22 to 0.05 (unconfined, the two took a CPU each and drifted apart: 0.34). Each
//! start that shared the CPU with the other side's records it (`shared_cpu`), and a
//! comparison of the two sides then tests those starts alone (`bench_core::compare::duet`).
//!
//! Only timed-only trials (past `memory_trials`) are paired, and never trial 0, whose
//! failure decides what the run skips and whose cold start is the first after the install.

use super::{CLOSING, MeasureError, STARTS, Start, timed_only_close};
use crate::pipeline::PhaseContext;
use crate::pipeline::program::trial::ProgramTrial;
use crate::spec;
use bench_core::{Phase, Side};

/// One side of the pair, ready to start.
struct Contender<'a> {
    ctx: &'a PhaseContext,
    measure: &'a spec::Measure,
    program: ProgramTrial<'a>,
    /// A start never became ready: as in a lone trial, this side starts no more.
    done: bool,
    /// The first error that ended this side's trial.
    error: Option<MeasureError>,
}

/// Runs the starts of both sides' trial `ctx.trial`, the first side given being the one
/// the pair opens with (or, `together`, both at once); returns each side's outcome, in the
/// order given.
pub(crate) fn run(
    ctxs: [&PhaseContext; 2],
    sides: [&mut Side; 2],
    together: bool,
) -> [Result<(), MeasureError>; 2] {
    let [first_side, second_side] = sides;
    let trial = ctxs[0].trial;
    let mut contenders = [
        contender(ctxs[0], first_side).map(|contender| (contender, first_side)),
        contender(ctxs[1], second_side).map(|contender| (contender, second_side)),
    ];
    // Threads and programs started from now on inherit the one CPU; the model endpoints,
    // started above, keep theirs. A CPU that cannot be chosen leaves the duet
    // unconfined, and its starts say so by recording no CPU.
    let pinned = together
        .then(|| bench_proc::Pinned::to_nth_allowed(trial as usize).ok())
        .flatten();
    for (start, order) in [(STARTS[0], [0, 1]), (STARTS[1], [1, 0])] {
        if together {
            let before = contenders.each_ref().map(|entry| starts_of(entry, trial));
            let [first, second] = &mut contenders;
            std::thread::scope(|scope| {
                for (contender, side) in [first, second].into_iter().flatten() {
                    scope.spawn(move || attempt(contender, side, start));
                }
            });
            let after = contenders.each_ref().map(|entry| starts_of(entry, trial));
            if let Some(pinned) = &pinned
                && before.iter().zip(&after).all(|(b, a)| a > b)
            {
                for (_, side) in contenders.iter_mut().flatten() {
                    mark_shared(side, trial, pinned.cpu());
                }
            }
        } else {
            for index in order {
                if let Ok((contender, side)) = &mut contenders[index] {
                    attempt(contender, side, start);
                }
            }
        }
        if start == STARTS[0] {
            // Both cold starts' background sessions, stopped once both are over: they
            // must not warm the warm starts, and stopping them must not part the pair.
            for (contender, _) in contenders.iter_mut().flatten() {
                if contender.error.is_none()
                    && let Err(error) = contender.program.stop_agents()
                {
                    contender.error = Some(error.into());
                }
            }
        }
    }
    drop(pinned);
    contenders.map(|entry| entry.and_then(|(contender, _)| finish(contender)))
}

/// How many starts a side's trial has recorded (none for a side that could not start).
fn starts_of(entry: &Result<(Contender<'_>, &mut Side), MeasureError>, trial: u32) -> usize {
    entry.as_ref().map_or(0, |(_, side)| {
        side.trials
            .iter()
            .find(|record| record.phase == Phase::Measure && record.trial == trial)
            .map_or(0, |record| record.starts.len())
    })
}

/// Records that the side's latest start shared `cpu` with the other side's.
fn mark_shared(side: &mut Side, trial: u32, cpu: usize) {
    if let Some(start) = side
        .trial_record_mut(Phase::Measure, trial)
        .starts
        .last_mut()
    {
        start.shared_cpu = u32::try_from(cpu).ok();
    }
}

/// One start of a side that has not stopped, its error kept as the side's.
fn attempt(
    contender: &mut Contender<'_>,
    side: &mut Side,
    start: (bench_core::Metric, bench_core::Metric, &'static str),
) {
    if contender.done || contender.error.is_some() {
        return;
    }
    if let Err(error) = one_start(contender, side, start) {
        contender.error = Some(error);
    }
}

/// A side ready to start (see [`super::ready_to_start`]).
fn contender<'a>(ctx: &'a PhaseContext, side: &Side) -> Result<Contender<'a>, MeasureError> {
    let (measure, program) = super::ready_to_start(ctx, side)?;
    Ok(Contender {
        ctx,
        measure,
        program,
        done: false,
        error: None,
    })
}

/// One start to ready, closed at once.
fn one_start(
    contender: &mut Contender<'_>,
    side: &mut Side,
    (metric, cpu_metric, name): (bench_core::Metric, bench_core::Metric, &'static str),
) -> Result<(), MeasureError> {
    let ctx = contender.ctx;
    match super::start(
        ctx,
        contender.measure,
        side,
        &contender.program,
        (metric, cpu_metric, name),
    )? {
        Start::Ready {
            elapsed,
            terminal,
            recording,
            ..
        } => {
            recording.finish(side, Some(elapsed));
            timed_only_close(side, ctx.trial, (metric, name), elapsed, *terminal)
        }
        Start::Exited => Ok(()),
        Start::NeverReady => {
            contender.done = true;
            Ok(())
        }
    }
}

/// Closes the side's trial (see [`ProgramTrial::close`]); the first error of the trial
/// wins.
fn finish(contender: Contender<'_>) -> Result<(), MeasureError> {
    let outcome = contender.error.map_or(Ok(()), Err);
    contender.program.close(CLOSING, outcome)
}
