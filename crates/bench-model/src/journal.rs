//! The journal: every request the endpoint received and every chunk it wrote, with
//! times since the endpoint started. Kept in memory behind a cloneable [`Journal`]
//! handle and written as JSON lines ([`Event::to_json_line`]).
//!
//! # JSON lines
//!
//! Every line is an object with an `event` field; times are whole microseconds since
//! the endpoint started (`_us`).
//!
//! - `start`: `seed` (the jitter seed, to replay a run), `address` (`127.0.0.1:PORT`),
//!   `unix_ms` (wall clock at start).
//! - `request`: `number` (from 1), `received_us` (headers read), `method`, `path` (with
//!   the query), `dialect` (`anthropic`, `openai_responses`, `openai_chat`, `gemini`
//!   or null), `model`, `stream`, `body_bytes`, `tool_count` (tools advertised),
//!   `tool_results` (the last message carries tool results), `outcome` (`turn`,
//!   `side`, `no_turn`, `fault`, `unrecognised`, `rejected`), with `turn` (from 1) and
//!   `part` (`start` or `after_tools:N`) for a turn, `side` (`title`, `summary`, `schema`,
//!   `count_tokens`, `models`, `root`, `websocket`), `fault` (`rate_limit`,
//!   `server_error`, `cut`), `reason` (why no turn, why not understood); `status` (the
//!   HTTP status), `tools_called` (names), `output_tokens`, `prompt` (the start of the
//!   last user message, at most 200 characters).
//! - `chunk`: `request` (its number), `index` (from 0), `scheduled_us` (when the
//!   physics wanted it written), `written_us` (when it was handed to the socket
//!   writer), `bytes`, `tokens`, `last` (the response's last chunk).
//! - `dropped`, last and only when something was not kept: `requests` and `chunks`,
//!   how many records past the bounds were counted instead ([`MAX_EVENTS`],
//!   [`MAX_REQUESTS`], [`MAX_REFUSED_REQUESTS`]).
//!
//! The clients are untrusted: a request's path and method are cut to
//! [`MAX_PATH_BYTES`] and 32 bytes where the record is made, and the records kept are
//! bounded in number, so neither memory nor the file grows without bound.

use crate::conversation::{Part, Side};
use crate::physics::FaultKind;
use crate::request::Dialect;
use serde_json::{Value, json};
use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How many events the journal keeps (in memory, or written out with a spill file);
/// past it, events are counted, not kept, so a long session cannot fill memory or disk.
pub const MAX_EVENTS: usize = 2_000_000;

/// With a spill file ([`Journal::spill_to`]), the most events kept in memory: when
/// there are this many, the older half is written out. A turn's requests and chunks
/// (about a hundred events) are read back while they are still in memory.
pub const SPILL_WINDOW: usize = 8192;

/// How many request records the journal keeps (each is at most about 1 KiB).
pub const MAX_REQUESTS: usize = 100_000;

/// How many records of refused or not understood requests are kept (a neighbour
/// without the token, a client knocking on wrong paths): the first ones say what
/// happened, the rest are counted.
pub const MAX_REFUSED_REQUESTS: usize = 1_000;

/// The longest path (with its query) kept in a request record, in bytes.
pub const MAX_PATH_BYTES: usize = 512;

/// `text` cut to at most `max` bytes at a character boundary, saying how long it was.
pub fn bounded_text(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...({} bytes)", &text[..end], text.len())
}

/// The longest start of a user message kept in a request record.
pub const PROMPT_CHARS: usize = 200;

/// One thing that happened.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The endpoint started.
    Start {
        /// The jitter seed.
        seed: u64,
        /// Where it listens.
        address: std::net::SocketAddr,
        /// The wall clock at start, milliseconds since the Unix epoch.
        unix_ms: u64,
    },
    /// A request, boxed: chunks are most of a long session's events, and a record kept
    /// inline made every event as large as a request record (208 bytes against 72).
    Request(Box<RequestRecord>),
    /// A chunk written.
    Chunk(ChunkRecord),
}

