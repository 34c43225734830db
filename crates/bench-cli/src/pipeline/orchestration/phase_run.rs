//! One phase of one trial: load the spec, apply the overrides, run the phase, merge what it
//! observed into `OUT/result.json`. What `clibench phase NAME` does, and what the
//! [`Runner`](crate::pipeline::Runner) does for each step, in this process or in a re-run binary.

use crate::pipeline::Error;
use crate::pipeline::context::PhaseContext;
use crate::pipeline::error::PhaseError;
use crate::pipeline::orchestration::recorded::{Recorded, SideRecord};
use crate::spec::{self, Override};
use bench_core::error_chain;
use bench_core::{Phase, Request, ResultFile, Role, Side};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// How much of a phase's error message the result file keeps; the whole message is in
/// [`PhaseOutcome::error`] and the phase's log.
const RESULT_ERROR_CHARS: usize = 500;

/// One phase of one trial, as `clibench phase NAME --spec S --out DIR --trial N` asks.
#[derive(Debug, Clone)]
pub struct PhaseRun {
    /// Which phase runs.
    pub phase: Phase,
    /// The spec file.
    pub spec: PathBuf,
    /// The output folder: result.json, logs, artifacts, homes.
    pub out: PathBuf,
    /// The trial (for install: the install index).
    pub trial: u32,
    /// Keep the trial users and homes at cleanup.
    pub keep_users: bool,
    /// Fetch the source from here instead of the spec's `source.repository`.
    pub repository: Option<String>,
    /// Build this commit instead of the spec's `source.commit`.
    pub commit: Option<String>,
    /// `--set KEY=VALUE` overrides of the spec's keys, applied in order.
    pub overrides: Vec<Override>,
    /// The other side of an A/B run's tight pair (see
    /// the measure phase's `pair`): its measure trial of the
    /// same number runs in this process, its starts interleaved with this side's.
    pub partner: Option<Box<PhaseRun>>,
    /// With a partner: start both sides' programs at the same moment (a duet) instead of
    /// one after the other.
    pub together: bool,
    /// Whether the page cache was dropped before this step, which the phase records in
    /// the result's runtime facts (`drop caches`) with its observations; `None` records
    /// nothing (a phase run by hand, a step other than measure).
    pub caches_dropped: Option<bool>,
}

impl PhaseRun {
    /// Trial 0 of `phase` with the spec as it is.
    pub fn new(phase: Phase, spec: &Path, out: &Path) -> PhaseRun {
        PhaseRun {
            phase,
            spec: spec.to_path_buf(),
            out: out.to_path_buf(),
            trial: 0,
            keep_users: false,
            repository: None,
            commit: None,
            overrides: Vec::new(),
            partner: None,
            together: false,
            caches_dropped: None,
        }
    }
}

/// How a phase ended.
#[derive(Debug)]
pub struct PhaseOutcome {
    /// The phase's own error with its whole chain, when it failed before recording its
    /// observations (the result keeps 4,000 characters of each).
    pub error: Option<String>,
    /// The same error, typed, for a caller that matches on what failed.
    pub failure: Option<PhaseError>,
    /// The trial's errors as the result file records them (empty: the trial succeeded).
    pub trial_errors: Vec<String>,
    /// Each side's result as the phase saved it, with its trial's errors: what the runner
    /// learns from, rather than reading the file back.
    pub recorded: Recorded,
}

impl PhaseOutcome {
    /// Whether the trial succeeded.
    pub fn succeeded(&self) -> bool {
        self.error.is_none() && self.trial_errors.is_empty()
    }
}

/// Loads a spec with its `--set` overrides and applies `repository` and `commit`, as every
/// phase and the runner do.
pub(crate) fn load_spec(
    path: &Path,
    overrides: &[Override],
    repository: Option<&str>,
    commit: Option<&str>,
) -> Result<spec::Spec, Error> {
    let mut spec = spec::load_with(path, overrides)?;
    override_source(&mut spec, path, repository, commit)?;
    Ok(spec)
}

/// Runs one phase and merges its observations into `OUT/result.json`; with a
/// [`partner`](PhaseRun::partner), a tight pair of measure trials, each side's into its own
/// folder.
///
/// Errors before the phase could start (a bad spec, an unreadable result file) are
/// returned as `Err`; a phase that ran and failed is an `Ok` outcome with its errors, and
/// the result file records them. A pair's outcome holds both sides' errors.
pub fn run_phase(run: &PhaseRun) -> Result<PhaseOutcome, Error> {
    if let Some(partner) = &run.partner {
        return run_pair(run, partner);
    }
    let (mut opened, spec) = Opened::open(run)?;
    let outcome = opened
        .context(run, spec)
        .and_then(|ctx| dispatch(&ctx, &mut opened.result.side));
    opened.close(run, outcome)
}

