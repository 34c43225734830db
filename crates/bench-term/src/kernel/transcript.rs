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
use std::time::Instant;

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
    error: Option<std::io::Error>,
}

impl Transcript {
    /// Creates (truncates) the transcript at `path`; `started` is time zero.
    pub fn create(path: &Path, started: Instant) -> std::io::Result<Transcript> {
        let file = File::create(path)?;
        Ok(Transcript {
            inner: Arc::new(Mutex::new(Inner {
                path: path.to_path_buf(),
                writer: Some(BufWriter::new(file)),
                started,
                error: None,
            })),
        })
    }

    /// Records one line (without its newline) that went in `direction`.
    pub fn record(&self, direction: Direction, line: &str) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        let seconds = inner.started.elapsed().as_secs_f64();
        let mut entry = format!("{{\"t\":{seconds:.6},\"dir\":\"{}\",", direction.as_str());
        match direction {
            Direction::Stderr => {
                entry.push_str("\"text\":");
                entry.push_str(&Value::from(line).to_string());
            }
            Direction::Send | Direction::Recv => {
                if serde_json::from_str::<serde::de::IgnoredAny>(line).is_ok() {
                    entry.push_str("\"frame\":");
                    entry.push_str(line.trim_end());
                } else {
                    entry.push_str("\"raw\":");
                    entry.push_str(&Value::from(line).to_string());
                }
            }
        }
        entry.push_str("}\n");
        let inner = &mut *inner;
        if let Some(writer) = inner.writer.as_mut() {
            // Flushed per frame, so the transcript is complete up to a crash.
            if let Err(error) = writer
                .write_all(entry.as_bytes())
                .and_then(|()| writer.flush())
            {
                inner.error = Some(error);
                inner.writer = None;
            }
        }
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
