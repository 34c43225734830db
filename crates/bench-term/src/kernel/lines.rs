//! Reading the kernel's stdout line by line on the caller's thread, with a deadline.
//!
//! A reader thread handing frames over a channel costs a second wake-up per frame; on a
//! busy machine that alone was several times the cost of a `pass` cell, so frames are read
//! where they are awaited, with poll(2) bounding every wait.

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use std::io::Read;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

/// The most bytes read in one read(2).
const CHUNK_BYTES: usize = 64 * 1024;

/// What waiting for a line gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A line, without its newline (and without a trailing carriage return).
    Line(String),
    /// The other side closed the pipe; a last line without a newline came before this.
    Eof,
    /// The deadline passed first.
    Timeout,
}

/// Splits a byte stream into lines, reading only when no complete line is buffered.
#[derive(Debug)]
pub struct LineReader<R> {
    source: R,
    buffer: Vec<u8>,
    start: usize,
    chunk: Box<[u8]>,
    eof: bool,
}

impl<R: Read + AsFd> LineReader<R> {
    /// Reads from `source`, which must be a pipe or another pollable descriptor.
    pub fn new(source: R) -> LineReader<R> {
        LineReader {
            source,
            buffer: Vec::with_capacity(CHUNK_BYTES),
            start: 0,
            chunk: vec![0; CHUNK_BYTES].into_boxed_slice(),
            eof: false,
        }
    }

    /// The next line, waiting at most until `deadline`.
    pub fn next_line(&mut self, deadline: Instant) -> std::io::Result<Outcome> {
        loop {
            if let Some(line) = self.take_line() {
                return Ok(Outcome::Line(line));
            }
            if self.eof {
                return Ok(Outcome::Eof);
            }
            let remaining = deadline.saturating_duration_since(Instant::now());
            if !self.wait_readable(remaining)? {
                if Instant::now() >= deadline {
                    return Ok(Outcome::Timeout);
                }
                continue;
            }
            match self.source.read(&mut self.chunk) {
                Ok(0) => self.eof = true,
                Ok(count) => {
                    if self.start > 0 {
                        self.buffer.drain(..self.start);
                        self.start = 0;
                    }
                    self.buffer.extend_from_slice(&self.chunk[..count]);
                }
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
    }

    /// True when the descriptor is readable (or closed) within `timeout`.
    fn wait_readable(&self, timeout: Duration) -> std::io::Result<bool> {
        let mut fds = [PollFd::new(&self.source, PollFlags::IN)];
        let timespec = Timespec::try_from(timeout).unwrap_or(Timespec {
            tv_sec: i64::from(i32::MAX),
            tv_nsec: 0,
        });
        match poll(&mut fds, Some(&timespec)) {
            Ok(ready) => Ok(ready > 0),
            Err(rustix::io::Errno::INTR) => Ok(false),
            Err(error) => Err(error.into()),
        }
    }

    fn take_line(&mut self) -> Option<String> {
        let pending = &self.buffer[self.start..];
        let end = match pending.iter().position(|&byte| byte == b'\n') {
            Some(end) => end,
            // At end of file, what is left is the last line.
            None if self.eof && !pending.is_empty() => pending.len(),
            None => return None,
        };
        let mut line = &pending[..end];
        if let Some(stripped) = line.strip_suffix(b"\r") {
            line = stripped;
        }
        let text = String::from_utf8_lossy(line).into_owned();
        self.start += (end + 1).min(pending.len());
        if self.start == self.buffer.len() {
            self.buffer.clear();
            self.start = 0;
        }
        Some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn pipe() -> (
        std::os::unix::net::UnixStream,
        std::os::unix::net::UnixStream,
    ) {
        std::os::unix::net::UnixStream::pair().unwrap()
    }

    #[test]
    fn lines_split_across_reads_are_joined() {
        let (reader, mut writer) = pipe();
        let mut lines = LineReader::new(reader);
        let deadline = Instant::now() + Duration::from_secs(5);
        writer.write_all(b"{\"event\":").unwrap();
        writer.write_all(b"\"ready\"}\r\nsecond\nthi").unwrap();
        assert_eq!(
            lines.next_line(deadline).unwrap(),
            Outcome::Line("{\"event\":\"ready\"}".into())
        );
        assert_eq!(
            lines.next_line(deadline).unwrap(),
            Outcome::Line("second".into())
        );
        writer.write_all(b"rd").unwrap();
        drop(writer);
        assert_eq!(
            lines.next_line(deadline).unwrap(),
            Outcome::Line("third".into())
        );
        assert_eq!(lines.next_line(deadline).unwrap(), Outcome::Eof);
    }

    #[test]
    fn silence_until_the_deadline_is_a_timeout() {
        let (reader, _writer) = pipe();
        let mut lines = LineReader::new(reader);
        let outcome = lines
            .next_line(Instant::now() + Duration::from_millis(20))
            .unwrap();
        assert_eq!(outcome, Outcome::Timeout);
    }
}
