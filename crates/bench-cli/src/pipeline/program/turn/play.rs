//! One scripted turn played: the prompt typed key by key, Enter, the reply
//! watched on the screen until its final text shows (keys typed ~150 ms apart while it
//! streams, each one's echo awaited), a fresh key's echo at the prompt, and the turn's
//! times read from the model endpoint's journal and put on the terminal's clock.

use super::{ECHO_TIMEOUT, PROMPT_KEY_GAP, Planned, TurnError, occurrences, squash};
use crate::pipeline::program::family::Family;
use crate::pipeline::program::terminal::terminal_output;
use bench_core::detail::SessionTurn;
use bench_model::{Journal, Outcome, RequestRecord, conversation::Part};
use bench_proc::{MemoryRead, Snapshot};
use bench_term::{DialogHit, Key, TermError, Terminal};
use std::time::{Duration, Instant};

/// After the prompt's last key, this long before Enter, as a person pauses: a TUI that took
/// the keys for a paste anyway (it read them late, together) turns an Enter that follows
/// within its window (codex: 120 ms) into a newline.
const ENTER_PAUSE: Duration = Duration::from_millis(150);
/// Keys during a stream are typed this far apart: a person's pace.
const TYPING_GAP: Duration = Duration::from_millis(150);
/// How often a turn's long waits look for a question the agent waits on.
const DIALOG_LOOK: Duration = Duration::from_millis(500);
/// How long the model endpoint must have had nothing left to send before a question on
/// the screen ends the turn: an agent busy with a reply draws its own words, which may ask
/// anything, and the endpoint is still writing them.
const DIALOG_QUIET: Duration = Duration::from_secs(2);

/// Whether the agent stopped for its user: a question on its screen
/// ([`bench_term::find_waiting_dialog`]) while the model endpoint had written every
/// answer of the turn in full and received nothing new for [`DIALOG_QUIET`]. qwen-code
/// asking "Allow execution of: 'seq'?" waited out the whole 90 s `turn_timeout`.
struct Stall<'a> {
    journal: &'a Journal,
    requests_before: usize,
    /// The turn's requests, the tokens written of their answers, and whether one of
    /// them is still being answered.
    state: (usize, u64, bool),
    since: Instant,
}

impl<'a> Stall<'a> {
    fn new(journal: &'a Journal, requests_before: usize) -> Stall<'a> {
        Stall {
            journal,
            requests_before,
            state: Self::read(journal, requests_before),
            since: Instant::now(),
        }
    }

    fn read(journal: &Journal, requests_before: usize) -> (usize, u64, bool) {
        let records = journal.requests_from(requests_before);
        let (mut tokens, mut open) = (0, false);
        for record in records
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::Turn { .. }))
        {
            let written = journal.answer_written(record.number);
            tokens += written.tokens;
            open |= !written.last;
        }
        (records.len(), tokens, open)
    }

    /// The question the agent waits on, if it stopped for its user.
    fn question(&mut self, terminal: &Terminal) -> Option<DialogHit> {
        let state = Self::read(self.journal, self.requests_before);
        if state != self.state {
            self.state = state;
            self.since = Instant::now();
            return None;
        }
        if state.2 || self.since.elapsed() < DIALOG_QUIET {
            return None;
        }
        bench_term::find_waiting_dialog(&terminal.screen_text())
    }
}

/// Runs `wait` for at most `limit` in slices of [`DIALOG_LOOK`], looking between them
/// whether the agent stopped for its user; its timeout counts from the first slice.
fn guarded<T>(
    terminal: &mut Terminal,
    stall: &mut Stall,
    clock: &TurnClock,
    limit: Duration,
    waiting_for: &'static str,
    wait: &mut dyn FnMut(&mut Terminal, Duration) -> Result<T, TermError>,
) -> Result<T, TurnError> {
    let started = Instant::now();
    let deadline = started + limit;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let slice = left.min(DIALOG_LOOK);
        match wait(terminal, slice) {
            Err(TermError::Timeout { .. }) if slice < left => {
                if let Some(hit) = stall.question(terminal) {
                    return Err(TurnError::Dialog {
                        turn: clock.turn,
                        kind: hit.name,
                        question: hit.line,
                        approvals: clock.approvals,
                    });
                }
            }
            Err(TermError::Timeout { stage, screen, .. }) => {
                let waited = started.elapsed();
                let error = TermError::Timeout {
                    stage,
                    waited,
                    screen,
                };
                return Err(clock.waited(waiting_for)(error));
            }
            other => return other.map_err(clock.waited(waiting_for)),
        }
    }
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

