//! The screen model: a VT100/xterm emulator fed with everything the program
//! writes, the queries it asks answered from that model, and the frames a person
//! would see.

use crate::queries::{Control, Found, ReplyState, Rgb, Scanner, reply};
use std::time::{Duration, Instant};

/// How long a synchronized update may stay open before frames are judged anyway,
/// as terminals do so that a crashed program cannot freeze the screen.
pub const SYNC_LIMIT: Duration = Duration::from_secs(1);

/// Width and height in pixels reported for one cell.
pub const CELL_PIXELS: (u16, u16) = (8, 16);

/// Deepest kitty keyboard flag stack kept; deeper pushes replace the top.
const KITTY_STACK_LIMIT: usize = 16;

/// A terminal screen: the emulator, the query scanner, and the state the
/// emulator does not keep (synchronized update, kitty keyboard flags).
pub struct Screen {
    parser: vt100::Parser,
    scanner: Scanner,
    found: Vec<Found>,
    kitty: Vec<u32>,
    sync_since: Option<Instant>,
    foreground: Rgb,
    background: Rgb,
}

impl std::fmt::Debug for Screen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Screen")
            .field("size", &self.parser.screen().size())
            .field("cursor", &self.parser.screen().cursor_position())
            .field("kitty", &self.kitty)
            .field("sync_since", &self.sync_since)
            .finish_non_exhaustive()
    }
}

impl Screen {
    /// An empty screen of `rows` x `cols` without scrollback.
    pub fn new(rows: u16, cols: u16) -> Screen {
        Screen {
            parser: vt100::Parser::new(rows, cols, 0),
            scanner: Scanner::new(),
            found: Vec::new(),
            kitty: vec![0],
            sync_since: None,
            foreground: Rgb(0xd0, 0xd0, 0xd0),
            background: Rgb(0x00, 0x00, 0x00),
        }
    }

    /// Feeds one chunk of output read at `now`.
    ///
    /// Answers to queries are appended to `replies`, each computed from the screen
    /// exactly as it stood when the query was written. `on_frame` is called at
    /// every frame a person could see: when a synchronized update ends, and at the
    /// end of the chunk unless an update is still open.
    pub fn feed(
        &mut self,
        chunk: &[u8],
        now: Instant,
        replies: &mut Vec<u8>,
        on_frame: &mut dyn FnMut(&vt100::Screen),
    ) {
        self.found.clear();
        self.scanner.scan(chunk, &mut self.found);
        let mut done = 0;
        let mut framed_at = None;
        for index in 0..self.found.len() {
            let Found { end, control } = self.found[index];
            self.parser.process(&chunk[done..end]);
            done = end;
            match control {
                Control::Query(query) => {
                    let state = self.reply_state();
                    replies.extend_from_slice(&reply(query, &state));
                }
                Control::SyncBegin => self.sync_since = Some(now),
                Control::SyncEnd => {
                    self.sync_since = None;
                    on_frame(self.parser.screen());
                    framed_at = Some(end);
                }
                Control::KittyPush(flags) => {
                    if self.kitty.len() >= KITTY_STACK_LIMIT {
                        self.kitty.pop();
                    }
                    self.kitty.push(flags);
                }
                Control::KittyPop(count) => {
                    let keep = self.kitty.len().saturating_sub(count as usize);
                    self.kitty.truncate(keep);
                    if self.kitty.is_empty() {
                        self.kitty.push(0);
                    }
                }
                Control::KittySet { flags, mode } => {
                    // The stack is never empty: pops refill it with 0.
                    if let Some(top) = self.kitty.last_mut() {
                        match mode {
                            2 => *top |= flags,
                            3 => *top &= !flags,
                            _ => *top = flags,
                        }
                    }
                }
            }
        }
        self.parser.process(&chunk[done..]);
        if framed_at != Some(chunk.len()) && !self.in_sync(now) {
            on_frame(self.parser.screen());
        }
    }

    /// Whether a synchronized update is open at `now` (and younger than [`SYNC_LIMIT`]).
    pub fn in_sync(&self, now: Instant) -> bool {
        self.sync_since
            .is_some_and(|since| now.saturating_duration_since(since) < SYNC_LIMIT)
    }

    /// The kitty keyboard flags the program turned on (0 when it did not).
    pub fn kitty_flags(&self) -> u32 {
        self.kitty.last().copied().unwrap_or(0)
    }

