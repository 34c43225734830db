//! What the terminal receives: counters over the program's output bytes, for the redraw
//! cost of a TUI (bytes, frames, full clears, alternate-screen switches).
//!
//! A [`OutputCounter`] is fed every chunk the terminal reads, keeps its escape-sequence
//! state between chunks (a sequence split across reads is counted once, in the chunk that
//! completes it) and never grows: its only buffer is a bounded CSI parameter string.
//! [`OutputCounts`] is a cumulative snapshot; the difference of two snapshots
//! ([`OutputCounts::since`]) is what arrived between them.

use std::time::{Duration, Instant};

/// Reads this close together belong to one write burst: a program that draws a frame
/// in several writes without synchronized updates reaches the master in reads well under
/// a millisecond apart, while a frame drawn per key or per streamed chunk comes at least
/// a few milliseconds after the previous one.
pub const BURST_GAP: Duration = Duration::from_millis(4);

/// The longest CSI parameter string kept; the sequences counted are far shorter, so a
/// longer one is not one of them and is skipped.
const MAX_PARAMS: usize = 32;

/// Cumulative counts of what a program wrote to its terminal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OutputCounts {
    /// Bytes written by the program.
    pub bytes: u64,
    /// Reads of the terminal's master that returned output.
    pub reads: u64,
    /// Write bursts: runs of reads less than [`BURST_GAP`] apart.
    pub bursts: u64,
    /// Synchronized updates completed (`CSI ? 2026 l`).
    pub sync_frames: u64,
    /// Full clears: `CSI 2 J`, `CSI 3 J` (scrollback too) and `ESC c` (reset).
    pub full_clears: u64,
    /// Alternate-screen switches, either way: `CSI ? 1049 h/l`, `? 1047`, `? 47`.
    pub alt_screen_switches: u64,
}

impl OutputCounts {
    /// What arrived between `earlier` and this snapshot (zero where the counts went
    /// backwards, which only a snapshot of another terminal could do).
    pub fn since(&self, earlier: &OutputCounts) -> OutputCounts {
        OutputCounts {
            bytes: self.bytes.saturating_sub(earlier.bytes),
            reads: self.reads.saturating_sub(earlier.reads),
            bursts: self.bursts.saturating_sub(earlier.bursts),
            sync_frames: self.sync_frames.saturating_sub(earlier.sync_frames),
            full_clears: self.full_clears.saturating_sub(earlier.full_clears),
            alt_screen_switches: self
                .alt_screen_switches
                .saturating_sub(earlier.alt_screen_switches),
        }
    }