/// Both sides of a tight pair: each folder opened (and locked), both contexts made, the
/// starts interleaved (or, a duet of runtime, ui or session trials, both trials run at
/// once), each result saved.
fn run_pair(run: &PhaseRun, partner: &PhaseRun) -> Result<PhaseOutcome, Error> {
    let whole_trials =
        run.together && crate::pipeline::orchestration::trial_duet::pairs_whole_trials(run.phase);
    if run.phase != partner.phase || !(run.phase == Phase::Measure || whole_trials) {
        return Err(Error::Phase {
            phase: run.phase,
            source: Box::new(PhaseError::PairedPhase(run.phase)),
        });
    }
    let (mut first, first_spec) = Opened::open(run)?;
    let (mut second, second_spec) = Opened::open(partner)?;
    let outcomes = match (
        first.context(run, first_spec),
        second.context(partner, second_spec),
    ) {
        (Ok(first_ctx), Ok(second_ctx)) => {
            // A side's processes are told apart from the other's by its own trial user;
            // without root both run as us, and each side's family (this process's tree)
            // would hold the other's programs: the two then run one after the other.
            let apart = [&first_ctx, &second_ctx]
                .iter()
                .all(|ctx| ctx.user().is_ok_and(|user| user.dedicated));
            let together = run.together && apart;
            let sides = [&mut first.result.side, &mut second.result.side];
            if whole_trials && together {
                crate::pipeline::orchestration::trial_duet::run(
                    [&first_ctx, &second_ctx],
                    sides,
                    dispatch,
                )
            } else if whole_trials {
                let [first_side, second_side] = sides;
                [
                    dispatch(&first_ctx, first_side),
                    dispatch(&second_ctx, second_side),
                ]
            } else {
                let [a, b] = crate::pipeline::phases::measure::pair::run(
                    [&first_ctx, &second_ctx],
                    sides,
                    together,
                );
                [a.map_err(PhaseError::from), b.map_err(PhaseError::from)]
            }
        }
        (first_ctx, second_ctx) => [first_ctx.map(drop), second_ctx.map(drop)],
    };
    let [a, b] = outcomes;
    let first = first.close(run, a)?;
    let second = second.close(partner, b)?;
    Ok(PhaseOutcome {
        error: match (first.error, second.error) {
            (Some(a), Some(b)) => Some(format!("{a}; {}: {b}", partner.out.display())),
            (Some(a), None) => Some(a),
            (None, Some(b)) => Some(format!("{}: {b}", partner.out.display())),
            (None, None) => None,
        },
        failure: first.failure.or(second.failure),
        trial_errors: first
            .trial_errors
            .into_iter()
            .chain(
                second
                    .trial_errors
                    .into_iter()
                    .map(|error| format!("{}: {error}", partner.out.display())),
            )
            .collect(),
        recorded: Recorded {
            own: first.recorded.own,
            partner: Some(second.recorded.own),
        },
    })
}

/// A phase's output folder, locked, with its result file loaded and the spec as the phase
/// runs it.
struct Opened {
    _lock: crate::pipeline::out::folder::OutLock,
    path: PathBuf,
    facts: SpecFacts,
    result: ResultFile,
    started: Instant,
}

impl Opened {
    /// Opens `run`'s folder; returns it with the spec the phase runs.
    fn open(run: &PhaseRun) -> Result<(Opened, spec::Spec), Error> {
        let mut spec = load_spec(
            &run.spec,
            &run.overrides,
            run.repository.as_deref(),
            run.commit.as_deref(),
        )?;
        let lock = crate::pipeline::out::folder::open_for_phase(&run.out)?;
        let path = run.out.join("result.json");
        if run.commit.is_none() && run.phase != Phase::Prepare {
            adopt_prepared_commit(&mut spec, &path);
        }
        let facts = SpecFacts::of(&spec, &run.spec, &run.overrides);
        let mut result =
            ResultFile::load_or_create(&path, &facts.request).map_err(Error::ResultUnreadable)?;
        if run.keep_users {
            crate::pipeline::out::state::State::update(&run.out, |s| s.keep_users = true).map_err(
                |error| Error::Phase {
                    phase: run.phase,
                    source: Box::new(PhaseError::State(error)),
                },
            )?;
        }
        crate::pipeline::orchestration::circumstances::record_start(
            &mut result.side,
            run.phase,
            run.trial,
        );
        if let Some(dropped) = run.caches_dropped {
            result.side.runtime.insert(
                crate::pipeline::orchestration::caches_linux::RUNTIME_KEY.to_owned(),
                crate::pipeline::orchestration::caches_linux::runtime_value(dropped).to_owned(),
            );
        }
        result.side.error = None;
        let opened = Opened {
            _lock: lock,
            path,
            facts,
            result,
            started: Instant::now(),
        };
        Ok((opened, spec))
    }

