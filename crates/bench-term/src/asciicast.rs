//! Terminal recordings in the asciicast v2 format, which `asciinema play` replays.
//!
//! A file is one JSON header line (`{"version": 2, "width": W, "height": H,
//! "timestamp": UNIX_SECONDS, "env": {"TERM": ...}}`) and then one JSON array per
//! event: `[seconds since start, code, data]`, with code `"o"` for output, `"i"`
//! for input and `"m"` for a marker (asciinema's player pauses on markers; the
//! ready moment is the marker `"ready"`). Data are UTF-8 strings: bench-term
//! keeps the raw bytes of each read while the program runs and decodes them when
//! the recording is written, a character split across two reads going whole to
//! the event of the read that completed it, and bytes that are not UTF-8
//! becoming U+FFFD.

use serde::Serialize;
use std::time::Duration;

/// The first line of a recording.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Header {
    /// Always 2.
    pub version: u32,
    /// Columns.
    pub width: u16,
    /// Rows.
    pub height: u16,
    /// When the recording began, in seconds since the Unix epoch.
    pub timestamp: u64,
    /// Environment facts players use (`TERM`).
    pub env: std::collections::BTreeMap<String, String>,
}

/// What an event carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// The program wrote this.
    Output,
    /// This was typed into the program.
    Input,
    /// A named moment (the data is its label).
    Marker,
}

impl Code {
    fn as_str(self) -> &'static str {
        match self {
            Code::Output => "o",
            Code::Input => "i",
            Code::Marker => "m",
        }
    }

    fn parse(text: &str) -> Option<Code> {
        match text {
            "o" => Some(Code::Output),
            "i" => Some(Code::Input),
            "m" => Some(Code::Marker),
            _ => None,
        }
    }
}

/// One event of a recording.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Time since the recording began.
    pub at: Duration,
    /// What kind of event.
    pub code: Code,
    /// The text written or typed, or the marker's label.
    pub data: String,
}

/// A whole recording.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    /// The header line.
    pub header: Header,
    /// The events, in time order.
    pub events: Vec<Event>,
}

/// A line of a recording that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("line {line} of the recording: {message}")]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl Recording {
    /// The file's text: the header, then one line per event.
    pub fn to_text(&self) -> String {
        let mut text = serde_json::to_string(&self.header).expect("a header serializes");
        text.push('\n');
        for event in &self.events {
            // Microseconds, as asciinema writes them; rounding keeps times in order.
            let seconds = (event.at.as_secs_f64() * 1e6).round() / 1e6;
            let line = serde_json::to_string(&(seconds, event.code.as_str(), &event.data))
                .expect("an event serializes");
            text.push_str(&line);
            text.push('\n');
        }
        text
    }

    /// Parses a recording written by [`Recording::to_text`] (or by asciinema).
    pub fn parse(text: &str) -> Result<Recording, ParseError> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let fail = |line: usize, message: String| ParseError {
            line: line + 1,
            message,
        };
        let (number, first) = lines.next().ok_or_else(|| fail(0, "empty".to_owned()))?;
        let header: Header =
            serde_json::from_str(first).map_err(|e| fail(number, format!("header: {e}")))?;
        if header.version != 2 {
            return Err(fail(number, format!("version {} is not 2", header.version)));
        }
        let mut events = Vec::new();
        for (number, line) in lines {
            let (seconds, code, data): (f64, String, String) =
                serde_json::from_str(line).map_err(|e| fail(number, e.to_string()))?;
            let code =
                Code::parse(&code).ok_or_else(|| fail(number, format!("unknown code {code:?}")))?;
            let at = Duration::try_from_secs_f64(seconds)
                .map_err(|_| fail(number, format!("bad time {seconds}")))?;
            events.push(Event { at, code, data });
        }
        Ok(Recording { header, events })
    }

    /// All output, concatenated.
    pub fn output(&self) -> String {
        self.events
            .iter()
            .filter(|e| e.code == Code::Output)
            .map(|e| e.data.as_str())
            .collect()
    }

    /// The time of the first marker labelled `label`.
    pub fn marker(&self, label: &str) -> Option<Duration> {
        self.events
            .iter()
            .find(|e| e.code == Code::Marker && e.data == label)
            .map(|e| e.at)
    }
}

