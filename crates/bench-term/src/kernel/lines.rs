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
/// The longest line accepted (32 MiB): a kernel that streams without newlines
/// must not grow the buffer until memory runs out.
pub const MAX_LINE_BYTES: usize = 32 << 20;

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
    /// `buffer[start..searched]` holds no newline: a long line is scanned once,
    /// not once per read.
    searched: usize,
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
            searched: 0,
            chunk: vec![0; CHUNK_BYTES].into_boxed_slice(),
            eof: false,
        }
    }

    /// The next line, waiting at most until `deadline`, even while bytes
    /// without a newline keep arriving. A line longer than [`MAX_LINE_BYTES`]
    /// is an `InvalidData` error.
    pub fn next_line(&mut self, deadline: Instant) -> std::io::Result<Outcome> {
        loop {
            if let Some(line) = self.take_line() {
                return Ok(Outcome::Line(line));
            }
            if self.eof {
                return Ok(Outcome::Eof);
            }
            // Checked on every pass, not only when the pipe is silent: a stream
            // that never ends a line would otherwise never time out.
            if Instant::now() >= deadline {
                return Ok(Outcome::Timeout);
            }
            if self.buffer.len() - self.start > MAX_LINE_BYTES {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("a line longer than {} MiB", MAX_LINE_BYTES >> 20),
                ));
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
                        self.searched -= self.start;
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
        let from = self.searched.max(self.start) - self.start;
        let end = match pending[from..].iter().position(|&byte| byte == b'\n') {
            Some(end) => from + end,
            // At end of file, what is left is the last line.
            None if self.eof && !pending.is_empty() => pending.len(),
            None => {
                self.searched = self.buffer.len();
                return None;
            }
        };
        let mut line = &pending[..end];
        if let Some(stripped) = line.strip_suffix(b"\r") {
            line = stripped;
        }
        let text = String::from_utf8_lossy(line).into_owned();
        self.start += (end + 1).min(pending.len());
        self.searched = self.start;
        if self.start == self.buffer.len() {
            self.buffer.clear();
            self.start = 0;
            self.searched = 0;
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
    fn a_stream_without_newlines_times_out_while_bytes_keep_coming() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        let (reader, mut writer) = pipe();
        let stop = Arc::new(AtomicBool::new(false));
        let writing = Arc::clone(&stop);
        // A byte every millisecond for up to 30 s, never a newline.
        let streamer = std::thread::spawn(move || {
            for _ in 0..30_000 {
                if writing.load(Ordering::SeqCst) || writer.write_all(b"x").is_err() {
                    return false;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            true
        });
        let mut lines = LineReader::new(reader);
        let outcome = lines
            .next_line(Instant::now() + Duration::from_millis(200))
            .unwrap();
        stop.store(true, Ordering::SeqCst);
        let streamed_to_the_end = streamer.join().unwrap();
        assert_eq!(outcome, Outcome::Timeout);
        assert!(
            !streamed_to_the_end,
            "next_line waited for the stream to end"
        );
    }

    #[test]
    fn a_line_over_the_limit_is_an_error() {
        let (reader, mut writer) = pipe();
        let streamer = std::thread::spawn(move || {
            let chunk = vec![b'x'; 1 << 20];
            for _ in 0..(MAX_LINE_BYTES >> 20) + 4 {
                if writer.write_all(&chunk).is_err() {
                    return;
                }
            }
        });
        let mut lines = LineReader::new(reader);
        let error = lines
            .next_line(Instant::now() + Duration::from_secs(600))
            .unwrap_err();
        drop(lines);
        let _ = streamer.join();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);
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
