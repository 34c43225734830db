//! The trial loop: every step of one plan (or of several plans, interleaved, for an A/B
//! run), each step run in this process or by a re-run `clibench phase`, then the cleanup.
//!
//! The runner prints nothing: it tells an [`Observer`] what happens, and returns a
//! [`RunOutcome`].
//!
//! One failure is reported once. When prepare or install trial 0 fails, nothing of that
//! plan can run after it: every later step is skipped with that cause. When trial 0 of a
//! phase fails, its later trials (and, after measure, the staircase; after a measure that
//! timed out waiting for ready, ui and session, which wait for the same ready) would wait
//! for the same thing again: they are skipped as "same failure as trial 0" unless
//! [`PlanSettings::keep_going`](crate::pipeline::PlanSettings::keep_going). A skipped step is
//! reported as [`StepResult::Skipped`] and recorded in the result's `skipped`.
//!
//! Interruption is a flag the caller sets (from a signal handler, say);
//! it is looked at between steps and, when phases run in their own process, while a
//! step runs, which then stops the phase and everything below it.

use crate::pipeline::isolation::command::STOP_GRACE;
use crate::pipeline::orchestration::phase_run::{PhaseRun, SpecFacts};
use crate::pipeline::orchestration::plan::{Plan, SpecSource, Step};
use crate::pipeline::orchestration::recorded::{Recorded, SideRecord};
use crate::pipeline::orchestration::skip_rules::{SkipRules, headline};
use crate::pipeline::{CleanupReport, Error};
use bench_core::{Phase, Side};
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

mod execute;
mod observer;

pub use observer::{
    Notice, Observer, Progress, RootCause, RunOutcome, SilentObserver, Skip, StepResult,
};

/// How each step runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Execution {
    /// In this process. Simple to embed; an interruption waits for the running phase.
    InProcess,
    /// By re-running `program` as a phase child (see
    /// [`phase_child`](crate::pipeline::orchestration::phase_child)), a process per step:
    /// a phase that hangs or crashes cannot take the run down, and an interruption stops
    /// the phase at once.
    ReExec {
        /// A binary whose `main` answers [`PhaseChild::from_args`](crate::pipeline::PhaseChild::from_args)
        /// first: `clibench`, or any binary that embeds the pipeline.
        program: PathBuf,
    },
}

/// Runs the steps of one or more plans.
#[derive(Debug)]
pub struct Runner {
    plans: Vec<Plan>,
    sides: Vec<Option<String>>,
    order: Vec<(usize, Step)>,
    execution: Execution,
    interrupted: Arc<AtomicBool>,
    gate: Option<Gate>,
    /// Indices into `order` whose step runs in one process with the next step (the other
    /// side's trial of the same number): an A/B run's tight pairs.
    pairs: BTreeSet<usize>,
    /// Whether a pair's two programs start at the same moment (a duet).
    together: bool,
}

/// Asked before each step with `(side, step, sides)`: whether to run it. `sides` holds each
/// plan's side as its result was last saved, as the steps handed it over (a step that
/// handed over nothing leaves the side as it was). `ab --trials auto` stops sampling
/// through it; a step it declines is left out, not recorded as skipped.
pub type GateFn = dyn FnMut(usize, Step, &[Side]) -> bool + Send;

/// A step that ran.
#[derive(Debug)]
struct Ran {
    /// How it ended.
    result: StepResult,
    /// What it recorded; `None` from a phase child that sent nothing (killed, crashed, or
    /// failed before its phase ran).
    recorded: Option<Recorded>,
}

/// A [`GateFn`] behind a lock, so that [`Runner::run`] can take `&self`.
struct Gate(std::sync::Mutex<Box<GateFn>>);

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Gate")
    }
}

impl Runner {
    /// Runs the steps of `plan` in pipeline order.
    pub fn new(plan: Plan, execution: Execution) -> Runner {
        let order = plan.steps().into_iter().map(|step| (0, step)).collect();
        Runner {
            plans: vec![plan],
            sides: vec![None],
            order,
            execution,
            interrupted: Arc::new(AtomicBool::new(false)),
            gate: None,
            pairs: BTreeSet::new(),
            together: false,
        }
    }

