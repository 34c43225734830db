//! [`Terminal`]: one program running in a pseudo-terminal, watched through a
//! screen model, typed into like a person would.

use crate::close::{CloseReport, Ending};
use crate::dialog::ReadyGuard;
use crate::error::{Exit, ProbeWhere, ScreenDump, Stage, TermError};
use crate::keys::{Key, encode, encode_text};
use crate::pty_linux;
use crate::ready::ReadyMode;
use crate::screen::{Screen, find_text, shows_frame};
use crate::session_linux::{kill_session, session_processes};
use crate::transcript::{CastSetup, TRANSCRIPT_LIMIT_BYTES, Transcript};
use bench_proc::parse::Stat;
use bench_proc::{Identity, Leader, Survivor};
use regex::Regex;
use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::fd::{AsFd, OwnedFd};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often probe mode types a new probe.
const PROBE_INTERVAL: Duration = Duration::from_millis(20);
/// How long probe mode polls the terminal modes while waiting for raw mode.
const RAW_MODE_POLL: Duration = Duration::from_millis(1);
/// How long probe mode may take to erase its probe once ready was recorded.
const PROBE_CLEANUP_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one keystroke sample may take to appear.
const KEYSTROKE_TIMEOUT: Duration = Duration::from_secs(5);
/// How often waits look whether the program exited while its terminal stays open.
const EXIT_CHECK_INTERVAL: Duration = Duration::from_millis(50);
/// How long close() lets the program exit after the hang-up before killing it.
const HANGUP_GRACE: Duration = Duration::from_millis(200);
/// How long a program may stay alive and silent after its last quit key before
/// close() concludes that the keys did nothing and hangs up. A program that quits
/// on them exits, keeps writing (saving, saying goodbye) or gives the terminal back
/// (leaves raw mode, as a TUI does first on its way out) within this; one that
/// ignores them (python at its prompt answers Ctrl-C with a new prompt) goes quiet
/// in the same mode and would otherwise wait out the whole grace on every close.
pub const QUIT_QUIET: Duration = Duration::from_millis(200);
/// How long close() waits for killed processes to disappear.
const KILL_GRACE: Duration = Duration::from_secs(3);
/// How long a write of input may wait for the program to read.
const WRITE_TIMEOUT: Duration = Duration::from_secs(2);
/// Letters of the keystroke samples: lowercase, so that no key needs Shift.
const SAMPLE_LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
/// Letters of the ready probes: a probe typed into a dialog must not answer it.
/// Menus take digits and Enter as choices, so a probe has neither (not even for
/// its index, written in these letters, base 8). The letters are lowercase (no
/// Shift) and none is a usual single-key answer or menu motion: not y/n, a
/// (always/allow), d (deny/don't), q (quit), c (cancel), s (skip), r (retry),
/// o (ok), e (edit), t (trust), x (exit/close), i (info), nor the vim motions
/// h/j/k/l that list menus move with.
const PROBE_LETTERS: &[u8] = b"bfgmpuvz";
/// Letters of a probe's random tag.
const PROBE_TAG_LENGTH: usize = 8;
/// Letters of a probe's index (base 8: 32768 probes before the index wraps).
const PROBE_INDEX_LENGTH: usize = 5;

/// How to start a program in a [`Terminal`].
#[derive(Debug, Clone)]
pub struct SpawnOptions {
    /// The program (a path, or a name looked up in the `PATH` of [`SpawnOptions::env`]
    /// as std does).
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// The exact environment: nothing is inherited unless put here
    /// (see [`SpawnOptions::inherit_env`]).
    pub env: Vec<(OsString, OsString)>,
    /// Working directory; the caller's when `None`.
    pub cwd: Option<PathBuf>,
    /// Screen columns.
    pub cols: u16,
    /// Screen rows.
    pub rows: u16,
    /// Run as this user, groups and all (needs root).
    pub user: Option<Identity>,
    /// Folder to save the transcript into on close (`output.raw`, `input.raw`,
    /// `screen.txt`); nothing is kept when `None`.
    pub transcript: Option<PathBuf>,
    /// Output cap for the transcript, in bytes.
    pub transcript_limit_bytes: usize,
    /// Keys close() sends first to ask the program to quit.
    pub quit_keys: Vec<Key>,
    /// Pause between quit keys.
    pub quit_interval: Duration,
    /// The longest close() lets the program exit after its last quit key before
    /// hanging up; a program that goes quiet for [`QUIT_QUIET`] without exiting or
    /// leaving raw mode is hung up at once.
    pub quit_grace: Duration,
}

impl SpawnOptions {
    /// Options for `program` with no arguments, an empty environment, 120 x 40 cells,
    /// Ctrl-C twice 150 ms apart to quit.
    pub fn new(program: impl Into<OsString>) -> SpawnOptions {
        SpawnOptions {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            cols: 120,
            rows: 40,
            user: None,
            transcript: None,
            transcript_limit_bytes: TRANSCRIPT_LIMIT_BYTES,
            quit_keys: vec![Key::Ctrl('c'), Key::Ctrl('c')],
            quit_interval: Duration::from_millis(150),
            quit_grace: Duration::from_secs(2),
        }
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> SpawnOptions
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets one environment variable (replacing an earlier value).
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> SpawnOptions {
        let key = key.into();
        self.env.retain(|(k, _)| *k != key);
        self.env.push((key, value.into()));
        self
    }

    /// Copies these variables from this process's environment, where set.
    pub fn inherit_env<I, S>(mut self, keys: I) -> SpawnOptions
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        for key in keys {
            let key = key.into();
            if let Some(value) = std::env::var_os(&key) {
                self = self.env(key, value);
            }
        }
        self
    }

