//! The phase-child contract of [`Execution::ReExec`](super::runner::Execution): the run
//! re-executes a binary as `PROGRAM __clibench-phase-child PHASE --spec S --out DIR
//! --trial N [--keep-users] [--commit SHA] [--set KEY=VALUE]... [--caches-dropped yes|no]`
//! (the repository, which may hold credentials, in [`REPOSITORY_VAR`] rather than on the
//! command line), and the child runs that one phase. A tight pair's child also gets the
//! other side's folder as `--partner-spec S --partner-out DIR [--partner-commit SHA]
//! [--partner-set KEY=VALUE]... [--partner-caches-dropped yes|no]` (same phase, trial,
//! users' fate and repository), and `--together` when both sides' programs start at the
//! same moment (a duet). With `--outcome-to-stdout` its stdout is a pipe to the run, which
//! gets what the phase recorded through it (see `recorded`); its stderr is the step's log.
//!
//! Any binary that embeds the pipeline can be its own phase child, as nextest's
//! double-spawn lets any binary be its own test runner: the first thing its `main` does is
//! ask [`PhaseChild::from_args`] whether it was started as one.
//!
//! ```no_run
//! use bench_cli::pipeline::PhaseChild;
//!
//! fn main() -> std::process::ExitCode {
//!     if let Some(child) = PhaseChild::from_args(std::env::args_os()) {
//!         return std::process::ExitCode::from(PhaseChild::run_or_report(child, &mut std::io::stderr()));
//!     }
//!     // ... the binary's own work, e.g. a Runner with Execution::ReExec of this binary.
//!     std::process::ExitCode::SUCCESS
//! }
//! ```

use crate::pipeline::orchestration::phase_run::{PhaseRun, run_phase};
use crate::pipeline::orchestration::recorded::{OutcomeSender, Recorded};
use crate::spec::Override;
use bench_core::Phase;
use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// The environment variable through which `clibench run` hands `--repository` to its
/// phases.
pub const REPOSITORY_VAR: &str = "CLIBENCH_REPOSITORY";

/// The first argument that marks a phase child.
pub(crate) const PHASE_CHILD_ARG: &str = "__clibench-phase-child";

/// The flag that makes a phase child's stdout the pipe its outcome goes to.
const OUTCOME_TO_STDOUT: &str = "--outcome-to-stdout";

/// Exit code of a phase child whose phase ran and failed (a trial error, a phase error).
pub(crate) const PHASE_FAILED: u8 = 1;
/// Exit code of a phase child whose input was wrong (arguments, spec, output folder).
pub(crate) const PHASE_INPUT_ERROR: u8 = 2;

/// How long the child's targets get between SIGTERM and SIGKILL when the child is told to
/// stop.
const STOP_GRACE: Duration = crate::pipeline::isolation::command::STOP_GRACE;

/// A phase child's command line could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PhaseChildError {
    /// An argument is missing its value, unknown, or not valid.
    #[error("phase child argument {position}: {problem}")]
    Argument {
        /// 1-based position after the marker.
        position: usize,
        /// What is wrong.
        problem: String,
    },
    /// `--spec` or `--out` is missing.
    #[error("phase child: `{0}` is required")]
    Missing(&'static str),
}

/// One phase of one trial, as a re-executed child runs it.
#[derive(Debug)]
pub struct PhaseChild {
    /// The phase, trial and settings to run.
    pub run: PhaseRun,
    /// Whether stdout is the run's pipe for what the phase recorded (`--outcome-to-stdout`).
    outcome_to_stdout: bool,
}

impl PhaseChild {
    /// `None` when `args` (a whole command line, program first, as
    /// [`std::env::args_os`]) is not a phase child's; otherwise the phase to run, or why
    /// its arguments are wrong.
    pub fn from_args(
        args: impl IntoIterator<Item = OsString>,
    ) -> Option<Result<PhaseChild, PhaseChildError>> {
        let mut args = args.into_iter().skip(1);
        if args.next().as_deref() != Some(OsStr::new(PHASE_CHILD_ARG)) {
            return None;
        }
        Some(parse(args.collect()))
    }

