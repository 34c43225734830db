//! The endpoint: hyper's HTTP/1.1 server on a current-thread tokio runtime in a thread
//! of its own, bound to 127.0.0.1.
//!
//! Timing: a streamed answer's frames are released by a thread per response that
//! sleeps until each is due (the standard library's sleep, with the thread's timer
//! slack set to 1 µs, wakes within tens of microseconds; tokio's timer rounds up to
//! the next millisecond, too coarse for the 1 ms goal) and hands it to the
//! connection's task through a channel; the body records when hyper took it to write.
//!
//! Bounds: at most [`Limits::max_connections`] connections are served at once (more
//! get 503 and are closed; beyond twice as many they are closed unanswered), headers
//! must arrive within [`Limits::header_timeout`] (also the keep-alive idle time), a body
//! within [`Limits::body_timeout`] and at most [`Limits::max_body_bytes`] (413), and a
//! write that makes no progress for [`Limits::write_timeout`] closes the connection.

use crate::answer::{self, Answer, Content};
use crate::conversation::{Conversation, Decision, Side};
use crate::dialect::{self, ErrorKind, Render};
use crate::journal::{ChunkRecord, Event, Journal, Outcome, RequestRecord, prompt_of};
use crate::physics::{Fault, FaultKind, Rng};
use crate::request::{self, Asked, Dialect, Route};
use crate::schedule::{self, Frame};
use crate::schema;
use crate::script::{Compiled, Reply};
use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame as HttpFrame, Incoming, SizeHint};
use hyper::{Request, Response, StatusCode};
use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;

/// The model name answered when a request names none.
pub const DEFAULT_MODEL: &str = "clibench-scripted";

/// The bounds of the endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// The largest request body read (default 32 MiB; claude-code's turns are ~100 KB
    /// and grow with the conversation).
    pub max_body_bytes: usize,
    /// Connections served at once (default 64).
    pub max_connections: usize,
    /// Time for a request's headers to arrive, and for an idle keep-alive connection
    /// to send its next request (default 60 s).
    pub header_timeout: Duration,
    /// Time for a request's body to arrive (default 60 s).
    pub body_timeout: Duration,
    /// Time a write may make no progress before the connection is closed (default 30 s).
    pub write_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body_bytes: 32 << 20,
            max_connections: 64,
            header_timeout: Duration::from_secs(60),
            body_timeout: Duration::from_secs(60),
            write_timeout: Duration::from_secs(30),
        }
    }
}

/// How to start an endpoint.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The port on 127.0.0.1; 0 for one the kernel picks.
    pub port: u16,
    /// The script to play.
    pub script: Compiled,
    /// The bounds.
    pub limits: Limits,
    /// A secret path prefix: with `Some(token)` only requests under `/m/<token>` are
    /// served (the prefix is removed before routing) and every other path gets 404, so a
    /// local user who finds the port cannot play the trial's turns. `None`: served at `/`.
    pub path_token: Option<String>,
}

