//! The session phase: the agent at work. The command starts in the PTY with the trial's
//! model endpoint running; once ready, the prompt of every scripted turn that has one is
//! typed key by key and submitted, and each turn is measured on the terminal's clock
//! (the journal's times are put on it through the two `Instant`s):
//!
//! - `turn`: Enter until the reply's final text is visible and a fresh key typed after it
//!   is echoed (the prompt takes input again);
//! - `submit`: Enter until the endpoint received the turn's first request;
//! - `first_token` / `stream_render`: the final reply's first / last chunk written until
//!   its text is visible;
//! - `tool_roundtrip`: the tool call's last chunk written until the request carrying its
//!   result arrived;
//! - `turn_cpu`: the family's CPU time during the turn (schedstat, nanoseconds);
//! - `typing_lag`: during one turn's stream, keys typed ~150 ms apart and each one's echo;
//! - the family's RSS and PSS after every turn, and their slope `session_growth`;
//! - `idle_cpu`: the family's CPU share over `[session] idle` at the prompt after the turns;
//! - what the agent wrote to its terminal during each turn and the idle window
//!   (`stream_bytes`, `idle_output`);
//! - `[session] pastes`: after the last turn, bracketed pastes into the idle prompt, each
//!   measured until the agent shows it (`paste_accept`, `paste_cpu`, `paste_output`; `paste`);
//! - every `[session] checkpoint_every` turns and after the last, a checkpoint (`checkpoint`) at the
//!   idle prompt, and the slopes over the turns after `warmup_turns` (`slopes`:
//!   `session_growth`, `lag_growth`, `render_growth`, `key_echo`, `key_bytes`).
//!
//! `[session] turns = N` plays the script's prompted turns in order, again and again, up
//! to N: the spec's reader unrolled the script so (`spec::long_session`).
//!
//! Each turn is played by the program's [`one_turn`] (`pipeline/program/turn`, which the
//! staircase's session instances play too); this phase adds the checkpoints, the pastes,
//! the idle window and the metrics over the turns.

use crate::pipeline::PhaseContext;
use crate::pipeline::out::screens::FAILURE_SCREEN_PREFIX;
use crate::pipeline::out::turns::{self, TurnCount};
use crate::pipeline::program::TargetError;
use crate::pipeline::program::family::Family;
use crate::pipeline::program::model::TrialModel;
use crate::pipeline::program::recording::{Recording, keep_screen, session_interval};
use crate::pipeline::program::trial::{Closing, ProgramTrial, in_terminal};
use crate::pipeline::program::turn::{Planned, TurnError, TurnSettings, one_turn, planned};
use crate::spec::Measure;
use bench_core::detail::{SessionRun, SessionTurn};
use bench_core::{Metric, Phase, Sample, Side, error_chain, record};
use bench_model::Journal;
use bench_proc::MemoryRead;
use bench_term::Terminal;
use std::time::Duration;

mod approvals;
pub(crate) mod checkpoint;
mod paste;
mod slopes;

/// Every this many turns the allocator gives what was freed back to the kernel.
const TRIM_EVERY_TURNS: u32 = 10;

/// The session phase failed.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The spec has no `[session]`.
    #[error("the spec has no [session] section")]
    NoSection,
    /// The spec has no `[measure]`.
    #[error("the session phase needs [measure] (the ready mode, size and quit keys)")]
    NoMeasure,
    /// The spec has no `[model]`.
    #[error("the session phase needs [model]: its turns are the model's script")]
    NoModel,
    /// The program's trial, its terminal, family, sessions or model endpoint failed.
    #[error(transparent)]
    Program(#[from] TargetError),
}

crate::pipeline::program::context_error_is_the_programs!(SessionError);

/// What closing a session trial does besides stopping the user and finishing the journal:
/// the session command's screen at ready and recording are kept, and the agent's background
/// sessions stopped through its own commands.
const CLOSING: Closing<'static> = Closing {
    keep: &["session"],
    stop_agents: true,
};

