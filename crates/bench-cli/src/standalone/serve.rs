//! `clibench model serve`'s library half: the scripted endpoint started from plain settings,
//! served until a stop flag or a deadline, its journal written to a file and told as one
//! line per event, and the guide that points each agent at it.
//!
//! The binary owns the signals (it sets the stop flag and wakes the journal) and prints
//! the lines this module hands to its callback.

use bench_model::conversation::Part;
use bench_model::{Endpoint, Event, Journal, Limits, Outcome, Script, ScriptError, Settings};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What `clibench model serve` was asked for, as plain values.
#[derive(Debug, Clone)]
pub struct ServeRequest {
    /// The script of turns; `None`: the built-in script.
    pub script: Option<PathBuf>,
    /// The port on 127.0.0.1; 0: one the kernel picks.
    pub port: u16,
    /// The jitter seed, overriding the script's.
    pub seed: Option<u64>,
    /// A file (which must not exist yet) to write the journal to as JSON lines.
    pub journal: Option<PathBuf>,
    /// `--stop-after` as written (`10m`).
    pub stop_after: Option<String>,
    /// Tell every chunk written, not only every request.
    pub chunks: bool,
    /// The endpoint's bounds.
    pub limits: Limits,
}

/// Why the endpoint could not be served.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The script file could not be read or parsed (the error names the file).
    #[error(transparent)]
    ScriptLoad(ScriptError),
    /// The script does not compile. A usage error, told in one line: what was wrong is
    /// part of the message, not a chained cause.
    #[error("{}{problem}", .path.as_ref().map(|path| format!("{}: ", path.display())).unwrap_or_default())]
    ScriptCompile {
        /// The script file; `None`: the built-in script.
        path: Option<PathBuf>,
        /// What was wrong with it.
        problem: ScriptError,
    },
    /// `--stop-after` is not a duration (the why is in the message).
    #[error("--stop-after: {0}")]
    StopAfter(bench_core::units::DurationError),
    /// The journal file could not be created (it exists, or its folder does not); the
    /// why is in the message.
    #[error("--journal {}: {error}", .path.display())]
    JournalCreate {
        /// The journal file asked for.
        path: PathBuf,
        /// Why it could not be created.
        error: std::io::Error,
    },
    /// The journal file could not be written.
    #[error("failed to write the journal")]
    JournalWrite(#[source] std::io::Error),
    /// The endpoint did not start.
    #[error(transparent)]
    Start(#[from] bench_model::ServeError),
}

impl Error {
    /// Whether the error is in what was asked (exit code 2) rather than in serving it.
    pub fn is_input(&self) -> bool {
        matches!(
            self,
            Error::ScriptLoad(_)
                | Error::ScriptCompile { .. }
                | Error::StopAfter(_)
                | Error::JournalCreate { .. }
        )
    }
}

/// A started endpoint, served by [`Serving::serve`].
#[derive(Debug)]
pub struct Serving {
    endpoint: Endpoint,
    journal_file: Option<BufWriter<File>>,
    deadline: Option<Instant>,
    chunks: bool,
}

impl Serving {
    /// Checks the request, creates the journal file and starts the endpoint.
    pub fn start(request: ServeRequest) -> Result<Serving, Error> {
        let mut script = match &request.script {
            Some(path) => Script::load(path).map_err(Error::ScriptLoad)?,
            None => Script::default_script(),
        };
        if let Some(seed) = request.seed {
            script.physics.seed = Some(seed);
        }
        let compiled = script.compile().map_err(|problem| Error::ScriptCompile {
            path: request.script.clone(),
            problem,
        })?;
        let stop_after = request
            .stop_after
            .as_deref()
            .map(bench_core::units::parse_duration)
            .transpose()
            .map_err(Error::StopAfter)?;
        let journal_file = match &request.journal {
            Some(path) => Some(create_new(path)?),
            None => None,
        };
        let endpoint = Endpoint::start(Settings {
            port: request.port,
            script: compiled,
            limits: request.limits,
            // `model serve` is for a person at a terminal: the bare root is what the agents'
            // pointing instructions of the guide use.
            path_token: None,
            peer_uid: None,
        })?;
        Ok(Serving {
            endpoint,
            journal_file,
            deadline: stop_after.map(|after| Instant::now() + after),
            chunks: request.chunks,
        })
    }

    /// The endpoint's root URL.
    pub fn url(&self) -> String {
        self.endpoint.url()
    }

    /// The journal, whose [`Journal::wake`] ends a wait of [`Serving::serve`] at once.
    pub fn journal(&self) -> Journal {
        self.endpoint.journal()
    }

    /// The URL and, for each of the five agents, the line that points it at the endpoint.
    pub fn guide(&self) -> String {
        guide(&self.url(), self.endpoint.seed())
    }

    /// Serves until `stop` is set (then wake the journal) or the deadline passes, handing
    /// each event's line to `tell`; writes the journal file; returns the requests served.
    pub fn serve(mut self, stop: &AtomicBool, mut tell: impl FnMut(&str)) -> Result<usize, Error> {
        let journal = self.endpoint.journal();
        let mut seen = 0;
        while !stop.load(Ordering::SeqCst) && self.deadline.is_none_or(|d| Instant::now() < d) {
            let events = journal.wait_since(seen, Duration::from_millis(200));
            seen += events.len();
            for event in &events {
                if let Some(file) = self.journal_file.as_mut() {
                    writeln!(file, "{}", event.to_json_line()).map_err(Error::JournalWrite)?;
                }
                if let Some(line) = describe(event, self.chunks) {
                    tell(&line);
                }
            }
        }
        self.endpoint.stop();
        // Events the last wait did not return (a request answered just before Ctrl-C,
        // or written while stopping): told and journaled like the others, so the line
        // for a request that was served is never missing from the terminal.
        let rest: Vec<_> = journal.events().into_iter().skip(seen).collect();
        for event in &rest {
            if let Some(line) = describe(event, self.chunks) {
                tell(&line);
            }
        }
        if let Some(file) = self.journal_file.as_mut() {
            for event in &rest {
                writeln!(file, "{}", event.to_json_line()).map_err(Error::JournalWrite)?;
            }
            // What the journal's bounds kept out, as the pipeline's journals say it too.
            if let Some(line) = journal.dropped_line() {
                writeln!(file, "{line}").map_err(Error::JournalWrite)?;
            }
            file.flush().map_err(Error::JournalWrite)?;
        }
        Ok(journal.requests().len())
    }
}

fn create_new(path: &Path) -> Result<BufWriter<File>, Error> {
    // Never through a link, never over a file that is there.
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|error| Error::JournalCreate {
            path: path.to_owned(),
            error,
        })?;
    Ok(BufWriter::new(file))
}

