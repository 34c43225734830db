//! Finding the terminal queries and mode switches in a program's output, and
//! answering the queries.
//!
//! Programs ask their terminal questions at start-up (where is the cursor, what
//! are you, which keyboard protocol, what colours) and many block until they hear
//! back. [`Scanner`] finds those sequences in the byte stream, however the stream
//! is split across reads, and [`reply`] answers them from the state of the screen
//! model at the moment the query was written.

/// A question a program asked the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Query {
    /// `CSI 6 n` (DSR 6), or `CSI ? 6 n` (DECXCPR) when `private`: where is the cursor.
    CursorPosition {
        /// The DEC form, answered with a `?` prefix.
        private: bool,
    },
    /// `CSI 5 n`: are you working.
    Status,
    /// `CSI c` / `CSI 0 c`: primary device attributes (DA1).
    PrimaryAttributes,
    /// `CSI > c` / `CSI > 0 c`: secondary device attributes (DA2).
    SecondaryAttributes,
    /// `CSI ? u`: which kitty keyboard protocol flags are active.
    KittyKeyboard,
    /// `CSI ? Ps $ p` (DECRQM): is private mode `Ps` set.
    PrivateMode(u16),
    /// `CSI Ps $ p`: is ANSI mode `Ps` set.
    AnsiMode(u16),
    /// `CSI 14 t`: text area size in pixels.
    WindowPixels,
    /// `CSI 16 t`: cell size in pixels.
    CellPixels,
    /// `CSI 18 t`: text area size in characters.
    TextAreaCells,
    /// `CSI > q` (XTVERSION): terminal name and version.
    Version,
    /// `OSC 10 ; ?`: default foreground colour.
    Foreground {
        /// The query ended with BEL rather than ST; the answer ends the same way.
        bel: bool,
    },
    /// `OSC 11 ; ?`: default background colour.
    Background {
        /// The query ended with BEL rather than ST; the answer ends the same way.
        bel: bool,
    },
}

/// A sequence in the output that the terminal must act on beyond drawing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// A question to answer.
    Query(Query),
    /// `CSI ? 2026 h`: the program begins a synchronized update; frames are not shown.
    SyncBegin,
    /// `CSI ? 2026 l`: the synchronized update ends; the frame is complete.
    SyncEnd,
    /// `CSI > flags u`: push kitty keyboard flags.
    KittyPush(u32),
    /// `CSI < n u`: pop `n` kitty keyboard flag entries.
    KittyPop(u32),
    /// `CSI = flags ; mode u`: set (1), add (2) or remove (3) kitty keyboard flags.
    KittySet {
        /// The flags.
        flags: u32,
        /// 1 replace, 2 add, 3 remove.
        mode: u32,
    },
}

/// A [`Control`] and the offset just past its last byte in the chunk that completed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    /// Offset in the chunk just past the sequence's final byte.
    pub end: usize,
    /// What the sequence asks for.
    pub control: Control,
}

/// Longest CSI parameter string kept; longer sequences are not queries and are skipped.
const MAX_CSI_BYTES: usize = 64;
/// Longest OSC payload kept; longer strings (images, clipboard) are skipped.
const MAX_OSC_BYTES: usize = 64;

/// The C0 controls the scanner acts on: escape, bell (ends an OSC), cancel and
/// substitute (abort a sequence).
const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;
const CAN: u8 = 0x18;
const SUB: u8 = 0x1a;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    Escape,
    EscapeIntermediate,
    Csi,
    Osc,
    OscEscape,
    /// DCS, SOS, PM or APC: skipped until ST.
    Passthrough,
    PassthroughEscape,
}

/// An incremental scanner for escape sequences that need an answer or change
/// what counts as a visible frame.
///
/// It keeps its state between [`Scanner::scan`] calls, so a query split across
/// reads is found in the chunk that completes it.
#[derive(Debug, Clone)]
pub struct Scanner {
    state: State,
    buffer: Vec<u8>,
    overflow: bool,
}

impl Default for Scanner {
    fn default() -> Self {
        Scanner::new()
    }
}

impl Scanner {
    /// A scanner in the ground state.
    pub fn new() -> Scanner {
        Scanner {
            state: State::Ground,
            buffer: Vec::with_capacity(MAX_CSI_BYTES),
            overflow: false,
        }
    }

