//! The `.jsonl` transcript of a kernel session: every frame in both directions.
//!
//! One JSON object per line: `{"t": <seconds since spawn>, "dir": "send" | "recv" | "stderr",
//! "frame": <the frame as JSON>}`; a received line that is not JSON is kept as
//! `"raw": "<the line>"` instead of `frame`, and stderr as `"text"`.

use serde_json::Value;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Which way a frame went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// A request written to the kernel's stdin.
    Send,
    /// A line read from the kernel's stdout.
    Recv,
    /// Text the kernel wrote on its stderr.
    Stderr,
}

impl Direction {
    fn as_str(self) -> &'static str {
        match self {
            Direction::Send => "send",
            Direction::Recv => "recv",
            Direction::Stderr => "stderr",
        }
    }
}

/// A shared transcript writer; cloning shares the file. Writes after the first
/// failure are dropped and the failure is kept for [`Transcript::finish`].
#[derive(Debug, Clone)]
pub struct Transcript {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Debug)]
struct Inner {
    path: PathBuf,
    writer: Option<BufWriter<File>>,
    started: Instant,
    last_flush: Instant,
    error: Option<std::io::Error>,
}

/// The longest time a recorded frame stays only in memory while frames keep coming.
const FLUSH_INTERVAL: Duration = Duration::from_millis(200);

impl Transcript {
    /// Creates (truncates) the transcript at `path`; `started` is time zero.
    pub fn create(path: &Path, started: Instant) -> std::io::Result<Transcript> {
        let file = File::create(path)?;
        Ok(Transcript {
            inner: Arc::new(Mutex::new(Inner {
                path: path.to_path_buf(),
                writer: Some(BufWriter::new(file)),
                started,
                last_flush: started,
                error: None,
            })),
        })
    }

    /// Records one line (without its newline) that went in `direction`; a frame that is
    /// not JSON is kept as `raw`.
    pub fn record(&self, direction: Direction, line: &str) {
        let is_json = match direction {
            Direction::Stderr => false,
            Direction::Send | Direction::Recv => {
                serde_json::from_str::<serde::de::IgnoredAny>(line).is_ok()
            }
        };
        self.record_checked(direction, line, is_json);
    }

    /// Like [`Transcript::record`], for a caller that already knows whether `line` is JSON.
    pub fn record_checked(&self, direction: Direction, line: &str, is_json: bool) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        let seconds = inner.started.elapsed().as_secs_f64();
        let mut entry = String::with_capacity(line.len() + 48);
        entry.push_str(&format!(
            "{{\"t\":{seconds:.6},\"dir\":\"{}\",",
            direction.as_str()
        ));
        match direction {
            Direction::Stderr => {
                entry.push_str("\"text\":");
                entry.push_str(&Value::from(line).to_string());
            }
            Direction::Send | Direction::Recv if is_json => {
                entry.push_str("\"frame\":");
                entry.push_str(line.trim_end());
            }
            Direction::Send | Direction::Recv => {
                entry.push_str("\"raw\":");
                entry.push_str(&Value::from(line).to_string());
            }
        }
        entry.push_str("}\n");
        let inner = &mut *inner;
        if let Some(writer) = inner.writer.as_mut() {
            // Flushed at most every FLUSH_INTERVAL (and on errors, close and drop), so
            // that writing the transcript stays off the round trip of a fast cell.
            let flush = inner.last_flush.elapsed() >= FLUSH_INTERVAL;
            let written = writer
                .write_all(entry.as_bytes())
                .and_then(|()| if flush { writer.flush() } else { Ok(()) });
            if flush {
                inner.last_flush = Instant::now();
            }
            if let Err(error) = written {
                inner.error = Some(error);
                inner.writer = None;
            }
        }
    }

    /// Writes what is buffered to the file (errors are kept for [`Transcript::finish`]).
    pub fn flush(&self) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        let inner = &mut *inner;
        if let Some(writer) = inner.writer.as_mut()
            && let Err(error) = writer.flush()
        {
            inner.error = Some(error);
            inner.writer = None;
        }
        inner.last_flush = Instant::now();
    }

    /// Flushes and closes the file; returns the first write error, if any.
    pub fn finish(&self) -> Result<(), (PathBuf, std::io::Error)> {
        let Ok(mut inner) = self.inner.lock() else {
            return Ok(());
        };
        if let Some(mut writer) = inner.writer.take()
            && let Err(error) = writer.flush()
        {
            inner.error.get_or_insert(error);
        }
        match inner.error.take() {
            Some(error) => Err((inner.path.clone(), error)),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_raw_lines_and_stderr_are_kept_apart() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("t.jsonl");
        let transcript = Transcript::create(&path, Instant::now()).unwrap();
        transcript.record(
            Direction::Send,
            r#"{"type":"execute","id":"1","code":"pass"}"#,
        );
        transcript.record(Direction::Recv, "not json at all");
        transcript.record(Direction::Stderr, "warning: \"quoted\"\n");
        transcript.finish().unwrap();
        let lines: Vec<Value> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0]["dir"], "send");
        assert_eq!(lines[0]["frame"]["code"], "pass");
        assert_eq!(lines[1]["dir"], "recv");
        assert_eq!(lines[1]["raw"], "not json at all");
        assert_eq!(lines[2]["dir"], "stderr");
        assert_eq!(lines[2]["text"], "warning: \"quoted\"\n");
    }
}
