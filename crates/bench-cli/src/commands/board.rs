//! `clibench board`: N agent CLIs side by side on one machine, their trials round-robin,
//! then the table that says which is lighter, faster to start and smoother at work, with
//! intervals, and ties said as ties.
//!
//! Exit codes: 0 when the board was written; 1 when a step failed (the board is still
//! written from what ran); 2 for bad input; 130 interrupted.

use super::drive::{drive_telling, say_added};
use crate::exit::{FAILURE, input_chain_if, input_if};
use crate::pipeline::StepResult;
use crate::pipeline::orchestration::board::{BoardRun, COLS, ROWS};
use crate::pipeline::orchestration::board_estimate::Estimator;
use crate::pipeline::out::history_add;
use crate::settings::{BoardRequest, board_settings};
use crate::spec::{Override, Scenario};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Flags of `clibench board`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  clibench board examples/agents/pi.toml examples/agents/claude-code.toml \\
      examples/agents/codex.toml --phases prepare,install,measure,session \\
      --trials 3
  clibench board --board examples/agents/board.toml --budget 30m
  clibench board --board examples/agents/board.toml \\
      --model-script my-turns.toml

Every target is prepared and installed first, each in its own clean home,
then their trials run round-robin (trial k of every target before trial k+1
of any, the order rotating each round), all in the same terminal size, then
each staircase. With --budget, rounds (trial k of every phase of every
target) go on until the budget has passed, at least 3 and at most --trials
(20 without it), never stopping within a round. Before the first trial it
says how long it expects to take, and again after each phase's first round.
OUT/<name>/ holds each target's run as `clibench run` writes it;
OUT/board.md, board.html and board.json the table.")]
pub struct Args {
    /// The targets' specs (TOML), at least two; each is named by its file name.
    #[arg(
        required_unless_present = "board",
        conflicts_with = "board",
        num_args = 2..,
        value_name = "SPEC"
    )]
    specs: Vec<PathBuf>,
    /// A board file (TOML): `specs = [...]` (relative to the file), and optionally
    /// `model_script`, `phases`, `trials`, `budget`; flags given here win over it.
    #[arg(long, value_name = "FILE")]
    board: Option<PathBuf>,
    /// Output folder: board-schedule.json, one folder per target, board.md, board.html,
    /// board.json. [default: clibench-out/board-<unix time>]
    #[arg(long, value_name = "DIR")]
    // The angle brackets are for --help, which shows this text as written.
    #[allow(rustdoc::invalid_html_tags)]
    out: Option<PathBuf>,
    /// Trials per target of the measure, runtime, ui and session phases (at most 101);
    /// with --budget, the most rounds. [default: 3; with --budget, 20]
    #[arg(long, value_name = "N", value_parser = super::trial_count)]
    trials: Option<u32>,
    /// Run rounds until this much time has passed since the first trial started (at
    /// least 10s; at least 3 rounds run whatever it says).
    #[arg(long, value_name = "DURATION", value_parser = crate::settings::budget)]
    budget: Option<Duration>,
    /// Phases to run, comma-separated [default: every phase each spec describes].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    phases: Option<Vec<String>>,
    /// One model script (TOML, as examples/model/*.toml) every target plays, each in
    /// its own spec's dialect, in place of its spec's script.
    #[arg(long, value_name = "FILE")]
    model_script: Option<PathBuf>,
    /// A workload shipped with clibench run on every target (see `clibench run
    /// --scenario`).
    #[arg(long, value_name = "NAME")]
    scenario: Option<Scenario>,
    /// Override a spec key on every target (KEY=VALUE, as `clibench run --set`).
    /// Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    overrides: Vec<Override>,
    /// Also add every target's result to this history store (an SQLite file, created
    /// when missing, or a `postgres://` URL; see `clibench history`).
    #[arg(long, value_name = "PATH|URL", value_parser = crate::settings::store)]
    history: Option<PathBuf>,
    /// Keep the trial users and homes after the run.
    #[arg(long)]
    keep_users: bool,
}

