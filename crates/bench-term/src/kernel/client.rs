//! The kernel process: spawning it in its own session, the reader threads, requests and
//! replies, and closing it so that nothing is left behind.

use super::error::{FrameError, KernelError, KernelExit, quote};
use super::lines::{LineReader, Outcome};
use super::protocol::{self, CellError, Done, Event, PROTOCOL_VERSION, Request};
use super::transcript::{Direction, Transcript};
use crate::close::{CloseReport, Ending};
use bench_core::error_chain;
use bench_proc::{Identity, Leader};
use serde_json::{Map, Value};
use std::collections::{HashSet, VecDeque};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The most stderr bytes kept for error messages.
const STDERR_TAIL_BYTES: usize = 8192;
/// How many recent frames are quoted in timeout and exit errors.
const RECENT_FRAMES: usize = 4;
/// How long to wait for an exit status after the kernel closed its stdout.
const EXIT_STATUS_WAIT: Duration = Duration::from_secs(2);

/// How to start a kernel and how long to wait for it.
#[derive(Debug, Clone)]
pub struct KernelOptions {
    /// The program, e.g. `python3` or a venv's `bin/python`.
    pub program: OsString,
    /// Its arguments, e.g. `["-m", "rlm.repl"]`.
    pub args: Vec<OsString>,
    /// The exact environment; nothing is inherited.
    pub env: Vec<(OsString, OsString)>,
    /// The working directory.
    pub cwd: PathBuf,
    /// Run as this user, groups and all, instead of the caller (needs root).
    pub user: Option<Identity>,
    /// Where to write the `.jsonl` transcript of every frame, if anywhere.
    pub transcript: Option<PathBuf>,
    /// How long `ready()` waits for the handshake (30 s in the reference harness).
    pub ready_timeout: Duration,
    /// How long one request may take before its wait fails.
    pub request_timeout: Duration,
    /// How long `close()` waits for the kernel to exit after `shutdown` before it
    /// kills the process group.
    pub close_grace: Duration,
}

impl KernelOptions {
    /// Options for `program args...` in `cwd` with the given exact environment and the
    /// reference harness's timeouts (30 s ready, 120 s per request, 5 s close grace).
    pub fn new(
        program: impl Into<OsString>,
        args: impl IntoIterator<Item = impl Into<OsString>>,
        cwd: impl Into<PathBuf>,
        env: impl IntoIterator<Item = (impl Into<OsString>, impl Into<OsString>)>,
    ) -> KernelOptions {
        KernelOptions {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: env
                .into_iter()
                .map(|(key, value)| (key.into(), value.into()))
                .collect(),
            cwd: cwd.into(),
            user: None,
            transcript: None,
            ready_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(120),
            close_grace: Duration::from_secs(5),
        }
    }
}

/// What the handshake said.
#[derive(Debug, Clone, PartialEq)]
pub struct Ready {
    /// Time from spawn to the `ready` event.
    pub elapsed: Duration,
    /// The kernel's Python version, e.g. `3.11.7` (empty when it did not say).
    pub python: String,
}

/// Everything a request produced, up to and including its `done`.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The request id.
    pub id: String,
    /// The request's events before `done`, and raw output (`id: null`) that arrived meanwhile.
    pub events: Vec<Event>,
    /// The `done` event.
    pub done: Done,
    /// Time from writing the request to receiving `done`.
    pub elapsed: Duration,
}

impl Reply {
    /// True when `done` said `ok`.
    pub fn is_ok(&self) -> bool {
        self.done.is_ok()
    }

