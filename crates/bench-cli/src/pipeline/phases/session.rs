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
//! Text is matched on the screen with all whitespace removed (agents wrap and re-render),
//! and counted: a needle is visible when it occurs more often than before Enter, so a
//! reply that repeats an earlier one's words is not seen early.

use crate::pipeline::PhaseContext;
use crate::pipeline::isolation::command;
use crate::pipeline::program::TargetError;
use crate::pipeline::program::family::Family;
use crate::pipeline::program::model::{self, TrialModel};
use crate::pipeline::program::recording::{
    Recording, keep_screen, keep_start_files, session_interval,
};
use crate::pipeline::program::sessions::stop_agents;
use crate::pipeline::program::terminal::{close_quietly, spawn_options};
use bench_core::detail::{SessionRun, SessionTurn};
use bench_core::{Metric, Phase, Sample, Side, error_chain, record};
use bench_model::{Journal, Outcome, RequestRecord, answer, conversation::Part};
use bench_proc::Snapshot;
use bench_term::{Key, Terminal};
use std::time::{Duration, Instant};

pub(crate) mod checkpoint;
mod paste;
mod slopes;

/// Keys of the prompt are typed this far apart: a fast typist (50 keys a second), and no
/// paste. TUIs without bracketed paste take keys closer than about 8 ms for one (codex's
/// composer does, from 3 keys on): at 5 ms apart, codex made the Enter after a prompt a
/// newline in its input box instead of sending the prompt.
const PROMPT_KEY_GAP: Duration = Duration::from_millis(20);
/// After the prompt's last key, this long before Enter, as a person pauses: a TUI that took
/// the keys for a paste anyway (it read them late, together) turns an Enter that follows
/// within its window (codex: 120 ms) into a newline.
const ENTER_PAUSE: Duration = Duration::from_millis(150);
/// Keys during a stream are typed this far apart: a person's pace.
const TYPING_GAP: Duration = Duration::from_millis(150);
/// How long one echo may take.
const ECHO_TIMEOUT: Duration = Duration::from_secs(5);
/// How many of the final text's last tokens make the "final text is visible" needle.
const LAST_TOKENS: usize = 4;
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
    /// The phase's context lacks the user, or a placeholder has no value.
    #[error(transparent)]
    Context(#[from] crate::pipeline::ContextError),
    /// The target's terminal, family, sessions or model endpoint failed.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// The target's processes could not be stopped.
    #[error("{action}")]
    Stop {
        /// What was being done.
        action: &'static str,
        /// What is left.
        #[source]
        source: command::StopError,
    },
    /// The session command's terminal failed.
    #[error("{action}")]
    Terminal {
        /// What was being done.
        action: &'static str,
        /// Why.
        #[source]
        source: bench_term::TermError,
    },
}