    /// Runs the phase (see [`run_as_phase_child`]) and sends the run what it recorded, or
    /// writes why the arguments are wrong; returns the exit code.
    pub fn run_or_report(child: Result<PhaseChild, PhaseChildError>, report: &mut dyn Write) -> u8 {
        let child = match child {
            Ok(child) => child,
            Err(error) => {
                let _ = writeln!(report, "error: {}", bench_core::error_chain(&error));
                return PHASE_INPUT_ERROR;
            }
        };
        if !child.outcome_to_stdout {
            return run_as_phase_child(&child.run, report);
        }
        // Before anything starts: no process this one starts may inherit the pipe.
        let sender = match OutcomeSender::take_stdout() {
            Ok(sender) => sender,
            Err(error) => {
                let _ = writeln!(
                    report,
                    "error: taking stdout as the pipe to the run: {error}"
                );
                return PHASE_FAILED;
            }
        };
        let (code, recorded) = run_and_record(&child.run, report);
        if let Some(recorded) = recorded
            && let Err(error) = sender.send(&recorded)
        {
            let _ = writeln!(report, "error: sending the outcome to the run: {error}");
        }
        code
    }
}

/// Runs one phase the way a child of [`Execution::ReExec`](super::runner::Execution)
/// must: SIGTERM, SIGINT or SIGHUP (from the run stopping it, or from the kernel when the
/// run died, `PR_SET_PDEATHSIG`) stop everything started below this process, the target
/// included, then end it with 128 + the signal; errors and failed trials are written to
/// `report` (the child's log, which the run quotes). Returns the exit code: 0, or
/// `PHASE_FAILED`, or `PHASE_INPUT_ERROR`.
pub fn run_as_phase_child(run: &PhaseRun, report: &mut dyn Write) -> u8 {
    run_and_record(run, report).0
}

/// [`run_as_phase_child`], with what the phase recorded when it ran.
fn run_and_record(run: &PhaseRun, report: &mut dyn Write) -> (u8, Option<Recorded>) {
    if let Err(error) = stop_everything_on_termination() {
        let _ = writeln!(report, "error: {}", bench_core::error_chain(&error));
        return (PHASE_FAILED, None);
    }
    let outcome = match run_phase(run) {
        Ok(outcome) => outcome,
        Err(error) => {
            let _ = writeln!(report, "error: {}", bench_core::error_chain(&error));
            let code = if error.is_input() {
                PHASE_INPUT_ERROR
            } else {
                PHASE_FAILED
            };
            return (code, None);
        }
    };
    if let Some(error) = &outcome.error {
        let _ = writeln!(report, "error: {error}");
    }
    if outcome.succeeded() {
        return (0, Some(outcome.recorded));
    }
    if !outcome.trial_errors.is_empty() {
        let _ = writeln!(
            report,
            "error: {} trial {} failed: {}",
            run.phase,
            run.trial,
            outcome.trial_errors.join("; ")
        );
    }
    (PHASE_FAILED, Some(outcome.recorded))
}