    /// Scans one chunk of output and appends what it found, in order, to `found`.
    pub fn scan(&mut self, chunk: &[u8], found: &mut Vec<Found>) {
        let mut index = 0;
        while let Some(&byte) = chunk.get(index) {
            // Only ESC leaves the ground state: the text between sequences (most of a
            // frame) is skipped at once rather than byte by byte.
            if self.state == State::Ground && byte != ESC {
                match memchr::memchr(ESC, &chunk[index..]) {
                    Some(offset) => index += offset,
                    None => return,
                }
                continue;
            }
            if let Some(control) = self.advance(byte) {
                found.push(Found {
                    end: index + 1,
                    control,
                });
            }
            index += 1;
        }
    }

    fn start(&mut self, state: State) {
        self.state = state;
        self.buffer.clear();
        self.overflow = false;
    }

    fn keep(&mut self, byte: u8, limit: usize) {
        if self.buffer.len() < limit {
            self.buffer.push(byte);
        } else {
            self.overflow = true;
        }
    }

    fn advance(&mut self, byte: u8) -> Option<Control> {
        match self.state {
            State::Ground => {
                if byte == ESC {
                    self.start(State::Escape);
                }
                None
            }
            State::Escape => {
                match byte {
                    b'[' => self.start(State::Csi),
                    b']' => self.start(State::Osc),
                    b'P' | b'X' | b'^' | b'_' => self.start(State::Passthrough),
                    ESC => self.start(State::Escape),
                    0x20..=0x2f => self.start(State::EscapeIntermediate),
                    _ => self.start(State::Ground),
                }
                None
            }
            State::EscapeIntermediate => {
                match byte {
                    0x20..=0x2f => {}
                    ESC => self.start(State::Escape),
                    _ => self.start(State::Ground),
                }
                None
            }
            State::Csi => self.csi(byte),
            State::Osc => self.osc(byte),
            State::OscEscape => {
                if byte == b'\\' {
                    let control = (!self.overflow)
                        .then(|| parse_osc(&self.buffer, false))
                        .flatten();
                    self.start(State::Ground);
                    control
                } else {
                    // An ESC that is not ST aborts the string and starts a new sequence.
                    self.start(State::Escape);
                    self.advance(byte)
                }
            }
            State::Passthrough => {
                match byte {
                    ESC => self.state = State::PassthroughEscape,
                    CAN | SUB => self.start(State::Ground),
                    _ => {}
                }
                None
            }
            State::PassthroughEscape => {
                if byte == b'\\' {
                    self.start(State::Ground);
                    None
                } else {
                    self.start(State::Escape);
                    self.advance(byte)
                }
            }
        }
    }

    /// A byte inside a CSI sequence: its parameters kept, its final byte parsed.
    fn csi(&mut self, byte: u8) -> Option<Control> {
        match byte {
            0x20..=0x3f => {
                self.keep(byte, MAX_CSI_BYTES);
                None
            }
            0x40..=0x7e => {
                let control = if self.overflow {
                    None
                } else {
                    parse_csi(&self.buffer, byte)
                };
                self.start(State::Ground);
                control
            }
            ESC => {
                self.start(State::Escape);
                None
            }
            CAN | SUB => {
                self.start(State::Ground);
                None
            }
            // Other C0 controls inside a CSI are executed by terminals and do not end it.
            _ => None,
        }
    }

    /// A byte inside an OSC string: kept, until BEL or ESC ends it.
    fn osc(&mut self, byte: u8) -> Option<Control> {
        match byte {
            BEL => {
                let control = (!self.overflow)
                    .then(|| parse_osc(&self.buffer, true))
                    .flatten();
                self.start(State::Ground);
                control
            }
            ESC => {
                self.state = State::OscEscape;
                None
            }
            CAN | SUB => {
                self.start(State::Ground);
                None
            }
            _ => {
                self.keep(byte, MAX_OSC_BYTES);
                None
            }
        }
    }
}

