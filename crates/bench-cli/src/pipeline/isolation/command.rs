//! Running one command of the pipeline: exact environment, working folder, the
//! trial user's ids, its own session (no controlling terminal) and no descriptor above 2
//! of ours, a timeout after which everything it started is stopped, and its output in a
//! log or captured.

use crate::pipeline::out::state::TrialUser;
use bench_proc::Selector;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// How long stopped processes get between SIGTERM and SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(3);
/// How often a running command is polled.
const POLL: Duration = Duration::from_millis(10);
/// How much of the start of a captured stream is kept.
const CAPTURE_HEAD_BYTES: usize = 8 << 20;
/// How much of the end of a captured stream is kept once the start is full.
const CAPTURE_TAIL_BYTES: usize = 64 << 10;
use super::output_cut::TAIL_CHARS;
pub(crate) use super::output_cut::{clip, tail};

/// One command to run.
#[derive(Debug, Clone)]
pub struct Step<'a> {
    /// What it is, for errors: "build step 'npm ci'".
    pub what: String,
    /// Program and arguments.
    pub argv: Vec<String>,
    /// Working folder.
    pub cwd: PathBuf,
    /// The complete environment (nothing is inherited).
    pub env: BTreeMap<String, String>,
    /// Run as this user (its uid and gid when it is a dedicated user); `None`: as clibench.
    pub user: Option<&'a TrialUser>,
    /// The HOME whose processes are stopped on timeout when there is no dedicated user.
    pub home: Option<PathBuf>,
    /// How long it may take.
    pub timeout: Duration,
    /// Append stdout and stderr to this file; `None`: capture them.
    pub log: Option<PathBuf>,
}

/// How a command ended.
#[derive(Debug)]
pub struct Finished {
    /// Its exit status.
    pub status: ExitStatus,
    /// Where its output starts in the log (bytes), when logged.
    pub log_offset: u64,
    /// Captured stdout (empty when logged).
    pub stdout: String,
    /// Captured stderr (empty when logged).
    pub stderr: String,
    /// From spawn to exit.
    pub elapsed: Duration,
}

impl Finished {
    /// stdout and stderr together, for checks that look at both: a program may print its
    /// version on either (many print it on stderr).
    pub fn merged(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

/// Why a command did not finish.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// It could not be started.
    #[error("{what}: cannot start `{program}` in {cwd}")]
    Spawn {
        /// The step.
        what: String,
        /// The program.
        program: String,
        /// The working folder.
        cwd: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// It ran out of time; its processes were stopped.
    #[error(
        "{what} timed out after {seconds:.1} s; its processes were stopped{}",
        tail_suffix(tail)
    )]
    Timeout {
        /// The step.
        what: String,
        /// The timeout in seconds.
        seconds: f64,
        /// The end of its output.
        tail: String,
    },
    /// It exited unsuccessfully.
    #[error("{what} failed ({status}){}", tail_suffix(tail))]
    Failed {
        /// The step.
        what: String,
        /// Its exit status.
        status: ExitStatus,
        /// The end of its output.
        tail: String,
    },
    /// Reading or writing its output, or waiting for it, failed.
    #[error("{what}: {action}")]
    Io {
        /// The step.
        what: String,
        /// What was being done ("opening the log /out/logs/install.log").
        action: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Stopping a step's or a trial user's processes failed.
#[derive(Debug, thiserror::Error)]
pub enum StopError {
    /// The user has a system uid: its processes are never stopped.
    #[error(
        "refusing to stop the processes of {name} (uid {uid}): a system account (below {uid_min})"
    )]
    SystemAccount {
        /// The user.
        name: String,
        /// Its uid.
        uid: u32,
        /// `UID_MIN`.
        uid_min: u32,
    },
    /// Some processes of the user's uid are left.
    #[error("stopping every process of {name}")]
    Uid {
        /// The user.
        name: String,
        /// What is left.
        #[source]
        source: Box<bench_proc::StopUidError>,
    },
    /// Processes with the home in their environment are left.
    #[error("stopping the processes with HOME={}", home.display())]
    Home {
        /// The home.
        home: PathBuf,
        /// What is left.
        #[source]
        source: Box<bench_proc::StopError>,
    },
    /// A process tree could not be stopped.
    #[error("stopping {selector}")]
    Tree {
        /// The processes, as `Selector`'s debug form.
        selector: String,
        /// What is left.
        #[source]
        source: Box<bench_proc::StopError>,
    },
}