/// The URL and, for each of the five agents, the line that points it at the endpoint.
fn guide(url: &str, seed: u64) -> String {
    format!(
        "\
clibench model: serving on {url} (seed {seed}); Ctrl-C stops it
  claude-code  ANTHROPIC_BASE_URL={url} ANTHROPIC_API_KEY=sk-ant-clibench claude
  pi           ~/.pi/agent/models.json: {{\"providers\": {{\"anthropic\": {{\"baseUrl\": \"{url}\"}}}}}}
  opencode     opencode.json: {{\"provider\": {{\"anthropic\": {{\"options\": {{\"baseURL\": \"{url}/v1\"}}}}}}}}
  codex        OPENAI_API_KEY=sk-clibench codex -c openai_base_url=\"{url}/v1\"
  gemini-cli   GOOGLE_GEMINI_BASE_URL={url} GEMINI_API_KEY=clibench gemini
"
    )
}

/// A journal event as one line for a person, or `None` for a chunk when chunks are
/// not shown (the last chunk of a response is always summarised).
fn describe(event: &Event, chunks: bool) -> Option<String> {
    match event {
        Event::Start { .. } => None,
        Event::Request(r) => {
            let outcome = match &r.outcome {
                Outcome::Turn { index, part } => match part {
                    Part::Start => format!("turn {}", index + 1),
                    Part::AfterTools(n) => format!("turn {} after tool results ({n})", index + 1),
                },
                Outcome::Side(side) => format!("side request: {}", side.name()),
                Outcome::NoTurn(why) => format!("no turn: {why}"),
                Outcome::Fault(kind) => format!("fault: {}", kind.name()),
                Outcome::Unrecognised(why) => format!("unrecognised: {why}"),
                Outcome::Rejected(why) => format!("rejected: {why}"),
            };
            let mut line = format!(
                "{:>9.3}s #{} {} {} {} {}{} {} B, {} tool(s){} -> {} {}",
                r.received.as_secs_f64(),
                r.number,
                r.method,
                r.path,
                r.dialect.map_or("-", |d| d.name()),
                r.model.as_deref().unwrap_or("-"),
                if r.stream { " stream" } else { "" },
                r.body_bytes,
                r.tool_count,
                if r.tool_results { ", tool results" } else { "" },
                r.status,
                outcome,
            );
            if !r.tools_called.is_empty() {
                line.push_str(&format!(" calls {}", r.tools_called.join(", ")));
            }
            if !r.prompt.is_empty() {
                line.push_str(&format!(" | {:?}", r.prompt));
            }
            Some(bench_core::text::inert(&line).into_owned())
        }
        Event::Chunk(c) if chunks || c.last => {
            let late = c.written.saturating_sub(c.scheduled);
            Some(format!(
                "{:>9.3}s #{} chunk {}{}: {} B, {} token(s), {} us after its time",
                c.written.as_secs_f64(),
                c.request,
                c.index,
                if c.last { " (last)" } else { "" },
                c.bytes,
                c.tokens,
                late.as_micros(),
            ))
        }
        Event::Chunk(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guide_points_every_agent_at_the_url() {
        let text = guide("http://127.0.0.1:9", 1);
        for needle in [
            "ANTHROPIC_BASE_URL=http://127.0.0.1:9 ",
            "\"baseUrl\": \"http://127.0.0.1:9\"",
            "\"baseURL\": \"http://127.0.0.1:9/v1\"",
            "openai_base_url=\"http://127.0.0.1:9/v1\"",
            "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:9 ",
        ] {
            assert!(text.contains(needle), "{needle} not in {text}");
        }
    }

    #[test]
    fn a_request_served_before_the_stop_is_still_told() {
        use std::io::{Read, Write};
        let serving = Serving::start(ServeRequest {
            script: None,
            port: 0,
            seed: Some(1),
            journal: None,
            stop_after: None,
            chunks: false,
            limits: Limits::default(),
        })
        .unwrap();
        let address = serving.url().trim_start_matches("http://").to_owned();
        let body = r#"{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}"#;
        let mut client = std::net::TcpStream::connect(&address).unwrap();
        write!(
            client,
            "POST /v1/messages HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut reply = String::new();
        client.read_to_string(&mut reply).unwrap();
        // Ctrl-C came before the loop ever looked at the journal: the request it holds is
        // still told (the race that once left `model serve` without its request line).
        let stop = AtomicBool::new(true);
        let mut told = Vec::new();
        let requests = serving
            .serve(&stop, |line| told.push(line.to_owned()))
            .unwrap();
        assert_eq!(requests, 1);
        assert!(
            told.iter()
                .any(|line| line.contains("POST /v1/messages anthropic")),
            "{told:?}"
        );
    }

    #[test]
    fn a_journal_file_that_exists_is_refused_as_input() {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("journal.jsonl");
        std::fs::write(&journal, "").unwrap();
        let error = Serving::start(ServeRequest {
            script: None,
            port: 0,
            seed: None,
            journal: Some(journal.clone()),
            stop_after: None,
            chunks: false,
            limits: Limits::default(),
        })
        .unwrap_err();
        assert!(error.is_input(), "{error:?}");
        assert!(
            error
                .to_string()
                .starts_with(&format!("--journal {}", journal.display()))
        );
    }
}