    /// The emulator's screen.
    pub fn vt(&self) -> &vt100::Screen {
        self.parser.screen()
    }

    /// The screen as text: one line per row, trailing blanks of each row and
    /// trailing empty rows trimmed.
    pub fn text(&self) -> String {
        screen_text(self.parser.screen())
    }

    fn reply_state(&self) -> ReplyState {
        let screen = self.parser.screen();
        let mouse = match screen.mouse_protocol_mode() {
            vt100::MouseProtocolMode::None => None,
            vt100::MouseProtocolMode::Press => Some(9),
            vt100::MouseProtocolMode::PressRelease => Some(1000),
            vt100::MouseProtocolMode::ButtonMotion => Some(1002),
            vt100::MouseProtocolMode::AnyMotion => Some(1003),
        };
        let encoding = match screen.mouse_protocol_encoding() {
            vt100::MouseProtocolEncoding::Default => None,
            vt100::MouseProtocolEncoding::Utf8 => Some(1005),
            vt100::MouseProtocolEncoding::Sgr => Some(1006),
        };
        let mut private_modes = vec![
            (1, screen.application_cursor()),
            (25, !screen.hide_cursor()),
            (47, screen.alternate_screen()),
            (1047, screen.alternate_screen()),
            (1049, screen.alternate_screen()),
            (2004, screen.bracketed_paste()),
            (2026, self.sync_since.is_some()),
        ];
        for mode in [9, 1000, 1002, 1003] {
            private_modes.push((mode, mouse == Some(mode)));
        }
        for mode in [1005, 1006] {
            private_modes.push((mode, encoding == Some(mode)));
        }
        ReplyState {
            cursor: screen.cursor_position(),
            size: screen.size(),
            cell_pixels: CELL_PIXELS,
            kitty_flags: self.kitty_flags(),
            private_modes,
            foreground: self.foreground,
            background: self.background,
        }
    }
}