    /// The phase's context, the trial's install recorded.
    fn context(&mut self, run: &PhaseRun, spec: spec::Spec) -> Result<PhaseContext, PhaseError> {
        let ctx = PhaseContext::new(run.phase, spec, &run.spec, &run.out, run.trial)?;
        if ctx.phase > Phase::Install {
            self.result
                .side
                .trial_record_mut(ctx.phase, ctx.trial)
                .install = Some(ctx.install);
        }
        Ok(ctx)
    }

    /// Records the phase's error and time, saves the result file, and says how it ended.
    fn close(
        mut self,
        run: &PhaseRun,
        outcome: Result<(), PhaseError>,
    ) -> Result<PhaseOutcome, Error> {
        let failure = outcome.err();
        let error = failure.as_ref().map(|error| {
            crate::pipeline::redact::redact(&format!("{}: {}", run.phase, error_chain(error)))
        });
        let side = &mut self.result.side;
        if let Some(message) = &error {
            side.set_error(crate::pipeline::isolation::command::clip(
                message,
                RESULT_ERROR_CHARS,
            ));
        }
        side.timings.insert(
            format!("phase:{}:{}", run.phase, run.trial),
            self.started.elapsed().as_secs_f64(),
        );
        self.result
            .save(&self.path)
            .map_err(|source| Error::ResultSave {
                path: self.path.clone(),
                source,
            })?;
        let errors = bench_core::trial_errors_without(
            &self.result.side,
            run.phase,
            run.trial,
            &self.facts.absent_in(run.phase, run.trial),
        );
        Ok(PhaseOutcome {
            error,
            failure,
            trial_errors: errors
                .iter()
                .map(|error| crate::pipeline::redact::redact(error))
                .collect(),
            recorded: Recorded {
                own: SideRecord {
                    errors,
                    side: self.result.side,
                },
                partner: None,
            },
        })
    }
}

/// A later phase given no `--commit` measures the build prepare made in this folder, as
/// `phase prepare --commit SHA` then `phase install` reads: the commit is taken from the
/// folder's result file when it holds one. An unreadable file is left to the loader, which
/// says why.
fn adopt_prepared_commit(spec: &mut spec::Spec, result: &Path) {
    let Some(source) = spec.source.as_mut() else {
        return;
    };
    if !result.exists() {
        return;
    }
    if let Ok(file) = ResultFile::load(result)
        && spec::is_full_sha(&file.request.sha)
    {
        source.commit = file.request.sha;
    }
}