    /// Runs several labelled plans in the given order of `(plan index, step)`. Each plan's
    /// steps must keep their pipeline order (prepare before install before the trials).
    pub fn interleaved(
        plans: Vec<(String, Plan)>,
        order: Vec<(usize, Step)>,
        execution: Execution,
    ) -> Runner {
        let (sides, plans) = plans
            .into_iter()
            .map(|(label, plan)| (Some(label), plan))
            .unzip();
        Runner {
            plans,
            sides,
            order,
            execution,
            interrupted: Arc::new(AtomicBool::new(false)),
            gate: None,
            pairs: BTreeSet::new(),
            together: false,
        }
    }

    /// Runs the step at each of these indices of the order together with the next one,
    /// which must be another plan's measure trial of the same number (see
    /// the measure phase's `pair`). A pair one of whose steps
    /// is to be skipped runs as two steps. `together`: each pair's two programs start at
    /// the same moment (a duet) rather than one after the other.
    pub fn pair(mut self, firsts: BTreeSet<usize>, together: bool) -> Runner {
        self.pairs = firsts;
        self.together = together;
        self
    }

    /// Asks `gate` before each step whether to run it (see `GateFn`).
    pub fn gate(mut self, gate: Box<GateFn>) -> Runner {
        self.gate = Some(Gate(std::sync::Mutex::new(gate)));
        self
    }

    /// Uses `flag` as the interrupt flag: once it is set, the running step is stopped
    /// (in its own process) or finished (in process), nothing else starts, and the run
    /// cleans up.
    pub fn interrupt_flag(mut self, flag: Arc<AtomicBool>) -> Runner {
        self.interrupted = flag;
        self
    }

    /// Runs every step, then cleans up each plan's users, homes and servers.
    ///
    /// This process becomes a child subreaper, so that daemons a phase detaches are
    /// re-parented here and stopped at the end.
    pub fn run(&self, observer: &mut dyn Observer) -> Result<RunOutcome, Error> {
        bench_proc::become_subreaper()?;
        let mut specs = Vec::new();
        let mut facts = Vec::new();
        let mut sides = Vec::new();
        // Held until the run returns: no other clibench uses these folders meanwhile.
        let mut _locks = Vec::new();
        // One identifier for the whole invocation: both sides of an `ab` carry it.
        let invocation = crate::pipeline::orchestration::invocation::new_id()?;
        for plan in &self.plans {
            let out = crate::pipeline::out::run::open_for_run(&plan.out)?;
            if let Some(path) = &out.previous_result {
                observer.notice(&Notice::PreviousResult { path: path.clone() });
            }
            _locks.push(out);
            let spec = resolve_spec(plan)?;
            // Read once here: skips and failures are recorded with these facts, not by
            // reading the spec again for each.
            let settings = &plan.settings;
            let loaded = crate::pipeline::orchestration::phase_run::load_spec(
                &spec,
                &settings.overrides,
                settings.repository.as_deref(),
                settings.commit.as_deref(),
            )?;
            let mut plan_facts = SpecFacts::of(&loaded, &spec, &settings.overrides);
            plan_facts.request.invocation_id = Some(invocation.clone());
            sides.push(crate::pipeline::orchestration::invocation::start_result(
                &plan.out,
                &plan_facts.request,
                &invocation,
            )?);
            facts.push(plan_facts);
            specs.push(spec);
        }
        let outcome = self.run_steps(&specs, &facts, sides, observer);
        let cleanups = self.cleanup(observer);
        let mut outcome = outcome?;
        outcome.cleanups = cleanups?;
        outcome.specs = specs;
        Ok(outcome)
    }