fn tail_suffix(tail: &str) -> String {
    if tail.trim().is_empty() {
        String::new()
    } else {
        format!("; output ends with:\n{tail}")
    }
}

/// One captured stream, bounded whatever the command prints: its first
/// [`CAPTURE_HEAD_BYTES`], its last [`CAPTURE_TAIL_BYTES`], and how many bytes
/// between them were dropped.
#[derive(Debug, Default)]
struct Capture {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    dropped_bytes: u64,
}

impl Capture {
    fn push(&mut self, mut bytes: &[u8]) {
        let room = CAPTURE_HEAD_BYTES - self.head.len();
        let (to_head, rest) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(to_head);
        bytes = rest;
        self.tail.extend(bytes);
        let excess = self.tail.len().saturating_sub(CAPTURE_TAIL_BYTES);
        if excess > 0 {
            self.tail.drain(..excess);
            self.dropped_bytes += excess as u64;
        }
    }

    /// The text, with a line saying how much was dropped where it was.
    fn text(&self) -> String {
        let mut bytes = self.head.clone();
        if self.dropped_bytes > 0 {
            bytes.extend_from_slice(
                format!(
                    "\n[clibench dropped {} bytes of output here]\n",
                    self.dropped_bytes
                )
                .as_bytes(),
            );
        }
        bytes.extend(self.tail.iter());
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// A thread reading one of a command's output pipes into a [`Capture`] until
/// end of file, so the command never blocks on a full pipe and clibench's
/// memory stays bounded however much it prints.
struct CaptureThread {
    capture: Arc<Mutex<Capture>>,
    /// Set once the command ended: all it wrote is then in the pipe.
    ended: Arc<AtomicBool>,
    /// Told once everything the pipe held when the thread saw `ended` is captured, or
    /// at end of file.
    drained: mpsc::Receiver<()>,
    /// Whether `drained` already answered (it answers once).
    drained_seen: std::cell::Cell<bool>,
}

impl CaptureThread {
    fn start(pipe: impl Read + AsFd + Send + 'static) -> std::io::Result<CaptureThread> {
        let capture = Arc::new(Mutex::new(Capture::default()));
        let ended = Arc::new(AtomicBool::new(false));
        let (tell, drained) = mpsc::channel();
        let (shared, end) = (Arc::clone(&capture), Arc::clone(&ended));
        std::thread::Builder::new()
            .name("capture".into())
            .spawn(move || drain(pipe, &shared, &end, &tell))?;
        Ok(CaptureThread {
            capture,
            ended,
            drained,
            drained_seen: std::cell::Cell::new(false),
        })
    }

    /// What was captured, once the command (which must have ended) reached end of file
    /// or everything it wrote before it ended is read. No clock decides: a process it
    /// left running may hold the pipe for ever, but it cannot hold back what is already
    /// in it, and the thread keeps draining it after this returns.
    fn finish(&self) -> String {
        self.ended.store(true, Ordering::SeqCst);
        if !self.drained_seen.get() {
            // Err: the thread is gone, which it only is after telling.
            let _ = self.drained.recv();
            self.drained_seen.set(true);
        }
        match self.capture.lock() {
            Ok(capture) => capture.text(),
            Err(poisoned) => poisoned.into_inner().text(),
        }
    }
}

/// How often a capture thread with nothing to read looks whether its command ended.
const CAPTURE_TICK: Duration = Duration::from_millis(20);

/// Reads `pipe` into `capture` until end of file. Once `ended` is set, the bytes the
/// pipe holds at that moment (FIONREAD) are what the command wrote and nobody read
/// yet: `tell` hears when they are all captured (at once when there are none), so the
/// caller waits for bytes, not for a time a busy machine can overrun.
fn drain(
    mut pipe: impl Read + AsFd,
    capture: &Mutex<Capture>,
    ended: &AtomicBool,
    tell: &mpsc::Sender<()>,
) {
    let mut buf = vec![0u8; 64 << 10];
    // Bytes of the command's still to read, once it ended.
    let mut owed: Option<u64> = None;
    let tick = rustix::event::Timespec {
        tv_sec: 0,
        tv_nsec: CAPTURE_TICK.subsec_nanos().into(),
    };
    loop {
        if owed.is_none() && ended.load(Ordering::SeqCst) {
            let pending = rustix::io::ioctl_fionread(&pipe).unwrap_or(0);
            owed = Some(pending);
            if pending == 0 {
                let _ = tell.send(());
            }
        }
        let mut fds = [rustix::event::PollFd::new(
            &pipe,
            rustix::event::PollFlags::IN,
        )];
        match rustix::event::poll(&mut fds, Some(&tick)) {
            Ok(0) | Err(rustix::io::Errno::INTR) => continue,
            Ok(_) => {}
            Err(_) => break,
        }
        match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(read) => {
                match capture.lock() {
                    Ok(mut capture) => capture.push(&buf[..read]),
                    Err(poisoned) => poisoned.into_inner().push(&buf[..read]),
                }
                if let Some(left) = owed.as_mut()
                    && *left > 0
                {
                    *left = left.saturating_sub(read as u64);
                    if *left == 0 {
                        let _ = tell.send(());
                    }
                }
            }
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let _ = tell.send(());
}

/// The tail of what was appended to a log from byte `from` on (this step's output),
/// read from the end: a log can be gigabytes long.
fn read_log_tail(path: &Path, from: u64) -> String {
    let read = || -> std::io::Result<Vec<u8>> {
        let mut file = File::open(path)?;
        let len = file.metadata()?.len();
        let start = len.saturating_sub((TAIL_CHARS * 4) as u64).max(from);
        file.seek(std::io::SeekFrom::Start(start))?;
        let mut bytes = Vec::new();
        file.take((TAIL_CHARS * 4) as u64).read_to_end(&mut bytes)?;
        Ok(bytes)
    };
    match read() {
        Ok(bytes) => tail(&String::from_utf8_lossy(&bytes)),
        Err(_) => String::new(),
    }
}

/// Runs a step to its end or its timeout. A non-zero exit is not an error here:
/// see `run_ok`.
pub fn run(step: &Step<'_>) -> Result<Finished, ExecError> {
    let program = step.argv.first().cloned().unwrap_or_default();
    let mut command = detached_command(step, &program);
    let log_offset = send_output(step, &mut command)?;
    let started = Instant::now();
    let mut child = command.spawn().map_err(|source| ExecError::Spawn {
        what: step.what.clone(),
        program: program.clone(),
        cwd: step.cwd.display().to_string(),
        source,
    })?;
    // The parent's copies must close so that only the child holds them.
    drop(command);
    let captures = start_captures(&mut child).map_err(io(step, "starting a capture thread"))?;
    // The step leads its own process group; the leader keeps that group's id ours
    // until it is reaped.
    let mut leader = bench_proc::Leader::new(child);
    let status = reap_by(&mut leader, started + step.timeout)
        .map_err(io(step, "waiting for the command"))?;
    let elapsed = started.elapsed();
    let Some(status) = status else {
        return Err(timed_out(step, &mut leader, log_offset, captures.as_ref()));
    };
    let (stdout, stderr) = match &captures {
        Some((out, err)) => (out.finish(), err.finish()),
        None => (String::new(), String::new()),
    };
    Ok(Finished {
        status,
        log_offset: log_offset.unwrap_or(0),
        stdout,
        stderr,
        elapsed,
    })
}

/// An I/O error of `step` while doing `action`.
fn io(step: &Step<'_>, action: &str) -> impl FnOnce(std::io::Error) -> ExecError {
    let (what, action) = (step.what.clone(), action.to_owned());
    move |source| ExecError::Io {
        what,
        action,
        source,
    }
}

/// The step's command: its arguments, folder and exact environment, stdin on
/// /dev/null, and between fork and exec its own session, no descriptor of ours above
/// 2 and the trial user's ids.
fn detached_command(step: &Step<'_>, program: &str) -> Command {
    let mut command = Command::new(program);
    command
        .args(step.argv.iter().skip(1))
        .current_dir(&step.cwd)
        .env_clear()
        .envs(&step.env)
        .stdin(Stdio::null());
    // Prepared here: the closure below runs between fork and exec, where it must not
    // allocate.
    let identity = step
        .user
        .filter(|u| u.dedicated)
        .map(|user| user.identity.switch());
    // SAFETY: detach() (setsid, close_range) and apply() (setgroups, setgid, setuid)
    // make raw, async-signal-safe system calls only and allocate nothing; the forked
    // child has one thread.
    unsafe {
        command.pre_exec(move || {
            // Its own session, so no controlling terminal: a step that opens /dev/tty
            // cannot reach the operator's terminal (TIOCSTI, escape sequences, modes).
            // The session leader leads its process group too, which the Leader below
            // relies on. No descriptor above 2 of ours crosses either.
            bench_proc::detach()?;
            match &identity {
                Some(identity) => identity.apply(),
                None => Ok(()),
            }
        });
    }
    command
}

/// Sends the command's stdout and stderr to the step's log, after a line naming the
/// command, or to pipes to capture. `Some(offset)`: logged, this step's output starting
/// at `offset` in the log.
fn send_output(step: &Step<'_>, command: &mut Command) -> Result<Option<u64>, ExecError> {
    let Some(path) = &step.log else {
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        return Ok(None);
    };
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io(step, &format!("opening the log {}", path.display())))?;
    writeln!(
        log,
        "$ {}   (in {})",
        step.argv.join(" "),
        step.cwd.display()
    )
    .map_err(io(step, "writing the log"))?;
    let offset = log.metadata().map(|m| m.len()).unwrap_or(0);
    let copy = log.try_clone().map_err(io(step, "duplicating the log"))?;
    command.stdout(log).stderr(copy);
    Ok(Some(offset))
}

/// A capture thread on each of the child's pipes (none when its output goes to a log);
/// on failure the child is killed and reaped.
fn start_captures(
    child: &mut std::process::Child,
) -> std::io::Result<Option<(CaptureThread, CaptureThread)>> {
    let (Some(out), Some(err)) = (child.stdout.take(), child.stderr.take()) else {
        return Ok(None);
    };
    let start = || -> std::io::Result<(CaptureThread, CaptureThread)> {
        Ok((CaptureThread::start(out)?, CaptureThread::start(err)?))
    };
    start().map(Some).inspect_err(|_| {
        let _ = child.kill();
        let _ = child.wait();
    })
}

/// The step's exit status, or `None` when `deadline` passed first.
fn reap_by(
    leader: &mut bench_proc::Leader,
    deadline: Instant,
) -> std::io::Result<Option<ExitStatus>> {
    loop {
        match leader.try_reap()? {
            Some(status) => return Ok(Some(status)),
            None if Instant::now() >= deadline => return Ok(None),
            None => std::thread::sleep(POLL),
        }
    }
}

/// Stops everything a step that ran out of time started, and the timeout error with
/// the tail of its output (from its log past `log_offset`, or its captures).
fn timed_out(
    step: &Step<'_>,
    leader: &mut bench_proc::Leader,
    log_offset: Option<u64>,
    captures: Option<&(CaptureThread, CaptureThread)>,
) -> ExecError {
    let stopped = stop_after_timeout(step, leader);
    // stop() may already have reaped our child; ECHILD then is fine.
    let _ = leader.reap();
    let mut text = match (log_offset, step.log.as_deref()) {
        (Some(offset), Some(path)) => read_log_tail(path, offset),
        _ => captures
            .map(|(out, err)| tail(&format!("{}{}", out.finish(), err.finish())))
            .unwrap_or_default(),
    };
    if let Err(error) = stopped {
        text.push_str(&format!(
            "\n(stopping its processes failed: {})",
            bench_core::error_chain(&error)
        ));
    }
    ExecError::Timeout {
        what: step.what.clone(),
        seconds: step.timeout.as_secs_f64(),
        tail: text,
    }
}

/// Runs a step and turns a non-zero exit into an error carrying the output's tail.
pub(crate) fn run_ok(step: &Step<'_>) -> Result<Finished, ExecError> {
    let finished = run(step)?;
    if finished.status.success() {
        return Ok(finished);
    }
    let mut text = match &step.log {
        Some(path) => read_log_tail(path, finished.log_offset),
        None => tail(&finished.merged()),
    };
    // A log the command cites in its home is gone once the home is removed: keep a copy
    // beside the step's own log.
    let home = step
        .home
        .as_deref()
        .or(step.user.map(|user| user.home.as_path()));
    if let (Some(home), Some(logs)) = (home, step.log.as_deref().and_then(Path::parent)) {
        text = crate::pipeline::out::cited::keep_cited(home, logs, &text);
    }
    Err(ExecError::Failed {
        what: step.what.clone(),
        status: finished.status,
        tail: text,
    })
}

fn stop_after_timeout(step: &Step<'_>, leader: &mut bench_proc::Leader) -> Result<(), StopError> {
    let mut first_error = None;
    let mut note = |result: Result<(), StopError>| {
        if let Err(error) = result
            && first_error.is_none()
        {
            first_error = Some(error);
        }
    };
    // The group catches children that left the tree by re-parenting but kept the group.
    // Its id is the step's pid, which is ours only while that child is unreaped (a zombie
    // at most): stop() below may reap it, after which the kernel can give the number to
    // a stranger. So the group is told first, and killed afterwards only if still pinned,
    // which the leader checks.
    use rustix::process::Signal;
    let _ = leader.kill_group(Signal::TERM);
    note(stop(&Selector::Tree(leader.pid())));
    let _ = leader.kill_group(Signal::KILL);
    match step.user {
        Some(user) => note(stop_user(user)),
        None => {
            if let Some(home) = &step.home {
                note(stop_home(home));
            }
        }
    }
    first_error.map_or(Ok(()), Err)
}

fn stop(selector: &Selector) -> Result<(), StopError> {
    match bench_proc::stop(selector, STOP_GRACE) {
        Ok(_) => Ok(()),
        Err(source) => Err(StopError::Tree {
            selector: format!("{selector:?}"),
            source: Box::new(source),
        }),
    }
}

/// How long [`stop_user`] keeps killing a uid's processes before it reports
/// them as left running.
const UID_STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// Stops every process of a trial user: by uid for a dedicated user, else every
/// process whose environment has the user's HOME.
pub(crate) fn stop_user(user: &TrialUser) -> Result<(), StopError> {
    if user.dedicated {
        // Never a system account's processes, not even with a grace period.
        let uid_min = bench_proc::user_uid_min();
        if user.identity.uid < uid_min {
            return Err(StopError::SystemAccount {
                name: user.name.clone(),
                uid: user.identity.uid,
                uid_min,
            });
        }
        // A grace period first, so well-behaved processes exit cleanly; what it
        // misses (a process that keeps forking outruns any walk of /proc) the
        // uid-wide kill catches, and it fails naming what is left.
        let _ = stop(&Selector::Uid(user.identity.uid));
        bench_proc::stop_uid(user.identity.uid, UID_STOP_TIMEOUT)
            .map(drop)
            .map_err(|source| StopError::Uid {
                name: user.name.clone(),
                source: Box::new(source),
            })
    } else {
        stop_home(&user.home)
    }
}

/// Stops every process (and its descendants) that runs with `HOME=home`, as one family
/// with one grace period: how a non-root clibench finds what a target left behind,
/// daemons included, since every target process gets that HOME from the clean
/// environment.
pub(crate) fn stop_home(home: &Path) -> Result<(), StopError> {
    let entry = format!("HOME={}", home.display()).into_bytes();
    bench_proc::stop_environment(&entry, STOP_GRACE)
        .map(drop)
        .map_err(|source| StopError::Home {
            home: home.to_path_buf(),
            source: Box::new(source),
        })
}

#[cfg(test)]
#[path = "command_tests.rs"]
mod tests;