    /// Sets the working directory.
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> SpawnOptions {
        self.cwd = Some(cwd.into());
        self
    }

    /// Sets the screen size.
    pub fn size(mut self, cols: u16, rows: u16) -> SpawnOptions {
        self.cols = cols;
        self.rows = rows;
        self
    }

    /// Runs the program as `user`.
    pub fn user(mut self, user: Identity) -> SpawnOptions {
        self.user = Some(user);
        self
    }

    /// Saves the transcript into `folder` on close.
    pub fn transcript(mut self, folder: impl Into<PathBuf>) -> SpawnOptions {
        self.transcript = Some(folder.into());
        self
    }

    /// Sets the keys close() sends before hanging up.
    pub fn quit_keys(mut self, keys: Vec<Key>, interval: Duration) -> SpawnOptions {
        self.quit_keys = keys;
        self.quit_interval = interval;
        self
    }

    /// Sets the longest close() waits for the program to exit on its quit keys.
    pub fn quit_grace(mut self, grace: Duration) -> SpawnOptions {
        self.quit_grace = grace;
        self
    }

    /// The value of `TERM` in the environment, if set.
    fn term(&self) -> Option<String> {
        self.env
            .iter()
            .find(|(k, _)| k == "TERM")
            .map(|(_, v)| v.to_string_lossy().into_owned())
    }
}

/// When things happened, measured from spawn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timeline {
    /// The first byte of output.
    pub first_byte: Option<Duration>,
    /// The first frame: a line with at least 3 letters or digits, outside a
    /// synchronized update.
    pub first_frame: Option<Duration>,
    /// Ready, by the mode of the last successful [`Terminal::ready`]: when the
    /// output that made the program ready was read.
    pub ready: Option<Duration>,
    /// When bench-term had recognised that ready: after feeding that output to the
    /// screen model and checking the screen (in stable mode, when the quiet period
    /// was over). The gap to `ready` is bench-term's own processing time.
    pub ready_detected: Option<Duration>,
}

/// When a check on the screen first held.
#[derive(Debug, Clone, Copy)]
struct Hit {
    /// When the output that made it hold was read.
    read_at: Instant,
    /// When the check, after feeding that output to the screen model, held.
    detected_at: Instant,
}

impl Hit {
    fn now() -> Hit {
        let now = Instant::now();
        Hit {
            read_at: now,
            detected_at: now,
        }
    }
}

enum Pumped {
    /// Nothing arrived in time.
    Idle,
    /// Output arrived; a hit when a frame satisfied the check.
    Data(Option<Hit>),
    /// The program's side of the terminal is closed.
    Eof,
}

/// A program running in a pseudo-terminal with a screen model.
///
/// Everything the program writes is fed to the screen model and its start-up
/// queries are answered; output is only read while a method runs, as a terminal
/// that is not looked at would not be drawn either. Dropping a terminal without
/// [`Terminal::close`] still kills its session.
#[derive(Debug)]
pub struct Terminal {
    master: Option<OwnedFd>,
    /// The program, leading its session: once it is reaped, its pid may belong to
    /// another process, so the session is never signalled again.
    leader: Leader,
    pid: u32,
    program: String,
    spawned_at: Instant,
    spawn_monotonic: Duration,
    screen: Screen,
    timeline: Timeline,
    last_output_at: Option<Instant>,
    transcript: Option<Transcript>,
    quit_keys: Vec<Key>,
    quit_interval: Duration,
    quit_grace: Duration,
    eof: bool,
    close_report: Option<CloseReport>,
    buffer: Vec<u8>,
    replies: Vec<u8>,
    ready_screen: Option<String>,
}

/// CLOCK_MONOTONIC now, the clock [`Instant`] uses on Linux.
fn monotonic_now() -> Duration {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    Duration::new(
        u64::try_from(now.tv_sec).unwrap_or(0),
        u32::try_from(now.tv_nsec).unwrap_or(0),
    )
}

fn timespec(duration: Duration) -> Timespec {
    Timespec {
        tv_sec: i64::try_from(duration.as_secs()).unwrap_or(i64::MAX),
        tv_nsec: i64::from(duration.subsec_nanos()),
    }
}

/// A random word of `length` letters from `letters`.
fn random_word(length: usize, letters: &[u8]) -> String {
    let mut bytes = vec![0u8; length];
    if rustix::rand::getrandom(&mut bytes, rustix::rand::GetRandomFlags::empty()).is_err() {
        // getrandom only fails before the kernel's pool is ready; time still differs per call.
        let seed = monotonic_now().subsec_nanos().to_le_bytes();
        for (index, byte) in bytes.iter_mut().enumerate() {
            *byte = seed[index % 4]
                .wrapping_mul(31)
                .wrapping_add(index as u8 * 17);
        }
    }
    bytes
        .iter()
        .map(|b| char::from(letters[usize::from(*b) % letters.len()]))
        .collect()
}

impl Terminal {
    /// Starts the program in a fresh PTY, in a new session with the PTY as its
    /// controlling terminal.
    pub fn spawn(options: &SpawnOptions) -> Result<Terminal, TermError> {
        let pty = pty_linux::open(options.rows, options.cols)?;
        let spawned_at = Instant::now();
        let spawn_monotonic = monotonic_now();
        let child = pty_linux::spawn(&pty, options)?;
        drop(pty.slave);
        let setup = CastSetup {
            cols: options.cols,
            rows: options.rows,
            term: options.term(),
            started: spawned_at,
        };
        Ok(Terminal {
            master: Some(pty.master),
            pid: child.id(),
            leader: Leader::new(child),
            program: options.program.to_string_lossy().into_owned(),
            spawned_at,
            spawn_monotonic,
            screen: Screen::new(options.rows, options.cols),
            timeline: Timeline::default(),
            last_output_at: None,
            transcript: options
                .transcript
                .clone()
                .map(|folder| Transcript::new(folder, options.transcript_limit_bytes, setup)),
            quit_keys: options.quit_keys.clone(),
            quit_interval: options.quit_interval,
            quit_grace: options.quit_grace,
            eof: false,
            close_report: None,
            buffer: vec![0; 64 * 1024],
            replies: Vec::new(),
            ready_screen: None,
        })
    }