/// Splits CSI bytes into the private marker, numeric parameters and intermediates.
fn parse_csi(bytes: &[u8], final_byte: u8) -> Option<Control> {
    // Every sequence a program paints passes through here; only these finals can be a
    // query or a mode we track, so colours and cursor moves cost no parsing.
    if !b"ncupthlq".contains(&final_byte) {
        return None;
    }
    let (marker, rest) = match bytes.first() {
        Some(&m @ (b'<' | b'=' | b'>' | b'?')) => (Some(m), &bytes[1..]),
        _ => (None, bytes),
    };
    let split = rest
        .iter()
        .position(|b| (0x20..=0x2f).contains(b))
        .unwrap_or(rest.len());
    let (digits, intermediates) = rest.split_at(split);
    let mut params: Vec<Option<u32>> = Vec::new();
    if !digits.is_empty() {
        for field in digits.split(|&b| b == b';') {
            // Sub-parameters (`:`) are not used by any query; keep the main value.
            let main = field.split(|&b| b == b':').next().unwrap_or(&[]);
            if main.is_empty() {
                params.push(None);
            } else if main.iter().all(u8::is_ascii_digit) {
                let text = std::str::from_utf8(main).ok()?;
                params.push(Some(text.parse().ok()?));
            } else {
                return None;
            }
        }
    }
    let first = params.first().copied().flatten();
    let only_default = params.len() <= 1 && first.unwrap_or(0) == 0;
    let query = |q| Some(Control::Query(q));
    match (marker, intermediates, final_byte) {
        (None, b"", b'n') if params.len() == 1 && first == Some(6) => {
            query(Query::CursorPosition { private: false })
        }
        (Some(b'?'), b"", b'n') if params.len() == 1 && first == Some(6) => {
            query(Query::CursorPosition { private: true })
        }
        (None, b"", b'n') if params.len() == 1 && first == Some(5) => query(Query::Status),
        (None, b"", b'c') if only_default => query(Query::PrimaryAttributes),
        (Some(b'>'), b"", b'c') if only_default => query(Query::SecondaryAttributes),
        (Some(b'?'), b"", b'u') if params.is_empty() => query(Query::KittyKeyboard),
        (Some(b'>'), b"", b'u') => Some(Control::KittyPush(first.unwrap_or(0))),
        (Some(b'<'), b"", b'u') => Some(Control::KittyPop(first.unwrap_or(1))),
        (Some(b'='), b"", b'u') => Some(Control::KittySet {
            flags: first.unwrap_or(0),
            mode: params.get(1).copied().flatten().unwrap_or(1),
        }),
        (Some(b'?'), b"$", b'p') if params.len() == 1 => {
            query(Query::PrivateMode(u16::try_from(first?).ok()?))
        }
        (None, b"$", b'p') if params.len() == 1 => {
            query(Query::AnsiMode(u16::try_from(first?).ok()?))
        }
        (None, b"", b't') => match first {
            Some(14) => query(Query::WindowPixels),
            Some(16) => query(Query::CellPixels),
            Some(18) => query(Query::TextAreaCells),
            _ => None,
        },
        (Some(b'>'), b"", b'q') if only_default => query(Query::Version),
        (Some(b'?'), b"", b'h' | b'l') if params.contains(&Some(2026)) => {
            Some(if final_byte == b'h' {
                Control::SyncBegin
            } else {
                Control::SyncEnd
            })
        }
        _ => None,
    }
}

fn parse_osc(payload: &[u8], bel: bool) -> Option<Control> {
    match payload {
        b"10;?" => Some(Control::Query(Query::Foreground { bel })),
        b"11;?" => Some(Control::Query(Query::Background { bel })),
        _ => None,
    }
}

/// A colour as the terminal reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

/// What the answers are computed from: the screen model's state when the query
/// was written, plus the terminal's fixed identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyState {
    /// Cursor row and column, 0-based.
    pub cursor: (u16, u16),
    /// Screen rows and columns.
    pub size: (u16, u16),
    /// Width and height of one cell in pixels.
    pub cell_pixels: (u16, u16),
    /// Active kitty keyboard flags.
    pub kitty_flags: u32,
    /// Private modes the screen model knows, with whether each is set.
    pub private_modes: Vec<(u16, bool)>,
    /// Default foreground colour.
    pub foreground: Rgb,
    /// Default background colour.
    pub background: Rgb,
}

/// The name XTVERSION reports.
pub const TERMINAL_NAME: &str = concat!("bench-term(", env!("CARGO_PKG_VERSION"), ")");

