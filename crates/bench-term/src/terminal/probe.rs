//! Probe readiness ([`ReadyMode::Probe`](crate::ReadyMode::Probe)): wait for raw
//! mode, type probes until one shows, erase it and wait for the screen to be clean.

use super::pump::{Hit, Pumped};
use super::spawn::Terminal;
use super::typing::random_word;
use crate::error::{ProbeWhere, Stage, TermError};
use crate::keys::Key;
use crate::screen::find_text;
use std::time::{Duration, Instant};

/// How often probe mode types a new probe.
const PROBE_INTERVAL: Duration = Duration::from_millis(20);

/// How long probe mode polls the terminal modes while waiting for raw mode.
const RAW_MODE_POLL: Duration = Duration::from_millis(1);

/// How far apart the probe's Backspaces are pressed once it was seen: a fast typist.
const PROBE_ERASE_GAP: Duration = Duration::from_millis(20);

/// How long probe mode may take to erase its probe once ready was recorded.
const PROBE_CLEANUP_TIMEOUT: Duration = Duration::from_secs(5);

/// How long the cursor must stay back at the probe's origin to count as back: longer
/// than a redraw takes between moving the cursor and rewriting the line.
const CURSOR_CONFIRM: Duration = Duration::from_millis(20);

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

impl Terminal {
    pub(super) fn ready_probe(&mut self, deadline: Instant) -> Result<Hit, TermError> {
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
        // One Backspace a write, as a person erases: a TUI that takes a read of several
        // bytes for a paste inserts DELs written at once as text.
        let erase = vec![Key::Backspace; probe_length(tag)];
        self.press_keys(&erase, PROBE_ERASE_GAP, &mut |_| {})?;
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
        let Some(origin) = origin else {
            return Ok(());
        };
        let back_at_origin = |s: &vt100::Screen| s.hide_cursor() || s.cursor_position() == origin;
        loop {
            let back = self.wait_until(Stage::CursorReturn, cleanup_deadline, &mut |s| {
                back_at_origin(s)
            });
            if let Err(TermError::Timeout { stage, .. }) = back {
                let waited = started.elapsed();
                return Err(self.probe_timeout(stage, waited, seen, Some(origin)));
            }
            back?;
            // A program that redraws its line (Python's REPL does) moves the cursor to the
            // line's start, then writes what is left of it: the cursor passes the origin
            // while a letter of the probe is still to be erased, and the screen at ready
            // read then (">>> v") failed `--ready-require '>>>.$'` once in a CI run. A
            // cursor still at the origin a moment later is where the erased line left it.
            if self.pump_for(CURSOR_CONFIRM)? && back_at_origin(self.screen.vt()) {
                return Ok(());
            }
            if Instant::now() >= cleanup_deadline {
                let waited = started.elapsed();
                return Err(self.probe_timeout(Stage::CursorReturn, waited, seen, Some(origin)));
            }
        }
    }

    /// Reads the program's output for `wait`; false once it closed the terminal.
    fn pump_for(&mut self, wait: Duration) -> Result<bool, TermError> {
        let until = Instant::now() + wait;
        loop {
            let now = Instant::now();
            if now >= until {
                return Ok(true);
            }
            if let Pumped::Eof = self.pump(until - now, &mut |_| false)? {
                return Ok(false);
            }
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
}
