//! [`Terminal`] itself: starting the program in a fresh PTY, and what can be read
//! about it at any moment (pid, timeline, screen, terminal modes).

use super::options::SpawnOptions;
use crate::close::CloseReport;
use crate::error::TermError;
use crate::keys::Key;
use crate::output_counts::{OutputCounter, OutputCounts};
use crate::pty_linux;
use crate::screen::Screen;
use crate::transcript::{CastSetup, Transcript};
use bench_proc::Leader;
use rustix::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::time::{Duration, Instant};

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

/// A program running in a pseudo-terminal with a screen model.
///
/// Everything the program writes is fed to the screen model and its start-up
/// queries are answered; output is only read while a method runs, as a terminal
/// that is not looked at would not be drawn either. Dropping a terminal without
/// [`Terminal::close`] still kills its session.
///
/// # Time
///
/// One clock: every moment a terminal returns is a [`Duration`] since spawn (the
/// instant just before the program was forked), taken when bench-term read the
/// output that showed it: [`Terminal::ready`], [`Terminal::wait_for`], every
/// [`Timeline`] entry, and [`Terminal::elapsed`] for now. A wait that finds the
/// screen already showing what it waits for returns the moment of the last read,
/// not the moment of the call. [`Terminal::spawn_monotonic`] places spawn on
/// CLOCK_MONOTONIC, to compare with stamps the program took itself.
///
/// Lengths of time are durations and are named so: [`Terminal::keystroke_latency`]
/// (from a key's write to the read that shows it), [`crate::CloseReport::took`],
/// [`crate::QuitStep`]'s waits.
#[derive(Debug)]
pub struct Terminal {
    pub(super) master: Option<OwnedFd>,
    /// The program, leading its session: once it is reaped, its pid may belong to
    /// another process, so the session is never signalled again.
    pub(super) leader: Leader,
    pub(super) pid: u32,
    pub(super) program: String,
    pub(super) spawned_at: Instant,
    pub(super) spawn_monotonic: Duration,
    pub(super) screen: Screen,
    pub(super) timeline: Timeline,
    pub(super) last_output_at: Option<Instant>,
    pub(super) transcript: Option<Transcript>,
    pub(super) quit_keys: Vec<Key>,
    pub(super) quit_reaction_wait: Duration,
    pub(super) quit_grace: Duration,
    pub(super) eof: bool,
    pub(super) close_report: Option<CloseReport>,
    pub(super) buffer: Vec<u8>,
    pub(super) replies: Vec<u8>,
    pub(super) ready_screen: Option<String>,
    pub(super) output: OutputCounter,
}

/// CLOCK_MONOTONIC now, the clock [`Instant`] uses on Linux.
pub(super) fn monotonic_now() -> Duration {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    Duration::new(
        u64::try_from(now.tv_sec).unwrap_or(0),
        u32::try_from(now.tv_nsec).unwrap_or(0),
    )
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
            quit_reaction_wait: options.quit_reaction_wait,
            quit_grace: options.quit_grace,
            eof: false,
            close_report: None,
            buffer: vec![0; 64 * 1024],
            replies: Vec::new(),
            ready_screen: None,
            output: OutputCounter::new(),
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

    /// The instant of spawn: the origin of the terminal's clock, so that times taken by
    /// another clock (an `Instant` of its own) are put on it.
    pub fn spawned_at(&self) -> Instant {
        self.spawned_at
    }

    /// Now, on the terminal's clock: the time since spawn.
    pub fn elapsed(&self) -> Duration {
        self.spawned_at.elapsed()
    }

    /// CLOCK_MONOTONIC at spawn, so that [`Timeline`] entries can be compared with
    /// timestamps the program itself took (spawn + entry).
    pub fn spawn_monotonic(&self) -> Duration {
        self.spawn_monotonic
    }

    /// What the program wrote to the terminal so far, counted as it was read; two
    /// snapshots' [difference](OutputCounts::since) is what arrived between them.
    pub fn output_counts(&self) -> OutputCounts {
        self.output.counts()
    }

    /// The screen as text: one line per row, trailing blanks trimmed.
    pub fn screen_text(&self) -> String {
        self.screen.text()
    }

    /// The screen's text without any whitespace: what stays of a text however the
    /// program wraps it (the text of [`Terminal::screen_text`], whitespace removed).
    pub fn squashed_text(&self) -> String {
        let mut text = String::new();
        crate::screen::squashed_text(self.screen.vt(), &mut text);
        text
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
}