/// Runs the session phase for `ctx.trial`.
pub fn run(ctx: &PhaseContext, side: &mut Side) -> Result<(), SessionError> {
    let session = ctx.spec.session.as_ref().ok_or(SessionError::NoSection)?;
    let measure = ctx.spec.measure.as_ref().ok_or(SessionError::NoMeasure)?;
    if ctx.spec.model.is_none() {
        return Err(SessionError::NoModel);
    }
    let program = ProgramTrial::open(ctx, measure)?;
    let measured = spawn_and_drive(ctx, side, &program, (session, measure));
    program.close(CLOSING, measured)
}

/// Starts the session command in its terminal and drives it (see [`drive`]).
fn spawn_and_drive(
    ctx: &PhaseContext,
    side: &mut Side,
    program: &ProgramTrial<'_>,
    (session, measure): (&crate::spec::Session, &Measure),
) -> Result<(), SessionError> {
    let journal = program
        .model()
        .and_then(TrialModel::journal)
        .ok_or(SessionError::NoModel)?;
    let mut options = program.spawn_options(
        session.command.as_ref().unwrap_or(&measure.command),
        session.cwd.as_ref(),
        &session.env,
        &ctx.log_path(&format!("session-{}", ctx.trial))?,
    )?;
    // A long session's output passes the transcript's cap (8 MiB, kept in memory until
    // close) within a few dozen turns of a TUI that repaints on every key, and a transcript
    // over its cap fails the session: it keeps none, and each turn's terminal counts stand
    // for it.
    if session.turns.is_some() {
        options.transcript = None;
    }
    let family = program.family();
    let recording = Recording::start_every(
        family,
        Phase::Session,
        ctx.trial,
        "session",
        session_interval(session.turns),
    );
    in_terminal(
        side,
        &options,
        ("session", recording),
        |side, terminal, recording, ready| {
            drive(ctx, side, terminal, family, &journal, recording, ready)
        },
    )
}

/// Ready, every turn, the idle window; each failure is recorded under the session's
/// metrics and ends the phase with what was measured so far kept.
fn drive(
    ctx: &PhaseContext,
    side: &mut Side,
    terminal: &mut Terminal,
    family: Family,
    journal: &Journal,
    recording: &Recording,
    ready_after: &mut Option<Duration>,
) -> Result<(), SessionError> {
    let session = ctx.spec.session.as_ref().ok_or(SessionError::NoSection)?;
    let measure = ctx.spec.measure.as_ref().ok_or(SessionError::NoMeasure)?;
    let dialect = ctx
        .spec
        .model
        .as_ref()
        .map_or("", |m| m.dialect.name())
        .to_owned();
    let trial = ctx.trial;
    let fail_all = |side: &mut Side, error: &(dyn std::error::Error + 'static)| {
        for metric in Phase::Session.metrics() {
            record(side, metric, trial, Sample::Error(error_chain(error)));
        }
    };
    let startup = match start_up(side, terminal, family, measure, trial, ready_after) {
        Ok(output) => output,
        Err(error) => {
            fail_all(side, &error);
            return Ok(());
        }
    };
    let plans = planned(ctx);
    let turns = u32::try_from(plans.len()).unwrap_or(u32::MAX);
    let mut run = SessionRun {
        trial,
        dialect,
        turns: Vec::new(),
        growth_bytes_per_turn: None,
        warmup_turns: session.warmup_turns,
        pss_every: bench_core::detail::pss_every(turns, session.warmup_turns),
        growth: None,
        lag: None,
        render: None,
        checkpoints: Vec::new(),
        idle_seconds: session.idle.0.as_secs_f64(),
        idle_cpu_share: None,
        idle_monotonic_ns: None,
        idle_output: None,
        pastes: Vec::new(),
        startup_output: Some(startup),
    };
    let play = Play::of(ctx, session, measure);
    let failure = play_turns(
        terminal, journal, family, recording, &play, &plans, &mut run,
    );
    if failure.is_some() {
        keep_failure_screen(ctx, terminal);
    }
    // After the turns, so each paste lands in an idle prompt with the session behind it;
    // before the idle window, so what a paste leaves running shows there.
    let pasted = (!session.pastes.is_empty()).then(|| match &failure {
        None => paste::measure(
            terminal,
            family,
            &session.pastes,
            &session.paste_clear,
            session.turn_timeout.0,
        )
        .map_err(|error| error_chain(&error)),
        Some(error) => Err(error_chain(error)),
    });
    let idle = if failure.is_none() {
        idle_share(terminal, family, session.idle.0)
    } else {
        Ok(None)
    };
    summarize(side, trial, &mut run, failure.as_ref(), idle);
    if let Some(pasted) = pasted {
        paste::record_metrics(side, trial, &mut run.pastes, pasted);
    }
    side.sessions.retain(|kept| kept.trial != trial);
    side.sessions.push(run);
    side.sessions.sort_by_key(|kept| kept.trial);
    Ok(())
}