/// Decodes a byte stream as UTF-8 across reads: an incomplete character at the end
/// of one read waits for the next; invalid bytes become U+FFFD.
#[derive(Debug, Default)]
pub(crate) struct Utf8Stream {
    pending: Vec<u8>,
}

impl Utf8Stream {
    /// The text that `bytes`, after what came before, completes.
    pub(crate) fn decode(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let mut out = String::new();
        let mut start = 0;
        loop {
            match std::str::from_utf8(&self.pending[start..]) {
                Ok(text) => {
                    out.push_str(text);
                    start = self.pending.len();
                    break;
                }
                Err(error) => {
                    let valid = start + error.valid_up_to();
                    out.push_str(
                        std::str::from_utf8(&self.pending[start..valid])
                            .expect("valid_up_to is valid"),
                    );
                    match error.error_len() {
                        Some(length) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            start = valid + length;
                        }
                        // An incomplete character at the end: wait for the rest.
                        None => {
                            start = valid;
                            break;
                        }
                    }
                }
            }
        }
        self.pending.drain(..start);
        out
    }

    /// What is left at the end of the stream (an unfinished character), as U+FFFD.
    pub(crate) fn finish(&mut self) -> String {
        let rest = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        rest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_split_across_reads_are_whole_in_one_event() {
        let text = "é→🦀 done";
        let bytes = text.as_bytes();
        // Every split point, including inside each multi-byte character.
        for split in 0..=bytes.len() {
            let mut stream = Utf8Stream::default();
            let first = stream.decode(&bytes[..split]);
            let second = stream.decode(&bytes[split..]);
            assert_eq!(format!("{first}{second}{}", stream.finish()), text);
            assert!(!first.contains('\u{FFFD}') && !second.contains('\u{FFFD}'));
        }
        let mut stream = Utf8Stream::default();
        assert_eq!(stream.decode(&[0xf0, 0x9f]), "");
        assert_eq!(stream.decode(&[0xa6]), "");
        assert_eq!(stream.decode(&[0x80, b'!']), "🦀!");
    }

    #[test]
    fn invalid_bytes_become_replacement_characters() {
        let mut stream = Utf8Stream::default();
        assert_eq!(stream.decode(b"a\xffb\xc3"), "a\u{FFFD}b");
        assert_eq!(stream.decode(b"("), "\u{FFFD}(");
        assert_eq!(stream.decode(b"\xe2\x82"), "");
        assert_eq!(stream.finish(), "\u{FFFD}");
    }

    #[test]
    fn a_recording_reads_back_as_written() {
        let recording = Recording {
            header: Header {
                version: 2,
                width: 80,
                height: 24,
                timestamp: 1_700_000_000,
                env: [("TERM".to_owned(), "xterm-256color".to_owned())].into(),
            },
            events: vec![
                Event {
                    at: Duration::from_micros(1_500),
                    code: Code::Output,
                    data: "\u{1b}[2J> \"é\"".to_owned(),
                },
                Event {
                    at: Duration::from_micros(20_000),
                    code: Code::Marker,
                    data: "ready".to_owned(),
                },
                Event {
                    at: Duration::from_micros(20_001),
                    code: Code::Input,
                    data: "\u{3}".to_owned(),
                },
            ],
        };
        let text = recording.to_text();
        insta::assert_snapshot!(text, @r#"
        {"version":2,"width":80,"height":24,"timestamp":1700000000,"env":{"TERM":"xterm-256color"}}
        [0.0015,"o","\u001b[2J> \"é\""]
        [0.02,"m","ready"]
        [0.020001,"i","\u0003"]
        "#);
        assert_eq!(Recording::parse(&text).unwrap(), recording);
        assert_eq!(recording.marker("ready"), Some(Duration::from_millis(20)));
    }

    #[test]
    fn a_broken_line_is_reported_by_number() {
        let text = "{\"version\":2,\"width\":1,\"height\":1,\"timestamp\":0,\"env\":{}}\n[0.1,\"x\",\"\"]\n";
        assert_eq!(
            Recording::parse(text).unwrap_err().to_string(),
            "line 2 of the recording: unknown code \"x\""
        );
    }
}
