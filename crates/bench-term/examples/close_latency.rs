//! Benchmark: how long [`Terminal::close`] takes with the default quit keys, for
//! a TUI that quits on Ctrl-C (the fixture) and for a Python REPL.
//!
//! Each run spawns the program, waits until it is ready (probe mode for the
//! fixture, the `>>> ` prompt for Python), then times `close()` (its
//! `CloseReport::took`) and counts how the program ended. A close that has to hang
//! up or kill is the slow path this benchmark is about.
//!
//! ```text
//! cargo build --release -p bench-term --bins --examples
//! target/release/examples/close_latency [--runs 30] [--fixture PATH] [--python python3]
//! ```

use bench_core::stats::Summary;
use bench_core::units::format_seconds;
use bench_term::{CloseReport, Ending, ReadyMode, SpawnOptions, Terminal};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(20);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut runs = 30usize;
    let mut fixture = None;
    let mut python = String::from("python3");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().ok_or("--runs needs a value")?.parse()?,
            "--python" => python = args.next().ok_or("--python needs a value")?,
            "--fixture" => {
                fixture = Some(PathBuf::from(args.next().ok_or("--fixture needs a path")?))
            }
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let fixture = match fixture {
        Some(path) => path,
        // target/<profile>/examples/close_latency -> target/<profile>/bench-term-fixture-tui
        None => std::env::current_exe()?
            .parent()
            .and_then(|examples| examples.parent())
            .ok_or("cannot locate the target folder")?
            .join("bench-term-fixture-tui"),
    };
    if !fixture.is_file() {
        return Err(format!(
            "fixture not found at {}; build it with `cargo build --release -p bench-term --bins`",
            fixture.display()
        )
        .into());
    }
    let tui = SpawnOptions::new(&fixture)
        .args(["--echo"])
        .env("TERM", "xterm-256color")
        .size(120, 40);
    let repl = SpawnOptions::new(&python)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("TERM", "xterm-256color")
        .env("LANG", "C.UTF-8")
        .size(120, 40);
    let prompt: ReadyMode = "pattern:(?m)^>>> ?$".parse()?;

    let mut tui_closes = Vec::with_capacity(runs);
    let mut repl_closes = Vec::with_capacity(runs);
    // Alternated, so that a slow spell of the machine hits both alike.
    for _ in 0..runs {
        tui_closes.push(close_once(&tui, &ReadyMode::Probe)?);
        repl_closes.push(close_once(&repl, &prompt)?);
    }
    println!("close() with the default quit keys, over {runs} runs each:");
    report("fixture tui", &tui_closes);
    report("python3 repl", &repl_closes);
    Ok(())
}

fn close_once(
    options: &SpawnOptions,
    mode: &ReadyMode,
) -> Result<CloseReport, Box<dyn std::error::Error>> {
    let mut terminal = Terminal::spawn(options)?;
    terminal.ready(mode, TIMEOUT)?;
    Ok(terminal.close()?)
}

fn report(name: &str, closes: &[CloseReport]) {
    let took: Vec<f64> = closes.iter().map(|c| c.took.as_secs_f64()).collect();
    let mut endings: BTreeMap<String, usize> = BTreeMap::new();
    for close in closes {
        *endings
            .entry(ending_name(close.ending).to_owned())
            .or_default() += 1;
    }
    // One slow path in full, to see which key met what.
    if let Some(unclean) = closes.iter().find(|c| c.ending != Ending::Quit) {
        println!("  {name}: one close that did not quit: {unclean:?}");
    }
    let Some(summary) = Summary::from_values(&took) else {
        println!("  {name}: no samples");
        return;
    };
    println!(
        "  {name:<13} min {:>9}  median {:>9}  p95 {:>9}  max {:>9}  total {:>9}  endings {endings:?}",
        format_seconds(summary.min),
        format_seconds(summary.median),
        format_seconds(summary.p95),
        format_seconds(summary.max),
        format_seconds(took.iter().sum()),
    );
}

fn ending_name(ending: Ending) -> &'static str {
    match ending {
        Ending::Exited => "exited",
        Ending::Quit => "quit",
        Ending::HungUp => "hung up",
        Ending::Killed => "killed",
    }
}
