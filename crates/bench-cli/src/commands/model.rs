//! `clibench model serve`: the loopback model endpoint in the foreground (see
//! [`bench_model`]), for driving an agent by hand without the network.

use crate::exit::input_if;
use anyhow::Context;
use bench_cli::standalone::serve::{ServeRequest, Serving};
use bench_model::Limits;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

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
    let request = ServeRequest {
        script: args.script,
        port: args.port,
        seed: args.seed,
        journal: args.journal,
        stop_after: args.stop_after,
        chunks: args.chunks,
        limits: Limits {
            max_body_bytes: args.max_body_bytes,
            max_connections: args.max_connections,
            ..Limits::default()
        },
    };
    // Registered before the endpoint starts, so that a signal during the start is kept
    // for the watcher below.
    let mut signals = Signals::new([SIGINT, SIGTERM])
        .context("failed to install the SIGINT and SIGTERM handlers")?;
    let serving = Serving::start(request).map_err(|error| input_if(error.is_input(), error))?;
    outln!("{}", serving.url());
    // The URL is what a script waits for: it must not sit in a buffer.
    std::io::stdout().flush().ok();
    say_part!("{}", serving.guide());
    // The signal ends the journal's wait at once: the endpoint stops within a moment of
    // Ctrl-C, not at the next of the wait's ticks.
    let stop = Arc::new(AtomicBool::new(false));
    let (flag, waker) = (Arc::clone(&stop), serving.journal());
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if signals.forever().next().is_some() {
                flag.store(true, Ordering::SeqCst);
                waker.wake();
            }
        })
        .context("failed to start the signal thread")?;
    let mut stderr = std::io::stderr();
    let requests = serving.serve(&stop, |line| {
        // A closed stderr must not stop the endpoint.
        let _ = writeln!(stderr, "{line}");
    })?;
    say!("clibench model: stopped after {requests} request(s)");
    Ok(ExitCode::SUCCESS)
}