    /// The program's pid, which is also its session and process group id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The program as given to spawn.
    pub fn program(&self) -> &str {
        &self.program
    }

    /// First byte, first frame and ready so far, from spawn.
    pub fn timeline(&self) -> Timeline {
        self.timeline
    }

    /// CLOCK_MONOTONIC at spawn, so that [`Timeline`] entries can be compared with
    /// timestamps the program itself took (spawn + entry).
    pub fn spawn_monotonic(&self) -> Duration {
        self.spawn_monotonic
    }

    /// The screen as text: one line per row, trailing blanks trimmed.
    pub fn screen_text(&self) -> String {
        self.screen.text()
    }

    /// Cursor row and column, 0-based.
    pub fn cursor(&self) -> (u16, u16) {
        self.screen.vt().cursor_position()
    }

    /// Whether the program's side of the terminal is closed: a read on the master
    /// met end of file (every process holding the PTY's slave closed it, usually
    /// by exiting), or the terminal was hung up by [`Terminal::close`].
    pub(crate) fn is_closed(&self) -> bool {
        self.eof || self.master.is_none()
    }

    /// Whether a synchronized update is open now.
    pub fn in_sync(&self) -> bool {
        self.screen.in_sync(Instant::now())
    }

    /// Whether the program turned off ICANON and ECHO (false once hung up).
    pub fn is_raw(&self) -> Result<bool, TermError> {
        match &self.master {
            Some(master) => pty_linux::is_raw(master.as_fd()).map_err(|source| TermError::Io {
                action: "read the modes of",
                pid: self.pid,
                source,
            }),
            None => Ok(false),
        }
    }

    /// Where the transcript is saved, if anywhere.
    pub fn transcript_folder(&self) -> Option<&Path> {
        self.transcript.as_ref().map(Transcript::folder)
    }

    /// The screen when the program was last judged ready (before the guard's check,
    /// so also for a start that was blocked).
    pub fn ready_screen(&self) -> Option<&str> {
        self.ready_screen.as_deref()
    }

    /// [`Terminal::ready_guarded`] with the default guard: a start that ends at a
    /// blocking dialog (see [`crate::dialog`]) is an error. A `pattern:`
    /// mode's own pattern matching the dialog's line means it is expected.
    pub fn ready(&mut self, mode: &ReadyMode, timeout: Duration) -> Result<Duration, TermError> {
        self.ready_guarded(mode, timeout, &ReadyGuard::default())
    }

    /// Waits until the program is ready by `mode`, at most `timeout`, then checks
    /// the screen at ready with `guard`; returns the time from spawn to ready (also
    /// kept in [`Terminal::timeline`], even when the guard refuses the screen).
    ///
    /// A timeout error names the stage it was stuck in and carries the last
    /// screen; a program that exits first is reported with its exit status; a
    /// screen the guard refuses is [`TermError::Blocked`] with that screen. The
    /// screen at ready is kept ([`Terminal::ready_screen`], and in the transcript
    /// as `screen-at-ready.txt` and the recording's `ready` marker).
    pub fn ready_guarded(
        &mut self,
        mode: &ReadyMode,
        timeout: Duration,
        guard: &ReadyGuard,
    ) -> Result<Duration, TermError> {
        let ready = self.wait_ready(mode, timeout)?;
        let screen = self.screen.text();
        if let Some(transcript) = &mut self.transcript {
            transcript.mark_ready(self.spawned_at + ready, &screen);
        }
        self.ready_screen = Some(screen.clone());
        let mut guard = guard.clone();
        if let ReadyMode::Pattern(regex) = mode {
            guard.expected.push(regex.clone());
        }
        match guard.check(&screen) {
            Ok(()) => Ok(ready),
            Err(blocked) => Err(TermError::Blocked {
                blocked,
                screen: ScreenDump(screen),
            }),
        }
    }

    fn wait_ready(&mut self, mode: &ReadyMode, timeout: Duration) -> Result<Duration, TermError> {
        let deadline = Instant::now() + timeout;
        let hit = match mode {
            ReadyMode::Probe => self.ready_probe(deadline)?,
            ReadyMode::Pattern(regex) => self.wait_until(Stage::Pattern, deadline, &mut |s| {
                regex.is_match(&s.contents())
            })?,
            ReadyMode::FirstFrame => match self.timeline.first_frame {
                Some(first) => Hit {
                    read_at: self.spawned_at + first,
                    detected_at: self.spawned_at + first,
                },
                None => self.wait_until(Stage::FirstFrame, deadline, &mut shows_frame)?,
            },
            ReadyMode::Stable(quiet) => self.ready_stable(*quiet, deadline)?,
            ReadyMode::Exit => self.ready_exit(deadline)?,
        };
        let ready = hit.read_at.saturating_duration_since(self.spawned_at);
        self.timeline.ready = Some(ready);
        self.timeline.ready_detected =
            Some(hit.detected_at.saturating_duration_since(self.spawned_at));
        Ok(ready)
    }

