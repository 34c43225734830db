//! The trial loop: every step of one plan (or of several plans, interleaved, for an A/B
//! run), each step run in this process or by a re-run `clibench phase`, then the cleanup.
//!
//! The runner prints nothing: it tells an [`Observer`] what happens, and returns a
//! [`RunOutcome`]. Interruption is a flag the caller sets (from a signal handler, say);
//! it is looked at between steps and, when phases run in their own process, while a
//! step runs, which then stops the phase and everything below it.

use super::driver::{PhaseOutcome, PhaseRun, run_phase};
use super::error::Failure;
use super::exec::STOP_GRACE;
use super::plan::{Plan, SpecSource, Step};
use super::{CleanupReport, Error};
use bench_core::Phase;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
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
    /// By running `PROGRAM phase NAME --spec S --out DIR --trial N` (a `clibench` binary),
    /// a process per step as the seed did: a phase that hangs or crashes cannot take the
    /// run down, and an interruption stops the phase at once.
    ReExec {
        /// The `clibench` binary.
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
}

/// Something worth telling that is not a step's result.
#[derive(Debug, Clone)]
pub enum Notice {
    /// Prepare failed, so nothing else of that side can run.
    PrepareFailed {
        /// The side's label, for an interleaved run.
        side: Option<String>,
    },
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

/// What a run did.
#[derive(Debug, Default)]
pub struct RunOutcome {
    /// The steps that failed, with the index of their plan.
    pub failed: Vec<(usize, Step)>,
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
        }
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
        for plan in &self.plans {
            create_out(&plan.out)?;
            specs.push(resolve_spec(plan)?);
        }
        let outcome = self.run_steps(&specs, observer);
        let cleanups = self.cleanup(observer);
        let mut outcome = outcome?;
        outcome.cleanups = cleanups?;
        outcome.specs = specs;
        Ok(outcome)
    }

    fn run_steps(
        &self,
        specs: &[PathBuf],
        observer: &mut dyn Observer,
    ) -> Result<RunOutcome, Error> {
        let started = Instant::now();
        let mut outcome = RunOutcome::default();
        let mut prepare_failed = vec![false; self.plans.len()];
        for (index, &(side, step)) in self.order.iter().enumerate() {
            if self.interrupted.load(Ordering::SeqCst) {
                outcome.interrupted = true;
                break;
            }
            if prepare_failed[side] {
                continue;
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
            observer.step_started(&progress);
            let step_started = progress.run_elapsed;
            let run = phase_run(plan, &specs[side], step);
            let log = plan
                .out
                .join("logs")
                .join(format!("phase-{}-{}.log", step.phase, step.trial));
            let result = match &self.execution {
                Execution::InProcess => Some(run_in_process(&run, &log)?),
                Execution::ReExec { program } => {
                    self.run_child(program, &run, &log, &mut progress, started, observer)?
                }
            };
            // From this step's start: `run_child` moves `run_elapsed` while it waits.
            progress.run_elapsed = started.elapsed();
            progress.step_elapsed = progress.run_elapsed - step_started;
            let Some(result) = result else {
                outcome.interrupted = true;
                break;
            };
            observer.step_finished(&progress, &result);
            if let StepResult::Failed { .. } = result {
                outcome.failed.push((side, step));
                if step.phase == Phase::Prepare {
                    prepare_failed[side] = true;
                    observer.notice(&Notice::PrepareFailed {
                        side: self.sides[side].clone(),
                    });
                }
            }
        }
        outcome.elapsed = started.elapsed();
        Ok(outcome)
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
            std::thread::sleep(POLL);
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
                message: error.to_string(),
            });
        }
        let mut reports = Vec::new();
        for plan in &self.plans {
            // The state file says whether the run asked to keep its users.
            let report = super::cleanup(&plan.out).map_err(|e| Error::Cleanup(Failure::new(e)))?;
            reports.push(report);
        }
        Ok(reports)
    }
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

fn create_out(out: &Path) -> Result<(), Error> {
    let io = |action: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Io {
            action,
            path,
            source,
        }
    };
    fs::create_dir_all(out.join("logs")).map_err(io("create the output folder", out))?;
    // Trial users read the fetched source and write nothing here, but they must be able to
    // reach what lies below (the installer, the artifacts), so the folders are not private.
    for folder in [out.to_path_buf(), out.join("logs")] {
        let metadata = fs::metadata(&folder).map_err(io("inspect", &folder))?;
        if metadata.uid() == rustix::process::geteuid().as_raw() {
            fs::set_permissions(&folder, fs::Permissions::from_mode(0o755))
                .map_err(io("make readable", &folder))?;
        }
    }
    Ok(())
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
    let mut command = Command::new(program);
    command
        .arg("phase")
        .arg(run.phase.name())
        .arg("--spec")
        .arg(&run.spec)
        .arg("--out")
        .arg(&run.out)
        .arg("--trial")
        .arg(run.trial.to_string());
    if run.keep_users {
        command.arg("--keep-users");
    }
    if let Some(repository) = &run.repository {
        command.arg("--repository").arg(repository);
    }
    if let Some(commit) = &run.commit {
        command.arg("--commit").arg(commit);
    }
    for set in &run.overrides {
        command.arg("--set").arg(set.to_string());
    }
    command
        .stdin(Stdio::null())
        .stdout(output.try_clone().map_err(spawn_error("log"))?)
        .stderr(output)
        // Its own process group: a Ctrl-C at the terminal reaches only us, and we stop the
        // phase in order (SIGTERM, grace, SIGKILL) rather than letting it die half-way.
        .process_group(0);
    command.spawn().map_err(spawn_error("start"))
}

/// Stops the running phase and everything below us (re-parented daemons included).
fn stop_everything(child: &mut Child, observer: &mut dyn Observer) {
    let own = std::process::id();
    if let Err(error) = bench_proc::stop(&bench_proc::Selector::Tree(own), STOP_GRACE) {
        observer.notice(&Notice::StopFailed {
            message: error.to_string(),
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

/// Renders the Markdown report of `OUT/result.json` and writes it to `OUT/report.md`.
pub fn write_report(out: &Path) -> Result<String, Error> {
    let path = out.join("result.json");
    if !path.exists() {
        return Err(Error::NoResult {
            logs: out.join("logs"),
        });
    }
    let result = bench_core::ResultFile::load(&path).map_err(|source| Error::ResultUnreadable {
        path: path.clone(),
        source,
    })?;
    let report = bench_core::export::markdown::report(&bench_core::report::Report::new(&result));
    let report_path = out.join("report.md");
    bench_core::io::write_atomic(&report_path, report.as_bytes())?;
    Ok(report)
}