/// The endpoint could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The port could not be bound.
    #[error("cannot listen on 127.0.0.1:{port}")]
    Bind {
        /// The port asked for.
        port: u16,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The runtime or its thread could not start.
    #[error("cannot start the endpoint's {what}")]
    Start {
        /// The runtime or the thread.
        what: &'static str,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// A running endpoint. Stopped by [`Endpoint::stop`] or when dropped.
#[derive(Debug)]
pub struct Endpoint {
    address: SocketAddr,
    path_token: Option<String>,
    journal: Journal,
    seed: u64,
    conversation: Arc<Mutex<Conversation>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

struct State {
    path_token: Option<String>,
    conversation: Arc<Mutex<Conversation>>,
    journal: Journal,
    limits: Limits,
    seed: u64,
    requests: AtomicU64,
    connections: Arc<tokio::sync::Semaphore>,
    rejections: Arc<tokio::sync::Semaphore>,
}

impl Endpoint {
    /// Binds 127.0.0.1 and starts serving in a thread of its own.
    pub fn start(settings: Settings) -> Result<Endpoint, ServeError> {
        let start = Instant::now();
        let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, settings.port)).map_err(
            |source| ServeError::Bind {
                port: settings.port,
                source,
            },
        )?;
        let bind_error = |source| ServeError::Bind {
            port: settings.port,
            source,
        };
        listener.set_nonblocking(true).map_err(bind_error)?;
        let address = listener.local_addr().map_err(bind_error)?;
        let seed = settings
            .script
            .physics
            .seed
            .unwrap_or_else(crate::physics::fresh_seed);
        let journal = Journal::new(start);
        journal.push(Event::Start {
            seed,
            address,
            unix_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(|source| ServeError::Start {
                what: "runtime",
                source,
            })?;
        let max = settings.limits.max_connections.max(1);
        let path_token = settings.path_token.clone();
        let conversation = Arc::new(Mutex::new(Conversation::new(settings.script)));
        let state = Arc::new(State {
            path_token: settings.path_token,
            conversation: Arc::clone(&conversation),
            journal: journal.clone(),
            limits: settings.limits,
            seed,
            requests: AtomicU64::new(0),
            connections: Arc::new(tokio::sync::Semaphore::new(max)),
            rejections: Arc::new(tokio::sync::Semaphore::new(max)),
        });
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("model-endpoint".into())
            .spawn(move || runtime.block_on(serve(listener, state, stopped)))
            .map_err(|source| ServeError::Start {
                what: "thread",
                source,
            })?;
        Ok(Endpoint {
            address,
            path_token,
            journal,
            seed,
            conversation,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Where it listens.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// `http://127.0.0.1:PORT`, or `http://127.0.0.1:PORT/m/TOKEN` with a path token;
    /// without a trailing slash.
    pub fn url(&self) -> String {
        base_url(self.address, self.path_token.as_deref())
    }

    /// The journal, shared with the server.
    pub fn journal(&self) -> Journal {
        self.journal.clone()
    }

    /// The jitter seed in use (the script's, or the one picked and recorded).
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Puts the script back at its first turn, as a fresh agent meets it (a session
    /// staircase rewinds before each instance, so every instance's first prompt plays
    /// the same turn). Faults keep their hit counts: a fault meant once per trial hits
    /// once.
    pub fn rewind(&self) {
        lock(&self.conversation).rewind();
    }

    /// Stops serving: no new connections; those open are closed.
    pub fn stop(mut self) {
        self.shut_down();
    }

    fn shut_down(&mut self) {
        if let Some(stop) = self.stop.take() {
            // The server may have ended already; then there is nobody to tell.
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            // A panic in the server thread has nothing left to clean up.
            let _ = thread.join();
        }
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// The endpoint's base URL on `address`, under `/m/<token>` when there is a token.
pub fn base_url(address: SocketAddr, path_token: Option<&str>) -> String {
    match path_token {
        Some(token) => format!("http://{address}/m/{token}"),
        None => format!("http://{address}"),
    }
}

/// The path with the secret prefix removed: `None` when the path is not under
/// `/m/<token>` (exactly that segment, then `/` or the end).
pub fn strip_token<'a>(path: &'a str, path_token: Option<&str>) -> Option<&'a str> {
    // `/m/<token>` then `/` or the end: `/m/<token>x` is another path.
    let Some(token) = path_token else {
        return Some(path);
    };
    let rest = path.strip_prefix("/m/")?.strip_prefix(token)?;
    (rest.is_empty() || rest.starts_with('/')).then_some(rest)
}

async fn serve(
    listener: std::net::TcpListener,
    state: Arc<State>,
    mut stopped: tokio::sync::oneshot::Receiver<()>,
) {
    let listener = match tokio::net::TcpListener::from_std(listener) {
        Ok(listener) => listener,
        Err(_) => return,
    };
    loop {
        let accepted = tokio::select! {
            _ = &mut stopped => return,
            accepted = listener.accept() => accepted,
        };
        let Ok((stream, _peer)) = accepted else {
            // EMFILE and the like: wait a little rather than spin.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        // Latency matters more than packet count: every chunk goes out at once.
        let _ = stream.set_nodelay(true);
        let io = hyper_util::rt::TokioIo::new(Deadlined::new(stream, state.limits.write_timeout));
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(hyper_util::rt::TokioTimer::new())
            .header_read_timeout(state.limits.header_timeout);
        match state.connections.clone().try_acquire_owned() {
            Ok(permit) => {
                let state = state.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let state = state.clone();
                        async move { Ok::<_, Infallible>(handle(&state, request).await) }
                    });
                    let _ = builder.serve_connection(io, service).await;
                    drop(permit);
                });
            }
            Err(_) => {
                // Over the bound: answer 503 and close, unless even the rejections are
                // at their bound, then close at once.
                let Ok(permit) = state.rejections.clone().try_acquire_owned() else {
                    continue;
                };
                let state = state.clone();
                builder
                    .keep_alive(false)
                    .header_read_timeout(Duration::from_secs(2));
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let state = state.clone();
                        async move { Ok::<_, Infallible>(overloaded(&state, request)) }
                    });
                    let _ = builder.serve_connection(io, service).await;
                    drop(permit);
                });
            }
        }
    }
}

