//! What the program wrote and what was typed, kept for saving next to results.

use crate::error::TermError;
use std::path::{Path, PathBuf};

/// Most output bytes a transcript keeps; past this, the session fails with
/// [`TermError::TranscriptTooLarge`] (the seed harness's cap).
pub const TRANSCRIPT_LIMIT_BYTES: usize = 8 * 1024 * 1024;

/// File names inside the transcript folder.
pub const OUTPUT_FILE: &str = "output.raw";
/// Everything typed into the program, including query answers.
pub const INPUT_FILE: &str = "input.raw";
/// The final screen as text.
pub const SCREEN_FILE: &str = "screen.txt";

/// Raw output and input of one session, capped at `limit_bytes` each.
#[derive(Debug)]
pub(crate) struct Transcript {
    folder: PathBuf,
    output: Vec<u8>,
    input: Vec<u8>,
    limit_bytes: usize,
    overflowed: bool,
}

impl Transcript {
    pub(crate) fn new(folder: PathBuf, limit_bytes: usize) -> Transcript {
        Transcript {
            folder,
            output: Vec::new(),
            input: Vec::new(),
            limit_bytes,
            overflowed: false,
        }
    }

    /// Keeps `bytes` of output; fails once the cap is passed (and on every later call).
    pub(crate) fn record_output(&mut self, bytes: &[u8]) -> Result<(), TermError> {
        if self.overflowed || self.output.len() + bytes.len() > self.limit_bytes {
            let room = self.limit_bytes.saturating_sub(self.output.len());
            self.output
                .extend_from_slice(&bytes[..room.min(bytes.len())]);
            self.overflowed = true;
            return Err(TermError::TranscriptTooLarge {
                limit_bytes: self.limit_bytes,
            });
        }
        self.output.extend_from_slice(bytes);
        Ok(())
    }

    /// Keeps `bytes` of input, silently dropping what passes the cap.
    pub(crate) fn record_input(&mut self, bytes: &[u8]) {
        let room = self.limit_bytes.saturating_sub(self.input.len());
        self.input
            .extend_from_slice(&bytes[..room.min(bytes.len())]);
    }

    /// Writes the output, the input and `screen` into the folder (created if needed).
    pub(crate) fn save(&self, screen: &str) -> Result<(), TermError> {
        let write = |name: &str, bytes: &[u8]| {
            bench_core::io::write_atomic(&self.folder.join(name), bytes)
                .map_err(TermError::Transcript)
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
        write(SCREEN_FILE, text.as_bytes())
    }

    pub(crate) fn folder(&self) -> &Path {
        &self.folder
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_past_the_cap_fails_and_is_truncated() {
        let folder = tempfile::tempdir().unwrap();
        let mut transcript = Transcript::new(folder.path().join("t"), 10);
        transcript.record_output(b"12345").unwrap();
        let error = transcript.record_output(b"6789abcdef").unwrap_err();
        assert_eq!(
            error.to_string(),
            "the program wrote more than 10 bytes, the transcript cap"
        );
        assert!(transcript.record_output(b"x").is_err());
        transcript.record_input(b"typed");
        transcript.save("screen  \n\n").unwrap();
        let read = |name| std::fs::read(folder.path().join("t").join(name)).unwrap();
        assert_eq!(read(OUTPUT_FILE), b"123456789a");
        assert_eq!(read(INPUT_FILE), b"typed");
        assert_eq!(
            read(SCREEN_FILE),
            b"screen\n[transcript truncated at 10 bytes]\n"
        );
    }
}