/// Runs `clibench board`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let history = args.history.clone();
    let board = board(args)?;
    say!("{}", plan_line(&board));
    for &target in &board.script_not_applied {
        say!(
            "clibench board: {}: the shared model script does not apply: its spec has no \
             [model] and [session], so it talks to no model",
            board.names[target]
        );
    }
    let mut estimator = Estimator::new(board.order.clone(), board.settings.rounds());
    say!("clibench board: {}", estimator.before_start().line());
    let out = board.out().to_path_buf();
    let mut tell_estimate = |progress: &crate::pipeline::Progress, result: &StepResult| {
        let ran = match result {
            StepResult::Skipped { .. } => None,
            _ => Some(progress.step_elapsed),
        };
        let forecast = estimator.step_ended(progress.index, ran)?;
        Some(format!("clibench board: {}", forecast.line()))
    };
    let made = drive_telling(
        "board",
        |execution| board.runner(execution),
        &out,
        &mut tell_estimate,
    )?;
    let Some(outcome) = made else {
        return Ok(ExitCode::from(130));
    };
    let written = board
        .write_board()
        .map_err(|error| input_if(error.is_input(), error))?;
    if let Some(store) = &history {
        let results: Vec<PathBuf> = board
            .results()
            .into_iter()
            .filter(|path| path.exists())
            .collect();
        say_added(history_add::add_after_run(store, &results))?;
    }
    out!("{}", written.markdown);
    say!(
        "clibench board: wrote {} (and board.md, board.json) in {}",
        out.join("board.html").display(),
        out.display()
    );
    Ok(if outcome.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        for &(target, step) in &outcome.failed {
            say!(
                "clibench board: {}: {} failed (its log is in {})",
                board.names[target],
                step.label(),
                board.plans[target].out.join("logs").display()
            );
        }
        ExitCode::from(FAILURE)
    })
}

/// What will run, said before it starts: the targets and how many steps of each phase.
fn plan_line(board: &BoardRun) -> String {
    let steps: Vec<String> = board
        .steps_by_phase()
        .into_iter()
        .map(|(phase, count)| format!("{count} {phase}"))
        .collect();
    let most = board.settings.plan.trials;
    let trials = match board.settings.budget {
        // Three rounds run whatever the budget says: with at most three the budget has no
        // say, and "3 to 3 trials" said nothing either.
        Some(budget) if most > 3 => format!(
            "rounds for {} (3 to {most} trials each, round by round)",
            bench_core::units::format_seconds(budget.as_secs_f64()),
        ),
        Some(_) => {
            format!("{most} trials each, round by round (the budget cannot cut fewer than 3)")
        }
        None => format!("{most} trials each"),
    };
    let at_most = if board.settings.budget.is_some() {
        "at most "
    } else {
        ""
    };
    format!(
        "clibench board: {} targets ({}), {trials}, round-robin in a {COLS}x{ROWS} terminal: \
         {at_most}{} steps ({})",
        board.names.len(),
        board.names.join(", "),
        board.order.len(),
        steps.join(", ")
    )
}

fn board(args: Args) -> anyhow::Result<BoardRun> {
    let request = BoardRequest {
        specs: args.specs,
        board_file: args.board,
        out: args.out.unwrap_or_else(default_out),
        trials: args.trials,
        budget: args.budget,
        phases: args.phases,
        model_script: args.model_script,
        scenario: args.scenario,
        overrides: args.overrides,
        keep_users: args.keep_users,
    };
    let settings =
        board_settings(request).map_err(|error| input_chain_if(error.is_input(), error))?;
    for spec in &settings.specs {
        super::drive::spec_source(Some(spec))?;
    }
    BoardRun::new(settings).map_err(|error| input_if(error.is_input(), error))
}

fn default_out() -> PathBuf {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs())
        .unwrap_or_default();
    PathBuf::from("clibench-out").join(format!("board-{now}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(extra: &[&str]) -> Args {
        crate::commands::test_args::parse("board", extra)
    }

    #[test]
    fn an_unknown_phase_is_an_input_error() {
        let error = board(args(&["a.toml", "b.toml", "--phases", "mesure"])).unwrap_err();
        assert!(error.is::<crate::exit::InputError>());
    }

    #[test]
    fn a_bad_board_file_is_an_input_error_naming_it() {
        let error = board(args(&["--board", "/nonexistent/board.toml"])).unwrap_err();
        assert!(error.is::<crate::exit::InputError>());
        assert!(
            error.to_string().contains("/nonexistent/board.toml"),
            "{error}"
        );
    }

    #[test]
    fn a_missing_spec_is_an_input_error_naming_it() {
        let error = board(args(&["/nonexistent/a.toml", "/nonexistent/b.toml"])).unwrap_err();
        assert!(error.is::<crate::exit::InputError>());
        assert!(error.to_string().contains("/nonexistent/a.toml"), "{error}");
    }
}