/// What a request looked like before its answer, for its journal record.
struct Seen {
    number: u64,
    received: Duration,
    method: String,
    path: String,
}

impl Seen {
    fn record(&self, journal: &Journal, filled: impl FnOnce(&mut RequestRecord)) {
        let mut record = RequestRecord {
            number: self.number,
            received: self.received,
            method: self.method.clone(),
            path: self.path.clone(),
            dialect: None,
            model: None,
            stream: false,
            body_bytes: 0,
            tool_count: 0,
            tool_results: false,
            outcome: Outcome::Unrecognised(String::new()),
            status: 200,
            tools_called: Vec::new(),
            output_tokens: 0,
            prompt: String::new(),
        };
        filled(&mut record);
        journal.push(Event::Request(record));
    }
}

fn seen(state: &State, request: &Request<Incoming>) -> Seen {
    Seen {
        number: state.requests.fetch_add(1, Ordering::SeqCst) + 1,
        received: state.journal.elapsed(),
        method: request.method().as_str().to_owned(),
        // The journal keeps the path without the secret prefix: it outlives the trial in
        // OUT, and the token is reused by the trial's later phases.
        path: {
            let full = request.uri().path_and_query().map_or_else(
                || request.uri().path().to_owned(),
                |p| p.as_str().to_owned(),
            );
            match state.path_token.as_deref() {
                Some(token) => match full.strip_prefix(&format!("/m/{token}")) {
                    Some(rest) => format!("/m/<token>{rest}"),
                    None => full,
                },
                None => full,
            }
        },
    }
}

fn overloaded(state: &State, request: Request<Incoming>) -> Response<Out> {
    let seen = seen(state, &request);
    let message = format!(
        "the endpoint serves at most {} connections at once",
        state.limits.max_connections
    );
    seen.record(&state.journal, |r| {
        r.status = 503;
        r.outcome = Outcome::Rejected(message.clone());
    });
    error_response(None, ErrorKind::Overloaded, &message)
}

