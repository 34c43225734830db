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
use crate::pipeline::orchestration::phase_run::{PhaseOutcome, PhaseRun, SpecFacts, run_phase};
use crate::pipeline::orchestration::plan::{Plan, SpecSource, Step};
use crate::pipeline::orchestration::skip_rules::{SkipRules, headline};
use crate::pipeline::{CleanupReport, Error};
use bench_core::Phase;
use std::collections::BTreeSet;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often a running phase process and the interrupt flag are looked at.
const POLL: Duration = Duration::from_millis(50);

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

/// Where the run is, for an [`Observer`].
#[derive(Debug, Clone)]
pub struct Progress {
    /// 0-based position of the step in the run.
    pub index: usize,
    /// Steps in the run.
    pub total: usize,
    /// The side's label in an interleaved run ("base", "head"), `None` for a single plan.
    pub side: Option<String>,
    /// The step.
    pub step: Step,
    /// Since the step started.
    pub step_elapsed: Duration,
    /// Since the run started.
    pub run_elapsed: Duration,
}

impl Progress {
    /// "head: measure trial 1", or "measure trial 1" for a single plan.
    pub fn label(&self) -> String {
        match &self.side {
            Some(side) => format!("{side}: {}", self.step.label()),
            None => self.step.label(),
        }
    }
}

/// How a step ended.
#[derive(Debug, Clone)]
pub enum StepResult {
    /// The trial succeeded.
    Succeeded,
    /// The trial failed; `message` is its last error line, `log` the phase's whole log.
    Failed {
        /// The error.
        message: String,
        /// The phase's log.
        log: PathBuf,
    },
    /// The step did not run: "install trial 0 failed", "same failure as measure trial 0: ...".
    Skipped {
        /// Why, naming the step whose failure caused it.
        reason: String,
    },
}

/// Something worth telling that is not a step's result.
#[derive(Debug, Clone)]
pub enum Notice {
    /// Prepare failed, so nothing else of that side can run.
    PrepareFailed {
        /// The side's label, for an interleaved run.
        side: Option<String>,
    },
    /// The folder held the result of an earlier run: it was moved here, and this run
    /// starts a new one.
    PreviousResult {
        /// Where the earlier result is now.
        path: PathBuf,
    },
    /// Install trial 0 failed: there is no installation, so the later phases of that side
    /// are skipped.
    InstallFailed {
        /// The side's label, for an interleaved run.
        side: Option<String>,
    },
    /// `--drop-caches`: the page cache is dropped before each measure trial (told once).
    DropsCaches,
    /// Stopping processes failed (they are listed in the message); the run goes on.
    StopFailed {
        /// What `bench_proc::stop` said.
        message: String,
    },
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Notice::PrepareFailed { side: None } => {
                f.write_str("prepare failed; nothing else can run")
            }
            Notice::PrepareFailed { side: Some(side) } => {
                write!(f, "{side}: prepare failed; nothing else of {side} can run")
            }
            Notice::PreviousResult { path } => write!(
                f,
                "the earlier run's result was moved to {}; this run starts a new one (the \
                 folder keeps the {} newest earlier results)",
                path.display(),
                crate::pipeline::out::folder::KEEP_PREVIOUS_RESULTS
            ),
            Notice::InstallFailed { side: None } => {
                f.write_str("install trial 0 failed; the later phases cannot run and are skipped")
            }
            Notice::InstallFailed { side: Some(side) } => write!(
                f,
                "{side}: install trial 0 failed; the later phases of {side} cannot run and are skipped"
            ),
            Notice::DropsCaches => f.write_str(
                "--drop-caches: dropping the page cache before each measure trial; this affects the whole machine (every program's cached files are read again)",
            ),
            Notice::StopFailed { message } => write!(f, "stopping leftover processes: {message}"),
        }
    }
}

/// Receives the runner's progress. Every method does nothing by default.
pub trait Observer {
    /// A step starts.
    fn step_started(&mut self, _progress: &Progress) {}
    /// A step is still running (called about every 50 ms when phases run in their own
    /// process).
    fn waiting(&mut self, _progress: &Progress) {}
    /// A step ended.
    fn step_finished(&mut self, _progress: &Progress, _result: &StepResult) {}
    /// Something happened that is not a step's result.
    fn notice(&mut self, _notice: &Notice) {}
}

/// An [`Observer`] that ignores everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct SilentObserver;