    /// Frames: the synchronized updates when the program uses them, else its write
    /// bursts (each burst is taken for one redraw).
    pub fn frames(&self) -> u64 {
        if self.sync_frames > 0 {
            self.sync_frames
        } else {
            self.bursts
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    Escape,
    Csi,
}

/// Counts a program's output as it is read; see the module's documentation.
#[derive(Debug, Clone)]
pub struct OutputCounter {
    counts: OutputCounts,
    state: State,
    params: Vec<u8>,
    overflow: bool,
    last_read: Option<Instant>,
}

impl Default for OutputCounter {
    fn default() -> Self {
        OutputCounter::new()
    }
}

impl OutputCounter {
    /// A counter at zero, in the ground state.
    pub fn new() -> OutputCounter {
        OutputCounter {
            counts: OutputCounts::default(),
            state: State::Ground,
            params: Vec::with_capacity(MAX_PARAMS),
            overflow: false,
            last_read: None,
        }
    }

    /// The counts so far.
    pub fn counts(&self) -> OutputCounts {
        self.counts
    }

    /// Counts one chunk of output, read at `at`.
    pub fn feed(&mut self, chunk: &[u8], at: Instant) {
        if chunk.is_empty() {
            return;
        }
        self.counts.bytes += chunk.len() as u64;
        self.counts.reads += 1;
        let new_burst = self
            .last_read
            .is_none_or(|last| at.saturating_duration_since(last) >= BURST_GAP);
        if new_burst {
            self.counts.bursts += 1;
        }
        self.last_read = Some(at);
        let mut rest = chunk;
        while let Some((&byte, after)) = rest.split_first() {
            // Only ESC leaves the ground state: skip the text up to the next one at once.
            if self.state == State::Ground && byte != 0x1b {
                match memchr::memchr(0x1b, rest) {
                    Some(offset) => rest = &rest[offset..],
                    None => return,
                }
                continue;
            }
            self.advance(byte);
            rest = after;
        }
    }

    fn advance(&mut self, byte: u8) {
        match (self.state, byte) {
            // ESC starts a sequence anywhere, abandoning one in progress (as terminals do).
            (_, 0x1b) => self.state = State::Escape,
            (State::Ground, _) => {}
            (State::Escape, b'[') => {
                self.params.clear();
                self.overflow = false;
                self.state = State::Csi;
            }
            (State::Escape, b'c') => {
                self.counts.full_clears += 1;
                self.state = State::Ground;
            }
            (State::Escape, _) => self.state = State::Ground,
            // Parameters and intermediates.
            (State::Csi, 0x20..=0x3f) => {
                if self.params.len() < MAX_PARAMS {
                    self.params.push(byte);
                } else {
                    self.overflow = true;
                }
            }
            (State::Csi, 0x40..=0x7e) => {
                if !self.overflow {
                    self.dispatch(byte);
                }
                self.state = State::Ground;
            }
            // CAN and SUB cancel a sequence; other controls inside one are executed by a
            // terminal and leave it going.
            (State::Csi, 0x18 | 0x1a) => self.state = State::Ground,
            (State::Csi, _) => {}
        }
    }

    fn dispatch(&mut self, last: u8) {
        match last {
            b'J' => {
                if matches!(self.params.as_slice(), b"2" | b"3") {
                    self.counts.full_clears += 1;
                }
            }
            b'h' | b'l' => {
                let Some(modes) = self.params.strip_prefix(b"?") else {
                    return;
                };
                for mode in modes.split(|&b| b == b';') {
                    match mode {
                        b"2026" if last == b'l' => self.counts.sync_frames += 1,
                        b"1049" | b"1047" | b"47" => self.counts.alt_screen_switches += 1,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(chunks: &[&[u8]]) -> OutputCounts {
        let mut counter = OutputCounter::new();
        let at = Instant::now();
        for chunk in chunks {
            counter.feed(chunk, at);
        }
        counter.counts()
    }

    #[test]
    fn bytes_and_reads_are_counted() {
        let counts = count(&[b"hello", b" world"]);
        assert_eq!((counts.bytes, counts.reads), (11, 2));
    }

    #[test]
    fn synchronized_updates_are_frames() {
        let frame: &[u8] = b"\x1b[?2026h\x1b[Hhello\x1b[?2026l";
        let counts = count(&[frame, frame, frame]);
        assert_eq!(counts.sync_frames, 3);
        assert_eq!(counts.frames(), 3);
    }

    #[test]
    fn a_sequence_split_across_reads_is_counted_once() {
        let counts = count(&[b"\x1b[?20", b"26l", b"\x1b", b"[2", b"J"]);
        assert_eq!(counts.sync_frames, 1);
        assert_eq!(counts.full_clears, 1);
    }

    #[test]
    fn full_clears_are_erase_display_2_and_3_and_reset() {
        let counts = count(&[b"\x1b[2J\x1b[3J\x1bc"]);
        assert_eq!(counts.full_clears, 3);
        // Erasing below or above the cursor, or a line, is not a full clear.
        let partial = count(&[b"\x1b[J\x1b[0J\x1b[1J\x1b[2K"]);
        assert_eq!(partial.full_clears, 0);
    }

    #[test]
    fn alternate_screen_switches_count_every_mode_and_direction() {
        let counts = count(&[b"\x1b[?1049h\x1b[?1049l\x1b[?47h\x1b[?1047l\x1b[?25;1049h"]);
        assert_eq!(counts.alt_screen_switches, 5);
        // Without the `?`, 1049 is an ANSI mode, not the alternate screen.
        assert_eq!(count(&[b"\x1b[1049h"]).alt_screen_switches, 0);
    }

    #[test]
    fn cancelled_and_overlong_sequences_count_nothing() {
        let counts = count(&[b"\x1b[2\x18J", b"\x1b[?2026\x1al"]);
        assert_eq!((counts.full_clears, counts.sync_frames), (0, 0));
        let long = [b"\x1b[".as_slice(), &[b'1'; 40], b";2J"].concat();
        assert_eq!(count(&[&long]).full_clears, 0);
    }

    #[test]
    fn reads_close_together_are_one_burst() {
        let mut counter = OutputCounter::new();
        let start = Instant::now();
        counter.feed(b"a", start);
        counter.feed(b"b", start + Duration::from_millis(1));
        counter.feed(b"c", start + Duration::from_millis(50));
        let counts = counter.counts();
        assert_eq!((counts.reads, counts.bursts), (3, 2));
        // Without synchronized updates, the bursts are the frames.
        assert_eq!(counts.frames(), 2);
    }

    #[test]
    fn the_difference_of_two_snapshots_is_what_arrived_between() {
        let mut counter = OutputCounter::new();
        let at = Instant::now();
        counter.feed(b"\x1b[2J12345", at);
        let before = counter.counts();
        counter.feed(b"\x1b[?2026h67\x1b[?2026l", at);
        let between = counter.counts().since(&before);
        assert_eq!(between.bytes, 18);
        assert_eq!((between.sync_frames, between.full_clears), (1, 0));
    }
}