/// When the reply's first chunk and its final text became visible, on the terminal's
/// clock (seconds since spawn).
struct Watch {
    origin: Instant,
    first: String,
    last: String,
    /// The fewest times the first chunk was on a screen watched before it was seen.
    first_before: usize,
    /// How often the last words must be on the screen for the reply's end to be.
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

    /// Whether a frame can change what the watch saw, given whether the reply's text
    /// began and ended being written ([`ReplySent::progress`]).
    fn wants(&self, (started, finished): (bool, bool)) -> bool {
        (self.first_seen.is_none() && started) || (self.last_seen.is_none() && finished)
    }

    /// `screen` is the screen's text squashed, as the terminal's squashed waits give it.
    fn observe(&mut self, screen: &str) {
        if self.first_seen.is_some() && self.last_seen.is_some() {
            return;
        }
        let now = self.origin.elapsed().as_secs_f64();
        if self.first_seen.is_none() {
            // Earlier replies that begin alike scroll away under the tool's output: the
            // count to beat is the lowest seen, or a first chunk shown where one scrolled
            // off was never seen, and the turn's first token counted at its last.
            let count = occurrences(screen, &self.first);
            if count > self.first_before {
                self.first_seen = Some(now);
            } else {
                self.first_before = count;
            }
        }
        if self.last_seen.is_none() && occurrences(screen, &self.last) >= self.last_needed {
            self.last_seen = Some(now);
            // The last words imply the first: a reply shown at once counts for both.
            self.first_seen.get_or_insert(now);
        }
    }
}

/// What the model endpoint has written of the turn's final reply, asked at every frame the
/// agent draws while the turn waits for it. The endpoint journals a chunk before it hands
/// it to the socket, so the agent cannot show the reply's first chunk before a chunk with
/// text was journaled, nor its last words before all of its text was: until then a frame
/// is emulated and not searched. A long turn's tool output and streamed reply are most of
/// what an agent draws, and building and searching the screen's squashed text of each
/// frame was a third of what clibench spent watching it (docs/performance.md).
struct ReplySent<'a> {
    journal: &'a Journal,
    index: usize,
    part: Part,
    tokens: u64,
    /// Request records read so far (the turn's began at the first).
    read: usize,
    /// The numbers of the requests for the final reply (more than one when the agent
    /// asked again).
    numbers: Vec<u64>,
}

