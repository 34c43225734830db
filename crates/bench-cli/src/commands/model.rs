//! `clibench model serve`: the loopback model endpoint in the foreground (see
//! [`bench_model`]), for driving an agent by hand without the network.

use crate::exit::input_error;
use anyhow::Context;
use bench_model::conversation::Part;
use bench_model::{Endpoint, Event, Limits, Outcome, Script, Settings};
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Flags of `clibench model`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: ModelCommand,
}

#[derive(Debug, clap::Subcommand)]
enum ModelCommand {
    /// Serve a scripted model on 127.0.0.1 until Ctrl-C.
    Serve(ServeArgs),
}

/// Flags of `clibench model serve`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  clibench model serve                               the built-in script on a free port
  clibench model serve --script turns.toml --port 8484 --journal journal.jsonl

Serves Anthropic Messages, OpenAI Responses, OpenAI Chat Completions and Gemini at once,
on 127.0.0.1 only. Prints the URL and how to point each agent at it, then one line per
request (and, with --chunks, per chunk) on stderr. The built-in script answers a request
that mentions listing the folder with an `ls` tool call, anything else with a short text.
docs/model-endpoint.md describes the script format. Ctrl-C, SIGTERM or --stop-after
stops it (exit 0).")]
pub struct ServeArgs {
    /// The script of turns (TOML, or JSON when the name ends in .json).
    #[arg(long, value_name = "FILE")]
    script: Option<PathBuf>,
    /// The port on 127.0.0.1 (default: one the kernel picks).
    #[arg(long, value_name = "N", default_value_t = 0)]
    port: u16,
    /// The jitter seed (overrides the script's).
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Also write the journal as JSON lines to FILE (which must not exist yet).
    #[arg(long, value_name = "FILE")]
    journal: Option<PathBuf>,
    /// Stop after this long (e.g. 10m) rather than only on Ctrl-C.
    #[arg(long, value_name = "DURATION")]
    stop_after: Option<String>,
    /// Print a line for every chunk written, not only for every request.
    #[arg(long)]
    chunks: bool,
    /// The largest request body accepted, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = Limits::default().max_body_bytes)]
    max_body_bytes: usize,
    /// Connections served at once.
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_connections)]
    max_connections: usize,
}

/// Runs `clibench model`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        ModelCommand::Serve(args) => serve(args),
    }
}

fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let mut script = match &args.script {
        Some(path) => Script::load(path).map_err(|e| input_error(e.to_string()))?,
        None => Script::default_script(),
    };
    if let Some(seed) = args.seed {
        script.physics.seed = Some(seed);
    }
    let compiled = script.compile().map_err(|e| {
        input_error(match &args.script {
            Some(path) => format!("{}: {e}", path.display()),
            None => e.to_string(),
        })
    })?;
    let stop_after = args
        .stop_after
        .as_deref()
        .map(bench_core::units::parse_duration)
        .transpose()
        .map_err(|e| input_error(format!("--stop-after: {e}")))?;
    let mut journal_file = match &args.journal {
        Some(path) => Some(create_new(path)?),
        None => None,
    };
    // Registered before the endpoint starts, so that a signal during the start is kept
    // for the watcher below.
    let mut signals = Signals::new([SIGINT, SIGTERM])
        .context("failed to install the SIGINT and SIGTERM handlers")?;
    let endpoint = Endpoint::start(Settings {
        port: args.port,
        script: compiled,
        limits: Limits {
            max_body_bytes: args.max_body_bytes,
            max_connections: args.max_connections,
            ..Limits::default()
        },
        // `model serve` is for a person at a terminal: the bare root is what the agents'
        // pointing instructions it prints use.
        path_token: None,
        peer_uid: None,
    })?;
    let url = endpoint.url();
    outln!("{url}");
    // The URL is what a script waits for: it must not sit in a buffer.
    std::io::stdout().flush().ok();
    say_part!("{}", guide(&url, endpoint.seed()));
    let journal = endpoint.journal();
    // The signal ends the journal's wait at once: the endpoint stops within a moment of
    // Ctrl-C, not at the next of the wait's ticks.
    let stop = Arc::new(AtomicBool::new(false));
    let (flag, waker) = (Arc::clone(&stop), journal.clone());
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if signals.forever().next().is_some() {
                flag.store(true, Ordering::SeqCst);
                waker.wake();
            }
        })
        .context("failed to start the signal thread")?;
    let mut seen = 0;
    let mut stderr = std::io::stderr();
    let deadline = stop_after.map(|after| std::time::Instant::now() + after);
    while !stop.load(Ordering::SeqCst) && deadline.is_none_or(|d| std::time::Instant::now() < d) {
        let events = journal.wait_since(seen, Duration::from_millis(200));
        seen += events.len();
        for event in &events {
            if let Some(file) = journal_file.as_mut() {
                writeln!(file, "{}", event.to_json_line())
                    .context("failed to write the journal")?;
            }
            if let Some(line) = describe(event, args.chunks) {
                // A closed stderr must not stop the endpoint.
                let _ = writeln!(stderr, "{line}");
            }
        }
    }
    endpoint.stop();
    // Events written after the last wait, while stopping.
    if let Some(file) = journal_file.as_mut() {
        for event in journal.events().iter().skip(seen) {
            writeln!(file, "{}", event.to_json_line()).context("failed to write the journal")?;
        }
        // What the journal's bounds kept out, as the pipeline's journals say it too.
        if let Some(line) = journal.dropped_line() {
            writeln!(file, "{line}").context("failed to write the journal")?;
        }
        file.flush().context("failed to write the journal")?;
    }
    let requests = journal.requests().len();
    say!("clibench model: stopped after {requests} request(s)");
    Ok(ExitCode::SUCCESS)
}

fn create_new(path: &Path) -> anyhow::Result<std::io::BufWriter<std::fs::File>> {
    // Never through a link, never over a file that is there.
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| input_error(format!("--journal {}: {e}", path.display())))?;
    Ok(std::io::BufWriter::new(file))
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
}