/// A request as the journal keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestRecord {
    /// From 1, in the order the headers arrived.
    pub number: u64,
    /// When its headers were read, since the endpoint started.
    pub received: Duration,
    /// The HTTP method.
    pub method: String,
    /// The path and query.
    pub path: String,
    /// Its dialect, when known.
    pub dialect: Option<Dialect>,
    /// The model asked for.
    pub model: Option<String>,
    /// Whether the answer streamed.
    pub stream: bool,
    /// The body's size.
    pub body_bytes: u64,
    /// Tools advertised.
    pub tool_count: usize,
    /// The last message carries tool results.
    pub tool_results: bool,
    /// What the endpoint made of it.
    pub outcome: Outcome,
    /// The HTTP status answered.
    pub status: u16,
    /// The tools called in the answer.
    pub tools_called: Vec<String>,
    /// Tokens in the answer.
    pub output_tokens: u64,
    /// The start of the last user message.
    pub prompt: String,
}

impl RequestRecord {
    /// A record of request `number` with `outcome` and nothing more known (no method,
    /// path, body or answer): the base the endpoint fills in as it reads a request, and
    /// what a test of a journal's reader builds (the session's own tests, or an agent's
    /// that embed the endpoint).
    pub fn bare(number: u64, outcome: Outcome) -> RequestRecord {
        RequestRecord {
            number,
            received: Duration::ZERO,
            method: String::new(),
            path: String::new(),
            dialect: None,
            model: None,
            stream: false,
            body_bytes: 0,
            tool_count: 0,
            tool_results: false,
            outcome,
            status: 0,
            tools_called: Vec::new(),
            output_tokens: 0,
            prompt: String::new(),
        }
    }
}

/// What the endpoint made of a request.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// It played a turn (from 0) of the script.
    Turn {
        /// The turn, from 0.
        index: usize,
        /// Which part of it.
        part: Part,
    },
    /// A side request, answered without consuming a turn.
    Side(Side),
    /// A model request for which no turn played, and why.
    NoTurn(String),
    /// A fault on demand.
    Fault(FaultKind),
    /// Not understood (400 or 404), and why.
    Unrecognised(String),
    /// Refused by a bound (413, 503), and why.
    Rejected(String),
}

/// A chunk as the journal keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkRecord {
    /// The request it answers.
    pub request: u64,
    /// Its place in the response, from 0.
    pub index: u32,
    /// When the physics wanted it written, since the endpoint started.
    pub scheduled: Duration,
    /// When it was handed to the socket writer, since the endpoint started.
    pub written: Duration,
    /// Its size.
    pub bytes: usize,
    /// Tokens in it.
    pub tokens: u32,
    /// The response's last chunk.
    pub last: bool,
}

/// What was written of one answer so far ([`Journal::answer_written`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AnswerWritten {
    /// The tokens of its chunks written.
    pub tokens: u64,
    /// Whether its last chunk was written.
    pub last: bool,
}

fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

impl Event {
    /// The event as one JSON line (without the newline); fields as in the module docs.
    pub fn to_json_line(&self) -> String {
        self.to_json().to_string()
    }

    /// The event as a JSON value.
    pub fn to_json(&self) -> Value {
        match self {
            Event::Start {
                seed,
                address,
                unix_ms,
            } => json!({
                "event": "start", "seed": seed, "address": address.to_string(), "unix_ms": unix_ms,
            }),
            Event::Request(r) => {
                let mut value = json!({
                    "event": "request", "number": r.number, "received_us": micros(r.received),
                    "method": r.method, "path": r.path, "dialect": r.dialect.map(Dialect::name),
                    "model": r.model, "stream": r.stream, "body_bytes": r.body_bytes,
                    "tool_count": r.tool_count, "tool_results": r.tool_results,
                    "status": r.status, "tools_called": r.tools_called,
                    "output_tokens": r.output_tokens, "prompt": r.prompt,
                });
                let (outcome, key, detail): (&str, &str, Value) = match &r.outcome {
                    Outcome::Turn { index, part } => {
                        value["part"] = json!(match part {
                            Part::Start => "start".to_owned(),
                            Part::AfterTools(n) => format!("after_tools:{n}"),
                        });
                        ("turn", "turn", json!(index + 1))
                    }
                    Outcome::Side(side) => ("side", "side", json!(side.name())),
                    Outcome::NoTurn(why) => ("no_turn", "reason", json!(why)),
                    Outcome::Fault(kind) => ("fault", "fault", json!(kind.name())),
                    Outcome::Unrecognised(why) => ("unrecognised", "reason", json!(why)),
                    Outcome::Rejected(why) => ("rejected", "reason", json!(why)),
                };
                value["outcome"] = json!(outcome);
                value[key] = detail;
                value
            }
            Event::Chunk(c) => json!({
                "event": "chunk", "request": c.request, "index": c.index,
                "scheduled_us": micros(c.scheduled), "written_us": micros(c.written),
                "bytes": c.bytes, "tokens": c.tokens, "last": c.last,
            }),
        }
    }
}