impl<'a> ReplySent<'a> {
    fn new(journal: &'a Journal, requests_before: usize, plan: &Planned) -> ReplySent<'a> {
        ReplySent {
            journal,
            index: plan.index,
            part: final_part(plan),
            tokens: plan.tokens as u64,
            read: requests_before,
            numbers: Vec::new(),
        }
    }

    /// Whether a chunk of the final reply's text was written, and whether all of it was.
    fn progress(&mut self) -> (bool, bool) {
        if self.journal.request_count() > self.read {
            let records = self.journal.requests_from(self.read);
            self.read += records.len();
            self.numbers
                .extend(records.iter().filter_map(|r| match r.outcome {
                    Outcome::Turn { index, part } if index == self.index && part == self.part => {
                        Some(r.number)
                    }
                    _ => None,
                }));
        }
        let (mut started, mut finished) = (false, false);
        for &number in &self.numbers {
            let written = self.journal.answer_written(number);
            started |= written.tokens > 0;
            finished |= written.last || written.tokens >= self.tokens;
        }
        (started, finished)
    }
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
    /// The agent's approval setting, for the error of a turn it stopped.
    approvals: Option<&'static str>,
}

impl TurnClock {
    fn start(turn: u32, timeout: Duration, approvals: Option<&'static str>) -> TurnClock {
        TurnClock {
            turn,
            timeout,
            deadline: Instant::now() + timeout,
            approvals,
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

/// How one turn is driven, and what it reads of the family's memory.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TurnSettings {
    /// The most the turn may take.
    pub(crate) timeout: Duration,
    /// Keys typed while the reply streams (`typing_lag`), in the turn that types them.
    pub(crate) typing_keys: Option<usize>,
    /// The family's PSS after the turn, or its RSS alone (see
    /// [`bench_core::detail::SessionRun::pss_every`]).
    pub(crate) memory: MemoryRead,
    /// The agent's approval setting (the session phase knows those of the agents clibench
    /// has met), named when the turn stops on a question.
    pub(crate) approvals: Option<&'static str>,
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
    settings: TurnSettings,
) -> Result<(SessionTurn, Snapshot), TurnError> {
    let TurnSettings {
        timeout,
        typing_keys,
        memory,
        approvals,
    } = settings;
    let clock = TurnClock::start(turn, timeout, approvals);
    let requests_before = journal.request_count();
    let mut stall = Stall::new(journal, requests_before);
    type_prompt(terminal, &plan.prompt)?;
    let mut watch = Watch::new(terminal.spawned_at(), &terminal.squashed_text(), plan);
    let cpu_before = family.cpu_seconds()?;
    let output_before = terminal.output_counts();
    let enter = terminal.elapsed().as_secs_f64();
    terminal.send_keys(&[Key::Enter]).map_err(TurnError::Type)?;
    let mut sent = ReplySent::new(journal, requests_before, plan);
    let mut reply = Reply {
        watch: &mut watch,
        sent: &mut sent,
        stall: &mut stall,
    };
    let lags = wait_for_reply(terminal, &mut reply, plan, typing_keys, &clock)?;
    // The prompt takes input again when a fresh key typed now is echoed.
    let probe = terminal.fresh_word(4, 4);
    terminal.type_text(&probe).map_err(TurnError::Type)?;
    let ready = guarded(
        terminal,
        &mut stall,
        &clock,
        clock.remaining().min(ECHO_TIMEOUT),
        "waiting for the prompt to echo a key after the reply",
        &mut |terminal, slice| terminal.wait_for_squashed(slice, &mut |s| s.contains(&probe)),
    )?;
    // The CPU and the memory from one walk of the family: on a host of 100 processes a
    // walk of the trial user's is most of what clibench spends on a turn but the screen.
    let (snapshot, cpu_after) = family.snapshot_with_cpu(memory)?;
    let output = terminal.output_counts().since(&output_before);
    // The probe word itself is one write: it must show whole to be told from the screen's
    // own text, and letters read together are inserted as typed, paste or not.
    terminal
        .press_keys(&[Key::Backspace; 4], PROMPT_KEY_GAP, &mut |_| {})
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
        output: Some(terminal_output(&output)),
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

/// What a turn watches while it waits for its reply.
struct Reply<'r, 'j> {
    watch: &'r mut Watch,
    sent: &'r mut ReplySent<'j>,
    stall: &'r mut Stall<'j>,
}

/// After Enter: waits until the reply's final text is shown (and `turn_done` below it),
/// typing `typing_keys` keys while it streams; returns those keys' echo lags. A question
/// the agent stops on ends the wait (see [`Stall`]).
fn wait_for_reply(
    terminal: &mut Terminal,
    reply: &mut Reply,
    plan: &Planned,
    typing_keys: Option<usize>,
    clock: &TurnClock,
) -> Result<Vec<f64>, TurnError> {
    let mut lags = Vec::new();
    let Reply { watch, sent, stall } = reply;
    if let Some(keys) = typing_keys.filter(|&k| k > 0) {
        guarded(
            terminal,
            stall,
            clock,
            clock.remaining(),
            "waiting for the reply's first text, to type while it streams",
            &mut |terminal, slice| {
                watch_reply(terminal, watch, sent, slice, |w| w.first_seen.is_some())
            },
        )?;
        lags = type_during_stream(terminal, watch, keys, || clock.remaining())
            .map_err(clock.waited("typing while the reply streams"))?;
    }
    guarded(
        terminal,
        stall,
        clock,
        clock.remaining(),
        "waiting for the reply's final text",
        &mut |terminal, slice| watch_reply(terminal, watch, sent, slice, |w| w.last_seen.is_some()),
    )?;
    if let Some(done) = &plan.done {
        guarded(
            terminal,
            stall,
            clock,
            clock.remaining(),
            "waiting for [session] turn_done below the reply",
            &mut |terminal, slice| {
                terminal.wait_for_screen(slice, &mut |s| done_below_reply(s, &plan.last_word, done))
            },
        )?;
    }
    Ok(lags)
}

/// Waits until `done` holds for `watch`, which observes the frames drawn while the
/// reply's text can change what it saw ([`ReplySent`]). Typing during the stream may
/// have seen it all already: then there is nothing to wait for.
fn watch_reply(
    terminal: &mut Terminal,
    watch: &mut Watch,
    sent: &mut ReplySent,
    timeout: Duration,
    done: fn(&Watch) -> bool,
) -> Result<(), bench_term::TermError> {
    if done(watch) {
        return Ok(());
    }
    // Both closures read the watch, one at a time.
    let watch = std::cell::RefCell::new(watch);
    terminal
        .wait_for_squashed_gated(
            timeout,
            &mut || watch.borrow().wants(sent.progress()),
            &mut |s| {
                let mut watch = watch.borrow_mut();
                watch.observe(s);
                done(&watch)
            },
        )
        .map(|_| ())
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
        let final_part = final_part(plan);
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

/// The part of the script's turn that holds the final reply.
fn final_part(plan: &Planned) -> Part {
    match plan.tool_rounds {
        0 => Part::Start,
        rounds => Part::AfterTools(rounds as u32),
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
    terminal.type_paced(&word[..LEAD], PROMPT_KEY_GAP, &mut |s| watch.observe(s))?;
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
    let erase = vec![Key::Backspace; LEAD + keys];
    terminal.press_keys(&erase, PROMPT_KEY_GAP, &mut |s| watch.observe(s))?;
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
    use bench_model::Event;

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

    fn request(number: u64, index: usize, part: Part) -> Event {
        Event::Request(Box::new(RequestRecord::bare(
            number,
            Outcome::Turn { index, part },
        )))
    }

    fn chunk(request: u64, index: u32, tokens: u32, last: bool) -> Event {
        Event::Chunk(bench_model::ChunkRecord {
            request,
            index,
            scheduled: Duration::ZERO,
            written: Duration::ZERO,
            bytes: 8,
            tokens,
            last,
        })
    }

    #[test]
    fn the_reply_is_sent_when_its_final_parts_text_is_journaled() {
        let journal = Journal::new(Instant::now());
        // An earlier turn's request, before this turn began.
        journal.push(request(1, 0, Part::Start));
        journal.push(chunk(1, 0, 10, true));
        let mut tool_turn = plan("a", "b");
        (tool_turn.index, tool_turn.tool_rounds, tool_turn.tokens) = (1, 1, 4);
        let mut sent = ReplySent::new(&journal, 1, &tool_turn);
        assert_eq!(sent.progress(), (false, false));
        // The tool call's answer is not the reply, however much it streams.
        journal.push(request(2, 1, Part::Start));
        journal.push(chunk(2, 0, 6, true));
        assert_eq!(sent.progress(), (false, false));
        journal.push(request(3, 1, Part::AfterTools(1)));
        journal.push(chunk(3, 0, 0, false));
        assert_eq!(
            sent.progress(),
            (false, false),
            "a preamble carries no text"
        );
        journal.push(chunk(3, 1, 2, false));
        assert_eq!(sent.progress(), (true, false));
        // All of its text written is the end, before the framing's last chunk.
        journal.push(chunk(3, 2, 2, false));
        assert_eq!(sent.progress(), (true, true));
        // An answer cut short and asked again: its retry's end is the end.
        let mut retried = ReplySent::new(&journal, 1, &plan("a", "b"));
        journal.push(request(4, 0, Part::Start));
        journal.push(request(5, 0, Part::Start));
        journal.push(chunk(5, 0, 1, true));
        assert_eq!(retried.progress(), (true, true));
    }

    #[test]
    fn the_watch_wants_frames_only_while_they_can_change_what_it_saw() {
        let mut watch = Watch::new(Instant::now(), ">", &plan("Hello", "end."));
        assert!(!watch.wants((false, false)));
        assert!(watch.wants((true, false)));
        watch.observe("Hello");
        assert!(!watch.wants((true, false)));
        assert!(watch.wants((true, true)));
        watch.observe("Helloend.");
        assert!(!watch.wants((true, true)));
    }

    #[test]
    fn a_first_chunk_shown_where_an_earlier_one_scrolled_off_is_seen() {
        let mut watch = Watch::new(
            Instant::now(),
            &squash("old: Hello there"),
            &plan("Hello there", "x"),
        );
        watch.observe(&squash("1\n2\n3"));
        assert!(watch.first_seen.is_none());
        watch.observe(&squash("2\n3\nHello there"));
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