    /// Runs the steps in order; `sides` holds each plan's side as its result starts.
    fn run_steps(
        &self,
        specs: &[PathBuf],
        facts: &[SpecFacts],
        mut sides: Vec<Side>,
        observer: &mut dyn Observer,
    ) -> Result<RunOutcome, Error> {
        let started = Instant::now();
        let mut outcome = RunOutcome::default();
        let mut skips: Vec<SkipRules> = vec![SkipRules::default(); self.plans.len()];
        let mut told_drop = false;
        // The second step of a pair that ran, with its result: told when its turn comes.
        let mut carried: Option<Carried> = None;
        for (index, &(side, step)) in self.order.iter().enumerate() {
            if self.interrupted.load(Ordering::SeqCst) {
                outcome.interrupted = true;
                break;
            }
            let plan = &self.plans[side];
            let mut progress = Progress {
                index,
                total: self.order.len(),
                side: self.sides[side].clone(),
                step,
                step_elapsed: Duration::ZERO,
                run_elapsed: started.elapsed(),
                turns: None,
            };
            let mut steps = Steps {
                outcome: &mut outcome,
                skips: &mut skips,
                observer: &mut *observer,
            };
            if let Some((_, result, recorded)) = carried.take_if(|(at, ..)| *at == index) {
                steps.observer.step_started(&progress);
                self.conclude(&mut steps, &progress, (side, step), result, recorded);
                continue;
            }
            if !self.allowed(side, step, &sides) {
                continue;
            }
            let mut run = phase_run(plan, &specs[side], step);
            if let Some((cause, reason)) = steps.skips[side].reason(step, plan.settings.keep_going)
            {
                crate::pipeline::orchestration::phase_run::record_skip(
                    &run,
                    &facts[side],
                    &reason,
                )?;
                sides[side].set_skipped(step.phase, step.trial, &reason);
                tell_skip(&mut steps, &progress, (side, step), cause, reason);
                continue;
            }
            let partner = self.pair_up(&mut run, (index, step), steps.skips, specs, &sides);
            if step.phase == Phase::Measure {
                let observer = &mut *steps.observer;
                self.before_measures(&mut run, side, partner, observer, &mut told_drop)?;
            }
            steps.observer.step_started(&progress);
            let Some(ran) = self.execute(&run, &mut progress, started, steps.observer)? else {
                outcome.interrupted = true;
                break;
            };
            carried = self.conclude_run(&mut steps, &progress, (side, step), partner, &ran);
            if let Some(recorded) = ran.recorded {
                keep_saved(&mut sides, (side, partner), recorded);
            }
        }
        outcome.elapsed = started.elapsed();
        // A trial 0 that failed without making anything skip is an ordinary failure.
        outcome.root_causes.retain(|root| root.skipped > 0);
        Ok(outcome)
    }

    /// Pairs `run` (at `index` in the order) with its partner's step when the schedule
    /// pairs them and neither is skipped or held back; the partner's plan and order index.
    fn pair_up(
        &self,
        run: &mut PhaseRun,
        (index, step): (usize, Step),
        skips: &[SkipRules],
        specs: &[PathBuf],
        sides: &[Side],
    ) -> Option<(usize, usize)> {
        let partner = self
            .partner_of(index, skips)
            .filter(|&(other, _)| self.allowed(other, step, sides));
        if let Some((other, _)) = partner {
            run.partner = Some(Box::new(phase_run(&self.plans[other], &specs[other], step)));
            run.together = self.together;
        }
        partner
    }

    /// What comes before a measure step, for it and its partner: see [`before_measure`].
    fn before_measures(
        &self,
        run: &mut PhaseRun,
        side: usize,
        partner: Option<(usize, usize)>,
        observer: &mut dyn Observer,
        told_drop: &mut bool,
    ) -> Result<(), Error> {
        let drop = self.plans[side].settings.drop_caches;
        before_measure(run, drop, observer, told_drop)?;
        if let (Some((other, _)), Some(partner)) = (partner, run.partner.as_deref_mut()) {
            let drop = self.plans[other].settings.drop_caches;
            before_measure(partner, drop, observer, told_drop)?;
        }
        Ok(())
    }

    /// Concludes a step that ran; of a pair, its own half now and its partner's half
    /// carried to the partner's turn.
    fn conclude_run(
        &self,
        steps: &mut Steps<'_>,
        progress: &Progress,
        (side, step): (usize, Step),
        partner: Option<(usize, usize)>,
        ran: &Ran,
    ) -> Option<Carried> {
        // The error the result records says what failed; a phase log's last line may be
        // the bottom of a screen it printed.
        let recorded = |record: Option<&SideRecord>| match &ran.result {
            StepResult::Failed { .. } => record.and_then(|record| record.errors.first().cloned()),
            _ => None,
        };
        let own = recorded(ran.recorded.as_ref().map(|recorded| &recorded.own));
        let Some((_, other_index)) = partner else {
            self.conclude(steps, progress, (side, step), ran.result.clone(), own);
            return None;
        };
        let theirs = recorded(
            ran.recorded
                .as_ref()
                .and_then(|recorded| recorded.partner.as_ref()),
        );
        let [mine, other_result] = pair_results(&ran.result, [own.is_some(), theirs.is_some()]);
        self.conclude(steps, progress, (side, step), mine, own);
        Some((other_index, other_result, theirs))
    }