#[derive(Debug)]
struct Inner {
    start: Instant,
    events: Mutex<Kept>,
    added: Condvar,
    dropped: std::sync::atomic::AtomicU64,
    dropped_requests: std::sync::atomic::AtomicU64,
}

/// The events kept, and how many of them are request records.
/// The events kept, and how many of them are request records.
#[derive(Debug, Default)]
struct Kept {
    /// The events in memory; the first is event number `spilled` of the journal.
    events: Vec<Event>,
    /// Events written out to the spill file and dropped from memory.
    spilled: usize,
    /// Events written out to the spill file so far, those still in memory included
    /// ([`Journal::sync_spill`]).
    written: usize,
    /// Request records dropped from memory with them.
    requests_spilled: usize,
    /// Where each request record in memory is in the whole journal, in order: a session
    /// asks for the records since its turn began, every turn, and a scan of every event
    /// made each turn's reading grow with the session.
    request_positions: Vec<usize>,
    /// Positions (in the whole journal) of each request's chunks, for the requests
    /// with a chunk in memory.
    chunk_positions: std::collections::HashMap<u64, Vec<usize>>,
    /// What was written of each answer with a chunk in memory, kept as its chunks come:
    /// a session asks at every frame, and summing the chunks each time cost a long
    /// reply's whole length per frame.
    answers: std::collections::HashMap<u64, AnswerWritten>,
    requests: usize,
    refused: usize,
    /// Calls of [`Journal::wake`] so far.
    wakes: u64,
    spill: Option<Spill>,
}

/// Where the older events go.
#[derive(Debug)]
struct Spill {
    out: std::io::BufWriter<std::fs::File>,
    /// The first write that failed: events are then dropped, and the error reported
    /// by [`Journal::finish_spill`].
    error: Option<std::io::Error>,
}

impl Spill {
    fn write(&mut self, event: &Event) {
        if self.error.is_none() {
            let line = event.to_json_line();
            if let Err(error) = writeln!(self.out, "{line}") {
                self.error = Some(error);
            }
        }
    }
}

impl Kept {
    /// The event at `position` of the whole journal, when it is in memory.
    fn at(&self, position: usize) -> Option<&Event> {
        self.events.get(position.checked_sub(self.spilled)?)
    }

    /// Writes out the oldest `count` events and forgets them.
    fn spill_oldest(&mut self, count: usize) {
        let Some(spill) = self.spill.as_mut() else {
            return;
        };
        let count = count.min(self.events.len());
        let first = self.spilled;
        for (position, event) in (first..).zip(self.events.drain(..count)) {
            if position >= self.written {
                spill.write(&event);
            }
        }
        self.spilled += count;
        self.written = self.written.max(self.spilled);
        let boundary = self.spilled;
        let gone = self.request_positions.partition_point(|&p| p < boundary);
        self.request_positions.drain(..gone);
        self.requests_spilled += gone;
        self.chunk_positions
            .retain(|_, positions| positions.last().is_some_and(|&p| p >= boundary));
        let positions = &self.chunk_positions;
        self.answers
            .retain(|number, _| positions.contains_key(number));
    }
}

/// The journal of one endpoint: cheap to clone, shared by the server and its caller.
#[derive(Debug, Clone)]
pub struct Journal {
    inner: Arc<Inner>,
}

impl Journal {
    /// An empty journal whose clock starts at `start`.
    pub fn new(start: Instant) -> Journal {
        Journal {
            inner: Arc::new(Inner {
                start,
                events: Mutex::new(Kept::default()),
                added: Condvar::new(),
                dropped: std::sync::atomic::AtomicU64::new(0),
                dropped_requests: std::sync::atomic::AtomicU64::new(0),
            }),
        }
    }