    /// Keeps reading (and answering) for `duration`; returns early only when the
    /// program closed its terminal.
    pub fn settle(&mut self, duration: Duration) -> Result<(), TermError> {
        let until = Instant::now() + duration;
        loop {
            let now = Instant::now();
            if now >= until {
                return Ok(());
            }
            if let Pumped::Eof = self.pump(until - now, &mut |_| false)? {
                return Ok(());
            }
        }
    }

    /// Reads until no output arrived for `quiet`, failing after `timeout`.
    pub fn settle_quiet(&mut self, quiet: Duration, timeout: Duration) -> Result<(), TermError> {
        let started = Instant::now();
        let deadline = started + timeout;
        let mut last = started;
        loop {
            let now = Instant::now();
            if now.saturating_duration_since(last) >= quiet {
                return Ok(());
            }
            if now >= deadline {
                return Err(self.timeout(Stage::Quiet, now - started));
            }
            let wait = (last + quiet).min(deadline) - now;
            match self.pump(wait, &mut |_| false)? {
                Pumped::Idle => {}
                Pumped::Data(_) => last = Instant::now(),
                Pumped::Eof => return Ok(()),
            }
        }
    }

    /// Types `text` (`\n` as Enter), encoded for the keyboard protocol the program chose.
    pub fn type_text(&mut self, text: &str) -> Result<(), TermError> {
        let mut bytes = Vec::with_capacity(text.len());
        encode_text(text, self.screen.kitty_flags(), &mut bytes);
        self.write_input(&bytes)
    }

    /// Presses `keys` in order, encoded for the keyboard protocol the program chose.
    pub fn send_keys(&mut self, keys: &[Key]) -> Result<(), TermError> {
        let mut bytes = Vec::new();
        for &key in keys {
            encode(key, self.screen.kitty_flags(), &mut bytes);
        }
        self.write_input(&bytes)
    }

    /// Waits until the screen text matches `pattern` outside a synchronized update,
    /// at most `timeout`; returns how long that took from this call.
    pub fn wait_for(&mut self, pattern: &Regex, timeout: Duration) -> Result<Duration, TermError> {
        let started = Instant::now();
        let hit = self.wait_until(Stage::WaitFor, started + timeout, &mut |s| {
            pattern.is_match(&s.contents())
        })?;
        Ok(hit.read_at.saturating_duration_since(started))
    }

    /// Keystroke-to-screen latency: `samples` times, types one letter and measures
    /// until the screen shows it. Letters form random words typed after a 3-letter
    /// lead-in (so a single letter elsewhere on the screen cannot match), and each
    /// word is erased with Backspace afterwards. Needs a program that echoes input.
    pub fn keystroke_latency(&mut self, samples: usize) -> Result<Vec<Duration>, TermError> {
        const LEAD: usize = 3;
        const WORD: usize = 10;
        let mut latencies = Vec::with_capacity(samples);
        while latencies.len() < samples {
            let word = random_word(WORD, SAMPLE_LETTERS);
            self.type_text(&word[..LEAD])?;
            self.wait_until(
                Stage::Keystroke,
                Instant::now() + KEYSTROKE_TIMEOUT,
                &mut |s| s.contents().contains(&word[..LEAD]),
            )?;
            let mut typed = LEAD;
            while typed < WORD && latencies.len() < samples {
                let started = Instant::now();
                self.type_text(&word[typed..=typed])?;
                let shown = &word[..=typed];
                let hit =
                    self.wait_until(Stage::Keystroke, started + KEYSTROKE_TIMEOUT, &mut |s| {
                        s.contents().contains(shown)
                    })?;
                latencies.push(hit.read_at.saturating_duration_since(started));
                typed += 1;
            }
            self.send_keys(&vec![Key::Backspace; typed])?;
            self.wait_until(
                Stage::Keystroke,
                Instant::now() + KEYSTROKE_TIMEOUT,
                &mut |s| !s.contents().contains(&word[..LEAD]),
            )?;
        }
        Ok(latencies)
    }