/// Why one turn could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    /// Typing failed.
    #[error("typing the prompt")]
    Type(#[source] bench_term::TermError),
    /// A wait of the turn ran out of `[session] turn_timeout` or failed.
    #[error("turn {turn} ({timeout:?} turn_timeout): {waiting_for}")]
    Wait {
        /// The turn, from 1.
        turn: u32,
        /// The turn's time bound.
        timeout: Duration,
        /// "waiting for the reply's final text".
        waiting_for: &'static str,
        /// The terminal's error (its screen when it gave up).
        #[source]
        source: bench_term::TermError,
    },
    /// The family's CPU time or memory could not be read.
    #[error(transparent)]
    Family(#[from] TargetError),
    /// The journal has no request for the turn.
    #[error("turn {turn}: the model endpoint received no request for it (journal: {last})")]
    NoRequest {
        /// The turn, from 1.
        turn: u32,
        /// The journal's last request, for the reader.
        last: String,
    },
}

fn terminal_error(action: &'static str) -> impl FnOnce(bench_term::TermError) -> SessionError {
    move |source| SessionError::Terminal { action, source }
}

/// Runs the session phase for `ctx.trial`.
pub fn run(ctx: &PhaseContext, side: &mut Side) -> Result<(), SessionError> {
    let session = ctx.spec.session.as_ref().ok_or(SessionError::NoSection)?;
    let measure = ctx.spec.measure.as_ref().ok_or(SessionError::NoMeasure)?;
    if ctx.spec.model.is_none() {
        return Err(SessionError::NoModel);
    }
    let user = ctx.user()?;
    let family = Family::of(user)?;
    command::stop_user(user).map_err(|source| SessionError::Stop {
        action: "stopping the target's processes before the session",
        source,
    })?;
    let endpoint = TrialModel::start(ctx)?.ok_or(SessionError::NoModel)?;
    let journal = endpoint.journal().ok_or(SessionError::NoModel)?;
    let command = session.command.as_ref().unwrap_or(&measure.command);
    let mut options = spawn_options(
        ctx,
        command,
        session.cwd.as_ref(),
        &session.env,
        measure,
        &ctx.log_path(&format!("session-{}", ctx.trial))?,
    )?;
    // A long session's output passes the transcript's cap (8 MiB, kept in memory until
    // close) within a few dozen turns of a TUI that repaints on every key, and a transcript
    // over its cap fails the session: it keeps none, and each turn's terminal counts stand
    // for it.
    if session.turns.is_some() {
        options.transcript = None;
    }
    let recording = Recording::start_every(
        family,
        Phase::Session,
        ctx.trial,
        "session",
        session_interval(session.turns),
    );
    let mut ready_after = None;
    let outcome = Terminal::spawn(&options)
        .map_err(terminal_error("starting the session command in a terminal"))
        .and_then(|mut terminal| {
            let measured = drive(
                ctx,
                side,
                &mut terminal,
                family,
                &journal,
                &recording,
                &mut ready_after,
            );
            match measured {
                Ok(()) => terminal
                    .close()
                    .map(drop)
                    .map_err(terminal_error("closing the session terminal")),
                Err(error) => {
                    close_quietly(&mut terminal);
                    Err(error)
                }
            }
        });
    recording.finish(side, ready_after);
    let kept = keep_start_files(ctx, &["session"]);
    let stopped_agents = stop_agents(ctx, measure, user);
    let stopped = command::stop_user(user).map_err(|source| SessionError::Stop {
        action: "stopping the target's processes",
        source,
    });
    let journaled = model::finish(Some(endpoint));
    outcome?;
    kept?;
    stopped_agents?;
    journaled?;
    stopped
}

/// A scripted turn the phase types (the staircase's session instances type the first).
#[derive(Debug, Clone)]
pub(crate) struct Planned {
    /// The script's turn index, from 0 (the journal's `Outcome::Turn::index`).
    index: usize,
    prompt: String,
    /// The final reply's first chunk, as text.
    first_chunk: String,
    /// The final text's last tokens.
    last_words: String,
    /// How often `last_words` occurs in the final text (squashed): a long reply of
    /// deterministic tokens repeats itself, and its end is shown once every occurrence is.
    last_repeats: usize,
    tool_rounds: usize,
    tokens: usize,
    /// The reply's last word, squashed: the line that holds it is where the reply ends.
    last_word: String,
    /// `[session] turn_done`, checked on the lines below the reply's end; one regex
    /// shared by every turn. A cloned `Regex` gets a search cache of its own that grows
    /// as it is used, and a clone in each of a 1,000-turn session's plans grew
    /// clibench's heap by about 20 KB a turn.
    done: Option<std::sync::Arc<regex::Regex>>,
}

/// The script's turns with a prompt, in order.
pub(crate) fn planned(ctx: &PhaseContext) -> Vec<Planned> {
    let Some(compiled) = ctx.spec.model.as_ref().and_then(|m| m.compiled.as_ref()) else {
        return Vec::new();
    };
    // Invariant: the spec check refused a `turn_done` that is not a regex.
    let done = ctx
        .spec
        .session
        .as_ref()
        .and_then(|s| s.turn_done.as_deref())
        .and_then(|pattern| regex::Regex::new(pattern).ok())
        .map(std::sync::Arc::new);
    compiled
        .turns
        .iter()
        .enumerate()
        .filter_map(|(index, turn)| {
            let prompt = turn.prompt.clone()?;
            let text = turn.reply.final_text();
            let tokens = answer::tokens_of(&text);
            let chunk = (turn.physics.chunk_tokens as usize).max(1);
            let first_chunk = tokens.iter().take(chunk).cloned().collect::<String>();
            let last_words = tokens[tokens.len().saturating_sub(LAST_TOKENS)..].concat();
            let last_repeats = occurrences(&squash(&text), &squash(&last_words)).max(1);
            Some(Planned {
                index,
                prompt,
                first_chunk,
                last_words,
                last_repeats,
                tool_rounds: turn.reply.tool_rounds(),
                tokens: tokens.len(),
                last_word: tokens.last().map(|t| squash(t)).unwrap_or_default(),
                done: done.clone(),
            })
        })
        .collect()
}

/// Whether a line below the last one holding `last_word` (squashed) matches `done`: the
/// agent's "turn over" mark drawn after this reply, not an earlier turn's.
fn done_below_reply(screen: &str, last_word: &str, done: &regex::Regex) -> bool {
    let lines: Vec<&str> = screen.lines().collect();
    // A mark line is never the reply's end: "End of step 3." ends in `3.`, and so does
    // the mark `[done in 3.4s]` of a turn that took three seconds.
    lines
        .iter()
        .rposition(|line| squash(line).contains(last_word) && !done.is_match(line))
        .is_some_and(|at| lines[at + 1..].iter().any(|line| done.is_match(line)))
}

/// `text` without any whitespace: what stays of a reply however the agent wraps it.
pub(crate) fn squash(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

fn occurrences(haystack: &str, needle: &str) -> usize {
    if needle.is_empty() {
        return 0;
    }
    haystack.matches(needle).count()
}

/// When the reply's first chunk and its final text became visible, on the terminal's
/// clock (seconds since spawn).
struct Watch {
    origin: Instant,
    first: String,
    last: String,
    first_before: usize,
    last_needed: usize,
    first_seen: Option<f64>,
    last_seen: Option<f64>,
}

impl Watch {
    /// `screen` is the screen's text squashed ([`Terminal::squashed_text`]).
    fn new(origin: Instant, screen: &str, plan: &Planned) -> Watch {
        let (first, last) = (squash(&plan.first_chunk), squash(&plan.last_words));
        Watch {
            origin,
            first_before: occurrences(screen, &first),
            last_needed: occurrences(screen, &last) + plan.last_repeats,
            first,
            last,
            first_seen: None,
            last_seen: None,
        }
    }

    /// `screen` is the screen's text squashed, as the terminal's squashed waits give it.
    fn observe(&mut self, screen: &str) {
        if self.first_seen.is_some() && self.last_seen.is_some() {
            return;
        }
        let now = self.origin.elapsed().as_secs_f64();
        if self.first_seen.is_none() && occurrences(screen, &self.first) > self.first_before {
            self.first_seen = Some(now);
        }
        if self.last_seen.is_none() && occurrences(screen, &self.last) >= self.last_needed {
            self.last_seen = Some(now);
            // The last words imply the first: a reply shown at once counts for both.
            self.first_seen.get_or_insert(now);
        }
    }
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
    let mut run = SessionRun {
        trial,
        dialect,
        turns: Vec::new(),
        growth_bytes_per_turn: None,
        warmup_turns: session.warmup_turns,
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
    let failure = play_turns(
        terminal,
        journal,
        family,
        recording,
        session,
        &planned(ctx),
        &mut run,
    );
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
        .map_err(terminal_error(
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
        .map_err(terminal_error("letting the session command settle"))?;
    Ok(startup)
}

/// Plays every planned turn into `run` (its turns and checkpoints) until one fails;
/// the failure, if any.
fn play_turns(
    terminal: &mut Terminal,
    journal: &Journal,
    family: Family,
    recording: &Recording,
    session: &crate::spec::Session,
    plans: &[Planned],
    run: &mut SessionRun,
) -> Option<TurnError> {
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
    };
    for (position, plan) in plans.iter().enumerate() {
        let keys = (position + 1 == typing_turn).then_some(session.typing_keys as usize);
        let turn = (position + 1) as u32;
        let due = session.checkpoint_after(position + 1, total);
        let measured = one_turn(
            terminal,
            journal,
            family,
            plan,
            turn,
            session.turn_timeout.0,
            keys,
        )
        .and_then(|(measured, snapshot)| {
            // The walk that read the turn's memory is the recording's sample of this
            // moment: the recording walks itself only when no turn did for a while.
            recording.offer(&snapshot);
            run.turns.push(measured);
            due.then(|| checkpoint::measure(terminal, family, turn, check, session.turn_timeout.0))
                .transpose()
        });
        match measured {
            Ok(Some(point)) => run.checkpoints.push(point),
            Ok(None) => {}
            Err(error) => return Some(error),
        }
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
    terminal
        .settle(window)
        .map_err(terminal_error("waiting at the prompt for the idle window"))?;
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

/// Seconds on the terminal's clock of a journal time (µs since the endpoint started).
fn on_terminal(journal_start: Instant, origin: Instant, at: Duration) -> f64 {
    let offset = match journal_start.checked_duration_since(origin) {
        Some(after) => after.as_secs_f64(),
        None => -origin.duration_since(journal_start).as_secs_f64(),
    };
    offset + at.as_secs_f64()
}

/// A turn's time bound, and the error of a wait that ran out of it.
struct TurnClock {
    turn: u32,
    timeout: Duration,
    deadline: Instant,
}

impl TurnClock {
    fn start(turn: u32, timeout: Duration) -> TurnClock {
        TurnClock {
            turn,
            timeout,
            deadline: Instant::now() + timeout,
        }
    }

    fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// The error of a wait for `waiting_for` that failed.
    fn waited(
        &self,
        waiting_for: &'static str,
    ) -> impl FnOnce(bench_term::TermError) -> TurnError + use<> {
        let (turn, timeout) = (self.turn, self.timeout);
        move |source| TurnError::Wait {
            turn,
            timeout,
            waiting_for,
            source,
        }
    }
}

/// Types `plan`'s prompt, presses Enter and waits until the reply's final text is shown
/// and the prompt echoes a key again; the turn's times, CPU and the family's memory, and
/// the walk of the family that read them (a sample for the phase's memory recording).
pub(crate) fn one_turn(
    terminal: &mut Terminal,
    journal: &Journal,
    family: Family,
    plan: &Planned,
    turn: u32,
    timeout: Duration,
    typing_keys: Option<usize>,
) -> Result<(SessionTurn, Snapshot), TurnError> {
    let clock = TurnClock::start(turn, timeout);
    let requests_before = journal.request_count();
    type_prompt(terminal, &plan.prompt)?;
    let mut watch = Watch::new(terminal.spawned_at(), &terminal.squashed_text(), plan);
    let cpu_before = family.cpu_seconds()?;
    let output_before = terminal.output_counts();
    let enter = terminal.elapsed().as_secs_f64();
    terminal.send_keys(&[Key::Enter]).map_err(TurnError::Type)?;
    let lags = wait_for_reply(terminal, &mut watch, plan, typing_keys, &clock)?;
    // The prompt takes input again when a fresh key typed now is echoed.
    let probe = terminal.fresh_word(4, 4);
    terminal.type_text(&probe).map_err(TurnError::Type)?;
    let ready = terminal
        .wait_for_squashed(clock.remaining().min(ECHO_TIMEOUT), &mut |s| {
            s.contains(&probe)
        })
        .map_err(clock.waited("waiting for the prompt to echo a key after the reply"))?;
    // The CPU and the memory from one walk of the family: on a host of 100 processes a
    // walk of the trial user's is most of what clibench spends on a turn but the screen.
    let (snapshot, cpu_after) = family.snapshot_with_cpu()?;
    let output = terminal.output_counts().since(&output_before);
    terminal
        .send_keys(&[Key::Backspace; 4])
        .map_err(TurnError::Type)?;
    terminal
        .wait_for_squashed(clock.remaining().min(ECHO_TIMEOUT), &mut |s| {
            !s.contains(&probe)
        })
        .map_err(clock.waited("waiting for the erased key to leave the prompt"))?;
    let times = TurnTimes::from_journal(journal, requests_before, plan, turn, |at| {
        on_terminal(journal.start(), terminal.spawned_at(), at) - enter
    })?;
    let measured = SessionTurn {
        turn,
        turn_seconds: ready.as_secs_f64() - enter,
        submit_seconds: Some(times.first_request_at),
        first_token_seconds: times
            .first_chunk_at
            .zip(watch.first_seen)
            .map(|(chunk, seen)| seen - enter - chunk),
        stream_render_seconds: times
            .last_chunk_at
            .zip(watch.last_seen)
            .map(|(chunk, seen)| seen - enter - chunk),
        tool_roundtrip_seconds: times.tool_roundtrip,
        cpu_seconds: (cpu_after - cpu_before).max(0.0),
        rss_bytes: snapshot.total_rss_bytes(),
        pss_bytes: snapshot.total_pss_bytes(),
        typing_lag_seconds: lags,
        first_chunk_at_seconds: times.first_chunk_at,
        last_chunk_at_seconds: times.last_chunk_at,
        tool_call_at_seconds: times.tool_call_at,
        output: Some(checkpoint::terminal_output(&output)),
        bytes_per_token: (plan.tokens > 0).then(|| output.bytes as f64 / plan.tokens as f64),
    };
    Ok((measured, snapshot))
}

/// Types the prompt key by key at a typist's pace, then pauses as a person does before
/// Enter.
fn type_prompt(terminal: &mut Terminal, prompt: &str) -> Result<(), TurnError> {
    for key in prompt.chars() {
        terminal
            .type_text(&key.to_string())
            .map_err(TurnError::Type)?;
        terminal.settle(PROMPT_KEY_GAP).map_err(TurnError::Type)?;
    }
    terminal
        .settle(ENTER_PAUSE.saturating_sub(PROMPT_KEY_GAP))
        .map_err(TurnError::Type)
}

/// After Enter: waits until the reply's final text is shown (and `turn_done` below it),
/// typing `typing_keys` keys while it streams; returns those keys' echo lags.
fn wait_for_reply(
    terminal: &mut Terminal,
    watch: &mut Watch,
    plan: &Planned,
    typing_keys: Option<usize>,
    clock: &TurnClock,
) -> Result<Vec<f64>, TurnError> {
    let mut lags = Vec::new();
    if let Some(keys) = typing_keys.filter(|&k| k > 0) {
        terminal
            .wait_for_squashed(clock.remaining(), &mut |s| {
                watch.observe(s);
                watch.first_seen.is_some()
            })
            .map_err(
                clock.waited("waiting for the reply's first text, to type while it streams"),
            )?;
        lags = type_during_stream(terminal, watch, keys, || clock.remaining())
            .map_err(clock.waited("typing while the reply streams"))?;
    }
    terminal
        .wait_for_squashed(clock.remaining(), &mut |s| {
            watch.observe(s);
            watch.last_seen.is_some()
        })
        .map_err(clock.waited("waiting for the reply's final text"))?;
    if let Some(done) = &plan.done {
        terminal
            .wait_for_screen(clock.remaining(), &mut |s| {
                done_below_reply(s, &plan.last_word, done)
            })
            .map_err(clock.waited("waiting for [session] turn_done below the reply"))?;
    }
    Ok(lags)
}

/// A turn's times from the model endpoint's journal, in seconds since Enter on the
/// terminal's clock.
struct TurnTimes {
    /// The endpoint received the turn's first request.
    first_request_at: f64,
    /// The final reply's first and last chunk with text were written.
    first_chunk_at: Option<f64>,
    last_chunk_at: Option<f64>,
    /// The tool call's last chunk was written.
    tool_call_at: Option<f64>,
    /// The tool call's last chunk written until the request with its result arrived.
    tool_roundtrip: Option<f64>,
}

impl TurnTimes {
    /// The times of `plan`'s requests since `requests_before`; `since_enter` puts a
    /// journal time on the terminal's clock, from Enter.
    fn from_journal(
        journal: &Journal,
        requests_before: usize,
        plan: &Planned,
        turn: u32,
        since_enter: impl Fn(Duration) -> f64,
    ) -> Result<TurnTimes, TurnError> {
        let requests: Vec<RequestRecord> = journal
            .requests_from(requests_before)
            .into_iter()
            .filter(|r| matches!(r.outcome, Outcome::Turn { index, .. } if index == plan.index))
            .collect();
        let Some(first_request) = requests.first() else {
            let last = journal
                .requests_from(journal.request_count().saturating_sub(1))
                .last()
                .map_or("no request at all".to_owned(), |r| {
                    format!("{} {} -> {:?}", r.method, r.path, r.outcome)
                });
            return Err(TurnError::NoRequest { turn, last });
        };
        let final_part = match plan.tool_rounds {
            0 => Part::Start,
            rounds => Part::AfterTools(rounds as u32),
        };
        // The preamble (framing events written with the headers) carries no token: the
        // reply's first chunk is the first with text.
        let final_chunks: Vec<_> = find_part(&requests, final_part)
            .map(|r| journal.chunks(r.number))
            .unwrap_or_default()
            .into_iter()
            .filter(|chunk| chunk.tokens > 0)
            .collect();
        let (tool_call_at, tool_roundtrip) = match plan.tool_rounds {
            0 => (None, None),
            _ => tool_times(journal, &requests, &since_enter),
        };
        Ok(TurnTimes {
            first_request_at: since_enter(first_request.received),
            first_chunk_at: final_chunks.first().map(|c| since_enter(c.written)),
            last_chunk_at: final_chunks.last().map(|c| since_enter(c.written)),
            tool_call_at,
            tool_roundtrip,
        })
    }
}

/// The turn's request for `part` of the script's turn.
fn find_part(requests: &[RequestRecord], part: Part) -> Option<&RequestRecord> {
    requests
        .iter()
        .find(|r| matches!(&r.outcome, Outcome::Turn { part: p, .. } if *p == part))
}

/// When the tool call's last chunk was written, and from then until the request with
/// its result arrived.
fn tool_times(
    journal: &Journal,
    requests: &[RequestRecord],
    since_enter: &impl Fn(Duration) -> f64,
) -> (Option<f64>, Option<f64>) {
    let Some(written) = find_part(requests, Part::Start).and_then(|call| {
        journal
            .chunks(call.number)
            .last()
            .map(|chunk| chunk.written)
    }) else {
        return (None, None);
    };
    let call_at = since_enter(written);
    let roundtrip = find_part(requests, Part::AfterTools(1))
        .map(|result| since_enter(result.received) - call_at);
    (Some(call_at), roundtrip)
}

/// Types `keys` letters of a fresh word ~150 ms apart while the reply streams, each
/// one's echo awaited (the screen watched meanwhile), then erases them.
fn type_during_stream(
    terminal: &mut Terminal,
    watch: &mut Watch,
    keys: usize,
    remaining: impl Fn() -> Duration,
) -> Result<Vec<f64>, bench_term::TermError> {
    const LEAD: usize = 3;
    let word = terminal.fresh_word(LEAD + keys, LEAD);
    terminal.type_text(&word[..LEAD])?;
    terminal.wait_for_squashed(remaining().min(ECHO_TIMEOUT), &mut |s| {
        watch.observe(s);
        s.contains(&word[..LEAD])
    })?;
    let origin = terminal.spawned_at();
    let mut lags = Vec::with_capacity(keys);
    for typed in LEAD..LEAD + keys {
        let next = Instant::now() + TYPING_GAP;
        let sent = origin.elapsed().as_secs_f64();
        terminal.type_text(&word[typed..=typed])?;
        let shown = &word[..=typed];
        let echoed = terminal.wait_for_squashed(remaining().min(ECHO_TIMEOUT), &mut |s| {
            watch.observe(s);
            s.contains(shown)
        })?;
        lags.push(echoed.as_secs_f64() - sent);
        terminal.watch_squashed(next.saturating_duration_since(Instant::now()), &mut |s| {
            watch.observe(s)
        })?;
    }
    terminal.send_keys(&vec![Key::Backspace; LEAD + keys])?;
    // Gone means the whole word is gone: its 3-letter lead alone turns up by chance in a
    // long reply squashed of its spaces (about one reply in ten of the demo's 180 words),
    // and waiting for that to vanish failed the turn.
    terminal.wait_for_squashed(remaining().min(ECHO_TIMEOUT), &mut |s| {
        watch.observe(s);
        !s.contains(&word)
    })?;
    Ok(lags)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(first: &str, last: &str) -> Planned {
        Planned {
            index: 0,
            prompt: "p".into(),
            first_chunk: first.into(),
            last_words: last.into(),
            last_repeats: 1,
            tool_rounds: 0,
            tokens: 10,
            last_word: String::new(),
            done: None,
        }
    }

    #[test]
    fn the_turn_done_mark_counts_only_below_this_reply() {
        let done = regex::Regex::new(r"\[done in").unwrap();
        // The earlier turn's mark sits above this reply's end: not yet over.
        let busy = "> hi\nHello there.\n[done in 0.2s]\n> list\nThose are the files.\n";
        assert!(!done_below_reply(busy, "files.", &done));
        let over = format!("{busy}[done in 0.3s]\n> ");
        assert!(done_below_reply(&over, "files.", &done));
        // A reply that is not on the screen yet is not over either.
        assert!(!done_below_reply("[done in 0.1s]\n", "files.", &done));
        // The mark itself holds the reply's last word: it is still the mark below it.
        let step = "> step 3\nEnd of step 3.\n[done in 3.4s]\n> ";
        assert!(done_below_reply(step, "3.", &done));
    }

    #[test]
    fn wrapped_text_is_matched_without_its_whitespace() {
        assert_eq!(squash(" a b\n c  d "), "abcd");
        let mut watch = Watch::new(Instant::now(), ">", &plan("Hello there", "the end."));
        watch.observe(&squash("> Hel\nlo the"));
        assert!(watch.first_seen.is_none());
        watch.observe(&squash("> Hel\nlo there, and so\n to the   end."));
        assert!(watch.first_seen.is_some() && watch.last_seen.is_some());
    }

    #[test]
    fn text_already_on_the_screen_must_appear_once_more() {
        let mut watch = Watch::new(
            Instant::now(),
            &squash("old: Hello there"),
            &plan("Hello there", "x"),
        );
        watch.observe(&squash("old: Hello there\n> typing"));
        assert!(watch.first_seen.is_none());
        watch.observe(&squash("old: Hello there\nHello there"));
        assert!(watch.first_seen.is_some());
    }

    #[test]
    fn journal_times_are_put_on_the_terminal_clock() {
        let journal_start = Instant::now();
        let origin = journal_start + Duration::from_millis(500);
        let at = on_terminal(journal_start, origin, Duration::from_millis(700));
        assert!((at - 0.2).abs() < 1e-9, "{at}");
        let before = on_terminal(origin, journal_start, Duration::from_millis(100));
        assert!((before - 0.6).abs() < 1e-9, "{before}");
    }
}