    /// Time since the endpoint started.
    pub fn elapsed(&self) -> Duration {
        self.inner.start.elapsed()
    }

    /// When the endpoint started.
    pub fn start(&self) -> Instant {
        self.inner.start
    }

    fn lock(&self) -> MutexGuard<'_, Kept> {
        // A panic while holding the lock leaves a vector that is still whole: keep it.
        self.inner
            .events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds an event.
    pub fn push(&self, event: Event) {
        let mut kept = self.lock();
        let full = kept.spilled + kept.events.len() >= MAX_EVENTS;
        let counter = match &event {
            Event::Request(record) => {
                let refused = matches!(
                    record.outcome,
                    Outcome::Rejected(_) | Outcome::Unrecognised(_)
                );
                if full
                    || kept.requests >= MAX_REQUESTS
                    || (refused && kept.refused >= MAX_REFUSED_REQUESTS)
                {
                    Some(&self.inner.dropped_requests)
                } else {
                    kept.requests += 1;
                    kept.refused += usize::from(refused);
                    None
                }
            }
            Event::Chunk(_) if full => Some(&self.inner.dropped),
            _ => None,
        };
        if let Some(counter) = counter {
            counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return;
        }
        let position = kept.spilled + kept.events.len();
        match &event {
            Event::Request(_) => kept.request_positions.push(position),
            Event::Chunk(chunk) => {
                kept.chunk_positions
                    .entry(chunk.request)
                    .or_default()
                    .push(position);
                let answer = kept.answers.entry(chunk.request).or_default();
                answer.tokens += u64::from(chunk.tokens);
                answer.last |= chunk.last;
            }
            Event::Start { .. } => {}
        }
        kept.events.push(event);
        if kept.spill.is_some() && kept.events.len() >= SPILL_WINDOW {
            kept.spill_oldest(SPILL_WINDOW / 2);
        }
        drop(kept);
        self.inner.added.notify_all();
    }

    /// From now on keeps at most [`SPILL_WINDOW`] events in memory, writing the older
    /// ones to `file` as JSON lines, in order: a long session's journal goes to disk as
    /// it grows. [`Journal::finish_spill`] writes the rest. Readers then see only the
    /// events still in memory ([`Journal::events`], [`Journal::requests_from`], ...).
    pub fn spill_to(&self, file: std::fs::File) {
        self.lock().spill = Some(Spill {
            out: std::io::BufWriter::new(file),
            error: None,
        });
    }

    /// Writes the events not yet written to the spill file and flushes it, keeping them
    /// in memory for the readers: a session calls it after every turn, so that a run
    /// stopped on its way still has the journal of the turns it played. A write that
    /// fails is reported by [`Journal::finish_spill`].
    pub fn sync_spill(&self) {
        let mut kept = self.lock();
        let Kept {
            events,
            spilled,
            written,
            spill,
            ..
        } = &mut *kept;
        let Some(spill) = spill.as_mut() else {
            return;
        };
        for event in events.iter().skip(written.saturating_sub(*spilled)) {
            spill.write(event);
        }
        *written = *spilled + events.len();
        if spill.error.is_none()
            && let Err(error) = spill.out.flush()
        {
            spill.error = Some(error);
        }
    }

    /// Writes the events still in memory and the `dropped` line, if any, to the spill
    /// file, flushes it and stops spilling (the events stay readable in memory). The
    /// first write that failed, if one did. Without a spill file, nothing to do.
    pub fn finish_spill(&self) -> std::io::Result<()> {
        let dropped = self.dropped_line();
        let mut kept = self.lock();
        let Some(mut spill) = kept.spill.take() else {
            return Ok(());
        };
        let unwritten = kept.written.saturating_sub(kept.spilled);
        for event in kept.events.iter().skip(unwritten) {
            spill.write(event);
        }
        drop(kept);
        if let Some(error) = spill.error.take() {
            return Err(error);
        }
        if let Some(line) = dropped {
            writeln!(spill.out, "{line}")?;
        }
        spill.out.flush()
    }

    /// Every event so far (with a spill file, those still in memory).
    pub fn events(&self) -> Vec<Event> {
        self.lock().events.clone()
    }

