//! Time a program's start-up in a real terminal, the way another Rust tool would
//! embed bench-term: spawn in a PTY, wait until ready, print the timeline and the
//! screen, close.
//!
//! ```text
//! cargo run --example startup_time -- [--ready MODE] [--timeout SECONDS] -- COMMAND ARGS...
//! cargo run --example startup_time -- --ready 'pattern:>>> ' -- python3
//! cargo run --example startup_time
//! ```
//!
//! Without a command it times `python3 -q` until its `>>> ` prompt.
//!
//! The program gets only `PATH`, `HOME`, `LANG` from this environment, plus
//! `TERM=xterm-256color`. MODE is `probe` (default), `pattern:REGEX`,
//! `first-frame` or `stable:DURATION`.

use bench_core::units::format_seconds;
use bench_term::{ReadyMode, SpawnOptions, Terminal};
use std::process::ExitCode;
use std::time::Duration;

/// What runs when no command is given.
const DEFAULT: &[&str] = &["python3", "-q"];

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut mode = ReadyMode::Probe;
    let mut ready_given = false;
    let mut timeout = Duration::from_secs(30);
    let mut args = std::env::args_os().skip(1);
    let mut command = Vec::new();
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--ready") => {
                let value = args.next().ok_or("--ready needs a mode")?;
                mode = value.to_str().ok_or("--ready is not UTF-8")?.parse()?;
                ready_given = true;
            }
            Some("--timeout") => {
                let value = args.next().ok_or("--timeout needs seconds")?;
                timeout = Duration::from_secs_f64(value.to_str().ok_or("not UTF-8")?.parse()?);
            }
            Some("--") => {
                command.extend(args.by_ref());
            }
            _ => {
                return Err(
                    format!("unexpected argument {arg:?}; put the command after --").into(),
                );
            }
        }
    }
    if command.is_empty() {
        // The README lists this example without arguments: time the Python REPL, which the
        // workspace already needs, unless a mode was asked for.
        command = DEFAULT.iter().map(Into::into).collect();
        if !ready_given {
            mode = "pattern:>>> $".parse()?;
        }
    }
    let (program, rest) = command.split_first().ok_or("no command given after --")?;
    let options = SpawnOptions::new(program)
        .args(rest.iter().cloned())
        .inherit_env(["PATH", "HOME", "LANG"])
        .env("TERM", "xterm-256color")
        .size(80, 24);

    let mut terminal = Terminal::spawn(&options)?;
    let outcome = terminal.ready(&mode, timeout);
    let timeline = terminal.timeline();
    let screen = terminal.screen_text();
    let closed = terminal.close();
    let ready = outcome?;
    let closed = closed?;

    let show = |d: Option<Duration>| d.map_or("-".to_owned(), |d| format_seconds(d.as_secs_f64()));
    println!("ready by {mode}");
    println!("first byte   {}", show(timeline.first_byte));
    println!("first frame  {}", show(timeline.first_frame));
    println!("ready        {}", show(Some(ready)));
    println!(
        "closed       {}",
        if closed.quit_when_asked() {
            "by its quit keys".to_owned()
        } else {
            closed.to_string()
        }
    );
    println!("screen:");
    for line in screen.lines() {
        println!("  | {line}");
    }
    Ok(())
}