impl Observer for SilentObserver {}

/// A step that did not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skip {
    /// The index of its plan.
    pub side: usize,
    /// The step.
    pub step: Step,
    /// Why, as [`StepResult::Skipped`] says.
    pub reason: String,
}

/// A failure that made later steps skip: the run's root cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootCause {
    /// The index of its plan.
    pub side: usize,
    /// The step that failed.
    pub step: Step,
    /// Its error.
    pub message: String,
    /// How many later steps were skipped because of it.
    pub skipped: usize,
}

/// What a run did.
#[derive(Debug, Default)]
pub struct RunOutcome {
    /// The steps that failed, with the index of their plan.
    pub failed: Vec<(usize, Step)>,
    /// The steps that did not run, in order.
    pub skipped: Vec<Skip>,
    /// The failures that made later steps skip, in order: what a summary leads with.
    pub root_causes: Vec<RootCause>,
    /// Whether the run was interrupted (everything was stopped and cleaned up).
    pub interrupted: bool,
    /// How long the steps took.
    pub elapsed: Duration,
    /// Each plan's cleanup, in plan order.
    pub cleanups: Vec<CleanupReport>,
    /// Each plan's spec file (for the demo, the one written into `OUT/demo`).
    pub specs: Vec<PathBuf>,
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

/// Asked before each step with `(side, step)`: whether to run it. `ab --trials auto` stops
/// sampling through it; a step it declines is left out, not recorded as skipped.
pub type GateFn = dyn FnMut(usize, Step) -> bool + Send;

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
            crate::pipeline::orchestration::invocation::start_result(
                &plan.out,
                &plan_facts.request,
                &invocation,
            )?;
            facts.push(plan_facts);
            specs.push(spec);
        }
        let outcome = self.run_steps(&specs, &facts, observer);
        let cleanups = self.cleanup(observer);
        let mut outcome = outcome?;
        outcome.cleanups = cleanups?;
        outcome.specs = specs;
        Ok(outcome)
    }

    fn run_steps(
        &self,
        specs: &[PathBuf],
        facts: &[SpecFacts],
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
            if !self.allowed(side, step) {
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
                tell_skip(&mut steps, &progress, (side, step), cause, reason);
                continue;
            }
            let partner = self.pair_up(&mut run, (index, step), steps.skips, specs);
            if step.phase == Phase::Measure {
                let observer = &mut *steps.observer;
                self.before_measures(&run, side, partner, facts, observer, &mut told_drop)?;
            }
            steps.observer.step_started(&progress);
            let Some(result) = self.execute(&run, &mut progress, started, steps.observer)? else {
                outcome.interrupted = true;
                break;
            };
            let pair = (partner, facts);
            carried = self.conclude_run(&mut steps, &progress, (side, step), &run, pair, result);
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
    ) -> Option<(usize, usize)> {
        let partner = self
            .partner_of(index, skips)
            .filter(|&(other, _)| self.allowed(other, step));
        if let Some((other, _)) = partner {
            run.partner = Some(Box::new(phase_run(&self.plans[other], &specs[other], step)));
            run.together = self.together;
        }
        partner
    }

    /// What comes before a measure step, for it and its partner: see [`before_measure`].
    fn before_measures(
        &self,
        run: &PhaseRun,
        side: usize,
        partner: Option<(usize, usize)>,
        facts: &[SpecFacts],
        observer: &mut dyn Observer,
        told_drop: &mut bool,
    ) -> Result<(), Error> {
        let drop = self.plans[side].settings.drop_caches;
        before_measure(run, &facts[side], drop, observer, told_drop)?;
        if let (Some((other, _)), Some(partner)) = (partner, &run.partner) {
            let drop = self.plans[other].settings.drop_caches;
            before_measure(partner, &facts[other], drop, observer, told_drop)?;
        }
        Ok(())
    }

    /// Runs one step as this runner executes steps, its output in the step's log;
    /// `None` when interrupted.
    fn execute(
        &self,
        run: &PhaseRun,
        progress: &mut Progress,
        started: Instant,
        observer: &mut dyn Observer,
    ) -> Result<Option<StepResult>, Error> {
        let step_started = Instant::now();
        let log = run
            .out
            .join("logs")
            .join(format!("phase-{}-{}.log", run.phase, run.trial));
        let result = match &self.execution {
            Execution::InProcess => Some(run_in_process(run, &log)?),
            Execution::ReExec { program } => {
                self.run_child(program, run, &log, progress, started, observer)?
            }
        };
        // run_child moves run_elapsed on while it waits, so the step keeps its own clock.
        progress.step_elapsed = step_started.elapsed();
        progress.run_elapsed = started.elapsed();
        Ok(result)
    }

    /// Concludes a step that ran; of a pair, its own half now and its partner's half
    /// carried to the partner's turn.
    fn conclude_run(
        &self,
        steps: &mut Steps<'_>,
        progress: &Progress,
        (side, step): (usize, Step),
        run: &PhaseRun,
        (partner, facts): (Option<(usize, usize)>, &[SpecFacts]),
        result: StepResult,
    ) -> Option<Carried> {
        // The error the result records says what failed; a phase log's last line may be
        // the bottom of a screen it printed.
        let recorded = |run: &PhaseRun, facts: &SpecFacts| match &result {
            StepResult::Failed { .. } => {
                crate::pipeline::orchestration::phase_run::trial_failure(run, facts)
            }
            _ => None,
        };
        let own = recorded(run, &facts[side]);
        let (Some((other, other_index)), Some(partner_run)) = (partner, run.partner.as_deref())
        else {
            self.conclude(steps, progress, (side, step), result, own);
            return None;
        };
        let theirs = recorded(partner_run, &facts[other]);
        let [mine, other_result] = pair_results(&result, [own.is_some(), theirs.is_some()]);
        self.conclude(steps, progress, (side, step), mine, own);
        Some((other_index, other_result, theirs))
    }

    /// Whether the gate lets the step run (no gate: every step runs).
    fn allowed(&self, side: usize, step: Step) -> bool {
        let Some(Gate(gate)) = &self.gate else {
            return true;
        };
        let mut gate = match gate.lock() {
            Ok(gate) => gate,
            Err(poisoned) => poisoned.into_inner(),
        };
        gate(side, step)
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

    /// Runs one step as its own process; `None` when interrupted.
    fn run_child(
        &self,
        program: &Path,
        run: &PhaseRun,
        log: &Path,
        progress: &mut Progress,
        started: Instant,
        observer: &mut dyn Observer,
    ) -> Result<Option<StepResult>, Error> {
        let label = run_label(run);
        let mut child = spawn_phase(program, run, log)?;
        let step_started = Instant::now();
        // The wait between two looks at the child ends when it exits (its pidfd becomes
        // readable), not a fixed POLL later: 13 phases a demo run, 25 ms each on average.
        // Without pidfds (Linux before 5.3) it is a plain sleep.
        let pidfd = rustix::process::Pid::from_raw(child.id() as i32).and_then(|pid| {
            rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
        });
        let status: ExitStatus = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) => {}
                Err(source) => {
                    return Err(Error::Spawn {
                        action: "wait for",
                        step: label,
                        source,
                    });
                }
            }
            if self.interrupted.load(Ordering::SeqCst) {
                stop_everything(&mut child, observer);
                return Ok(None);
            }
            progress.step_elapsed = step_started.elapsed();
            progress.run_elapsed = started.elapsed();
            observer.waiting(progress);
            match &pidfd {
                Some(pidfd) => {
                    let mut fds = [rustix::event::PollFd::new(
                        pidfd,
                        rustix::event::PollFlags::IN,
                    )];
                    let timeout = rustix::event::Timespec::try_from(POLL).ok();
                    // An interrupted or failed poll only makes this look come sooner.
                    let _ = rustix::event::poll(&mut fds, timeout.as_ref());
                }
                None => std::thread::sleep(POLL),
            }
        };
        Ok(Some(if status.success() {
            StepResult::Succeeded
        } else {
            StepResult::Failed {
                message: format!("{status}: {}", last_error_line(log)),
                log: log.to_path_buf(),
            }
        }))
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
/// machine), and records in the result whether it did: "cold" means a cold cache only then.
fn before_measure(
    run: &PhaseRun,
    facts: &SpecFacts,
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
    let value = if drop {
        "yes: before each measure trial"
    } else {
        "no"
    };
    crate::pipeline::orchestration::phase_run::update_result(run, facts, |side| {
        side.runtime.insert(
            crate::pipeline::orchestration::caches_linux::RUNTIME_KEY.to_owned(),
            value.to_owned(),
        );
    })
}