/// The screen as text: one line per row, trailing blanks of each row and
/// trailing empty rows trimmed.
pub fn screen_text(screen: &vt100::Screen) -> String {
    let contents = screen.contents();
    let mut text = String::with_capacity(contents.len());
    for line in contents.lines() {
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text.truncate(text.trim_end().len());
    text
}

/// The screen's text without any whitespace, written into `out` (cleared first): what
/// stays of a text however a program wraps it, the text of [`screen_text`] with its
/// whitespace removed. A session checks it after every read of output, so it is made
/// into one buffer kept across reads. It is filtered from the emulator's own text,
/// which writes each row in one pass: reading cell by cell (`Screen::cell`) walks the
/// rows from the top for every cell, and made it three times as costly.
///
/// Box drawing and block elements (U+2500 to U+259F) go too: they are a TUI's frame, not
/// text, and Copilot's scrollbar, a `┃` at the end of every row once a session outgrows
/// the screen, split a reply's wrapped words (`End┃ofstep6.`) so that its end was never
/// found.
pub fn squashed_text(screen: &vt100::Screen, out: &mut String) {
    out.clear();
    out.extend(
        screen
            .contents()
            .chars()
            .filter(|&c| !c.is_whitespace() && !('\u{2500}'..='\u{259F}').contains(&c)),
    );
}

/// Whether the screen shows a "frame": a line with at least 3 letters or digits.
pub fn shows_frame(screen: &vt100::Screen) -> bool {
    let (_, cols) = screen.size();
    screen
        .rows(0, cols)
        .any(|row| row.chars().filter(|c| c.is_alphanumeric()).count() >= 3)
}

/// Where `needle` starts on the screen (row, column in cells), searching row by row.
/// Text that wraps onto the next row is not found.
pub fn find_text(screen: &vt100::Screen, needle: &str) -> Option<(u16, u16)> {
    let (rows, cols) = screen.size();
    let needle: Vec<char> = needle.chars().collect();
    if needle.is_empty() {
        return None;
    }
    // One entry per character with the column of the cell that holds it, so wide
    // characters before the needle do not shift the column; reused for every row.
    let mut cells: Vec<(u16, char)> = Vec::with_capacity(usize::from(cols));
    for row in 0..rows {
        cells.clear();
        for col in 0..cols {
            if let Some(cell) = screen.cell(row, col) {
                if cell.is_wide_continuation() {
                    continue;
                }
                let contents = cell.contents();
                if contents.is_empty() {
                    cells.push((col, ' '));
                } else {
                    cells.extend(contents.chars().map(|c| (col, c)));
                }
            }
        }
        if let Some(start) = cells
            .windows(needle.len())
            .position(|window| window.iter().zip(&needle).all(|(&(_, c), &n)| c == n))
        {
            return Some((row, cells[start].0));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(screen: &mut Screen, chunk: &[u8]) -> (Vec<u8>, usize) {
        let mut replies = Vec::new();
        let mut frames = 0;
        screen.feed(chunk, Instant::now(), &mut replies, &mut |_| frames += 1);
        (replies, frames)
    }

    #[test]
    fn cursor_report_reflects_output_before_the_query() {
        let mut screen = Screen::new(24, 80);
        let (replies, _) = feed(&mut screen, b"\x1b[5;10Habc\x1b[6n\x1b[1;1Hxyz\x1b[6n");
        assert_eq!(replies, b"\x1b[5;13R\x1b[1;4R");
    }

    #[test]
    fn frames_inside_a_synchronized_update_are_not_shown() {
        let mut screen = Screen::new(24, 80);
        let (_, frames) = feed(&mut screen, b"\x1b[?2026hghost");
        assert_eq!(frames, 0);
        let (_, frames) = feed(&mut screen, b"\x1b[2K\rreal\x1b[?2026l");
        assert_eq!(frames, 1);
        let (_, frames) = feed(
            &mut screen,
            b"\x1b[?2026hone\x1b[?2026l\x1b[?2026htwo\x1b[?2026lx",
        );
        assert_eq!(frames, 3);
    }

    #[test]
    fn kitty_flags_follow_push_set_and_pop() {
        let mut screen = Screen::new(24, 80);
        feed(&mut screen, b"\x1b[>1u");
        assert_eq!(screen.kitty_flags(), 1);
        feed(&mut screen, b"\x1b[=8;2u");
        assert_eq!(screen.kitty_flags(), 9);
        let (replies, _) = feed(&mut screen, b"\x1b[?u");
        assert_eq!(replies, b"\x1b[?9u");
        feed(&mut screen, b"\x1b[<5u");
        assert_eq!(screen.kitty_flags(), 0);
    }

    #[test]
    fn decrqm_reports_modes_from_the_emulator() {
        let mut screen = Screen::new(24, 80);
        let (replies, _) = feed(
            &mut screen,
            b"\x1b[?2004h\x1b[?2004$p\x1b[?25l\x1b[?25$p\x1b[?2026$p",
        );
        assert_eq!(replies, b"\x1b[?2004;1$y\x1b[?25;2$y\x1b[?2026;2$y");
    }

    #[test]
    fn a_frame_needs_three_letters_or_digits_on_one_line() {
        let mut screen = Screen::new(5, 20);
        feed(&mut screen, b"a\r\nb-c\r\n> ");
        assert!(!shows_frame(screen.vt()));
        feed(&mut screen, b"\r\n  x1y");
        assert!(shows_frame(screen.vt()));
    }

    #[test]
    fn squashed_text_is_the_text_without_its_whitespace() {
        let mut screen = Screen::new(6, 12);
        // A wrapped line, a wide character, a tab, a cleared cell and a blank row.
        feed(
            &mut screen,
            "one two three four\r\n漢字 x\ty\r\n\r\nlast  word\x1b[4;1Hmid\x1b[1D\x1b[X".as_bytes(),
        );
        let text = screen.text();
        let expected: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let mut squashed = String::from("stale");
        squashed_text(screen.vt(), &mut squashed);
        assert_eq!(squashed, expected);
        assert_eq!(squashed, "onetwothreefour漢字xymilastword");
    }

    #[test]
    fn text_is_found_by_cell_column_after_wide_characters() {
        let mut screen = Screen::new(5, 20);
        feed(&mut screen, "\r\n漢字 probe".as_bytes());
        assert_eq!(find_text(screen.vt(), "probe"), Some((1, 5)));
        assert_eq!(find_text(screen.vt(), "absent"), None);
    }

    #[test]
    fn a_frame_drawn_around_text_is_squashed_out() {
        let mut parser = vt100::Parser::new(3, 20, 0);
        parser.process("End of    ┃\r\nstep 6.   ┃\r\n╹▀▀▀▀".as_bytes());
        let mut text = String::new();
        squashed_text(parser.screen(), &mut text);
        assert_eq!(text, "Endofstep6.");
    }
}