/// `--set a=1 --set b=2` as the result's request records it: `a=1 b=2`.
pub fn describe_overrides(overrides: &[Override]) -> String {
    overrides
        .iter()
        .map(Override::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// What a run records about its spec outside the phases, found once when the spec is read:
/// the request a new result file starts with, and the metrics the target cannot have.
#[derive(Debug, Clone)]
pub(crate) struct SpecFacts {
    /// The request of the spec with its overrides (see [`request_for`]).
    pub request: Request,
    /// The metrics this target cannot have: `bundle` without artifacts, `install` without
    /// an installer (an already installed target), `rss` and `pss` for a program whose
    /// ready is its exit, `lag_growth` and `render_growth` for a
    /// session with fewer than two checkpoints after its warm-up. Their absence is not a
    /// failure.
    pub absent: Vec<bench_core::Metric>,
    /// `[measure] memory_trials`: the measure trials from this one on read no memory.
    pub memory_trials: Option<u32>,
}

impl SpecFacts {
    /// The facts of `spec` (read from `spec_path`, with `overrides` applied).
    pub fn of(spec: &spec::Spec, spec_path: &Path, overrides: &[Override]) -> SpecFacts {
        let mut request = request_for(spec, spec_path);
        if !overrides.is_empty() {
            request.config.insert(
                bench_core::OVERRIDES_KEY.to_owned(),
                describe_overrides(overrides),
            );
        }
        let mut absent = Vec::new();
        if spec.artifacts.is_empty() {
            absent.push(bench_core::Metric::Bundle);
        }
        if spec.install.command.is_none() {
            absent.push(bench_core::Metric::Install);
        }
        // A program whose exit is its ready leaves nothing to measure the memory of.
        if spec
            .measure
            .as_ref()
            .is_some_and(|measure| matches!(measure.ready, bench_term::ReadyMode::Exit))
        {
            absent.extend([bench_core::Metric::Rss, bench_core::Metric::Pss]);
        }
        // A session too short for a slope through enough points has none (the demo's
        // three turns: docs/spec.md, `[session]`).
        if let (Some(session), Some(total)) = (&spec.session, spec.session_turns()) {
            if !session.has_checkpoint_slopes(total) {
                absent.extend([
                    bench_core::Metric::LagGrowth,
                    bench_core::Metric::RenderGrowth,
                ]);
            }
            if !session.has_growth_slope(total) {
                absent.push(bench_core::Metric::SessionGrowth);
            }
        }
        SpecFacts {
            request,
            absent,
            memory_trials: spec
                .measure
                .as_ref()
                .and_then(|measure| measure.memory_trials),
        }
    }

    /// The metrics that trial `trial` of `phase` does not have: [`SpecFacts::absent`], and
    /// memory on a measure trial past `memory_trials` (a timed-only trial).
    pub fn absent_in(&self, phase: Phase, trial: u32) -> Vec<bench_core::Metric> {
        let mut absent = self.absent.clone();
        if phase == Phase::Measure && self.memory_trials.is_some_and(|trials| trial >= trials) {
            absent.extend([bench_core::Metric::Rss, bench_core::Metric::Pss]);
        }
        absent
    }
}

/// Records in `OUT/result.json` that the step `run` describes was skipped, and why.
///
/// A skip is the runner's own fact, written for people and other commands: the file is
/// loaded only to keep what the phases recorded in it, and nothing is learnt from it.
pub(crate) fn record_skip(run: &PhaseRun, facts: &SpecFacts, reason: &str) -> Result<(), Error> {
    let path = run.out.join("result.json");
    let mut result =
        ResultFile::load_or_create(&path, &facts.request).map_err(Error::ResultUnreadable)?;
    result.side.set_skipped(run.phase, run.trial, reason);
    result
        .save(&path)
        .map_err(|source| Error::ResultSave { path, source })
}

/// Runs one phase in an already built context.
fn dispatch(ctx: &PhaseContext, side: &mut Side) -> Result<(), PhaseError> {
    match ctx.phase {
        Phase::Prepare => crate::pipeline::phases::prepare::run(ctx, side)?,
        Phase::Install => crate::pipeline::phases::install::run(ctx, side)?,
        Phase::Measure => crate::pipeline::phases::measure::run(ctx, side)?,
        Phase::Runtime => crate::pipeline::phases::runtime::run(ctx, side)?,
        Phase::Ui => crate::pipeline::phases::ui::run(ctx, side)?,
        Phase::Session => crate::pipeline::phases::session::run(ctx, side)?,
        Phase::Staircase => crate::pipeline::phases::staircase::run(ctx, side)?,
    }
    Ok(())
}

/// The request a spec describes: its commit, or for a source-less target its package
/// and version.
pub(crate) fn request_for(spec: &spec::Spec, spec_path: &Path) -> Request {
    let sha = match (&spec.source, &spec.package, &spec.version) {
        (Some(source), _, _) => source.commit.clone(),
        (None, Some(package), Some(version)) => format!("{package}@{version}"),
        (None, Some(package), None) => package.clone(),
        (None, None, Some(version)) => format!("{}@{version}", spec.name),
        (None, None, None) => spec.name.clone(),
    };
    let mut request = Request::new(sha, Role::Candidate);
    request.source_repository = spec
        .source
        .as_ref()
        .map(|s| crate::pipeline::redact::redact(&s.repository));
    request
        .config
        .insert("spec".to_owned(), spec_path.display().to_string());
    request
        .config
        .insert("target".to_owned(), spec.name.clone());
    if let Some(description) = &spec.description {
        request
            .config
            .insert("description".to_owned(), description.clone());
    }
    // The spec's thresholds travel with its results, so that `clibench compare` of two
    // of them judges as `clibench ab` did.
    let floors = spec.compare.floors();
    if !floors.is_empty() {
        request.config.insert(
            bench_core::compare::thresholds::CONFIG_KEY.to_owned(),
            bench_core::compare::thresholds::encode(&floors),
        );
    }
    request
}

/// Applies `--repository` and `--commit`, so that CI measures the pull request's repository
/// and commit with the spec written for the project, without editing it.
pub(crate) fn override_source(
    spec: &mut spec::Spec,
    spec_path: &Path,
    repository: Option<&str>,
    commit: Option<&str>,
) -> Result<(), Error> {
    if repository.is_none() && commit.is_none() {
        return Ok(());
    }
    let Some(source) = spec.source.as_mut() else {
        return Err(Error::NoSource {
            spec: spec_path.to_path_buf(),
        });
    };
    if let Some(commit) = commit {
        if !spec::is_full_sha(commit) {
            return Err(Error::CommitNotSha {
                commit: commit.to_owned(),
            });
        }
        source.commit = commit.to_owned();
    }
    if let Some(repository) = repository {
        // A local path on the command line is relative to where clibench runs, not
        // to the spec's folder.
        let path = Path::new(repository);
        source.repository = if path.is_relative() && path.exists() {
            std::path::absolute(path)
                .map_err(|source| Error::Io {
                    action: "resolve",
                    path: path.to_path_buf(),
                    source,
                })?
                .display()
                .to_string()
        } else {
            repository.to_owned()
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::ContextError;

    #[test]
    fn a_phase_before_install_fails_with_a_typed_error_and_its_message() {
        let dir = tempfile::tempdir().unwrap();
        let spec = dir.path().join("x.toml");
        std::fs::write(&spec, "name = \"x\"\n[measure]\ncommand = [\"x\"]\n").unwrap();
        let out = dir.path().join("out");
        let outcome = run_phase(&PhaseRun::new(Phase::Measure, &spec, &out)).unwrap();
        assert!(
            matches!(
                &outcome.failure,
                Some(PhaseError::Context(ContextError::NoInstall { out: folder, .. }))
                    if folder.ends_with("out")
            ),
            "{:?}",
            outcome.failure
        );
        let message = outcome.error.unwrap();
        assert!(
            message.starts_with("measure: install 0 has not run in ")
                && message.contains(": run `clibench phase prepare --spec ")
                && message.ends_with(" --trial 0` first"),
            "{message}"
        );
        let result = ResultFile::load(&out.join("result.json")).unwrap();
        assert_eq!(result.side.error.as_deref(), Some(message.as_str()));
        // The runner learns from the outcome what the file records, without reading it.
        assert_eq!(outcome.recorded.own.side, result.side);
        assert_eq!(outcome.recorded.own.errors, [message]);
        assert!(outcome.recorded.partner.is_none());
    }

    #[test]
    fn a_specs_thresholds_are_recorded_in_its_results_request() {
        let text = "name = \"x\"\n[compare]\nnoise = { cold = 0.05, rss = 0.1 }\n";
        let spec = crate::spec::parse(text, "x.toml").unwrap();
        let request = request_for(&spec, Path::new("x.toml"));
        assert_eq!(
            bench_core::compare::thresholds::recorded(&request).unwrap(),
            [
                (bench_core::Metric::Cold, 0.05),
                (bench_core::Metric::Rss, 0.1)
            ]
            .into()
        );
        // A spec without thresholds records none.
        let plain = crate::spec::parse("name = \"x\"\n", "x.toml").unwrap();
        let request = request_for(&plain, Path::new("x.toml"));
        assert!(
            !request
                .config
                .contains_key(bench_core::compare::thresholds::CONFIG_KEY)
        );
    }

    #[test]
    fn a_start_whose_ready_is_its_exit_has_no_memory_to_miss() {
        let text = "name = \"x\"\n[measure]\ncommand = [\"true\"]\nready = \"exit\"\n";
        let spec = crate::spec::parse(text, "x.toml").unwrap();
        let facts = SpecFacts::of(&spec, Path::new("x.toml"), &[]);
        let absent = facts.absent_in(Phase::Measure, 0);
        assert!(absent.contains(&bench_core::Metric::Rss), "{absent:?}");
        assert!(absent.contains(&bench_core::Metric::Pss), "{absent:?}");
        let text = "name = \"x\"\n[measure]\ncommand = [\"true\"]\n";
        let spec = crate::spec::parse(text, "x.toml").unwrap();
        let facts = SpecFacts::of(&spec, Path::new("x.toml"), &[]);
        assert!(
            !facts
                .absent_in(Phase::Measure, 0)
                .contains(&bench_core::Metric::Rss)
        );
    }

    #[test]
    fn the_chain_of_an_error_is_its_message_and_every_cause() {
        let error = ContextError::Logs {
            path: PathBuf::from("/out/logs"),
            source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        };
        assert_eq!(error_chain(&error), "creating /out/logs: permission denied");
    }
}