/// The error a phase child could not start its signal watch with.
#[derive(Debug, thiserror::Error)]
enum WatchError {
    #[error("becoming a child subreaper")]
    Subreaper(#[source] bench_proc::SubreaperError),
    #[error("watching for SIGTERM, SIGINT and SIGHUP")]
    Signals(#[source] bench_proc::SignalWatchError),
}

/// Makes this process a child subreaper (so daemons the target detaches stay below it)
/// and stops its whole tree on the first termination signal.
fn stop_everything_on_termination() -> Result<(), WatchError> {
    bench_proc::become_subreaper().map_err(WatchError::Subreaper)?;
    bench_proc::on_termination_signal(|signal| {
        let me = bench_proc::Selector::Tree(std::process::id());
        // The main thread may be starting a process right now: a last pass without grace
        // catches one started as the first pass ended.
        let _ = bench_proc::stop(&me, STOP_GRACE);
        let _ = bench_proc::stop(&me, Duration::ZERO);
        std::process::exit(128 + signal)
    })
    .map_err(WatchError::Signals)
}

/// The command that runs `run` as a phase child of `program`.
pub(crate) fn command(program: &std::path::Path, run: &PhaseRun) -> Command {
    let mut command = Command::new(program);
    command
        .arg(PHASE_CHILD_ARG)
        .arg(run.phase.name())
        .arg("--spec")
        .arg(&run.spec)
        .arg("--out")
        .arg(&run.out)
        .arg("--trial")
        .arg(run.trial.to_string())
        .arg(OUTCOME_TO_STDOUT);
    if run.keep_users {
        command.arg("--keep-users");
    }
    if let Some(repository) = &run.repository {
        // In the environment (readable by this user only), not on the command line that
        // every user can read: the URL may hold credentials.
        command.env(REPOSITORY_VAR, repository);
    } else {
        command.env_remove(REPOSITORY_VAR);
    }
    if let Some(commit) = &run.commit {
        command.arg("--commit").arg(commit);
    }
    for set in &run.overrides {
        command.arg("--set").arg(set.to_string());
    }
    if let Some(dropped) = run.caches_dropped {
        command.arg("--caches-dropped").arg(yes_no(dropped));
    }
    if let Some(partner) = &run.partner {
        command
            .arg("--partner-spec")
            .arg(&partner.spec)
            .arg("--partner-out")
            .arg(&partner.out);
        if let Some(commit) = &partner.commit {
            command.arg("--partner-commit").arg(commit);
        }
        for set in &partner.overrides {
            command.arg("--partner-set").arg(set.to_string());
        }
        if let Some(dropped) = partner.caches_dropped {
            command.arg("--partner-caches-dropped").arg(yes_no(dropped));
        }
        if run.together {
            command.arg("--together");
        }
    }
    command
}

fn yes_no(flag: bool) -> &'static str {
    if flag { "yes" } else { "no" }
}

fn parse(args: Vec<OsString>) -> Result<PhaseChild, PhaseChildError> {
    let mut args = args.into_iter().enumerate().map(|(i, arg)| (i + 1, arg));
    let problem =
        |position: usize, problem: String| PhaseChildError::Argument { position, problem };
    let text = |position: usize, arg: OsString| {
        arg.into_string()
            .map_err(|arg| problem(position, format!("{arg:?} is not UTF-8")))
    };
    let (position, phase) = args.next().ok_or(PhaseChildError::Missing("PHASE"))?;
    let phase: Phase = text(position, phase)?
        .parse()
        .map_err(|error: bench_core::UnknownName| problem(position, error.to_string()))?;
    let mut spec = None;
    let mut out = None;
    let mut trial = 0;
    let mut keep_users = false;
    let mut commit = None;
    let mut overrides = Vec::new();
    let mut partner_spec = None;
    let mut partner_out = None;
    let mut partner_commit = None;
    let mut partner_overrides = Vec::new();
    let mut together = false;
    let mut outcome_to_stdout = false;
    let mut caches_dropped = None;
    let mut partner_caches_dropped = None;
    let yes_or_no = |position: usize, value: OsString| match text(position, value)?.as_str() {
        "yes" => Ok(true),
        "no" => Ok(false),
        other => Err(problem(position, format!("`{other}` is not yes or no"))),
    };
    let setting = |position: usize, value: OsString| {
        text(position, value)?
            .parse::<Override>()
            .map_err(|error| problem(position, bench_core::error_chain(&error)))
    };
    while let Some((position, flag)) = args.next() {
        let flag = text(position, flag)?;
        if flag == "--keep-users" {
            keep_users = true;
            continue;
        }
        if flag == "--together" {
            together = true;
            continue;
        }
        if flag == OUTCOME_TO_STDOUT {
            outcome_to_stdout = true;
            continue;
        }
        let (value_position, value) = args
            .next()
            .ok_or_else(|| problem(position, format!("`{flag}` needs a value")))?;
        match flag.as_str() {
            "--spec" => spec = Some(PathBuf::from(value)),
            "--out" => out = Some(PathBuf::from(value)),
            "--trial" => {
                trial = text(value_position, value)?
                    .parse()
                    .map_err(|error| problem(value_position, format!("--trial: {error}")))?;
            }
            "--commit" => commit = Some(text(value_position, value)?),
            "--set" => overrides.push(setting(value_position, value)?),
            "--partner-spec" => partner_spec = Some(PathBuf::from(value)),
            "--partner-out" => partner_out = Some(PathBuf::from(value)),
            "--partner-commit" => partner_commit = Some(text(value_position, value)?),
            "--partner-set" => partner_overrides.push(setting(value_position, value)?),
            "--caches-dropped" => caches_dropped = Some(yes_or_no(value_position, value)?),
            "--partner-caches-dropped" => {
                partner_caches_dropped = Some(yes_or_no(value_position, value)?);
            }
            _ => return Err(problem(position, format!("unknown flag `{flag}`"))),
        }
    }
    let repository = std::env::var(REPOSITORY_VAR).ok();
    let partner = match (partner_spec, partner_out) {
        (None, None) => None,
        (Some(spec), Some(out)) => Some(Box::new(PhaseRun {
            phase,
            spec,
            out,
            trial,
            keep_users,
            repository: repository.clone(),
            commit: partner_commit,
            overrides: partner_overrides,
            partner: None,
            together: false,
            caches_dropped: partner_caches_dropped,
        })),
        (Some(_), None) => return Err(PhaseChildError::Missing("--partner-out")),
        (None, Some(_)) => return Err(PhaseChildError::Missing("--partner-spec")),
    };
    Ok(PhaseChild {
        run: PhaseRun {
            phase,
            spec: spec.ok_or(PhaseChildError::Missing("--spec"))?,
            out: out.ok_or(PhaseChildError::Missing("--out"))?,
            trial,
            keep_users,
            repository,
            commit,
            overrides,
            partner,
            together,
            caches_dropped,
        },
        outcome_to_stdout,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args_of(command: &Command) -> Vec<OsString> {
        std::iter::once(command.get_program().to_owned())
            .chain(command.get_args().map(OsStr::to_owned))
            .collect()
    }

    #[test]
    fn the_command_a_run_starts_parses_back_into_the_same_phase() {
        let mut run = PhaseRun::new(Phase::Ui, "/s/spec.toml".as_ref(), "/o".as_ref());
        run.trial = 7;
        run.keep_users = true;
        run.commit = Some("a".repeat(40));
        run.overrides = vec!["measure.rows=30".parse().unwrap()];
        run.caches_dropped = Some(false);
        let command = command("/bin/clibench".as_ref(), &run);
        let child = PhaseChild::from_args(args_of(&command)).unwrap().unwrap();
        assert_eq!(child.run.phase, Phase::Ui);
        assert_eq!(child.run.spec, PathBuf::from("/s/spec.toml"));
        assert_eq!(child.run.out, PathBuf::from("/o"));
        assert_eq!(child.run.trial, 7);
        assert!(child.run.keep_users);
        assert_eq!(child.run.commit, run.commit);
        assert_eq!(child.run.overrides.len(), 1);
        assert_eq!(child.run.overrides[0].to_string(), "measure.rows=30");
        assert!(child.run.partner.is_none());
        assert_eq!(child.run.caches_dropped, Some(false));
        assert!(
            child.outcome_to_stdout,
            "a run reads the outcome from the pipe"
        );
    }

    #[test]
    fn a_tight_pairs_command_carries_the_other_side_and_parses_back() {
        let mut run = PhaseRun::new(Phase::Measure, "/s/a.toml".as_ref(), "/o/base".as_ref());
        run.trial = 4;
        let mut partner = PhaseRun::new(Phase::Measure, "/s/b.toml".as_ref(), "/o/head".as_ref());
        partner.trial = 4;
        partner.commit = Some("b".repeat(40));
        partner.overrides = vec!["measure.env.X=1".parse().unwrap()];
        partner.caches_dropped = Some(true);
        run.partner = Some(Box::new(partner));
        run.together = true;
        let command = command("/bin/clibench".as_ref(), &run);
        let child = PhaseChild::from_args(args_of(&command)).unwrap().unwrap();
        let partner = child.run.partner.expect("the partner");
        assert_eq!(partner.phase, Phase::Measure);
        assert_eq!(partner.trial, 4);
        assert_eq!(partner.spec, PathBuf::from("/s/b.toml"));
        assert_eq!(partner.out, PathBuf::from("/o/head"));
        assert_eq!(partner.commit, Some("b".repeat(40)));
        assert_eq!(partner.overrides[0].to_string(), "measure.env.X=1");
        assert_eq!(partner.caches_dropped, Some(true));
        assert_eq!(child.run.caches_dropped, None);
        assert!(child.run.overrides.is_empty());
        assert!(child.run.together);
        let half = [
            "x",
            PHASE_CHILD_ARG,
            "measure",
            "--spec",
            "s",
            "--out",
            "o",
            "--partner-spec",
            "t",
        ]
        .map(OsString::from);
        let error = PhaseChild::from_args(half)
            .unwrap()
            .unwrap_err()
            .to_string();
        assert!(error.contains("`--partner-out` is required"), "{error}");
    }

    #[test]
    fn another_command_line_is_not_a_phase_child() {
        let args = ["clibench", "phase", "ui"].map(OsString::from);
        assert!(PhaseChild::from_args(args).is_none());
        assert!(PhaseChild::from_args([OsString::from("clibench")]).is_none());
    }

    #[test]
    fn a_bad_argument_is_named_by_position() {
        let args = [
            "x",
            PHASE_CHILD_ARG,
            "measure",
            "--spec",
            "s",
            "--trial",
            "many",
        ]
        .map(OsString::from);
        let error = PhaseChild::from_args(args)
            .unwrap()
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("argument 5") && error.contains("--trial"),
            "{error}"
        );
        let args = ["x", PHASE_CHILD_ARG, "measure", "--spec", "s"].map(OsString::from);
        let error = PhaseChild::from_args(args)
            .unwrap()
            .unwrap_err()
            .to_string();
        assert!(error.contains("`--out` is required"), "{error}");
    }
}