/// What the steps so far made, as [`Runner::run_steps`] goes: the outcome, each side's
/// skip rules, and whom it tells.
struct Steps<'a> {
    outcome: &'a mut RunOutcome,
    skips: &'a mut [SkipRules],
    observer: &'a mut dyn Observer,
}

/// The partner's half of a pair that ran, kept for its turn: its order index, its result
/// and the failure its result file recorded.
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
    }
}

fn run_label(run: &PhaseRun) -> String {
    Step {
        phase: run.phase,
        trial: run.trial,
    }
    .label()
}

/// Runs a step here, writing its error into its log as the phase process would.
fn run_in_process(run: &PhaseRun, log: &Path) -> Result<StepResult, Error> {
    let outcome: PhaseOutcome = run_phase(run)?;
    if outcome.succeeded() {
        return Ok(StepResult::Succeeded);
    }
    let message = match &outcome.error {
        Some(error) => error.clone(),
        None => format!(
            "{} failed: {}",
            run_label(run),
            outcome.trial_errors.join("; ")
        ),
    };
    fs::write(log, format!("error: {message}\n")).map_err(|source| Error::Io {
        action: "write",
        path: log.to_path_buf(),
        source,
    })?;
    Ok(StepResult::Failed {
        message,
        log: log.to_path_buf(),
    })
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

fn spawn_phase(program: &Path, run: &PhaseRun, log: &Path) -> Result<Child, Error> {
    let label = run_label(run);
    let spawn_error = |action: &'static str| {
        let step = label.clone();
        move |source| Error::Spawn {
            action,
            step,
            source,
        }
    };
    let output = fs::File::create(log).map_err(|source| Error::Io {
        action: "create",
        path: log.to_path_buf(),
        source,
    })?;
    let mut command = crate::pipeline::orchestration::phase_child::command(program, run);
    command
        .stdin(Stdio::null())
        .stdout(output.try_clone().map_err(spawn_error("log"))?)
        .stderr(output);
    // Its own session (and process group): a Ctrl-C at the terminal reaches only us, and
    // we stop the phase in order (SIGTERM, grace, SIGKILL) rather than letting it die
    // half-way; nor does the terminal, or any descriptor above 2 we inherited, reach the
    // phase and the targets it starts.
    // SAFETY: detach makes raw, async-signal-safe system calls only (setsid,
    // close_range) and allocates nothing.
    unsafe {
        command.pre_exec(bench_proc::detach);
    }
    die_with_this_process(&mut command);
    command.spawn().map_err(spawn_error("start"))
}

