//! Pasting as a terminal pastes, and waiting until the program shows it took the paste.

use super::pump::{EXIT_CHECK_INTERVAL, Pumped, timespec};
use super::spawn::Terminal;
use crate::error::{Stage, TermError};
use rustix::event::{PollFd, PollFlags};
use std::time::{Duration, Instant};

/// How a program was seen to accept a paste ([`Terminal::wait_accepted`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accepted {
    /// The check held on the screen (the paste's own text is shown); when the output
    /// that made it hold was read, since spawn.
    Shown(Duration),
    /// Output arrived after the paste and then nothing for the quiet time (a program
    /// that folds a paste into a placeholder); when that last output was read, since spawn.
    Quiet(Duration),
}

impl Accepted {
    /// When the paste was accepted, since spawn.
    pub fn at(self) -> Duration {
        match self {
            Accepted::Shown(at) | Accepted::Quiet(at) => at,
        }
    }
}

/// The bytes a terminal sends for a paste of `text`: newlines as carriage returns (as
/// xterm and its kind send them), escapes dropped (a pasted `ESC [201~` would end the
/// paste early), and the whole wrapped in `ESC [200~` / `ESC [201~` when the program
/// turned bracketed paste on.
fn paste_bytes(text: &str, bracketed: bool) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(text.len() + 12);
    if bracketed {
        bytes.extend_from_slice(b"\x1b[200~");
    }
    bytes.extend(text.bytes().filter(|&b| b != 0x1b).map(|b| match b {
        b'\n' => b'\r',
        other => other,
    }));
    if bracketed {
        bytes.extend_from_slice(b"\x1b[201~");
    }
    bytes
}

impl Terminal {
    /// Pastes `text`: bracketed when the program asked for it (`CSI ? 2004 h`), else as
    /// typed text. Written as fast as the program reads, its output read meanwhile (a
    /// program that echoes a large paste as it reads must not wait for us to read);
    /// fails when the program has not read it all after `timeout`. Returns when the
    /// last byte was written, since spawn.
    pub fn paste(&mut self, text: &str, timeout: Duration) -> Result<Duration, TermError> {
        let bytes = paste_bytes(text, self.screen.vt().bracketed_paste());
        let started = Instant::now();
        if let Some(transcript) = &mut self.transcript {
            transcript.record_input(&bytes, started);
        }
        let deadline = started + timeout;
        let pid = self.pid;
        let mut rest = &bytes[..];
        while !rest.is_empty() {
            let written = match &self.master {
                Some(master) if !self.eof => rustix::io::write(master, rest),
                _ => return Err(self.exited(Stage::Paste)),
            };
            match written {
                Ok(count) => {
                    rest = &rest[count..];
                    continue;
                }
                Err(rustix::io::Errno::IO) => return Err(self.exited(Stage::Paste)),
                Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
                Err(errno) => {
                    return Err(TermError::Io {
                        action: "write a paste to",
                        pid,
                        source: errno.into(),
                    });
                }
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(self.timeout(Stage::Paste, now - started));
            }
            let readable = match &self.master {
                Some(master) => {
                    let mut fds = [PollFd::new(master, PollFlags::IN | PollFlags::OUT)];
                    let wait = (deadline - now).min(EXIT_CHECK_INTERVAL);
                    match rustix::event::poll(&mut fds, Some(&timespec(wait))) {
                        Ok(_) | Err(rustix::io::Errno::INTR) => {}
                        Err(errno) => {
                            return Err(TermError::Io {
                                action: "poll",
                                pid,
                                source: errno.into(),
                            });
                        }
                    }
                    fds[0].revents().contains(PollFlags::IN)
                }
                None => return Err(self.exited(Stage::Paste)),
            };
            if readable && let Pumped::Eof = self.pump(Duration::ZERO, &mut |_| false)? {
                return Err(self.exited(Stage::Paste));
            }
        }
        Ok(self.elapsed())
    }

    /// Waits until `shown` holds for the screen's text, or until the screen's text differs
    /// from `before` (the screen before the paste, as [`Terminal::screen_text`] gave it) and has not changed for `quiet`, at most
    /// `timeout`. Output that redraws the same screen is no change: an agent that repaints
    /// while it reads a paste and then works on it in silence is not accepted early.
    pub fn wait_accepted(
        &mut self,
        shown: &mut dyn FnMut(&str) -> bool,
        before: &str,
        quiet: Duration,
        timeout: Duration,
    ) -> Result<Accepted, TermError> {
        let started = Instant::now();
        let deadline = started + timeout;
        let spawned = self.spawned_at;
        let since_spawn = |at: Instant| at.saturating_duration_since(spawned);
        // Only a frame a person could see counts: a screen read in the middle of a
        // synchronized update (a redraw split across two reads) is half cleared, and was
        // taken for a change.
        let visible = !self.screen.in_sync(started);
        let mut last = if visible {
            self.screen.text()
        } else {
            before.to_owned()
        };
        if visible && shown(&last) {
            // Shown while the paste was written: the last read is when.
            let at = self.last_output_at.unwrap_or(started);
            return Ok(Accepted::Shown(since_spawn(at)));
        }
        // When the screen last changed, once it differs from `before`.
        let mut changed_at = (last != before).then(|| self.last_output_at.unwrap_or(started));
        loop {
            let now = Instant::now();
            if let Some(at) = changed_at
                && now.saturating_duration_since(at) >= quiet
            {
                return Ok(Accepted::Quiet(since_spawn(at)));
            }
            if now >= deadline {
                return Err(self.timeout(Stage::Quiet, now - started));
            }
            let wait = match changed_at {
                Some(at) => (at + quiet).min(deadline).saturating_duration_since(now),
                None => (deadline - now).min(EXIT_CHECK_INTERVAL),
            };
            let mut changed = false;
            let pumped = self.pump(wait, &mut |s| {
                let text = crate::screen::screen_text(s);
                if shown(&text) {
                    return true;
                }
                if text != last {
                    changed = text != before;
                    last = text;
                }
                false
            })?;
            match pumped {
                Pumped::Data(Some(hit)) => return Ok(Accepted::Shown(since_spawn(hit.read_at))),
                Pumped::Eof => return Err(self.exited(Stage::Quiet)),
                Pumped::Data(None) if changed => {
                    changed_at = self.last_output_at;
                }
                Pumped::Data(None) | Pumped::Idle => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bracketed_paste_is_wrapped_and_cannot_end_itself_early() {
        assert_eq!(
            paste_bytes("a\nb\x1b[201~c", true),
            b"\x1b[200~a\rb[201~c\x1b[201~"
        );
        // Without bracketed paste, the text arrives as typed, newlines as Enter.
        assert_eq!(paste_bytes("a\nb", false), b"a\rb");
    }
}