    /// Ends the session: the quit keys (default Ctrl-C twice, 150 ms apart) and up
    /// to [`SpawnOptions::quit_grace`] for the program to exit, cut short when it
    /// stays alive, silent and in the same terminal mode for [`QUIT_QUIET`] (the keys
    /// did nothing); the
    /// transcript saved; hang-up (closing the terminal sends SIGHUP to the session);
    /// SIGKILL to the process group and every process of the session; reaping; and
    /// a check that no process of the session is left.
    ///
    /// Processes that left the session (daemons that called setsid) are not found
    /// here; stop them by user or tree with bench-proc. Calling close twice returns
    /// the first report.
    pub fn close(&mut self) -> Result<CloseReport, TermError> {
        if let Some(report) = self.close_report {
            return Ok(report);
        }
        let started = Instant::now();
        let mut first_error = None;
        let mut ending = Ending::Exited;
        if !self.eof && !self.leader.has_exited() {
            let raw_before = self.is_raw().unwrap_or(false);
            let keys = self.quit_keys.clone();
            for (index, key) in keys.iter().enumerate() {
                if index > 0
                    && let Err(e) = self.settle(self.quit_interval)
                {
                    first_error.get_or_insert(e);
                }
                if let Err(e) = self.send_keys(&[*key]) {
                    first_error.get_or_insert(e);
                }
            }
            let last_key = Instant::now();
            let until = last_key + self.quit_grace;
            let mut last_heard = last_key;
            while Instant::now() < until && !self.leader.has_exited() {
                if self.eof {
                    // The terminal closes while the program exits, a moment before
                    // it can be reaped.
                    std::thread::sleep(Duration::from_millis(2));
                    continue;
                }
                let now = Instant::now();
                if now.saturating_duration_since(last_heard) >= QUIT_QUIET {
                    // A program that gave the terminal back is on its way out (saving,
                    // flushing): let it finish within the grace.
                    let leaving = raw_before && !self.is_raw().unwrap_or(true);
                    if !leaving {
                        // Alive, silent, in the same mode: the keys did nothing.
                        break;
                    }
                    last_heard = now;
                }
                let wait = EXIT_CHECK_INTERVAL
                    .min(until.saturating_duration_since(now))
                    .min((last_heard + QUIT_QUIET).saturating_duration_since(now));
                match self.pump(wait, &mut |_| false) {
                    Ok(Pumped::Data(_)) => last_heard = Instant::now(),
                    Ok(_) => {}
                    Err(e) => {
                        first_error.get_or_insert(e);
                        break;
                    }
                }
            }
            if self.leader.has_exited() {
                ending = Ending::Quit;
            }
        }
        // Whatever is still buffered belongs to the transcript and the final screen.
        while !self.eof {
            match self.pump(Duration::ZERO, &mut |_| false) {
                Ok(Pumped::Data(_)) => {}
                Ok(_) => break,
                Err(e) => {
                    first_error.get_or_insert(e);
                    break;
                }
            }
        }
        let final_screen = self.screen.text();
        if let Some(transcript) = &mut self.transcript
            && let Err(e) = transcript.save(&final_screen)
        {
            first_error.get_or_insert(e);
        }
        let exited_before_hangup = self.leader.has_exited();
        // Closing the master hangs up: the kernel sends SIGHUP to the session.
        self.master = None;
        let until = Instant::now() + HANGUP_GRACE;
        while Instant::now() < until && !self.leader.has_exited() {
            std::thread::sleep(Duration::from_millis(5));
        }
        if !exited_before_hangup {
            ending = if self.leader.has_exited() {
                Ending::HungUp
            } else {
                Ending::Killed
            };
        }
        let survivors = self.kill_and_verify();
        let report = CloseReport {
            status: self.leader.exit_status(),
            ending,
            took: started.elapsed(),
        };
        self.close_report = Some(report);
        if !survivors.is_empty() {
            return Err(TermError::Survivors {
                sid: self.pid,
                survivors: survivors
                    .iter()
                    .map(|stat| Survivor {
                        pid: stat.pid,
                        name: stat.name.clone(),
                        state: stat.state,
                    })
                    .collect(),
            });
        }
        match first_error {
            Some(error) => Err(error),
            None => Ok(report),
        }
    }

    /// The live processes of this terminal's session now (the program and
    /// everything it started that stayed in the session).
    pub fn session_processes(&self) -> Vec<Stat> {
        session_processes(Path::new("/proc"), self.pid)
            .into_iter()
            .filter(|p| !p.is_zombie())
            .collect()
    }