/// The answer a terminal gives to `query` in state `state`, as bytes to write to
/// the program's input.
pub fn reply(query: Query, state: &ReplyState) -> Vec<u8> {
    let st = |bel: bool| if bel { "\x07" } else { "\x1b\\" };
    let colour = |code: u8, Rgb(r, g, b): Rgb, bel: bool| {
        // X11 colour syntax with 16-bit channels, as xterm answers.
        format!(
            "\x1b]{code};rgb:{:04x}/{:04x}/{:04x}{}",
            u16::from(r) * 257,
            u16::from(g) * 257,
            u16::from(b) * 257,
            st(bel)
        )
    };
    let (rows, cols) = state.size;
    let (cell_width, cell_height) = state.cell_pixels;
    let text = match query {
        Query::CursorPosition { private } => format!(
            "\x1b[{}{};{}R",
            if private { "?" } else { "" },
            state.cursor.0 + 1,
            state.cursor.1 + 1
        ),
        Query::Status => "\x1b[0n".to_owned(),
        // A VT220-class terminal with ANSI colour (22), like many modern emulators report.
        Query::PrimaryAttributes => "\x1b[?62;22c".to_owned(),
        // Terminal type 1 (VT220), firmware version 10, no ROM cartridge.
        Query::SecondaryAttributes => "\x1b[>1;10;0c".to_owned(),
        Query::KittyKeyboard => format!("\x1b[?{}u", state.kitty_flags),
        Query::PrivateMode(mode) => {
            let value = if mode == 2026 || state.private_modes.iter().any(|&(m, _)| m == mode) {
                let set = state
                    .private_modes
                    .iter()
                    .find(|&&(m, _)| m == mode)
                    .is_some_and(|&(_, set)| set);
                if set { 1 } else { 2 }
            } else {
                0
            };
            format!("\x1b[?{mode};{value}$y")
        }
        Query::AnsiMode(mode) => format!("\x1b[{mode};0$y"),
        Query::WindowPixels => format!(
            "\x1b[4;{};{}t",
            u32::from(rows) * u32::from(cell_height),
            u32::from(cols) * u32::from(cell_width)
        ),
        Query::CellPixels => format!("\x1b[6;{cell_height};{cell_width}t"),
        Query::TextAreaCells => format!("\x1b[8;{rows};{cols}t"),
        Query::Version => format!("\x1bP>|{TERMINAL_NAME}\x1b\\"),
        Query::Foreground { bel } => colour(10, state.foreground, bel),
        Query::Background { bel } => colour(11, state.background, bel),
    };
    text.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_all(chunks: &[&[u8]]) -> Vec<Control> {
        let mut scanner = Scanner::new();
        let mut found = Vec::new();
        for chunk in chunks {
            scanner.scan(chunk, &mut found);
        }
        found.into_iter().map(|f| f.control).collect()
    }

    fn state() -> ReplyState {
        ReplyState {
            cursor: (4, 9),
            size: (40, 120),
            cell_pixels: (8, 16),
            kitty_flags: 5,
            private_modes: vec![(25, true), (2004, false), (2026, true)],
            foreground: Rgb(0xff, 0xff, 0xff),
            background: Rgb(0, 0, 0),
        }
    }

    #[test]
    fn every_supported_query_is_recognized() {
        let stream = b"a\x1b[6nb\x1b[?6n\x1b[5n\x1b[c\x1b[0c\x1b[>c\x1b[>0c\x1b[?u\x1b[?2026$p\
\x1b[4$p\x1b[14t\x1b[16t\x1b[18t\x1b[>q\x1b]10;?\x07\x1b]11;?\x1b\\";
        assert_eq!(
            scan_all(&[stream]),
            vec![
                Control::Query(Query::CursorPosition { private: false }),
                Control::Query(Query::CursorPosition { private: true }),
                Control::Query(Query::Status),
                Control::Query(Query::PrimaryAttributes),
                Control::Query(Query::PrimaryAttributes),
                Control::Query(Query::SecondaryAttributes),
                Control::Query(Query::SecondaryAttributes),
                Control::Query(Query::KittyKeyboard),
                Control::Query(Query::PrivateMode(2026)),
                Control::Query(Query::AnsiMode(4)),
                Control::Query(Query::WindowPixels),
                Control::Query(Query::CellPixels),
                Control::Query(Query::TextAreaCells),
                Control::Query(Query::Version),
                Control::Query(Query::Foreground { bel: true }),
                Control::Query(Query::Background { bel: false }),
            ]
        );
    }

    #[test]
    fn queries_split_across_every_byte_boundary_are_found_once() {
        let stream: &[u8] = b"hello\x1b[6n\x1b]11;?\x1b\\\x1b[?2026h\x1b[?2026l";
        for cut in 0..=stream.len() {
            let (left, right) = stream.split_at(cut);
            assert_eq!(
                scan_all(&[left, right]),
                vec![
                    Control::Query(Query::CursorPosition { private: false }),
                    Control::Query(Query::Background { bel: false }),
                    Control::SyncBegin,
                    Control::SyncEnd,
                ],
                "split at {cut}"
            );
        }
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(scan_all(&bytes).len(), 4);
    }

    #[test]
    fn offsets_point_just_past_each_sequence() {
        let mut scanner = Scanner::new();
        let mut found = Vec::new();
        scanner.scan(b"ab\x1b[6ncd\x1b[?2026h", &mut found);
        assert_eq!(found.iter().map(|f| f.end).collect::<Vec<_>>(), vec![6, 16]);
    }

    #[test]
    fn lookalikes_are_not_queries() {
        let stream =
            b"\x1b[1;6n\x1b[1c\x1b[s\x1b[u\x1b[6\x18n\x1b[3t\x1b]10;#fff\x07\x1bP$q6n\x1b\\\
\x1b[?25h\x1b[?1049;2026$p\x1b[38:2:1:2:3m";
        assert_eq!(scan_all(&[stream]), vec![]);
    }

    #[test]
    fn sync_in_a_combined_mode_list_is_found() {
        assert_eq!(
            scan_all(&[b"\x1b[?1049;2026h", b"\x1b[?25;2026l"]),
            vec![Control::SyncBegin, Control::SyncEnd]
        );
    }

    #[test]
    fn kitty_flag_changes_are_reported() {
        assert_eq!(
            scan_all(&[b"\x1b[>5u\x1b[<u\x1b[<2u\x1b[=3;2u\x1b[=1u"]),
            vec![
                Control::KittyPush(5),
                Control::KittyPop(1),
                Control::KittyPop(2),
                Control::KittySet { flags: 3, mode: 2 },
                Control::KittySet { flags: 1, mode: 1 },
            ]
        );
    }

    #[test]
    fn an_interrupted_string_starts_the_next_sequence() {
        // An OSC cut short by a new ESC must not swallow the query after it.
        assert_eq!(
            scan_all(&[b"\x1b]0;title\x1b[6n"]),
            vec![Control::Query(Query::CursorPosition { private: false })]
        );
        assert_eq!(
            scan_all(&[b"\x1bPpayload\x1b[c"]),
            vec![Control::Query(Query::PrimaryAttributes)]
        );
    }

    #[test]
    fn overlong_sequences_are_skipped_without_growing() {
        let mut long = b"\x1b]11;".to_vec();
        long.extend(std::iter::repeat_n(b'x', 100_000));
        long.extend(b"\x07\x1b[6n");
        let mut scanner = Scanner::new();
        let mut found = Vec::new();
        scanner.scan(&long, &mut found);
        assert!(scanner.buffer.capacity() <= 2 * MAX_CSI_BYTES.max(MAX_OSC_BYTES));
        assert_eq!(found.len(), 1);
    }

    #[test]
    fn replies_come_from_the_state() {
        let state = state();
        let answers: Vec<String> = [
            Query::CursorPosition { private: false },
            Query::CursorPosition { private: true },
            Query::Status,
            Query::PrimaryAttributes,
            Query::SecondaryAttributes,
            Query::KittyKeyboard,
            Query::PrivateMode(2026),
            Query::PrivateMode(25),
            Query::PrivateMode(2004),
            Query::PrivateMode(9999),
            Query::AnsiMode(4),
            Query::WindowPixels,
            Query::CellPixels,
            Query::TextAreaCells,
            Query::Version,
            Query::Foreground { bel: true },
            Query::Background { bel: false },
        ]
        .into_iter()
        .map(|q| {
            String::from_utf8(reply(q, &state))
                .unwrap()
                .replace('\x1b', "^[")
        })
        .collect();
        insta::assert_snapshot!(answers.join("\n"));
    }

    #[test]
    fn sync_is_reported_reset_when_the_screen_does_not_list_it() {
        let mut state = state();
        state.private_modes.clear();
        assert_eq!(reply(Query::PrivateMode(2026), &state), b"\x1b[?2026;2$y");
    }
}
