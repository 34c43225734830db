//! What the program wrote and what was typed, kept for saving next to results.

use crate::asciicast::{Code, Event, Header, Recording, Utf8Stream};
use crate::error::TermError;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

/// Most output bytes a transcript keeps; past this, the session fails with
/// [`TermError::TranscriptTooLarge`], so a program that prints without end cannot fill
/// the disk or the memory of the run.
pub const TRANSCRIPT_LIMIT_BYTES: usize = 8 * 1024 * 1024;

/// File names inside the transcript folder.
pub const OUTPUT_FILE: &str = "output.raw";
/// Everything typed into the program, including query answers.
pub const INPUT_FILE: &str = "input.raw";
/// The final screen as text.
pub const SCREEN_FILE: &str = "screen.txt";
/// The screen at the moment the program was judged ready, as text (only when it was).
pub const READY_SCREEN_FILE: &str = "screen-at-ready.txt";
/// The session as an asciicast v2 recording, with the ready moment marked.
pub const CAST_FILE: &str = "recording.cast";
/// The label of the ready marker in [`CAST_FILE`].
pub const READY_MARKER: &str = "ready";

/// The screen size and `TERM` a recording's header gives its player.
#[derive(Debug, Clone)]
pub(crate) struct CastSetup {
    pub(crate) cols: u16,
    pub(crate) rows: u16,
    pub(crate) term: Option<String>,
    /// When the session began, as the origin of event times.
    pub(crate) started: Instant,
}

/// Raw output and input of one session, capped at `limit_bytes` each.
///
/// Reading the terminal is the measured path, so it only appends the bytes and
/// notes when they came ([`Moment`]); decoding them into asciicast events (UTF-8
/// across reads, time order) waits until the recording is written.
#[derive(Debug)]
pub(crate) struct Transcript {
    folder: PathBuf,
    output: Vec<u8>,
    input: Vec<u8>,
    limit_bytes: usize,
    overflowed: bool,
    setup: CastSetup,
    started_unix: SystemTime,
    /// Every read, write and marker, in the order they were recorded.
    moments: Vec<Moment>,
    ready_screen: Option<String>,
}

/// One recorded moment: when, and what.
#[derive(Debug, Clone, Copy)]
struct Moment {
    at: Instant,
    what: What,
}

#[derive(Debug, Clone, Copy)]
enum What {
    /// Output up to this offset of [`Transcript::output`] was read.
    Output { end: usize },
    /// Input up to this offset of [`Transcript::input`] was written.
    Input { end: usize },
    /// The ready marker.
    Ready,
}

impl Transcript {
    pub(crate) fn new(folder: PathBuf, limit_bytes: usize, setup: CastSetup) -> Transcript {
        let started_unix = SystemTime::now() - setup.started.elapsed();
        Transcript {
            folder,
            output: Vec::new(),
            input: Vec::new(),
            limit_bytes,
            overflowed: false,
            setup,
            started_unix,
            moments: Vec::new(),
            ready_screen: None,
        }
    }

    /// Marks the ready moment, `at`, and keeps the screen at ready.
    pub(crate) fn mark_ready(&mut self, at: Instant, screen: &str) {
        self.moments.push(Moment {
            at,
            what: What::Ready,
        });
        self.ready_screen = Some(screen.to_owned());
    }

    /// Keeps `bytes` of output; fails once the cap is passed (and on every later call).
    /// `at` is when the bytes were read.
    pub(crate) fn record_output(&mut self, bytes: &[u8], at: Instant) -> Result<(), TermError> {
        let room = self.limit_bytes.saturating_sub(self.output.len());
        let over = self.overflowed || bytes.len() > room;
        let kept = &bytes[..room.min(bytes.len())];
        if !kept.is_empty() {
            self.output.extend_from_slice(kept);
            self.moments.push(Moment {
                at,
                what: What::Output {
                    end: self.output.len(),
                },
            });
        }
        if over {
            self.overflowed = true;
            return Err(TermError::TranscriptTooLarge {
                limit_bytes: self.limit_bytes,
            });
        }
        Ok(())
    }