    /// Whether the gate lets the step run (no gate: every step runs).
    fn allowed(&self, side: usize, step: Step, sides: &[Side]) -> bool {
        let Some(Gate(gate)) = &self.gate else {
            return true;
        };
        let mut gate = match gate.lock() {
            Ok(gate) => gate,
            Err(poisoned) => poisoned.into_inner(),
        };
        gate(side, step, sides)
    }

    /// The other plan and order index of the pair opened at `index`, when there is one and
    /// neither of its steps is to be skipped.
    fn partner_of(&self, index: usize, skips: &[SkipRules]) -> Option<(usize, usize)> {
        if !self.pairs.contains(&index) {
            return None;
        }
        let (side, step) = self.order[index];
        let &(other, other_step) = self.order.get(index + 1)?;
        let pairable = step.phase == Phase::Measure
            || (self.together
                && crate::pipeline::orchestration::trial_duet::pairs_whole_trials(step.phase));
        let pairs = other != side && other_step == step && pairable;
        let runs = |plan: usize| {
            skips[plan]
                .reason(step, self.plans[plan].settings.keep_going)
                .is_none()
        };
        (pairs && runs(side) && runs(other)).then_some((other, index + 1))
    }

    /// Tells the observer how a step ended and keeps what a failure means for the rest.
    fn conclude(
        &self,
        steps: &mut Steps<'_>,
        progress: &Progress,
        (side, step): (usize, Step),
        mut result: StepResult,
        recorded: Option<String>,
    ) {
        if let (StepResult::Failed { message, log }, Some(recorded)) = (&mut result, &recorded) {
            *message = format!("{} (log: {})", headline(recorded), log.display());
        }
        let Steps {
            outcome,
            skips,
            observer,
        } = steps;
        observer.step_finished(progress, &result);
        if let StepResult::Failed { message, .. } = &result {
            outcome.failed.push((side, step));
            if step.trial == 0 {
                let failure = recorded.unwrap_or_else(|| message.clone());
                skips[side].first_trial_failed(step, &failure);
                outcome.root_causes.push(RootCause {
                    side,
                    step,
                    message: failure,
                    skipped: 0,
                });
            }
            let side_label = self.sides[side].clone();
            match step.phase {
                Phase::Prepare => observer.notice(&Notice::PrepareFailed { side: side_label }),
                Phase::Install if step.trial == 0 => {
                    observer.notice(&Notice::InstallFailed { side: side_label })
                }
                _ => {}
            }
        }
    }

    fn cleanup(&self, observer: &mut dyn Observer) -> Result<Vec<CleanupReport>, Error> {
        // Whatever is still below us (a daemon that outlived its phase) is stopped first,
        // so that users can be removed.
        if let Err(error) =
            bench_proc::stop(&bench_proc::Selector::Tree(std::process::id()), STOP_GRACE)
        {
            observer.notice(&Notice::StopFailed {
                message: bench_core::error_chain(&error),
            });
        }
        let mut reports = Vec::new();
        let mut first_error = None;
        for plan in &self.plans {
            // The state file says whether the run asked to keep its users. Every plan is
            // cleaned up even when an earlier one's cleanup failed (an `ab` whose base
            // could not be cleaned still removes the head's users and staging folder).
            match crate::pipeline::cleanup(&plan.out) {
                Ok(report) => reports.push(report),
                Err(error) => {
                    first_error.get_or_insert(error);
                }
            }
        }
        match first_error {
            Some(error) => Err(Error::Cleanup(error)),
            None => Ok(reports),
        }
    }
}

/// Keeps what a step recorded as the sides' results now stand: its own plan's side and,
/// of a pair, its partner's.
fn keep_saved(
    sides: &mut [Side],
    (side, partner): (usize, Option<(usize, usize)>),
    recorded: Recorded,
) {
    sides[side] = recorded.own.side;
    if let (Some((other, _)), Some(theirs)) = (partner, recorded.partner) {
        sides[other] = theirs.side;
    }
}