fn json_response(status: u16, body: &serde_json::Value) -> Response<Out> {
    let mut response = Response::new(Out::full(body.to_string().into_bytes()));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

fn error_response(dialect: Option<Dialect>, kind: ErrorKind, message: &str) -> Response<Out> {
    json_response(kind.status(), &dialect::error_body(dialect, kind, message))
}

async fn handle(state: &State, request: Request<Incoming>) -> Response<Out> {
    let seen = seen(state, &request);
    let headers = request.headers();
    let websocket = headers
        .get(hyper::header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    let anthropic = headers.contains_key("anthropic-version");
    let declared = headers
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let Some(path) = strip_token(request.uri().path(), state.path_token.as_deref()) else {
        let message = "no such path (this endpoint serves under its secret path prefix)";
        seen.record(&state.journal, |r| {
            r.status = 404;
            r.outcome = Outcome::Rejected(message.to_owned());
        });
        return error_response(None, ErrorKind::NotFound, message);
    };
    let route = request::route(
        request.method().as_str(),
        path,
        request.uri().query().unwrap_or(""),
        websocket,
        anthropic,
    );
    let dialect_of = |route: &Route| match route {
        Route::Generate { dialect, .. } | Route::CountTokens(dialect) | Route::Models(dialect) => {
            Some(*dialect)
        }
        _ => None,
    };
    let dialect = dialect_of(&route);
    let request_fault = lock(&state.conversation).request_fault(seen.number);
    if let Some(fault) = &request_fault
        && fault.kind != FaultKind::Cut
    {
        return fault_response(state, &seen, dialect, fault, declared.unwrap_or(0));
    }
    let limit = state.limits.max_body_bytes;
    if declared.is_some_and(|length| length > limit as u64) {
        return too_large(state, &seen, dialect, declared.unwrap_or(0));
    }
    let body = http_body_util::Limited::new(request.into_body(), limit);
    let body = match tokio::time::timeout(state.limits.body_timeout, body.collect()).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(error)) if error.is::<http_body_util::LengthLimitError>() => {
            return too_large(state, &seen, dialect, limit as u64 + 1);
        }
        Ok(Err(error)) => {
            let message = format!("the request body could not be read: {error}");
            seen.record(&state.journal, |r| {
                r.dialect = dialect;
                r.status = 400;
                r.outcome = Outcome::Unrecognised(message.clone());
            });
            return error_response(dialect, ErrorKind::Invalid, &message);
        }
        Err(_) => {
            let message = format!(
                "the request body did not arrive within {} s",
                state.limits.body_timeout.as_secs()
            );
            seen.record(&state.journal, |r| {
                r.dialect = dialect;
                r.status = 408;
                r.outcome = Outcome::Rejected(message.clone());
            });
            let mut response = error_response(dialect, ErrorKind::Invalid, &message);
            *response.status_mut() = StatusCode::REQUEST_TIMEOUT;
            return response;
        }
    };
    let body_bytes = body.len() as u64;
    match route {
        Route::Root => {
            seen.record(&state.journal, |r| {
                r.body_bytes = body_bytes;
                r.outcome = Outcome::Side(Side::Root);
            });
            let text = if seen.method == "HEAD" {
                Vec::new()
            } else {
                b"clibench model endpoint\n".to_vec()
            };
            Response::new(Out::full(text))
        }
        Route::Websocket => {
            seen.record(&state.journal, |r| {
                r.status = 426;
                r.outcome = Outcome::Side(Side::Websocket);
            });
            // 426 says the websocket transport is not spoken here: codex takes it as
            // "use HTTPS" and falls back at once instead of retrying the upgrade.
            let mut response = error_response(
                Some(Dialect::OpenaiResponses),
                ErrorKind::Invalid,
                "websocket transport is not served here; use HTTP",
            );
            *response.status_mut() = StatusCode::UPGRADE_REQUIRED;
            response
        }
        Route::Models(dialect) => {
            seen.record(&state.journal, |r| {
                r.dialect = Some(dialect);
                r.outcome = Outcome::Side(Side::Models);
            });
            json_response(200, &dialect::models(dialect, &[DEFAULT_MODEL]))
        }
        Route::CountTokens(dialect) => {
            seen.record(&state.journal, |r| {
                r.dialect = Some(dialect);
                r.body_bytes = body_bytes;
                r.outcome = Outcome::Side(Side::CountTokens);
            });
            json_response(
                200,
                &dialect::count_tokens(dialect, input_tokens(body_bytes)),
            )
        }
        Route::Unknown(why) => {
            seen.record(&state.journal, |r| {
                r.body_bytes = body_bytes;
                r.status = 404;
                r.outcome = Outcome::Unrecognised(why.clone());
            });
            error_response(None, ErrorKind::NotFound, &why)
        }
        Route::Generate { dialect, gemini } => {
            let asked = match request::read(dialect, gemini.as_ref(), &body) {
                Ok(asked) => asked,
                Err(error) => {
                    let message = error.to_string();
                    seen.record(&state.journal, |r| {
                        r.dialect = Some(dialect);
                        r.body_bytes = body_bytes;
                        r.status = 400;
                        r.outcome = Outcome::Unrecognised(message.clone());
                    });
                    return error_response(Some(dialect), ErrorKind::Invalid, &message);
                }
            };
            let render = Render {
                include_usage: asked.include_usage,
                gemini_sse: gemini.as_ref().is_none_or(|g| g.sse),
                created: std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs()),
            };
            generate(
                state,
                &seen,
                dialect,
                render,
                &asked,
                body_bytes,
                request_fault,
            )
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The conversation is consistent between decisions; a panic in one leaves it usable.
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn input_tokens(body_bytes: u64) -> u64 {
    (body_bytes / 4).max(1)
}

fn too_large(state: &State, seen: &Seen, dialect: Option<Dialect>, bytes: u64) -> Response<Out> {
    let message = format!(
        "the request body is larger than the endpoint's bound of {} bytes",
        state.limits.max_body_bytes
    );
    seen.record(&state.journal, |r| {
        r.dialect = dialect;
        r.body_bytes = bytes;
        r.status = 413;
        r.outcome = Outcome::Rejected(message.clone());
    });
    let mut response = error_response(dialect, ErrorKind::TooLarge, &message);
    // The rest of the body is not read: the connection cannot carry another request.
    response.headers_mut().insert(
        hyper::header::CONNECTION,
        hyper::header::HeaderValue::from_static("close"),
    );
    response
}

fn fault_response(
    state: &State,
    seen: &Seen,
    dialect: Option<Dialect>,
    fault: &Fault,
    body_bytes: u64,
) -> Response<Out> {
    let (kind, message) = match fault.kind {
        FaultKind::RateLimit => (ErrorKind::RateLimit, "rate limited on demand by the script"),
        _ => (ErrorKind::Server, "server error on demand by the script"),
    };
    seen.record(&state.journal, |r| {
        r.dialect = dialect;
        r.body_bytes = body_bytes;
        r.status = kind.status();
        r.outcome = Outcome::Fault(fault.kind);
    });
    let mut response = error_response(dialect, kind, message);
    if fault.kind == FaultKind::RateLimit {
        let seconds = fault.retry_after.as_secs_f64().ceil() as u64;
        if let Ok(value) = hyper::header::HeaderValue::from_str(&seconds.to_string()) {
            response
                .headers_mut()
                .insert(hyper::header::RETRY_AFTER, value);
        }
    }
    response
}

fn generate(
    state: &State,
    seen: &Seen,
    dialect: Dialect,
    render: Render,
    asked: &Asked,
    body_bytes: u64,
    request_fault: Option<Fault>,
) -> Response<Out> {
    let decision = {
        let mut conversation = lock(&state.conversation);
        if request_fault.is_some() {
            conversation.decide_uncommitted(asked)
        } else {
            conversation.decide(asked)
        }
    };
    let physics_of_side = || lock(&state.conversation).physics().clone();
    let (reply, physics, outcome, cut) = match decision {
        Decision::Turn {
            index,
            part,
            reply,
            physics,
        } => (reply, physics, Outcome::Turn { index, part }, None),
        Decision::Side(side) => {
            let text = match side {
                Side::Schema => match &asked.schema {
                    Some(schema) => schema::value_for(schema).to_string(),
                    None => "{}".to_owned(),
                },
                _ => "Scripted session".to_owned(),
            };
            (
                Reply::Text(text),
                physics_of_side(),
                Outcome::Side(side),
                None,
            )
        }
        Decision::NoTurn(why) => (
            Reply::Text(format!("(clibench's scripted model: {why}.)")),
            physics_of_side(),
            Outcome::NoTurn(why),
            None,
        ),
        Decision::Fault {
            fault,
            turn: Some((_, reply, physics)),
        } if fault.kind == FaultKind::Cut => {
            (reply, physics, Outcome::Fault(FaultKind::Cut), Some(fault))
        }
        Decision::Fault { fault, .. } => {
            return fault_response(state, seen, Some(dialect), &fault, body_bytes);
        }
    };
    let cut = cut.or(request_fault.filter(|f| f.kind == FaultKind::Cut));
    let outcome = if cut.is_some() {
        Outcome::Fault(FaultKind::Cut)
    } else {
        outcome
    };
    let content = match &reply {
        Reply::Text(text) => Content::Text(answer::tokens_of(text)),
        Reply::Tokens(count) => Content::Text(answer::filler(*count)),
        Reply::Tools { calls, .. } => Content::Tools(
            calls
                .iter()
                .enumerate()
                .map(|(index, call)| {
                    let id = match dialect {
                        Dialect::Anthropic => format!("toolu_clibench_{}_{index}", seen.number),
                        _ => format!("call_clibench_{}_{index}", seen.number),
                    };
                    answer::map_call(call, asked, id).call
                })
                .collect(),
        ),
    };
    let answer = Answer {
        content,
        model: asked
            .model
            .clone()
            .unwrap_or_else(|| DEFAULT_MODEL.to_owned()),
        input_tokens: input_tokens(body_bytes),
        id: seen.number,
    };
    let tools_called = match &answer.content {
        Content::Tools(calls) => calls.iter().map(|c| c.name.clone()).collect(),
        Content::Text(_) => Vec::new(),
    };
    let output_tokens = answer.output_tokens();
    seen.record(&state.journal, |r| {
        r.dialect = Some(dialect);
        r.model = asked.model.clone();
        r.stream = asked.stream;
        r.body_bytes = body_bytes;
        r.tool_count = asked.tools.len();
        r.tool_results = asked.tool_results;
        r.outcome = outcome;
        r.tools_called = tools_called;
        r.output_tokens = output_tokens;
        r.prompt = prompt_of(&asked.last_user_text);
    });
    // Each request's jitter comes from the seed and its number alone, so a replay with
    // the same seed gets the same times whatever else runs at once.
    let mut rng = Rng::new(state.seed ^ seen.number.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let start = Instant::now();
    let (frames, content_type, length) = if asked.stream {
        let pieces = dialect::stream(dialect, &answer, render);
        let cut_after = cut
            .as_ref()
            .map(|f| f.after_tokens.unwrap_or((output_tokens / 2).max(1) as u32));
        let frames = schedule::frames(pieces, &physics, &mut rng, cut_after);
        (frames, dialect::stream_content_type(dialect, render), None)
    } else {
        let mut bytes = dialect::whole(dialect, &answer, render)
            .to_string()
            .into_bytes();
        let length = bytes.len() as u64;
        if cut.is_some() {
            // A cut of a whole reply: half the body, then the connection closes.
            bytes.truncate(bytes.len() / 2);
        }
        let due = schedule::whole_due(output_tokens, &physics, &mut rng);
        (
            vec![Frame {
                bytes,
                due,
                tokens: output_tokens as u32,
            }],
            "application/json",
            Some(length),
        )
    };
    let body = Out::scheduled(
        frames,
        start,
        &state.journal,
        seen.number,
        cut.is_some(),
        state.limits.write_timeout,
        length,
    );
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(content_type),
    );
    headers.insert(
        hyper::header::CACHE_CONTROL,
        hyper::header::HeaderValue::from_static("no-cache"),
    );
    if let Ok(id) = hyper::header::HeaderValue::from_str(&format!("clibench-{}", seen.number)) {
        headers.insert("request-id", id.clone());
        headers.insert("x-request-id", id);
    }
    response
}

/// A message from a response's timing thread to its body.
enum Message {
    /// A frame that is due.
    Data {
        bytes: Bytes,
        scheduled: Duration,
        tokens: u32,
        last: bool,
    },
    /// End the response abruptly (a cut fault).
    Cut,
}

/// A response body: all at once, or frames released on schedule.
pub struct Out {
    inner: OutInner,
}

enum OutInner {
    Full(Option<Bytes>),
    Scheduled {
        frames: mpsc::Receiver<Message>,
        journal: Journal,
        request: u64,
        index: u32,
        finished: bool,
        length: Option<u64>,
    },
}

impl Out {
    fn full(bytes: Vec<u8>) -> Out {
        Out {
            inner: OutInner::Full(Some(Bytes::from(bytes))),
        }
    }

    fn scheduled(
        frames: Vec<Frame>,
        start: Instant,
        journal: &Journal,
        request: u64,
        cut: bool,
        write_timeout: Duration,
        length: Option<u64>,
    ) -> Out {
        let (sender, receiver) = mpsc::channel(64);
        let since = start.saturating_duration_since(journal.start());
        // Without a thread for the timing the sender is dropped at once and the body
        // ends with an error rather than hanging.
        let _ = std::thread::Builder::new()
            .name("model-stream".into())
            .spawn(move || release(frames, start, since, sender, cut, write_timeout));
        Out {
            inner: OutInner::Scheduled {
                frames: receiver,
                journal: journal.clone(),
                request,
                index: 0,
                finished: false,
                length: if cut { None } else { length },
            },
        }
    }
}

/// The timing thread of one response: sleeps until each frame is due and hands it on.
fn release(
    frames: Vec<Frame>,
    start: Instant,
    since_start: Duration,
    sender: mpsc::Sender<Message>,
    cut: bool,
    write_timeout: Duration,
) {
    precise_timer_slack();
    let count = frames.len();
    for (index, frame) in frames.into_iter().enumerate() {
        let due = start + frame.due;
        loop {
            let now = Instant::now();
            if now >= due {
                break;
            }
            std::thread::sleep(due - now);
        }
        let mut message = Message::Data {
            bytes: Bytes::from(frame.bytes),
            scheduled: since_start + frame.due,
            tokens: frame.tokens,
            last: index + 1 == count && !cut,
        };
        // The channel fills only when the client stops reading; bounded like a write.
        let give_up = Instant::now() + write_timeout;
        loop {
            match sender.try_send(message) {
                Ok(()) => break,
                Err(mpsc::error::TrySendError::Closed(_)) => return,
                Err(mpsc::error::TrySendError::Full(back)) => {
                    if Instant::now() >= give_up {
                        // Dropping the sender ends the body with an error.
                        return;
                    }
                    message = back;
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        }
    }
    if cut {
        // hyper drops what it has not written yet when a body fails: let the frames
        // reach the socket first (the body takes them all and goes idle, which makes
        // hyper flush), then cut.
        let give_up = Instant::now() + write_timeout;
        while sender.capacity() < sender.max_capacity() && Instant::now() < give_up {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(CUT_GRACE);
        let _ = sender.try_send(Message::Cut);
    }
}

/// How long after its last frame a cut stream is cut.
const CUT_GRACE: Duration = Duration::from_millis(20);

/// Asks the kernel to wake this thread's sleeps within 1 µs of their time rather than
/// the default 50 µs of slack.
fn precise_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and changes only the
    // calling thread's timer slack; a failure leaves the default slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong);
    }
}

/// A response body that ended before its last frame.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// A cut fault.
    #[error("stream cut on demand by the script")]
    Cut,
    /// The client read nothing for the write timeout.
    #[error("the client stopped reading")]
    Stalled,
}

impl Body for Out {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<HttpFrame<Bytes>, BodyError>>> {
        match &mut self.inner {
            OutInner::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(HttpFrame::data(b)))),
            OutInner::Scheduled {
                frames,
                journal,
                request,
                index,
                finished,
                ..
            } => match frames.poll_recv(cx) {
                Poll::Ready(Some(Message::Data {
                    bytes,
                    scheduled,
                    tokens,
                    last,
                })) => {
                    journal.push(Event::Chunk(ChunkRecord {
                        request: *request,
                        index: *index,
                        scheduled,
                        written: journal.elapsed(),
                        bytes: bytes.len(),
                        tokens,
                        last,
                    }));
                    *index += 1;
                    *finished = last;
                    Poll::Ready(Some(Ok(HttpFrame::data(bytes))))
                }
                Poll::Ready(Some(Message::Cut)) => Poll::Ready(Some(Err(BodyError::Cut))),
                Poll::Ready(None) if *finished => Poll::Ready(None),
                Poll::Ready(None) => Poll::Ready(Some(Err(BodyError::Stalled))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.inner, OutInner::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match &self.inner {
            OutInner::Full(Some(bytes)) => SizeHint::with_exact(bytes.len() as u64),
            OutInner::Full(None) => SizeHint::with_exact(0),
            OutInner::Scheduled {
                length: Some(length),
                ..
            } => SizeHint::with_exact(*length),
            OutInner::Scheduled { .. } => SizeHint::default(),
        }
    }
}

/// A TCP stream whose writes fail after making no progress for a while: a client that
/// stops reading cannot hold a connection (and its timing thread) for good.
struct Deadlined {
    stream: tokio::net::TcpStream,
    timeout: Duration,
    stall: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Deadlined {
    fn new(stream: tokio::net::TcpStream, timeout: Duration) -> Deadlined {
        Deadlined {
            stream,
            timeout,
            stall: None,
        }
    }

    fn bounded<T>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<std::io::Result<T>>,
    ) -> Poll<std::io::Result<T>> {
        match polled {
            Poll::Ready(result) => {
                self.stall = None;
                Poll::Ready(result)
            }
            Poll::Pending => {
                let timeout = self.timeout;
                let stall = self
                    .stall
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
                if stall.as_mut().poll(cx).is_ready() {
                    self.stall = None;
                    Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "the client read nothing for the write timeout",
                    )))
                } else {
                    Poll::Pending
                }
            }
        }
    }
}

impl AsyncRead for Deadlined {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Deadlined {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.stream).poll_write(cx, buf);
        self.bounded(cx, polled)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.bounded(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let polled = Pin::new(&mut self.stream).poll_flush(cx);
        self.bounded(cx, polled)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
