//! A duet of whole trials: an A/B run's runtime, ui or session trial of base and of head
//! run at the same moment, each from its own thread, confined to one CPU (the trial's
//! turn of the CPUs clibench may use), as the measure phase's duet pairs its starts.
//!
//! A kernel call, a ui step or a turn is timed inside a trial that also starts and stops
//! its program; run one side after the other, the two sides' calls sit seconds apart and
//! each meets a different stretch of the machine's drift. Started together on one CPU,
//! both sides' programs wait in the same run queue for whatever else the machine runs,
//! and the pair's ratio keeps the change and little of the machine. Each trial that ran
//! so records the CPU it shared (`TrialRecord::shared_cpu`), and a comparison of the two
//! sides then tests those trials' times alone (`bench_core::compare::duet`).

use crate::pipeline::PhaseContext;
use crate::pipeline::error::PhaseError;
use bench_core::{Phase, Side};

/// Whether a phase's trials can run as a duet of whole trials.
pub(crate) fn pairs_whole_trials(phase: Phase) -> bool {
    matches!(phase, Phase::Runtime | Phase::Ui | Phase::Session)
}

/// Runs `phase` (through `dispatch`) for both sides' trial `ctxs[0].trial` at once and
/// returns each side's outcome, in the order given. A CPU that cannot be chosen leaves the
/// duet unconfined, and its trials say so by recording no CPU.
pub(crate) fn run(
    ctxs: [&PhaseContext; 2],
    sides: [&mut Side; 2],
    dispatch: fn(&PhaseContext, &mut Side) -> Result<(), PhaseError>,
) -> [Result<(), PhaseError>; 2] {
    let (phase, trial) = (ctxs[0].phase, ctxs[0].trial);
    let [first, second] = sides;
    // Threads and programs started from now on inherit the one CPU.
    let pinned = bench_proc::Pinned::to_nth_allowed(trial as usize).ok();
    let outcomes = std::thread::scope(|scope| {
        let a = scope.spawn(|| dispatch(ctxs[0], first));
        let b = scope.spawn(|| dispatch(ctxs[1], second));
        [a.join(), b.join()]
    });
    let cpu = pinned
        .as_ref()
        .and_then(|pinned| u32::try_from(pinned.cpu()).ok());
    drop(pinned);
    // A panic in a side's thread is clibench's bug: it ends the run as it would alone.
    let outcomes =
        outcomes.map(|joined| joined.unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
    if let Some(cpu) = cpu {
        for side in [first, second] {
            side.trial_record_mut(phase, trial).shared_cpu = Some(cpu);
        }
    }
    outcomes
}