/// Makes the phase get SIGTERM when this process dies, however it dies (SIGKILL
/// included), so that a killed run leaves no phase measuring on; `clibench phase`
/// stops what it started on SIGTERM, and `clibench cleanup` removes the rest.
///
/// The kernel sends the signal when the *thread* that forked the child ends, not
/// the process: the phase is spawned and waited for by the same call
/// ([`Runner::run_child`]), so that thread outlives the phase.
fn die_with_this_process(command: &mut Command) {
    let parent = rustix::process::getpid();
    // SAFETY: the closure runs in the forked child before exec and only makes raw
    // system calls (prctl, getppid), which are async-signal-safe; it allocates nothing
    // (the error is built from a number).
    unsafe {
        command.pre_exec(move || {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::TERM))?;
            // The parent may have died between fork and prctl, before there was
            // anything to fire: the child was re-parented, so it stops here.
            if rustix::process::getppid() != Some(parent) {
                return Err(rustix::io::Errno::SRCH.into());
            }
            Ok(())
        });
    }
}

/// Stops the running phase and everything below us (re-parented daemons included).
fn stop_everything(child: &mut Child, observer: &mut dyn Observer) {
    let own = std::process::id();
    if let Err(error) = bench_proc::stop(&bench_proc::Selector::Tree(own), STOP_GRACE) {
        observer.notice(&Notice::StopFailed {
            message: bench_core::error_chain(&error),
        });
    }
    // `stop` reaps what it can; make sure the phase itself is not left a zombie. No
    // kill() here: once reaped, its pid may already belong to another process.
    let _ = child.wait();
}

/// The last non-empty line of a phase's log, which holds its error.
fn last_error_line(log: &Path) -> String {
    let text = fs::read_to_string(log).unwrap_or_default();
    let line = text
        .lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("(empty log)");
    format!("{line} (log: {})", log.display())
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