    /// Kills what is left of the session, then reaps the leader. Until that last
    /// step the leader is a zombie at most, which keeps its pid, and so the session
    /// and group ids we signal, from being handed to another process: with pids
    /// wrapping quickly on a busy machine, signalling a freed id could kill a
    /// stranger's new session.
    fn kill_and_verify(&mut self) -> Vec<Stat> {
        if self.leader.is_reaped() {
            // The ids are no longer ours to signal (see above).
            return Vec::new();
        }
        let until = Instant::now() + KILL_GRACE;
        loop {
            let alive = kill_session(&mut self.leader);
            if alive.is_empty() && self.leader.has_exited() {
                // Nothing of the session is left to signal: the pid may go now.
                let _ = self.leader.try_reap();
                return Vec::new();
            }
            if Instant::now() >= until {
                return alive;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn screen_dump(&self) -> ScreenDump {
        ScreenDump(self.screen.text())
    }

    fn timeout(&self, stage: Stage, waited: Duration) -> TermError {
        TermError::Timeout {
            stage,
            waited,
            screen: self.screen_dump(),
        }
    }

    /// The error for a program that went away during `stage`, after giving it a
    /// moment to be reaped so that the status can be reported.
    fn exited(&mut self, stage: Stage) -> TermError {
        let until = Instant::now() + Duration::from_secs(1);
        while !self.leader.has_exited() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(2));
        }
        TermError::Exited {
            stage,
            exit: Exit(self.leader.exit_status()),
            screen: self.screen_dump(),
        }
    }

    /// Reads what arrives within `wait`, feeding the screen, answering queries and
    /// calling `check` at every visible frame.
    fn pump(
        &mut self,
        wait: Duration,
        check: &mut dyn FnMut(&vt100::Screen) -> bool,
    ) -> Result<Pumped, TermError> {
        let Some(master) = &self.master else {
            return Ok(Pumped::Eof);
        };
        if self.eof {
            return Ok(Pumped::Eof);
        }
        let pid = self.pid;
        let mut fds = [PollFd::new(master, PollFlags::IN)];
        match rustix::event::poll(&mut fds, Some(&timespec(wait))) {
            Ok(0) => return Ok(Pumped::Idle),
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => return Ok(Pumped::Idle),
            Err(errno) => {
                return Err(TermError::Io {
                    action: "poll",
                    pid,
                    source: errno.into(),
                });
            }
        }
        let count = match rustix::io::read(master, &mut self.buffer[..]) {
            Ok(0) | Err(rustix::io::Errno::IO) => {
                self.eof = true;
                return Ok(Pumped::Eof);
            }
            Ok(count) => count,
            Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => return Ok(Pumped::Idle),
            Err(errno) => {
                return Err(TermError::Io {
                    action: "read",
                    pid,
                    source: errno.into(),
                });
            }
        };
        let at = Instant::now();
        self.last_output_at = Some(at);
        let since_spawn = at.saturating_duration_since(self.spawned_at);
        self.timeline.first_byte.get_or_insert(since_spawn);
        let Terminal {
            screen,
            timeline,
            buffer,
            replies,
            transcript,
            ..
        } = self;
        let chunk = &buffer[..count];
        replies.clear();
        let mut detected: Option<Instant> = None;
        screen.feed(chunk, at, replies, &mut |s| {
            if timeline.first_frame.is_none() && shows_frame(s) {
                timeline.first_frame = Some(since_spawn);
            }
            if check(s) {
                detected.get_or_insert_with(Instant::now);
            }
        });
        let recorded = match transcript {
            Some(transcript) => transcript.record_output(chunk, at),
            None => Ok(()),
        };
        if !self.replies.is_empty() {
            let replies = std::mem::take(&mut self.replies);
            let written = self.write_input(&replies);
            self.replies = replies;
            written?;
        }
        recorded?;
        Ok(Pumped::Data(detected.map(|detected_at| Hit {
            read_at: at,
            detected_at,
        })))
    }

    /// Writes input, waiting up to [`WRITE_TIMEOUT`] for room. Input to a program
    /// that closed its terminal is dropped.
    fn write_input(&mut self, mut bytes: &[u8]) -> Result<(), TermError> {
        if let Some(transcript) = &mut self.transcript {
            transcript.record_input(bytes, Instant::now());
        }
        let pid = self.pid;
        let Some(master) = &self.master else {
            return Ok(());
        };
        let deadline = Instant::now() + WRITE_TIMEOUT;
        while !bytes.is_empty() {
            match rustix::io::write(master, bytes) {
                Ok(count) => bytes = &bytes[count..],
                Err(rustix::io::Errno::IO) => return Ok(()),
                Err(rustix::io::Errno::INTR) => {}
                Err(rustix::io::Errno::AGAIN) => {
                    let now = Instant::now();
                    if now >= deadline {
                        return Err(TermError::Io {
                            action: "write input to (the program stopped reading)",
                            pid,
                            source: std::io::ErrorKind::TimedOut.into(),
                        });
                    }
                    let mut fds = [PollFd::new(master, PollFlags::OUT)];
                    let _ = rustix::event::poll(&mut fds, Some(&timespec(deadline - now)));
                }
                Err(errno) => {
                    return Err(TermError::Io {
                        action: "write input to",
                        pid,
                        source: errno.into(),
                    });
                }
            }
        }
        Ok(())
    }

    /// Waits until `check` holds on a visible frame (or already holds now), returning
    /// the read time of that frame.
    fn wait_until(
        &mut self,
        stage: Stage,
        deadline: Instant,
        check: &mut dyn FnMut(&vt100::Screen) -> bool,
    ) -> Result<Hit, TermError> {
        let started = Instant::now();
        if !self.screen.in_sync(started) && check(self.screen.vt()) {
            return Ok(Hit::now());
        }
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Err(self.timeout(stage, now - started));
            }
            match self.pump((deadline - now).min(EXIT_CHECK_INTERVAL), check)? {
                Pumped::Data(Some(hit)) => return Ok(hit),
                Pumped::Data(None) => {}
                Pumped::Idle => {
                    if self.leader.has_exited() {
                        return Err(self.exited(stage));
                    }
                }
                Pumped::Eof => return Err(self.exited(stage)),
            }
        }
    }

    /// Exit mode: reads the terminal until the program exits. The moment is taken when
    /// its pidfd becomes readable (the kernel's exit notification, after the program
    /// closed its end of the terminal), so the wake-up of one `poll` is all that lies
    /// between the exit and its detection; without pidfds (Linux before 5.3) the exit
    /// is checked every millisecond. Output still buffered is read afterwards, so the
    /// screen at ready is the program's last.
    fn ready_exit(&mut self, deadline: Instant) -> Result<Hit, TermError> {
        let started = Instant::now();
        let pidfd = rustix::process::Pid::from_raw(self.pid as i32).and_then(|pid| {
            rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
        });
        let exited_at = loop {
            if self.leader.has_exited() {
                break Instant::now();
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(self.timeout(Stage::Exit, now - started));
            }
            let wait = if pidfd.is_some() {
                deadline - now
            } else {
                (deadline - now).min(Duration::from_millis(1))
            };
            let mut fds = Vec::with_capacity(2);
            if let Some(pidfd) = &pidfd {
                fds.push(PollFd::new(pidfd, PollFlags::IN));
            }
            let master_polled = match &self.master {
                Some(master) if !self.eof => {
                    fds.push(PollFd::new(master, PollFlags::IN));
                    true
                }
                _ => false,
            };
            match rustix::event::poll(&mut fds, Some(&timespec(wait))) {
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(errno) => {
                    return Err(TermError::Io {
                        action: "poll",
                        pid: self.pid,
                        source: errno.into(),
                    });
                }
            }
            let at = Instant::now();
            let exit_seen = pidfd.is_some() && !fds[0].revents().is_empty();
            let output = master_polled && !fds[fds.len() - 1].revents().is_empty();
            drop(fds);
            if exit_seen {
                break at;
            }
            if output {
                self.pump(Duration::ZERO, &mut |_| false)?;
            } else if pidfd.is_none() && self.eof {
                std::thread::sleep(Duration::from_millis(1));
            }
        };
        // What the program wrote before it exited is still in the terminal's buffer.
        while let Pumped::Data(_) = self.pump(Duration::ZERO, &mut |_| false)? {}
        self.leader.has_exited();
        Ok(Hit {
            read_at: exited_at,
            detected_at: exited_at,
        })
    }

    /// How the program ended, once it has exited (`None` while it runs, or when its
    /// status could not be seen); looked at without reaping it.
    pub fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.leader.has_exited();
        self.leader.exit_status()
    }

    fn ready_stable(&mut self, quiet: Duration, deadline: Instant) -> Result<Hit, TermError> {
        let started = Instant::now();
        let mut previous = self.screen.vt().contents_formatted();
        let mut last_change = self.last_output_at;
        loop {
            let now = Instant::now();
            if let Some(changed) = last_change
                && now.saturating_duration_since(changed) >= quiet
            {
                return Ok(Hit {
                    read_at: changed,
                    detected_at: now,
                });
            }
            if now >= deadline {
                return Err(self.timeout(Stage::Stable, now - started));
            }
            let next = last_change.map_or(now + EXIT_CHECK_INTERVAL, |c| c + quiet);
            let wait = next.min(deadline).saturating_duration_since(now);
            let pumped = self.pump(wait, &mut |s| {
                let formatted = s.contents_formatted();
                let changed = formatted != previous;
                previous = formatted;
                changed
            })?;
            match pumped {
                Pumped::Data(Some(hit)) => last_change = Some(hit.read_at),
                Pumped::Data(None) => {}
                Pumped::Idle => {
                    if self.leader.has_exited() {
                        return Err(self.exited(Stage::Stable));
                    }
                }
                Pumped::Eof => return Err(self.exited(Stage::Stable)),
            }
        }
    }

    fn ready_probe(&mut self, deadline: Instant) -> Result<Hit, TermError> {
        let started = Instant::now();
        loop {
            self.wait_for_raw_mode(started, deadline)?;
            match self.type_probes(started, deadline)? {
                Probed::Ready { hit, tag, typed } => {
                    self.erase_probe(&tag, typed)?;
                    return Ok(hit);
                }
                Probed::Cooked { tag } => {
                    // The kernel's line discipline echoed the probe, so it erases it too.
                    // The next round types probes with a fresh tag, so that this one
                    // cannot count should it stay on the screen.
                    self.send_keys(&vec![Key::Backspace; probe_length(&tag)])?;
                }
            }
        }
    }

    /// Probe stage 1: the program turns off ICANON and ECHO once it reads keys itself.
    fn wait_for_raw_mode(&mut self, started: Instant, deadline: Instant) -> Result<(), TermError> {
        while !self.is_raw()? {
            let now = Instant::now();
            if now >= deadline {
                return Err(self.timeout(Stage::RawMode, now - started));
            }
            match self.pump(RAW_MODE_POLL.min(deadline - now), &mut |_| false)? {
                Pumped::Eof => return Err(self.exited(Stage::RawMode)),
                Pumped::Idle if self.leader.has_exited() => {
                    return Err(self.exited(Stage::RawMode));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// A probe-mode timeout, with where the cursor and the probe were.
    fn probe_timeout(
        &self,
        stage: Stage,
        waited: Duration,
        probe_seen: Option<(u16, u16)>,
        origin: Option<(u16, u16)>,
    ) -> TermError {
        TermError::ProbeTimeout {
            stage,
            waited,
            whereabouts: ProbeWhere {
                cursor: self.cursor(),
                probe_seen,
                origin,
            },
            screen: self.screen_dump(),
        }
    }

    /// Probe stage 2: probes `<tag><index>` (letters only, see [`PROBE_LETTERS`]),
    /// one every [`PROBE_INTERVAL`], each replacing the previous, until one is on a
    /// visible frame.
    ///
    /// A probe on the screen only means ready while the terminal is still in raw
    /// mode: in cooked mode the kernel echoes input itself, whether or not the
    /// program reads it (it may have restored the terminal just before dying).
    fn type_probes(&mut self, started: Instant, deadline: Instant) -> Result<Probed, TermError> {
        let tag = random_word(PROBE_TAG_LENGTH, PROBE_LETTERS);
        let mut typed = 0usize;
        let mut next_probe = Instant::now();
        let mut seen = None;
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Err(self.probe_timeout(Stage::ProbeEcho, now - started, seen, None));
            }
            if now >= next_probe {
                let mut keys = vec![Key::Backspace; if typed > 0 { probe_length(&tag) } else { 0 }];
                keys.extend(probe(&tag, typed).chars().map(Key::Char));
                self.send_keys(&keys)?;
                typed += 1;
                next_probe = now + PROBE_INTERVAL;
            }
            let wait = next_probe.min(deadline).saturating_duration_since(now);
            let pumped = self.pump(wait, &mut |s| {
                let text = s.contents();
                // The ready check first: the frame that shows a probe is the one
                // whose detection is measured, and where a probe was seen only
                // matters to the message of a timeout, which a hit rules out.
                if visible_probe(&text, &tag, typed).is_some() {
                    return true;
                }
                if text.contains(tag.as_str()) {
                    seen = find_text(s, &tag).or(seen);
                }
                false
            })?;
            match pumped {
                Pumped::Data(Some(hit)) => {
                    if self.leader.has_exited() {
                        return Err(self.exited(Stage::ProbeEcho));
                    }
                    if !self.is_raw()? {
                        return Ok(Probed::Cooked { tag });
                    }
                    return Ok(Probed::Ready { hit, tag, typed });
                }
                Pumped::Data(None) => {}
                Pumped::Idle => {
                    if self.leader.has_exited() {
                        return Err(self.exited(Stage::ProbeEcho));
                    }
                }
                Pumped::Eof => return Err(self.exited(Stage::ProbeEcho)),
            }
        }
    }

    /// Probe stage 3: erases the last probe (all earlier ones were erased before it
    /// was typed), then waits for it to leave and the cursor to come back to where it
    /// began. A program that hides the cursor is clean once the probe is gone.
    fn erase_probe(&mut self, tag: &str, typed: usize) -> Result<(), TermError> {
        let origin = visible_probe(&self.screen.text(), tag, typed)
            .and_then(|index| find_text(self.screen.vt(), &probe(tag, index)));
        self.send_keys(&vec![Key::Backspace; probe_length(tag)])?;
        let started = Instant::now();
        let cleanup_deadline = started + PROBE_CLEANUP_TIMEOUT;
        let mut seen = origin;
        let gone = self.wait_until(Stage::ProbeErase, cleanup_deadline, &mut |s| {
            let text = s.contents();
            if text.contains(tag) {
                seen = find_text(s, tag).or(seen);
            }
            visible_probe(&text, tag, typed).is_none()
        });
        if let Err(TermError::Timeout { stage, waited, .. }) = gone {
            return Err(self.probe_timeout(stage, waited, seen, origin));
        }
        gone?;
        if let Some(origin) = origin {
            let back = self.wait_until(Stage::CursorReturn, cleanup_deadline, &mut |s| {
                s.hide_cursor() || s.cursor_position() == origin
            });
            if let Err(TermError::Timeout { stage, .. }) = back {
                let waited = started.elapsed();
                return Err(self.probe_timeout(stage, waited, seen, Some(origin)));
            }
            back?;
        }
        Ok(())
    }
}

/// How a round of probe typing ended.
enum Probed {
    /// A probe showed while the terminal was in raw mode and the program alive.
    Ready {
        /// When the probe was read and recognised.
        hit: Hit,
        /// The round's probe tag.
        tag: String,
        /// How many probes were typed.
        typed: usize,
    },
    /// A probe showed, but the terminal is in cooked mode again: the kernel echoed it.
    Cooked {
        /// The round's probe tag.
        tag: String,
    },
}

/// The number of probes whose index fits [`PROBE_INDEX_LENGTH`] letters.
const PROBE_INDEXES: usize = 1 << (3 * PROBE_INDEX_LENGTH);

/// The characters of every probe of a session tagged `tag`.
fn probe_length(tag: &str) -> usize {
    tag.len() + PROBE_INDEX_LENGTH
}

/// The `index`-th probe of a session tagged `tag`: the tag, then the index in base 8
/// written with [`PROBE_LETTERS`], most significant letter first.
fn probe(tag: &str, index: usize) -> String {
    let index = index % PROBE_INDEXES;
    let mut text = tag.to_owned();
    for position in (0..PROBE_INDEX_LENGTH).rev() {
        let digit = (index >> (3 * position)) & 7;
        text.push(char::from(PROBE_LETTERS[digit]));
    }
    text
}

/// The index of a typed probe (one of the first `typed`) shown in `text`.
fn visible_probe(text: &str, tag: &str, typed: usize) -> Option<usize> {
    text.match_indices(tag).find_map(|(start, _)| {
        let letters = text.get(start + tag.len()..start + tag.len() + PROBE_INDEX_LENGTH)?;
        let mut index = 0usize;
        for letter in letters.bytes() {
            let digit = PROBE_LETTERS.iter().position(|&l| l == letter)?;
            index = index * 8 + digit;
        }
        (index < typed.min(PROBE_INDEXES)).then_some(index)
    })
}

impl Drop for Terminal {
    fn drop(&mut self) {
        if self.close_report.is_none() {
            self.master = None;
            let _ = self.kill_and_verify();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_are_found_only_when_typed() {
        let tag = "bfgmpuvz";
        let text = format!("> {} and {}", probe(tag, 2), probe(tag, 9));
        assert_eq!(probe(tag, 2), "bfgmpuvzbbbbg");
        assert_eq!(probe(tag, 9), "bfgmpuvzbbbff");
        assert_eq!(visible_probe(&text, tag, 3), Some(2));
        assert_eq!(visible_probe(&text, tag, 2), None);
        assert_eq!(visible_probe("bfgmpuvzbb", tag, 5), None);
        assert_eq!(visible_probe("bfgmpuvzbbbxb", tag, 5), None);
        for index in [0, 1, 7, 8, 4095, PROBE_INDEXES - 1] {
            assert_eq!(
                visible_probe(&probe(tag, index), tag, PROBE_INDEXES),
                Some(index)
            );
        }
    }

    #[test]
    fn probes_carry_no_digit_enter_or_usual_answer_key() {
        let tag = random_word(PROBE_TAG_LENGTH, PROBE_LETTERS);
        for index in 0..PROBE_INDEXES {
            let text = probe(&tag, index);
            assert_eq!(text.len(), probe_length(&tag));
            assert!(
                text.bytes()
                    .all(|b| b.is_ascii_lowercase() && !b"ynadqcsroetxihjkl".contains(&b)),
                "{text}"
            );
        }
    }

    #[test]
    fn random_words_use_the_given_letters() {
        let word = random_word(32, SAMPLE_LETTERS);
        assert_eq!(word.len(), 32);
        assert!(word.bytes().all(|b| b.is_ascii_lowercase()));
        assert_ne!(word, random_word(32, SAMPLE_LETTERS));
        assert!(
            random_word(32, PROBE_LETTERS)
                .bytes()
                .all(|b| PROBE_LETTERS.contains(&b))
        );
    }

    #[test]
    fn options_keep_one_value_per_variable() {
        let options = SpawnOptions::new("x")
            .env("A", "1")
            .env("B", "2")
            .env("A", "3");
        assert_eq!(
            options.env,
            vec![("B".into(), "2".into()), ("A".into(), "3".into())]
        );
    }
}
