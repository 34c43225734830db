//! Waiting on the screen: the ready modes but probe, settling, and
//! [`Terminal::wait_for`].

use super::pump::{EXIT_CHECK_INTERVAL, Hit, Pumped};
use super::spawn::Terminal;
use crate::dialog::ReadyGuard;
use crate::error::{ScreenDump, Stage, TermError};
use crate::ready::ReadyMode;
use crate::screen::{shows_frame, squashed_text};
use regex::Regex;
use std::time::{Duration, Instant};

impl Terminal {
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
        // The guard reads the screen the ready pattern reads, trailing blanks included, so
        // a prompt ending in "> " can be required as it can be waited for.
        match guard.check(&screen_up_to_cursor(self.screen.vt())) {
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
            ReadyMode::Pattern(regex) => {
                let started = Instant::now();
                let waited = self.wait_until(Stage::Pattern, deadline, &mut |s| {
                    regex.is_match(&s.contents())
                });
                match waited {
                    Err(TermError::Timeout { screen, .. }) => {
                        return Err(TermError::PatternTimeout {
                            pattern: regex.as_str().to_owned(),
                            waited: started.elapsed(),
                            screen,
                        });
                    }
                    other => other?,
                }
            }
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

    /// Reads output for `duration`, calling `watch` with the screen's text after every
    /// read (so a caller that waits between keys still sees each frame as it comes);
    /// returns early when the program closed the terminal.
    pub fn watch_screen(
        &mut self,
        duration: Duration,
        watch: &mut dyn FnMut(&str),
    ) -> Result<(), TermError> {
        let until = Instant::now() + duration;
        loop {
            let now = Instant::now();
            if now >= until {
                return Ok(());
            }
            let pumped = self.pump(until - now, &mut |s| {
                watch(&s.contents());
                false
            })?;
            if let Pumped::Eof = pumped {
                return Ok(());
            }
        }
    }

    /// [`Terminal::watch_screen`] with the screen's text squashed of its whitespace
    /// ([`Terminal::squashed_text`]), built once a frame into one buffer.
    pub fn watch_squashed(
        &mut self,
        duration: Duration,
        watch: &mut dyn FnMut(&str),
    ) -> Result<(), TermError> {
        let mut text = String::new();
        let until = Instant::now() + duration;
        loop {
            let now = Instant::now();
            if now >= until {
                return Ok(());
            }
            let pumped = self.pump(until - now, &mut |s| {
                squashed_text(s, &mut text);
                watch(&text);
                false
            })?;
            if let Pumped::Eof = pumped {
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

    /// Waits until `check` holds for the screen's text (rows joined by `\n`), called after
    /// every read of output, at most `timeout`. Returns when the output that made it
    /// hold was read, on the terminal's clock (time since spawn). The same wait as
    /// [`Terminal::wait_for`], for checks a regex cannot say (occurrence counts, several
    /// texts watched at once).
    pub fn wait_for_screen(
        &mut self,
        timeout: Duration,
        check: &mut dyn FnMut(&str) -> bool,
    ) -> Result<Duration, TermError> {
        let hit = self.wait_until(Stage::WaitFor, Instant::now() + timeout, &mut |s| {
            check(&s.contents())
        })?;
        Ok(hit.read_at.saturating_duration_since(self.spawned_at))
    }

    /// [`Terminal::wait_for_screen`] with the screen's text squashed of its whitespace
    /// ([`Terminal::squashed_text`]): what a check for text that the program may
    /// wrap anywhere reads. The squashed text is built once a frame into one buffer, not
    /// as the full text and then a second string without its whitespace.
    pub fn wait_for_squashed(
        &mut self,
        timeout: Duration,
        check: &mut dyn FnMut(&str) -> bool,
    ) -> Result<Duration, TermError> {
        let mut text = String::new();
        let hit = self.wait_until(Stage::WaitFor, Instant::now() + timeout, &mut |s| {
            squashed_text(s, &mut text);
            check(&text)
        })?;
        Ok(hit.read_at.saturating_duration_since(self.spawned_at))
    }

    /// [`Terminal::wait_for_squashed`] for a check that cannot begin to hold before
    /// `open` says so: the squashed text is built and `check` called only at frames
    /// read while `open()` is true, so the frames of a long stream the check cannot
    /// match yet cost their emulation and nothing more (a session knows from its model
    /// endpoint when a reply's text has been sent). `open` is asked at every frame and
    /// at least every 50 ms; when it turns true after the last frame was read, the
    /// screen as it stands is checked, and a hit is timed at that frame's read.
    pub fn wait_for_squashed_gated(
        &mut self,
        timeout: Duration,
        open: &mut dyn FnMut() -> bool,
        check: &mut dyn FnMut(&str) -> bool,
    ) -> Result<Duration, TermError> {
        let mut text = String::new();
        let deadline = Instant::now() + timeout;
        let hit = self.wait_until_open(Stage::WaitFor, deadline, open, &mut |s| {
            squashed_text(s, &mut text);
            check(&text)
        })?;
        Ok(hit.read_at.saturating_duration_since(self.spawned_at))
    }

    /// Waits until the screen text matches `pattern` outside a synchronized update,
    /// at most `timeout`; returns when the output that made it match was read, since
    /// spawn (for a screen that already matches, when the last output was read).
    ///
    /// To time a step, take [`Terminal::elapsed`] before typing and subtract it.
    pub fn wait_for(&mut self, pattern: &Regex, timeout: Duration) -> Result<Duration, TermError> {
        let hit = self.wait_until(Stage::WaitFor, Instant::now() + timeout, &mut |s| {
            pattern.is_match(&s.contents())
        })?;
        Ok(hit.read_at.saturating_duration_since(self.spawned_at))
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
}

/// The screen's text as the ready pattern reads it (written blanks kept), with the
/// cursor's row ending at the cursor when only blanks follow it: a prompt "> " reads
/// "> " as a person sees it before the cursor, whether the program left its blank
/// unwritten or a probe's erasure wrote more blanks after it.
fn screen_up_to_cursor(vt: &vt100::Screen) -> String {
    let (cursor_row, cursor_col) = vt.cursor_position();
    let (_, cols) = vt.size();
    let mut rows: Vec<String> = vt.rows(0, cols).collect();
    if let Some(row) = rows.get_mut(usize::from(cursor_row)) {
        let cursor = usize::from(cursor_col);
        let chars: Vec<char> = row.chars().collect();
        if chars.iter().skip(cursor).all(|c| *c == ' ') {
            let mut cut: String = chars.iter().take(cursor).collect();
            cut.extend(std::iter::repeat_n(' ', cursor.saturating_sub(chars.len())));
            *row = cut;
        }
    }
    while rows.last().is_some_and(String::is_empty) {
        rows.pop();
    }
    rows.join("\n")
}
