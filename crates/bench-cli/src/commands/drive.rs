//! What `clibench run`, `ab` and `bisect` share: the spec they are given, the runner
//! driven with a progress display, Ctrl-C handled and the cleanups told, and the history
//! store they add their results to.
//!
//! Ctrl-C (SIGINT), SIGTERM and SIGHUP stop the running phase and everything under it, run the
//! pipeline's cleanup (users, homes, servers recorded in the state file), and leave the
//! result files as the phases last saved them (they save atomically).

use crate::exit::input_error;
use crate::pipeline::{
    CleanupReport, Error, Execution, Notice, Observer, Progress, RunOutcome, Runner, SpecSource,
    StepResult,
};
use anyhow::Context;
use bench_cli::history::location::OpenError;
use bench_cli::history::{Store, context, ingest};
use bench_core::Phase;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// The spec file given, or the demo; a path that is not a file is a usage error.
pub(super) fn spec_source(path: Option<&Path>) -> anyhow::Result<SpecSource> {
    SpecSource::resolve(path).map_err(|error| {
        if error.is_input() {
            input_error(error.to_string())
        } else {
            error.into()
        }
    })
}

/// A store the user named that is not one this clibench can use is a usage error.
pub(super) fn open_error(error: OpenError) -> anyhow::Error {
    if error.is_input() {
        input_error(error.to_string())
    } else {
        anyhow::Error::new(error)
    }
}

/// Says that opening `store` upgraded it from an older layout (only the open that did
/// it knows, so it is said once).
pub(super) fn told_upgrade(store: Store) -> Store {
    if let Some(upgraded) = store.upgraded() {
        say!("clibench: {}", upgraded.describe(store.path()));
    }
    store
}

/// Adds `results` to the store at `store`: what `run` and `ab` do with `--history`.
pub(super) fn add_after_run(store: &Path, results: &[PathBuf]) -> anyhow::Result<()> {
    let mut store = Store::open(store, false)
        .map(told_upgrade)
        .map_err(|error| open_error(error.into()))?;
    let added = ingest::add_files(&mut store, results, None, "main")?;
    say!(
        "clibench: history {}: {} result(s) added, {} already there",
        store.path().display(),
        added.added,
        added.already
    );
    Ok(())
}

/// `ab --history`: each side against what the store already holds of its build on this
/// testbed (said, and written to `OUT/history.md`; never pooled into the paired test),
/// then both sides added.
pub(super) fn add_after_ab(
    store: &Path,
    out: &Path,
    sides: &[(&str, PathBuf)],
) -> anyhow::Result<()> {
    let opened = Store::open(store, false)
        .map(told_upgrade)
        .map_err(|error| open_error(error.into()))?;
    let mut contexts = Vec::new();
    for (side, path) in sides {
        let record = ingest::record_of(path, None, "main")?;
        let found = context::context(&opened, &record).map_err(|error| open_error(error.into()))?;
        say!("clibench: history: {}", context::summary_line(side, &found));
        contexts.push((*side, found));
    }
    drop(opened);
    let page = out.join("history.md");
    bench_core::io::write_atomic(&page, context::markdown(&contexts).as_bytes())
        .with_context(|| format!("failed to write {}", page.display()))?;
    let paths: Vec<PathBuf> = sides.iter().map(|(_, path)| path.clone()).collect();
    add_after_run(store, &paths)
}

/// Runs the runner that `make_runner` makes, each phase a `clibench phase` process of this
/// executable, with the progress display on stderr and Ctrl-C handled; then tells what the
/// cleanups removed. `None` when interrupted, after saying that `results` holds the
/// results so far (`command` names the command in what it says).
pub(super) fn drive(
    command: &str,
    make_runner: impl FnOnce(Execution) -> Result<Runner, Error>,
    results: &Path,
) -> anyhow::Result<Option<RunOutcome>> {
    let program = std::env::current_exe().context("finding the clibench executable")?;
    let runner = make_runner(Execution::ReExec { program })?.interrupt_flag(interrupt_flag()?);
    let mut display = ProgressDisplay::new()?;
    let outcome = runner.run(&mut display)?;
    display.finish();
    for report in &outcome.cleanups {
        say_cleanup(command, report);
    }
    if outcome.interrupted {
        say!(
            "clibench {command}: interrupted; everything was stopped and cleaned up; {} holds the results so far",
            results.display()
        );
        return Ok(None);
    }
    Ok(Some(outcome))
}

/// Ctrl-C, SIGTERM and SIGHUP set the flag; the runner stops and cleans up.
fn interrupt_flag() -> anyhow::Result<Arc<AtomicBool>> {
    let interrupted = Arc::new(AtomicBool::new(false));
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(signal, Arc::clone(&interrupted))
            .context("installing the Ctrl-C handler")?;
    }
    Ok(interrupted)
}

fn say_cleanup(command: &str, report: &CleanupReport) {
    if !report.removed_users.is_empty() || !report.kept_users.is_empty() {
        say!(
            "clibench {command}: removed {} user(s){}",
            report.removed_users.len(),
            if report.kept_users.is_empty() {
                String::new()
            } else {
                format!("; kept {} (--keep-users)", report.kept_users.join(", "))
            }
        );
    }
}

/// The spinner line on stderr, and a line per finished step.
struct ProgressDisplay {
    bar: ProgressBar,
    /// The last skip told: (side, phase, reason). Skipped trials of one phase for one
    /// reason are told in one line.
    last_skip: Option<(Option<String>, Phase, String)>,
}

impl ProgressDisplay {
    fn new() -> anyhow::Result<ProgressDisplay> {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}")
                .context("progress template")?
                .tick_chars("-\\|/ "),
        );
        Ok(ProgressDisplay {
            bar,
            last_skip: None,
        })
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }

    /// A line above the spinner. It often holds a target's output (a failed step's tail):
    /// the bar prints it itself, so it is made inert here.
    fn say(&self, line: String) {
        if self.bar.is_hidden() {
            say!("{line}");
        } else {
            self.bar.println(crate::show::inert(line));
        }
    }
}

impl Observer for ProgressDisplay {
    fn waiting(&mut self, progress: &Progress) {
        self.bar.set_message(crate::show::inert(format!(
            "[{}/{}] {}  {:.1} s  (total {:.1} s)",
            progress.index + 1,
            progress.total,
            progress.label(),
            progress.step_elapsed.as_secs_f64(),
            progress.run_elapsed.as_secs_f64()
        )));
        self.bar.tick();
    }

    fn step_finished(&mut self, progress: &Progress, result: &StepResult) {
        let seconds = progress.step_elapsed.as_secs_f64();
        let line = match result {
            StepResult::Succeeded => format!("{}: ok ({seconds:.1} s)", progress.label()),
            StepResult::Failed { message, .. } => {
                format!("{}: failed ({seconds:.1} s): {message}", progress.label())
            }
            StepResult::Skipped { reason } => {
                let key = (progress.side.clone(), progress.step.phase, reason.clone());
                if self.last_skip.as_ref() == Some(&key) {
                    return;
                }
                self.last_skip = Some(key);
                let side = progress
                    .side
                    .as_ref()
                    .map(|side| format!("{side}: "))
                    .unwrap_or_default();
                let what = if progress.step.trial == 0 {
                    progress.step.phase.to_string()
                } else {
                    format!("{} from trial {}", progress.step.phase, progress.step.trial)
                };
                format!("{side}{what}: skipped: {reason}")
            }
        };
        self.say(line);
    }

    fn notice(&mut self, notice: &Notice) {
        self.say(notice.to_string());
    }
}