    /// Keeps `bytes` of input, typed at `at`, silently dropping what passes the cap.
    pub(crate) fn record_input(&mut self, bytes: &[u8], at: Instant) {
        let room = self.limit_bytes.saturating_sub(self.input.len());
        let kept = &bytes[..room.min(bytes.len())];
        if !kept.is_empty() {
            self.input.extend_from_slice(kept);
            self.moments.push(Moment {
                at,
                what: What::Input {
                    end: self.input.len(),
                },
            });
        }
    }

    /// The session as an asciicast v2 recording: one event per read, write and
    /// marker, in time order (a marker may name a moment already past, such as the
    /// read that made the program ready; events of one time keep the order they
    /// were recorded in). A character split across reads shows whole in the event
    /// of the read that completed it; an unfinished character at the end of the
    /// output shows as U+FFFD, at the time the recording is made.
    pub(crate) fn recording(&self) -> Recording {
        let end = Instant::now();
        let since_start = |at: Instant| at.saturating_duration_since(self.setup.started);
        let mut events = Vec::with_capacity(self.moments.len() + 1);
        let (mut output_text, mut input_text) = (Utf8Stream::default(), Utf8Stream::default());
        let (mut output_done, mut input_done) = (0, 0);
        for moment in &self.moments {
            let (code, data) = match moment.what {
                What::Output { end } => {
                    let text = output_text.decode(&self.output[output_done..end]);
                    output_done = end;
                    (Code::Output, text)
                }
                What::Input { end } => {
                    let text = input_text.decode(&self.input[input_done..end]);
                    input_done = end;
                    (Code::Input, text)
                }
                What::Ready => (Code::Marker, READY_MARKER.to_owned()),
            };
            if !data.is_empty() {
                events.push(Event {
                    at: since_start(moment.at),
                    code,
                    data,
                });
            }
        }
        let rest = output_text.finish();
        if !rest.is_empty() {
            events.push(Event {
                at: since_start(end),
                code: Code::Output,
                data: rest,
            });
        }
        // Stable: events of one time stay in the order they were recorded.
        events.sort_by_key(|event| event.at);
        let mut env = std::collections::BTreeMap::new();
        if let Some(term) = &self.setup.term {
            env.insert("TERM".to_owned(), term.clone());
        }
        Recording {
            header: Header {
                version: 2,
                width: self.setup.cols,
                height: self.setup.rows,
                timestamp: self
                    .started_unix
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs()),
                env,
            },
            events,
        }
    }

    /// Writes the output, the input, `screen`, the screen at ready and the recording
    /// into the folder (created if needed).
    pub(crate) fn save(&self, screen: &str) -> Result<(), TermError> {
        let recording = self.recording().to_text();
        let folder = self.folder.clone();
        let write = |name: &str, bytes: &[u8]| {
            bench_core::io::write_atomic(&folder.join(name), bytes).map_err(TermError::Transcript)
        };
        std::fs::create_dir_all(&self.folder).map_err(|source| {
            TermError::Transcript(bench_core::io::WriteError {
                path: self.folder.clone(),
                source,
            })
        })?;
        write(OUTPUT_FILE, &self.output)?;
        write(INPUT_FILE, &self.input)?;
        let mut text = screen.trim_end().to_owned();
        text.push('\n');
        if self.overflowed {
            text.push_str(&format!(
                "[transcript truncated at {} bytes]\n",
                self.limit_bytes
            ));
        }
        write(SCREEN_FILE, text.as_bytes())?;
        if let Some(ready) = &self.ready_screen {
            write(READY_SCREEN_FILE, screen_file(ready).as_bytes())?;
        }
        write(CAST_FILE, recording.as_bytes())
    }

    pub(crate) fn folder(&self) -> &Path {
        &self.folder
    }
}