    /// The joined text of the `stdout` events (the request's own and raw `id: null` output).
    pub fn stdout(&self) -> String {
        self.events
            .iter()
            .filter_map(|event| match event {
                Event::Stdout(stream) => Some(stream.text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The joined text of the `stderr` events.
    pub fn stderr(&self) -> String {
        self.events
            .iter()
            .filter_map(|event| match event {
                Event::Stderr(stream) => Some(stream.text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The first `error` event, if any.
    pub fn error(&self) -> Option<&CellError> {
        self.events.iter().find_map(|event| match event {
            Event::Error(error) => Some(error),
            _ => None,
        })
    }

    /// The repr of the trailing expression, if the cell had one.
    pub fn result(&self) -> Option<&str> {
        self.events.iter().find_map(|event| match event {
            Event::Result { text, .. } => Some(text.as_str()),
            _ => None,
        })
    }
}

/// A running protocol-3 kernel.
///
/// The kernel runs in its own session (so its pid is also its process group id), with
/// pipes for stdin, stdout and stderr. Events are read from stdout on the caller's thread
/// with poll(2), so every wait has a timeout and a frame costs one wake-up; a thread
/// collects stderr for error messages. Dropping a `Kernel` without [`Kernel::close`] kills its process
/// group and reaps it.
pub struct Kernel {
    /// The kernel, leading its session: its group is killed only while it is unreaped.
    leader: Leader,
    pid: u32,
    stdin: Option<ChildStdin>,
    stdout: Option<LineReader<ChildStdout>>,
    spawned: Instant,
    options: KernelOptions,
    transcript: Option<Transcript>,
    stderr_tail: Arc<Mutex<Vec<u8>>>,
    recent: VecDeque<String>,
    next_id: u64,
    pending: HashSet<String>,
    /// Raw lines sent with [`Kernel::send_raw`] whose `ProtocolError` has not come yet.
    raw_unanswered: usize,
    stash: Vec<Event>,
    ready: Option<Ready>,
    broken: Option<String>,
    eof: bool,
    closed: bool,
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel")
            .field("pid", &self.pid)
            .field("program", &self.options.program)
            .field("pending", &self.pending)
            .finish_non_exhaustive()
    }
}

impl Kernel {
    /// Starts the kernel in a new session with the exact environment, working directory and
    /// (optionally) user of `options`, and no descriptor of this process but its pipes. Does not wait for `ready`: call [`Kernel::ready`].
    pub fn spawn(options: KernelOptions) -> Result<Kernel, KernelError> {
        let spawned = Instant::now();
        let transcript = match &options.transcript {
            Some(path) => Some(Transcript::create(path, spawned).map_err(|source| {
                KernelError::Transcript {
                    path: path.clone(),
                    source,
                }
            })?),
            None => None,
        };
        let mut command = Command::new(&options.program);
        command
            .args(&options.args)
            .env_clear()
            .envs(options.env.iter().map(|(key, value)| (key, value)))
            .current_dir(&options.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Prepared here: the closure below runs between fork and exec, where it must not allocate.
        let identity = options.user.as_ref().map(Identity::switch);
        // SAFETY: the closure runs in the forked child before exec and only makes raw
        // system calls (close_range or fcntl, sigaction, setsid, setgroups, setgid, setuid), which
        // are async-signal-safe; it allocates nothing and touches no memory of the
        // parent. The child is single-threaded there, so the per-thread id calls change
        // the whole process.
        unsafe {
            command.pre_exec(move || {
                bench_proc::close_descriptors_above_stderr()?;
                crate::signals_linux::default_ignored_signals()?;
                rustix::process::setsid()?;
                if let Some(identity) = &identity {
                    identity.apply()?;
                }
                Ok(())
            });
        }
        let mut child = command.spawn().map_err(|source| KernelError::Spawn {
            program: options.program.to_string_lossy().into_owned(),
            source,
        })?;
        let pid = child.id();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let stdout = stdout.map(LineReader::new);
        let stderr_tail = Arc::new(Mutex::new(Vec::new()));
        if let Some(stderr) = stderr {
            let tail = Arc::clone(&stderr_tail);
            let transcript = transcript.clone();
            std::thread::Builder::new()
                .name(format!("kernel-{pid}-stderr"))
                .spawn(move || read_stderr(stderr, &tail, transcript.as_ref()))
                .map_err(|source| KernelError::Spawn {
                    program: options.program.to_string_lossy().into_owned(),
                    source,
                })?;
        }
        Ok(Kernel {
            leader: Leader::new(child),
            pid,
            stdin,
            stdout,
            spawned,
            options,
            transcript,
            stderr_tail,
            recent: VecDeque::new(),
            next_id: 0,
            pending: HashSet::new(),
            raw_unanswered: 0,
            stash: Vec::new(),
            ready: None,
            broken: None,
            eof: false,
            closed: false,
        })
    }

    /// The kernel's pid, which is also its session and process group id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The options the kernel was started with.
    pub fn options(&self) -> &KernelOptions {
        &self.options
    }

    /// Waits for the `ready` handshake (up to `ready_timeout`), which must be the first
    /// event and announce protocol 3. Returns the time from spawn and the Python version;
    /// later calls return the same answer without waiting.
    pub fn ready(&mut self) -> Result<Ready, KernelError> {
        if let Some(ready) = &self.ready {
            return Ok(ready.clone());
        }
        self.check_usable()?;
        let waiting_for = "the `ready` event";
        let deadline = self.spawned + self.options.ready_timeout;
        let (line, event) = self.next_raw(deadline, self.options.ready_timeout, waiting_for)?;
        let elapsed = self.spawned.elapsed();
        let Event::Ready { protocol, python } = event else {
            return Err(self.fail(KernelError::NotReady { line }));
        };
        if protocol.as_u64() != Some(PROTOCOL_VERSION) {
            return Err(self.fail(KernelError::UnsupportedProtocol {
                protocol: protocol.to_string(),
                line,
            }));
        }
        let ready = Ready {
            elapsed,
            python: python.unwrap_or_default(),
        };
        self.ready = Some(ready.clone());
        Ok(ready)
    }

    /// Runs one cell and returns its events up to `done` (within `request_timeout`).
    /// A cell that raised is a reply whose status is `error`, not an `Err`. A cell that
    /// asks the host something (`host_request`) waits for an answer this method does not
    /// give: run such cells with [`Kernel::submit`], [`Kernel::next_event`] and
    /// [`Kernel::host_reply`].
    pub fn execute(&mut self, code: &str) -> Result<Reply, KernelError> {
        self.request(&Request::execute(code))
    }

    /// Sends `request` and waits for its `done` (within `request_timeout`).
    pub fn request(&mut self, request: &Request) -> Result<Reply, KernelError> {
        let started = Instant::now();
        let id = self.submit(request)?;
        self.wait_done_since(&id, request.kind(), started, self.options.request_timeout)
    }

    /// Sends a request with a fresh id and returns the id without waiting; collect its
    /// reply with [`Kernel::wait_done`].
    /// A request sent before [`Kernel::ready`] first waits for the handshake.
    pub fn submit(&mut self, request: &Request) -> Result<String, KernelError> {
        let kind = request.kind();
        self.check_usable()?;
        if self.ready.is_none() {
            self.ready()?;
        }
        self.next_id += 1;
        let id = self.next_id.to_string();
        let line = protocol::encode_request(kind, Some(&id), &request.fields());
        self.send_line(kind, &line)?;
        self.pending.insert(id.clone());
        Ok(id)
    }

    /// Sends `interrupt` for whatever request is running.
    pub fn interrupt(&mut self) -> Result<(), KernelError> {
        self.send_line(
            "interrupt",
            &protocol::encode_request("interrupt", None, &Map::new()),
        )
    }

    /// Sends `interrupt` naming the request `id`.
    pub fn interrupt_request(&mut self, id: &str) -> Result<(), KernelError> {
        self.send_line(
            "interrupt",
            &protocol::encode_request("interrupt", Some(id), &Map::new()),
        )
    }

    /// Answers a `host_request` event.
    pub fn host_reply(&mut self, id: &str, data: Value) -> Result<(), KernelError> {
        let mut fields = Map::with_capacity(1);
        fields.insert("data".to_owned(), data);
        self.send_line(
            "host_reply",
            &protocol::encode_request("host_reply", Some(id), &fields),
        )
    }

    /// Writes `line` (a newline is added when missing) to the kernel's stdin as it is, for
    /// testing how a kernel handles malformed requests. Replies are not tracked.
    pub fn send_raw(&mut self, line: &str) -> Result<(), KernelError> {
        self.check_usable()?;
        self.raw_unanswered += 1;
        if line.ends_with('\n') {
            self.send_line("raw", line)
        } else {
            self.send_line("raw", &format!("{line}\n"))
        }
    }

    /// Waits up to `timeout` for the `done` of request `id`, collecting its events.
    pub fn wait_done(&mut self, id: &str, timeout: Duration) -> Result<Reply, KernelError> {
        self.wait_done_since(id, "request", Instant::now(), timeout)
    }

    /// Waits up to `timeout` for the next event of any request (`waiting_for` is quoted
    /// in errors). Events of requests being waited for are also returned here, so a caller
    /// that uses this must collect replies itself.
    pub fn next_event(
        &mut self,
        timeout: Duration,
        waiting_for: &str,
    ) -> Result<Event, KernelError> {
        if !self.stash.is_empty() {
            return Ok(self.stash.remove(0));
        }
        let deadline = Instant::now() + timeout;
        let event = self.next_checked(deadline, timeout, waiting_for)?;
        match &event {
            Event::Done(done) => {
                self.pending.remove(&done.id);
            }
            Event::Error(error) if error.id.is_none() && error.ename == "ProtocolError" => {
                self.raw_unanswered = self.raw_unanswered.saturating_sub(1);
            }
            _ => {}
        }
        Ok(event)
    }

    fn wait_done_since(
        &mut self,
        id: &str,
        kind: &str,
        started: Instant,
        timeout: Duration,
    ) -> Result<Reply, KernelError> {
        let deadline = Instant::now() + timeout;
        let waiting_for = format!("`done` of {kind} request {id}");
        let mut events = Vec::new();
        // Events that arrived while waiting for another request.
        let mut index = 0;
        while index < self.stash.len() {
            if self.stash[index].id() == Some(id) {
                let event = self.stash.remove(index);
                if let Event::Done(done) = event {
                    self.pending.remove(id);
                    return Ok(Reply {
                        id: id.to_owned(),
                        events,
                        done,
                        elapsed: started.elapsed(),
                    });
                }
                events.push(event);
            } else {
                index += 1;
            }
        }
        loop {
            let event = self.next_checked(deadline, timeout, &waiting_for)?;
            match event {
                Event::Done(done) if done.id == id => {
                    self.pending.remove(id);
                    return Ok(Reply {
                        id: id.to_owned(),
                        events,
                        done,
                        elapsed: started.elapsed(),
                    });
                }
                Event::Error(error) if error.id.is_none() && error.ename == "ProtocolError" => {
                    if self.raw_unanswered > 0 {
                        // The answer to a malformed line sent on purpose.
                        self.raw_unanswered -= 1;
                        events.push(Event::Error(error));
                    } else {
                        // The kernel could not read this request: no `done` will come.
                        self.pending.remove(id);
                        return Err(KernelError::Rejected {
                            waiting_for,
                            evalue: error.evalue,
                        });
                    }
                }
                event if event.id().is_none() || event.id() == Some(id) => events.push(event),
                // Late events of a request that is over (a kernel that writes after
                // `done`): nobody will collect them, so they are not kept.
                event
                    if event
                        .id()
                        .is_some_and(|other| !self.pending.contains(other)) => {}
                event => self.stash.push(event),
            }
        }
    }

    /// The next event, with `done` checked against the pending request ids.
    fn next_checked(
        &mut self,
        deadline: Instant,
        timeout: Duration,
        waiting_for: &str,
    ) -> Result<Event, KernelError> {
        self.check_usable()?;
        let (line, event) = self.next_raw(deadline, timeout, waiting_for)?;
        if let Event::Done(done) = &event
            && !self.pending.contains(&done.id)
        {
            return Err(self.fail(KernelError::UnknownDone {
                id: done.id.clone(),
                waiting_for: waiting_for.to_owned(),
                line,
            }));
        }
        Ok(event)
    }

    /// The next line from the reader thread, parsed; errors for bad frames, exit and timeout.
    fn next_raw(
        &mut self,
        deadline: Instant,
        timeout: Duration,
        waiting_for: &str,
    ) -> Result<(String, Event), KernelError> {
        if self.eof {
            return Err(self.exited(waiting_for));
        }
        let Some(stdout) = self.stdout.as_mut() else {
            self.eof = true;
            return Err(self.exited(waiting_for));
        };
        let outcome = stdout
            .next_line(deadline)
            .map_err(|source| KernelError::Process {
                action: "read the stdout of",
                pid: self.pid,
                source,
            })?;
        match outcome {
            Outcome::Line(line) => {
                let parsed = protocol::parse_event(&line);
                if let Some(transcript) = &self.transcript {
                    let is_json = !matches!(parsed, Err(FrameError::NotJson { .. }));
                    transcript.record_checked(Direction::Recv, &line, is_json);
                }
                if self.recent.len() == RECENT_FRAMES {
                    self.recent.pop_front();
                }
                self.recent.push_back(quote(&line));
                match parsed {
                    Ok(event) => Ok((line, event)),
                    Err(source) => Err(self.fail(KernelError::Frame {
                        waiting_for: waiting_for.to_owned(),
                        source,
                    })),
                }
            }
            Outcome::Eof => {
                self.eof = true;
                Err(self.exited(waiting_for))
            }
            Outcome::Timeout => Err({
                self.flush_transcript();
                KernelError::Timeout {
                    waiting_for: waiting_for.to_owned(),
                    timeout,
                    seen: self.seen(),
                    stderr: self.stderr_tail(),
                }
            }),
        }
    }

    /// The error for a kernel that closed its stdout; marks the kernel unusable.
    fn exited(&mut self, waiting_for: &str) -> KernelError {
        let deadline = Instant::now() + EXIT_STATUS_WAIT;
        // Not reaped here: the zombie keeps the process group id from being reused
        // before close() kills the group.
        let status = loop {
            if self.leader.has_exited() {
                break match self.leader.exit_status() {
                    Some(status) => KernelExit::Status(status),
                    None => KernelExit::ReapedElsewhere,
                };
            }
            if Instant::now() >= deadline {
                break KernelExit::StillRunning;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        // Give the stderr thread a moment to collect the kernel's last words.
        std::thread::sleep(Duration::from_millis(20));
        let error = KernelError::Exited {
            waiting_for: waiting_for.to_owned(),
            status,
            seen: self.seen(),
            stderr: self.stderr_tail(),
        };
        self.broken.get_or_insert_with(|| error_chain(&error));
        self.flush_transcript();
        error
    }

    fn fail(&mut self, error: KernelError) -> KernelError {
        self.broken.get_or_insert_with(|| error_chain(&error));
        self.flush_transcript();
        error
    }

    fn flush_transcript(&self) {
        if let Some(transcript) = &self.transcript {
            transcript.flush();
        }
    }

    fn check_usable(&self) -> Result<(), KernelError> {
        match &self.broken {
            Some(reason) => Err(KernelError::Unusable {
                reason: reason.clone(),
            }),
            None if self.closed => Err(KernelError::Unusable {
                reason: "it was closed".to_owned(),
            }),
            None => Ok(()),
        }
    }

    fn send_line(&mut self, kind: &str, line: &str) -> Result<(), KernelError> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(KernelError::Unusable {
                reason: "its stdin is closed".to_owned(),
            });
        };
        stdin
            .write_all(line.as_bytes())
            .map_err(|source| KernelError::Send {
                kind: kind.to_owned(),
                source,
            })?;
        if let Some(transcript) = &self.transcript {
            let line = line.trim_end_matches('\n');
            // Requests this client encoded are JSON by construction; only raw lines (from
            // a test or a caller) are checked, so the timed round trip parses nothing.
            if kind == "raw" {
                transcript.record(Direction::Send, line);
            } else {
                transcript.record_checked(Direction::Send, line, true);
            }
        }
        Ok(())
    }

    fn seen(&self) -> String {
        if self.recent.is_empty() {
            "nothing".to_owned()
        } else {
            self.recent.iter().cloned().collect::<Vec<_>>().join(" | ")
        }
    }

    /// The end of what the kernel wrote on stderr so far (lossy UTF-8).
    pub fn stderr_tail(&self) -> String {
        let tail = self
            .stderr_tail
            .lock()
            .map(|tail| String::from_utf8_lossy(&tail).into_owned())
            .unwrap_or_default();
        tail.trim().to_owned()
    }

    /// Ends the kernel: sends `shutdown` (when it is still usable), closes its stdin,
    /// waits up to `close_grace` for it to exit, then kills its whole process group and
    /// reaps it. Children that stayed in the kernel's session group die with it. The
    /// report's [`Ending`] is `Quit` when it exited within the grace, `Exited` when it had
    /// already exited, `Killed` otherwise.
    pub fn close(mut self) -> Result<CloseReport, KernelError> {
        let report = self.shut_down();
        if let Some(transcript) = &self.transcript
            && let Err((path, source)) = transcript.finish()
        {
            return Err(KernelError::Transcript { path, source });
        }
        report
    }

    fn shut_down(&mut self) -> Result<CloseReport, KernelError> {
        let started = Instant::now();
        if self.closed {
            return Ok(CloseReport::without_keys(
                None,
                Ending::Exited,
                started.elapsed(),
            ));
        }
        self.closed = true;
        let grace_deadline = started + self.options.close_grace;
        let mut ending = Ending::Exited;
        if !self.leader.has_exited() {
            ending = Ending::Killed;
            if self.broken.is_none() && !self.eof && self.stdin.is_some() {
                self.next_id += 1;
                let line = protocol::encode_request(
                    "shutdown",
                    Some(&self.next_id.to_string()),
                    &Map::new(),
                );
                // A kernel that is already gone cannot be asked; the group kill below still runs.
                let _ = self.send_line("shutdown", &line);
            }
            // Closing stdin is a shutdown too, for kernels that ignore the request.
            drop(self.stdin.take());
            loop {
                if self.leader.has_exited() {
                    ending = Ending::Quit;
                    // What it printed just before exiting (its answer to the shutdown)
                    // is still in the pipe: the transcript records every frame.
                    self.drain_stdout_for(Duration::from_millis(100));
                    break;
                }
                if Instant::now() >= grace_deadline {
                    break;
                }
                self.drain_stdout();
            }
        }
        drop(self.stdin.take());
        self.kill_group();
        let status = self.leader.reap().map_err(|source| KernelError::Process {
            action: "reap",
            pid: self.pid,
            source,
        })?;
        Ok(CloseReport::without_keys(
            Some(status),
            ending,
            started.elapsed(),
        ))
    }

    /// Reads (and records) what the kernel prints while it shuts down, for up to 2 ms, so
    /// that a full pipe cannot keep it from exiting.
    fn drain_stdout(&mut self) {
        self.drain_stdout_for(Duration::from_millis(2));
    }

    /// Reads (and records) the kernel's output for up to `limit`, or until its end.
    fn drain_stdout_for(&mut self, limit: Duration) {
        let deadline = Instant::now() + limit;
        let Some(stdout) = self.stdout.as_mut() else {
            std::thread::sleep(Duration::from_millis(2));
            return;
        };
        loop {
            match stdout.next_line(deadline) {
                Ok(Outcome::Line(line)) => {
                    if let Some(transcript) = &self.transcript {
                        transcript.record(Direction::Recv, &line);
                    }
                }
                Ok(Outcome::Eof) => {
                    // Nothing more to read; wait for the exit without spinning.
                    self.stdout = None;
                    std::thread::sleep(Duration::from_millis(1));
                    return;
                }
                Ok(Outcome::Timeout) | Err(_) => return,
            }
        }
    }

    /// SIGKILL to the kernel's process group, while the kernel is unreaped (its
    /// group id is ours only until then).
    fn kill_group(&mut self) {
        // Ok(false): the group is already empty. Nothing else can go wrong for our own
        // child.
        let _ = self.leader.kill_group(rustix::process::Signal::KILL);
    }
}

impl Drop for Kernel {
    fn drop(&mut self) {
        if !self.closed {
            self.closed = true;
            drop(self.stdin.take());
            // Killing before reaping: the zombie keeps the group id from being reused.
            self.kill_group();
            let _ = self.leader.reap();
        }
        if let Some(transcript) = &self.transcript {
            let _ = transcript.finish();
        }
    }
}

fn read_stderr(mut stderr: impl Read, tail: &Mutex<Vec<u8>>, transcript: Option<&Transcript>) {
    let mut chunk = [0u8; 8192];
    loop {
        let count = match stderr.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(count) => count,
        };
        if let Ok(mut tail) = tail.lock() {
            tail.extend_from_slice(&chunk[..count]);
            if tail.len() > STDERR_TAIL_BYTES {
                let excess = tail.len() - STDERR_TAIL_BYTES;
                tail.drain(..excess);
            }
        }
        if let Some(transcript) = transcript {
            transcript.record(Direction::Stderr, &String::from_utf8_lossy(&chunk[..count]));
        }
    }
}