/// Keeps the screen a turn stopped on, for `clibench run --show-screen`: the error of a
/// question the agent asked is one line, and a wait's error keeps only the end of it when
/// it is long. Not a measurement: a file not written leaves the error as it is.
fn keep_failure_screen(ctx: &PhaseContext, terminal: &Terminal) {
    let name = format!("{FAILURE_SCREEN_PREFIX}{}-session.txt", ctx.trial);
    if let Ok(path) = ctx.log_path(&name) {
        let _ = bench_core::io::write_atomic(&path, terminal.screen_text().as_bytes());
    }
}

/// Waits for the session command to be ready and settle; what it wrote from spawn until
/// ready (its start-up frames, clears and alternate-screen switch).
fn start_up(
    side: &mut Side,
    terminal: &mut Terminal,
    family: Family,
    measure: &crate::spec::Measure,
    trial: u32,
    ready_after: &mut Option<Duration>,
) -> Result<bench_core::detail::TerminalOutput, SessionError> {
    let elapsed = terminal
        .ready_guarded(
            &measure.ready,
            measure.ready_timeout.0,
            &measure.ready_guard,
        )
        .map_err(TargetError::terminal(
            "waiting for the session command to be ready",
        ))?;
    *ready_after = Some(elapsed);
    keep_screen(
        side,
        Phase::Session,
        trial,
        "session",
        terminal.screen_text(),
    );
    let startup = checkpoint::terminal_output(&terminal.output_counts());
    crate::pipeline::program::terminal::settle_terminal(terminal, family, &measure.settle)
        .map_err(TargetError::terminal("letting the session command settle"))?;
    Ok(startup)
}

/// Plays every planned turn into `run` (its turns and checkpoints) until one fails;
/// the failure, if any.
/// How the turns are played: the spec's `[session]`, the agent's approval setting (for
/// the error of a turn it stops) and where the count of turns played goes.
struct Play<'a> {
    session: &'a crate::spec::Session,
    approvals: Option<&'static str>,
    progress: std::path::PathBuf,
}