    /// The events from index `from` on, waiting up to `timeout` for at least one (with
    /// a spill file, those of them still in memory).
    pub fn wait_since(&self, from: usize, timeout: Duration) -> Vec<Event> {
        let kept = self.lock();
        let wakes = kept.wakes;
        let (kept, _) = self
            .inner
            .added
            .wait_timeout_while(kept, timeout, |kept| {
                kept.spilled + kept.events.len() <= from && kept.wakes == wakes
            })
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        kept.events
            .get(from.saturating_sub(kept.spilled)..)
            .map(<[Event]>::to_vec)
            .unwrap_or_default()
    }

    /// Ends every [`wait_since`](Journal::wait_since) now, with what it has (a caller
    /// that was told to stop need not wait for its timeout).
    pub fn wake(&self) {
        self.lock().wakes += 1;
        self.inner.added.notify_all();
    }

    /// The request records so far.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.requests_from(0)
    }

    /// How many request records were kept so far.
    pub fn request_count(&self) -> usize {
        let kept = self.lock();
        kept.requests_spilled + kept.request_positions.len()
    }

    /// The request records kept after the first `first` ones, in order: what came since
    /// [`request_count`](Journal::request_count) said `first`, read without going
    /// through the events before them.
    pub fn requests_from(&self, first: usize) -> Vec<RequestRecord> {
        let kept = self.lock();
        kept.request_positions
            .get(first.saturating_sub(kept.requests_spilled)..)
            .unwrap_or_default()
            .iter()
            .filter_map(|&position| match kept.at(position) {
                Some(Event::Request(record)) => Some(record.as_ref().clone()),
                _ => None,
            })
            .collect()
    }

    /// The chunks written for request `number`.
    pub fn chunks(&self, number: u64) -> Vec<ChunkRecord> {
        let kept = self.lock();
        kept.chunk_positions
            .get(&number)
            .into_iter()
            .flatten()
            .filter_map(|&position| match kept.at(position) {
                Some(Event::Chunk(chunk)) => Some(*chunk),
                _ => None,
            })
            .collect()
    }

    /// What was written of the answer to request `number` so far, kept as its chunks
    /// were journaled: a session asks at every frame the agent draws whether the reply
    /// it waits for can be on the screen yet. A chunk is journaled before it is handed to
    /// the socket, so what the client shows of an answer was journaled before the client
    /// could read it. With a spill file, an answer none of whose chunks is still in
    /// memory is forgotten.
    pub fn answer_written(&self, number: u64) -> AnswerWritten {
        self.lock()
            .answers
            .get(&number)
            .copied()
            .unwrap_or_default()
    }

    /// Chunk events not kept because the journal was full ([`MAX_EVENTS`]).
    pub fn dropped(&self) -> u64 {
        self.inner
            .dropped
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Request records not kept because of the bounds ([`MAX_EVENTS`], [`MAX_REQUESTS`],
    /// [`MAX_REFUSED_REQUESTS`]).
    pub fn dropped_requests(&self) -> u64 {
        self.inner
            .dropped_requests
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The `dropped` line that ends the JSON lines when records were not kept.
    pub fn dropped_line(&self) -> Option<String> {
        let (requests, chunks) = (self.dropped_requests(), self.dropped());
        (requests + chunks > 0).then(|| {
            json!({"event": "dropped", "requests": requests, "chunks": chunks}).to_string()
        })
    }

    /// The whole journal as JSON lines, ending with the `dropped` line if any (with a
    /// spill file, the events still in memory).
    pub fn to_json_lines(&self) -> String {
        let mut out = String::new();
        for event in self.lock().events.iter() {
            out.push_str(&event.to_json_line());
            out.push('\n');
        }
        if let Some(line) = self.dropped_line() {
            out.push_str(&line);
            out.push('\n');
        }
        out
    }
}

/// The start of `text`, at most [`PROMPT_CHARS`] characters.
pub fn prompt_of(text: &str) -> String {
    let trimmed = text.trim();
    if trimmed.chars().count() <= PROMPT_CHARS {
        return trimmed.to_owned();
    }
    let mut short: String = trimmed.chars().take(PROMPT_CHARS).collect();
    short.push_str("...");
    short
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_and_chunk_lines_have_the_documented_fields() {
        let request = Event::Request(Box::new(RequestRecord {
            number: 3,
            received: Duration::from_micros(1500),
            method: "POST".into(),
            path: "/v1/messages?beta=true".into(),
            dialect: Some(Dialect::Anthropic),
            model: Some("claude".into()),
            stream: true,
            body_bytes: 42,
            tool_count: 2,
            tool_results: true,
            outcome: Outcome::Turn {
                index: 0,
                part: Part::AfterTools(1),
            },
            status: 200,
            tools_called: vec![],
            output_tokens: 7,
            prompt: "list".into(),
        }));
        let line: Value = serde_json::from_str(&request.to_json_line()).unwrap();
        assert_eq!(line["event"], "request");
        assert_eq!(line["received_us"], 1500);
        assert_eq!(line["dialect"], "anthropic");
        assert_eq!(line["outcome"], "turn");
        assert_eq!(line["turn"], 1);
        assert_eq!(line["part"], "after_tools:1");
        let chunk = Event::Chunk(ChunkRecord {
            request: 3,
            index: 1,
            scheduled: Duration::from_millis(2),
            written: Duration::from_micros(2100),
            bytes: 10,
            tokens: 2,
            last: false,
        });
        let line: Value = serde_json::from_str(&chunk.to_json_line()).unwrap();
        assert_eq!(line["scheduled_us"], 2000);
        assert_eq!(line["written_us"], 2100);
    }

    fn record(number: u64) -> RequestRecord {
        RequestRecord::bare(number, Outcome::Unrecognised(String::new()))
    }

    fn chunk(request: u64, index: u32) -> ChunkRecord {
        ChunkRecord {
            request,
            index,
            scheduled: Duration::ZERO,
            written: Duration::ZERO,
            bytes: 1,
            tokens: 1,
            last: false,
        }
    }

    #[test]
    fn a_chunk_event_costs_no_more_than_its_record() {
        // A 1,000-turn session keeps about 100,000 chunks: at 208 bytes an event (a
        // request record inline) they held 20 MiB of clibench's memory.
        assert!(std::mem::size_of::<Event>() <= std::mem::size_of::<ChunkRecord>() + 8);
    }

    #[test]
    fn requests_and_chunks_are_read_by_their_positions() {
        let journal = Journal::new(Instant::now());
        // Two requests whose chunks interleave, as two streams at once write them.
        journal.push(Event::Request(Box::new(record(1))));
        journal.push(Event::Chunk(chunk(1, 0)));
        journal.push(Event::Request(Box::new(record(2))));
        journal.push(Event::Chunk(chunk(2, 0)));
        journal.push(Event::Chunk(chunk(1, 1)));
        journal.push(Event::Chunk(chunk(2, 1)));
        journal.push(Event::Request(Box::new(record(3))));
        assert_eq!(journal.request_count(), 3);
        let numbers = |records: Vec<RequestRecord>| -> Vec<u64> {
            records.iter().map(|r| r.number).collect()
        };
        assert_eq!(numbers(journal.requests()), [1, 2, 3]);
        assert_eq!(numbers(journal.requests_from(1)), [2, 3]);
        assert!(journal.requests_from(4).is_empty());
        let indices =
            |chunks: Vec<ChunkRecord>| -> Vec<u32> { chunks.iter().map(|c| c.index).collect() };
        assert_eq!(indices(journal.chunks(1)), [0, 1]);
        assert_eq!(indices(journal.chunks(2)), [0, 1]);
        assert!(journal.chunks(3).is_empty());
        assert_eq!(
            journal.answer_written(1),
            AnswerWritten {
                tokens: 2,
                last: false
            }
        );
        let mut last = chunk(2, 2);
        (last.tokens, last.last) = (0, true);
        journal.push(Event::Chunk(last));
        assert_eq!(
            journal.answer_written(2),
            AnswerWritten {
                tokens: 2,
                last: true
            }
        );
        assert_eq!(journal.answer_written(3), AnswerWritten::default());
    }

    #[test]
    fn a_synced_journal_is_on_disk_as_it_goes_and_every_event_is_written_once() {
        let folder = std::env::temp_dir().join(format!("journal-sync-{}", std::process::id()));
        std::fs::create_dir_all(&folder).unwrap();
        let path = folder.join("journal.jsonl");
        let journal = Journal::new(Instant::now());
        journal.spill_to(std::fs::File::create(&path).unwrap());
        let lines = || std::fs::read_to_string(&path).unwrap().lines().count();
        // Turns of 26 events, synced after each: on disk before the journal finishes,
        // and spilling the oldest past the window writes none of them twice.
        let turns = 2 * SPILL_WINDOW as u64 / 26;
        for turn in 0..turns {
            let number = turn + 1;
            journal.push(Event::Request(Box::new(record(number))));
            for index in 0..25 {
                journal.push(Event::Chunk(chunk(number, index)));
            }
            journal.sync_spill();
            assert_eq!(lines(), 26 * (turn as usize + 1), "turn {turn}");
        }
        // Still readable after the sync.
        assert_eq!(journal.chunks(turns).len(), 25);
        journal.push(Event::Request(Box::new(record(turns + 1))));
        journal.finish_spill().unwrap();
        assert_eq!(lines(), 26 * turns as usize + 1);
        std::fs::remove_dir_all(&folder).unwrap();
    }

    #[test]
    fn a_spilling_journal_keeps_a_window_in_memory_and_writes_every_event_once() {
        let folder = std::env::temp_dir().join(format!("journal-spill-{}", std::process::id()));
        std::fs::create_dir_all(&folder).unwrap();
        let path = folder.join("journal.jsonl");
        let journal = Journal::new(Instant::now());
        journal.spill_to(std::fs::File::create(&path).unwrap());
        // A thousand turns of a long session: two requests and fifty chunks each.
        let turns = 1000u64;
        for turn in 0..turns {
            let before = journal.request_count();
            for part in 0..2 {
                let number = turn * 2 + part + 1;
                let mut request = record(number);
                request.outcome = Outcome::Turn {
                    index: turn as usize,
                    part: Part::Start,
                };
                journal.push(Event::Request(Box::new(request)));
                for index in 0..25 {
                    journal.push(Event::Chunk(chunk(number, index)));
                }
            }
            // The turn reads its own requests and chunks back, as the session does.
            let requests = journal.requests_from(before);
            assert_eq!(requests.len(), 2, "turn {turn}");
            assert_eq!(journal.answer_written(requests[1].number).tokens, 25);
            assert_eq!(journal.chunks(requests[1].number).len(), 25, "turn {turn}");
            let kept = journal.lock();
            assert!(
                kept.events.len() < SPILL_WINDOW,
                "turn {turn}: {}",
                kept.events.len()
            );
            assert!(kept.chunk_positions.len() <= SPILL_WINDOW / 25 + 2);
            assert!(kept.answers.len() <= kept.chunk_positions.len());
        }
        assert_eq!(journal.request_count(), 2 * turns as usize);
        journal.finish_spill().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), (2 * turns * 26) as usize);
        let numbers: Vec<u64> = lines
            .iter()
            .filter(|l| l["event"] == "request")
            .map(|l| l["number"].as_u64().unwrap())
            .collect();
        assert_eq!(numbers, (1..=2 * turns).collect::<Vec<_>>());
        std::fs::remove_dir_all(&folder).unwrap();
    }

    #[test]
    fn wake_ends_a_wait_without_events() {
        let journal = Journal::new(Instant::now());
        let waker = journal.clone();
        let thread = std::thread::spawn(move || {
            // A day: only the wake can end it within the test's run.
            journal.wait_since(0, Duration::from_secs(86_400))
        });
        // The wake may come before the wait starts; then the next one ends it.
        while !thread.is_finished() {
            waker.wake();
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(thread.join().unwrap().is_empty());
    }

    #[test]
    fn wait_since_returns_new_events_or_times_out() {
        let journal = Journal::new(Instant::now());
        assert!(journal.wait_since(0, Duration::from_millis(10)).is_empty());
        let writer = journal.clone();
        let thread = std::thread::spawn(move || {
            writer.push(Event::Start {
                seed: 1,
                address: "127.0.0.1:1".parse().unwrap(),
                unix_ms: 0,
            })
        });
        let events = journal.wait_since(0, Duration::from_secs(10));
        thread.join().unwrap();
        assert_eq!(events.len(), 1);
    }
}