/// A screen as a text file: trailing blank lines trimmed, one final newline.
fn screen_file(screen: &str) -> String {
    let mut text = screen.trim_end().to_owned();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn output_past_the_cap_fails_and_is_truncated() {
        let folder = tempfile::tempdir().unwrap();
        let setup = CastSetup {
            cols: 80,
            rows: 24,
            term: None,
            started: Instant::now(),
        };
        let mut transcript = Transcript::new(folder.path().join("t"), 10, setup);
        transcript.record_output(b"12345", Instant::now()).unwrap();
        let error = transcript
            .record_output(b"6789abcdef", Instant::now())
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "the program wrote more than 10 bytes, the transcript cap"
        );
        assert!(transcript.record_output(b"x", Instant::now()).is_err());
        transcript.record_input(b"typed", Instant::now());
        transcript.save("screen  \n\n").unwrap();
        let read = |name| std::fs::read(folder.path().join("t").join(name)).unwrap();
        assert_eq!(read(OUTPUT_FILE), b"123456789a");
        assert_eq!(read(INPUT_FILE), b"typed");
        assert_eq!(
            read(SCREEN_FILE),
            b"screen\n[transcript truncated at 10 bytes]\n"
        );
        let cast = std::fs::read_to_string(folder.path().join("t").join(CAST_FILE)).unwrap();
        assert_eq!(Recording::parse(&cast).unwrap().output(), "123456789a");
    }

    #[test]
    fn the_recording_decodes_reads_and_keeps_events_in_time_order() {
        let started = Instant::now();
        let setup = CastSetup {
            cols: 80,
            rows: 24,
            term: Some("xterm-256color".into()),
            started,
        };
        let mut transcript = Transcript::new(PathBuf::from("unused"), 1 << 20, setup);
        let at = |us| started + Duration::from_micros(us);
        let output = "\u{1b}[1mé→🦀\u{1b}[0m ok\r\n".as_bytes();
        // "é" split after its first byte, the crab after its second.
        transcript.record_output(&output[..5], at(10)).unwrap();
        transcript.record_output(&output[5..11], at(20)).unwrap();
        transcript.record_input("ü".as_bytes()[..1].as_ref(), at(25));
        transcript.record_output(&output[11..], at(30)).unwrap();
        transcript.record_input(&"ü".as_bytes()[1..], at(35));
        // Bytes that are no UTF-8, and a read that completes nothing.
        transcript.record_output(b"a\xffb\xe2\x82", at(40)).unwrap();
        transcript.record_output(b"\xac", at(50)).unwrap();
        transcript.record_input(b"\x03", at(50));
        // Ready was the read at 30 us; a second marker at the same time as a read.
        transcript.mark_ready(at(30), "ready screen");
        transcript.mark_ready(at(50), "ready screen");
        let text = transcript.recording().to_text();
        let events = text.split_once('\n').unwrap().1;
        insta::assert_snapshot!(events, @r#"
        [0.00001,"o","\u001b[1m"]
        [0.00002,"o","é→"]
        [0.00003,"o","🦀\u001b[0m ok\r\n"]
        [0.00003,"m","ready"]
        [0.000035,"i","ü"]
        [0.00004,"o","a�b"]
        [0.00005,"o","€"]
        [0.00005,"i","\u0003"]
        [0.00005,"m","ready"]
        "#);
    }

    #[test]
    fn an_unfinished_character_at_the_end_shows_as_a_replacement() {
        let started = Instant::now();
        let setup = CastSetup {
            cols: 80,
            rows: 24,
            term: None,
            started,
        };
        let mut transcript = Transcript::new(PathBuf::from("unused"), 100, setup);
        transcript.record_output(b"ok \xf0\x9f", started).unwrap();
        let data = |transcript: &Transcript| -> Vec<String> {
            let events = transcript.recording().events;
            events.into_iter().map(|e| e.data).collect()
        };
        assert_eq!(data(&transcript), ["ok ", "\u{FFFD}"]);
        // Writing the recording does not consume what it encodes.
        assert_eq!(data(&transcript), ["ok ", "\u{FFFD}"]);
    }

    #[test]
    fn a_ready_marker_in_the_past_takes_its_place_in_time() {
        let started = Instant::now();
        let setup = CastSetup {
            cols: 80,
            rows: 24,
            term: Some("xterm".into()),
            started,
        };
        let mut transcript = Transcript::new(PathBuf::from("unused"), 100, setup);
        let at = |ms| started + Duration::from_millis(ms);
        transcript.record_output(b"a", at(1)).unwrap();
        transcript.record_output(b"b", at(5)).unwrap();
        transcript.record_output(b"c", at(9)).unwrap();
        transcript.mark_ready(at(5), "ab");
        let codes: Vec<(u128, Code)> = transcript
            .recording()
            .events
            .iter()
            .map(|e| (e.at.as_millis(), e.code))
            .collect();
        assert_eq!(
            codes,
            [
                (1, Code::Output),
                (5, Code::Output),
                (5, Code::Marker),
                (9, Code::Output)
            ]
        );
    }
}