impl<'a> Play<'a> {
    fn of(ctx: &PhaseContext, session: &'a crate::spec::Session, measure: &Measure) -> Play<'a> {
        let command = session.command.as_ref().unwrap_or(&measure.command);
        Play {
            session,
            approvals: command
                .first()
                .and_then(|program| approvals::setting_of(program.raw())),
            progress: turns::path(&ctx.out, Phase::Session, ctx.trial),
        }
    }
}

fn play_turns(
    terminal: &mut Terminal,
    journal: &Journal,
    family: Family,
    recording: &Recording,
    play: &Play,
    plans: &[Planned],
    run: &mut SessionRun,
) -> Option<TurnError> {
    let Play {
        session,
        approvals,
        progress,
    } = play;
    let started = std::time::Instant::now();
    let typing_turn = match session.typing_turn {
        Some(turn) => turn as usize,
        None => plans
            .iter()
            .enumerate()
            .max_by_key(|(position, plan)| (plan.tokens, std::cmp::Reverse(*position)))
            .map_or(1, |(position, _)| position + 1),
    };
    // `[session] turns` was unrolled into the script when the spec was read.
    let total = plans.len();
    let check = checkpoint::Plan {
        keys: session.checkpoint_keys as usize,
        idle: session.checkpoint_idle.0,
        quiet: session.checkpoint_quiet.0,
    };
    for (position, plan) in plans.iter().enumerate() {
        let keys = (position + 1 == typing_turn).then_some(session.typing_keys as usize);
        let turn = (position + 1) as u32;
        let due = session.checkpoint_after(position + 1, total);
        // PSS walks every page table of the family: read on about 100 turns of a long
        // session (RSS, the kernel's counter, after every one).
        let memory = if run.pss_due(turn, total as u32) {
            MemoryRead::Proportional
        } else {
            MemoryRead::Resident
        };
        let settings = TurnSettings {
            timeout: session.turn_timeout.0,
            typing_keys: keys,
            memory,
            approvals: *approvals,
        };
        let measured = one_turn(terminal, journal, family, plan, turn, settings).and_then(
            |(measured, snapshot)| {
                // The walk that read the turn's memory is the recording's sample of this
                // moment: the recording walks itself only when no turn did for a while.
                recording.offer(&snapshot);
                run.turns.push(measured);
                due.then(|| {
                    checkpoint::measure(terminal, family, turn, check, session.turn_timeout.0)
                })
                .transpose()
            },
        );
        match measured {
            Ok(Some(point)) => run.checkpoints.push(point),
            Ok(None) => {}
            Err(error) => return Some(error),
        }
        // The journal on disk and the count of turns as they go: a run stopped in the
        // middle of a long session keeps both. Neither is a measurement: a write that
        // fails is told when the journal is finished, and a count not written is only
        // a quieter progress line.
        journal.sync_spill();
        let count = TurnCount::after(turn, total as u32, started.elapsed());
        let _ = turns::write(progress, count);
        // What the turns freed (screens read after every frame, request bodies that
        // grow with the conversation) stays resident in the allocator's arenas: trimmed
        // every few turns, clibench's RSS over a 1,000-turn soak is what it holds, not
        // what it once held.
        if turn.is_multiple_of(TRIM_EVERY_TURNS) {
            bench_proc::release_free_memory();
        }
    }
    None
}

/// The idle window as measured: the family's CPU share over it and when it began and
/// ended on `CLOCK_MONOTONIC`.
struct IdleWindow {
    share: f64,
    monotonic_ns: [u64; 2],
    output: bench_term::OutputCounts,
}

/// The family's CPU share over `window` at the prompt, the window measured as it passed
/// on the terminal's clock, which the terminal places on `CLOCK_MONOTONIC`.
fn idle_share(
    terminal: &mut Terminal,
    family: Family,
    window: Duration,
) -> Result<Option<IdleWindow>, SessionError> {
    let before = family.cpu_seconds()?;
    let output_before = terminal.output_counts();
    let from = terminal.elapsed();
    terminal.settle(window).map_err(TargetError::terminal(
        "waiting at the prompt for the idle window",
    ))?;
    let after = family.cpu_seconds()?;
    let to = terminal.elapsed();
    let output = terminal.output_counts().since(&output_before);
    let wall = (to - from).as_secs_f64();
    let monotonic_ns = |at: Duration| {
        u64::try_from((terminal.spawn_monotonic() + at).as_nanos()).unwrap_or(u64::MAX)
    };
    Ok((wall > 0.0).then(|| IdleWindow {
        share: ((after - before) / wall).max(0.0),
        monotonic_ns: [monotonic_ns(from), monotonic_ns(to)],
        output,
    }))
}

fn median(values: &[f64]) -> Option<f64> {
    bench_core::stats::Summary::from_values(values).map(|s| s.median)
}

/// Records the session's metrics from its turns: medians, the last turn's memory, the
/// growth slope and the idle share; a metric without a value gets the failure (or why).
fn summarize(
    side: &mut Side,
    trial: u32,
    run: &mut SessionRun,
    failure: Option<&TurnError>,
    idle: Result<Option<IdleWindow>, SessionError>,
) {
    record_medians(side, trial, &run.turns, failure);
    record_last_memory(side, trial, &run.turns, failure);
    record_idle(side, trial, run, failure, idle);
    // A failed session's slopes would fit a partial series: the failure is the result.
    if failure.is_none() {
        slopes::fit_series(run);
    }
    let failed = failure.map(|error| error_chain(error));
    slopes::record_metrics(side, trial, run, failed.as_deref());
}

/// Why a metric has no value: the session's failure, else `missing`.
fn why(failure: Option<&TurnError>, missing: &str) -> String {
    match failure {
        Some(error) => error_chain(error),
        None => missing.to_owned(),
    }
}

/// Records the medians over the turns (turn, submit, first token, stream render, tool
/// round trip, turn CPU, typing lag).
fn record_medians(side: &mut Side, trial: u32, turns: &[SessionTurn], failure: Option<&TurnError>) {
    let pick = |f: &dyn Fn(&SessionTurn) -> Option<f64>| -> Vec<f64> {
        turns.iter().filter_map(f).collect()
    };
    let medians: [(Metric, Vec<f64>, &str); 7] = [
        (
            Metric::Turn,
            pick(&|t| Some(t.turn_seconds)),
            "no turn finished",
        ),
        (
            Metric::Submit,
            pick(&|t| t.submit_seconds),
            "no request was matched to a turn",
        ),
        (
            Metric::FirstToken,
            pick(&|t| t.first_token_seconds),
            "no reply's first chunk was seen",
        ),
        (
            Metric::StreamRender,
            pick(&|t| t.stream_render_seconds),
            "no reply's end was seen",
        ),
        (
            Metric::ToolRoundtrip,
            pick(&|t| t.tool_roundtrip_seconds),
            "no scripted turn with a prompt has a tool call",
        ),
        (
            Metric::TurnCpu,
            pick(&|t| Some(t.cpu_seconds)),
            "no turn finished",
        ),
        (
            Metric::TypingLag,
            turns
                .iter()
                .flat_map(|t| t.typing_lag_seconds.iter().copied())
                .collect(),
            "no key typed during a stream was echoed",
        ),
    ];
    // A failed turn makes every median partial: the failure is the result.
    for (metric, values, missing) in medians {
        let sample = match (failure, median(&values)) {
            (None, Some(value)) => Sample::Value(value),
            (_, _) => Sample::Error(why(failure, missing)),
        };
        record(side, metric, trial, sample);
    }
}

/// Records the family's RSS and PSS after the last turn.
fn record_last_memory(
    side: &mut Side,
    trial: u32,
    turns: &[SessionTurn],
    failure: Option<&TurnError>,
) {
    let last = turns.last().filter(|_| failure.is_none());
    record(
        side,
        Metric::SessionRss,
        trial,
        last.map_or_else(
            || Sample::Error(why(failure, "no turn finished")),
            |t| Sample::Value(t.rss_bytes as f64),
        ),
    );
    record(
        side,
        Metric::SessionPss,
        trial,
        match last {
            Some(SessionTurn {
                pss_bytes: Some(pss),
                ..
            }) => Sample::Value(*pss as f64),
            Some(_) => Sample::Error("the family's PSS was unreadable".to_owned()),
            None => Sample::Error(why(failure, "no turn finished")),
        },
    );
}

/// Records the idle window's CPU share, keeping the window's facts in `run`.
fn record_idle(
    side: &mut Side,
    trial: u32,
    run: &mut SessionRun,
    failure: Option<&TurnError>,
    idle: Result<Option<IdleWindow>, SessionError>,
) {
    let idle = match idle {
        Ok(Some(window)) => {
            run.idle_cpu_share = Some(window.share);
            run.idle_monotonic_ns = Some(window.monotonic_ns);
            run.idle_output = Some(checkpoint::terminal_output(&window.output));
            Sample::Value(window.share)
        }
        Ok(None) => Sample::Error(why(failure, "the idle window was empty")),
        Err(error) => Sample::Error(error_chain(&error)),
    };
    record(side, Metric::IdleCpu, trial, idle);
}
