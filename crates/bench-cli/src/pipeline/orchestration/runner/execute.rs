//! Running one step the way the runner's [`Execution`] says: here, its error written
//! into the step's log as a phase process would; or as a `clibench phase` child in its
//! own session, watched (its pidfd polled, the interrupt flag looked at) until it exits,
//! and stopped with everything below us when the run is interrupted. Either way the step
//! hands over what it recorded, the child through its stdout.

use super::{Execution, Notice, Observer, Progress, Ran, Runner, StepResult};
use crate::pipeline::Error;
use crate::pipeline::isolation::command::STOP_GRACE;
use crate::pipeline::orchestration::phase_run::{PhaseOutcome, PhaseRun, run_phase};
use crate::pipeline::orchestration::plan::Step;
use crate::pipeline::orchestration::recorded::OutcomeReceiver;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How often a running phase process and the interrupt flag are looked at.
const POLL: Duration = Duration::from_millis(50);

impl Runner {
    /// Runs one step as this runner executes steps, its output in the step's log;
    /// `None` when interrupted.
    pub(super) fn execute(
        &self,
        run: &PhaseRun,
        progress: &mut Progress,
        started: Instant,
        observer: &mut dyn Observer,
    ) -> Result<Option<Ran>, Error> {
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

    /// Runs one step as its own process; `None` when interrupted.
    fn run_child(
        &self,
        program: &Path,
        run: &PhaseRun,
        log: &Path,
        progress: &mut Progress,
        started: Instant,
        observer: &mut dyn Observer,
    ) -> Result<Option<Ran>, Error> {
        let label = run_label(run);
        let turns = crate::pipeline::out::turns::path(&run.out, run.phase, run.trial);
        let mut child = spawn_phase(program, run, log)?;
        let outcome = child.stdout.take().map(OutcomeReceiver::start);
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
                let _ = fs::remove_file(&turns);
                return Ok(None);
            }
            progress.step_elapsed = step_started.elapsed();
            progress.run_elapsed = started.elapsed();
            progress.turns = crate::pipeline::out::turns::read(&turns);
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
        // The count was for the waiting step's display; the journal and the result say the rest.
        let _ = fs::remove_file(&turns);
        progress.turns = None;
        let result = if status.success() {
            StepResult::Succeeded
        } else {
            StepResult::Failed {
                message: format!("{status}: {}", last_error_line(log)),
                log: log.to_path_buf(),
            }
        };
        Ok(Some(Ran {
            result,
            recorded: outcome.and_then(OutcomeReceiver::finish),
        }))
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
fn run_in_process(run: &PhaseRun, log: &Path) -> Result<Ran, Error> {
    let outcome: PhaseOutcome = run_phase(run)?;
    if outcome.succeeded() {
        return Ok(Ran {
            result: StepResult::Succeeded,
            recorded: Some(outcome.recorded),
        });
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
    Ok(Ran {
        result: StepResult::Failed {
            message,
            log: log.to_path_buf(),
        },
        recorded: Some(outcome.recorded),
    })
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
    // Its stdout is the pipe its outcome comes through; the child points its own stdout at
    // the log once it has taken the pipe off it.
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
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