/// Each side's result of a pair's one process: a side whose result records a failure
/// failed; a process that failed with neither side recording one failed both.
fn pair_results(result: &StepResult, recorded: [bool; 2]) -> [StepResult; 2] {
    recorded.map(|failed| match result {
        StepResult::Failed { .. } if failed || recorded == [false, false] => result.clone(),
        StepResult::Failed { .. } => StepResult::Succeeded,
        other => other.clone(),
    })
}

/// Drops the page cache when the plan asks for it (telling once that it affects the whole
/// machine), and has the phase record whether it did: "cold" means a cold cache only then.
fn before_measure(
    run: &mut PhaseRun,
    drop: bool,
    observer: &mut dyn Observer,
    told: &mut bool,
) -> Result<(), Error> {
    if drop {
        if !*told {
            observer.notice(&Notice::DropsCaches);
            *told = true;
        }
        crate::pipeline::orchestration::caches_linux::drop_caches(Path::new(
            crate::pipeline::DROP_CACHES,
        ))?;
    }
    run.caches_dropped = Some(drop);
    Ok(())
}

/// What the steps so far made, as [`Runner::run_steps`] goes: the outcome, each side's
/// skip rules, and whom it tells.
struct Steps<'a> {
    outcome: &'a mut RunOutcome,
    skips: &'a mut [SkipRules],
    observer: &'a mut dyn Observer,
}

/// The partner's half of a pair that ran, kept for its turn: its order index, its result
/// and the failure its result recorded.
type Carried = (usize, StepResult, Option<String>);

/// Tells that a step is skipped because of `cause` (a first trial that failed), and
/// counts it against that root cause.
fn tell_skip(
    steps: &mut Steps<'_>,
    progress: &Progress,
    (side, step): (usize, Step),
    cause: Step,
    reason: String,
) {
    if let Some(root) = steps
        .outcome
        .root_causes
        .iter_mut()
        .find(|root| root.side == side && root.step == cause)
    {
        root.skipped += 1;
    }
    steps.observer.step_started(progress);
    steps.observer.step_finished(
        progress,
        &StepResult::Skipped {
            reason: reason.clone(),
        },
    );
    steps.outcome.skipped.push(Skip { side, step, reason });
}

fn phase_run(plan: &Plan, spec: &Path, step: Step) -> PhaseRun {
    PhaseRun {
        phase: step.phase,
        spec: spec.to_path_buf(),
        out: plan.out.clone(),
        trial: step.trial,
        keep_users: plan.settings.keep_users,
        repository: plan.settings.repository.clone(),
        commit: plan.settings.commit.clone(),
        overrides: plan.settings.overrides.clone(),
        partner: None,
        together: false,
        caches_dropped: None,
    }
}

/// The spec a plan runs: its file, or the demo written into `OUT/demo`.
fn resolve_spec(plan: &Plan) -> Result<PathBuf, Error> {
    match &plan.spec {
        SpecSource::File(path) => Ok(path.clone()),
        SpecSource::Demo => {
            let dir = plan.out.join("demo");
            if dir.exists() {
                // Our own earlier copy: the same files give the same commit, so start afresh.
                fs::remove_dir_all(&dir).map_err(|source| Error::Io {
                    action: "remove the previous demo in",
                    path: dir.clone(),
                    source,
                })?;
            }
            Ok(crate::demo::materialise(&dir)?.spec)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed() -> StepResult {
        StepResult::Failed {
            message: "exit status: 1".to_owned(),
            log: PathBuf::from("log"),
        }
    }

    #[test]
    fn a_pair_fails_the_side_whose_result_records_it_or_both_when_neither_does() {
        let outcome = |result: &StepResult, recorded| {
            pair_results(result, recorded).map(|r| matches!(r, StepResult::Failed { .. }))
        };
        assert_eq!(outcome(&failed(), [true, false]), [true, false]);
        assert_eq!(outcome(&failed(), [false, true]), [false, true]);
        assert_eq!(outcome(&failed(), [false, false]), [true, true]);
        assert_eq!(
            outcome(&StepResult::Succeeded, [false, false]),
            [false, false]
        );
    }
}
