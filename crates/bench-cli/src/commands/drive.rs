//! What `clibench run`, `ab` and `bisect` share: the spec they are given, the runner
//! driven with a progress display, Ctrl-C handled and the cleanups told, and the history
//! store they add their results to.
//!
//! Ctrl-C (SIGINT), SIGTERM and SIGHUP stop the running phase and everything under it, run the
//! pipeline's cleanup (users, homes, servers recorded in the state file), and leave the
//! result files as the phases last saved them (they save atomically).

use crate::exit::input_if;
use crate::pipeline::out::history_add;
use crate::pipeline::{
    Error, Execution, Notice, Observer, Progress, RunOutcome, Runner, SpecSource, StepResult,
};
use crate::text::progress::{StepLines, cleanup_line, turns_line, waiting_line};
use anyhow::Context;
use bench_cli::history::{Store, location};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// The spec file given, or the demo; a path that is not a file is a usage error.
pub(super) fn spec_source(path: Option<&Path>) -> anyhow::Result<SpecSource> {
    SpecSource::resolve(path).map_err(|error| input_if(error.is_input(), error))
}

/// Opens the history store at `path` (else the default one) to write, creating it, or
/// an existing one only to read. A store the user named that is not one this clibench
/// can use is a usage error; an upgrade from an older layout is said (only the open
/// that did it knows, so it is said once).
pub(super) fn open_store(path: Option<&Path>, write: bool) -> anyhow::Result<Store> {
    let opened = if write {
        location::open_to_write(path)
    } else {
        location::open_to_read(path)
    };
    let store = opened.map_err(|error| input_if(error.is_input(), error))?;
    if let Some(upgraded) = store.upgraded() {
        say!("clibench: {}", upgraded.describe(store.path()));
    }
    Ok(store)
}

/// Says the lines of `run --history` or `ab --history` adding to the store.
pub(super) fn say_added(
    added: Result<Vec<String>, history_add::HistoryAddError>,
) -> anyhow::Result<()> {
    for line in added.map_err(|error| input_if(error.is_input(), error))? {
        say!("{line}");
    }
    Ok(())
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
    drive_telling(command, make_runner, results, &mut |_, _| None)
}

/// A line to say after a step's own, from what the step was and how it ended.
pub(super) type AfterStep<'a> = dyn FnMut(&Progress, &StepResult) -> Option<String> + 'a;

/// [`drive`], saying after each finished step's line what `after_step` has to add.
pub(super) fn drive_telling(
    command: &str,
    make_runner: impl FnOnce(Execution) -> Result<Runner, Error>,
    results: &Path,
    after_step: &mut AfterStep<'_>,
) -> anyhow::Result<Option<RunOutcome>> {
    let program = std::env::current_exe().context("finding the clibench executable")?;
    let runner = make_runner(Execution::ReExec { program })?.interrupt_flag(interrupt_flag()?);
    let mut display = ProgressDisplay::new(after_step)?;
    let outcome = runner.run(&mut display)?;
    display.finish();
    for line in outcome
        .cleanups
        .iter()
        .filter_map(|r| cleanup_line(command, r))
    {
        say!("{line}");
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

/// The spinner line on stderr, and a line per finished step.
struct ProgressDisplay<'a, 'b> {
    bar: ProgressBar,
    lines: StepLines,
    /// The last session count told as a line (step index, turns), when no spinner shows.
    told_turns: Option<(usize, u32)>,
    after_step: &'a mut AfterStep<'b>,
}

impl<'a, 'b> ProgressDisplay<'a, 'b> {
    fn new(after_step: &'a mut AfterStep<'b>) -> anyhow::Result<ProgressDisplay<'a, 'b>> {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}")
                .context("progress template")?
                .tick_chars("-\\|/ "),
        );
        Ok(ProgressDisplay {
            bar,
            lines: StepLines::default(),
            told_turns: None,
            after_step,
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

impl Observer for ProgressDisplay<'_, '_> {
    fn waiting(&mut self, progress: &Progress) {
        // Without a terminal the spinner is not drawn: a long session tells its turns
        // in a line every few instead.
        if self.bar.is_hidden()
            && let Some(line) = turns_line(progress, &mut self.told_turns)
        {
            self.say(line);
        }
        self.bar
            .set_message(crate::show::inert(waiting_line(progress)));
        self.bar.tick();
    }

    fn step_finished(&mut self, progress: &Progress, result: &StepResult) {
        if let Some(line) = self.lines.line(progress, result) {
            self.say(line);
        }
        if let Some(line) = (self.after_step)(progress, result) {
            self.say(line);
        }
    }

    fn notice(&mut self, notice: &Notice) {
        self.say(notice.to_string());
    }
}
