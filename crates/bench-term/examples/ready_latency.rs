//! Benchmark: how long after a program shows it is ready does bench-term notice?
//!
//! The fixture TUI takes its own CLOCK_MONOTONIC timestamp right before it writes
//! its ready marker (pattern mode) or echoes a probe (probe mode). On the same
//! clock, bench-term records when it read the output that made the screen match
//! (`ready`, the reported time) and when it had recognised it: after feeding the
//! chunk to the vt100 model and the query scanner and checking the screen
//! (`ready_detected`). Both gaps from the fixture's stamp are printed; the
//! detection gap is the one with the model in the loop. Goals: median < 1 ms,
//! p99 < 5 ms.
//!
//! ```text
//! cargo build --release -p bench-term --bins --examples
//! target/release/examples/ready_latency [--runs 200] [--fixture PATH]
//!     [--flood-kib 1024] [--flood-runs 40]
//! ```
//!
//! Also prints keystroke-to-screen latency against the echoing fixture, the cost
//! of recording a transcript while reading (the fixture floods `--flood-kib` KiB
//! of log lines before its marker; the CPU time this thread spends in `ready`,
//! reading and feeding all of it, with and without a transcript, and in `close`,
//! which writes the recording; CPU time, unlike the wall clock, hardly depends on
//! what else the machine runs), and this process's peak RSS (VmHWM) after driving
//! all those terminals.

use bench_core::stats::{Summary, percentile_of_sorted};
use bench_core::units::{format_bytes, format_seconds};
use bench_term::{ReadyMode, SpawnOptions, Terminal};
use regex::Regex;
use std::path::PathBuf;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(20);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut runs = 200usize;
    let mut flood_kib = 1024usize;
    let mut flood_runs = 40usize;
    let mut fixture = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().ok_or("--runs needs a value")?.parse()?,
            "--flood-kib" => flood_kib = args.next().ok_or("--flood-kib needs a value")?.parse()?,
            "--flood-runs" => {
                flood_runs = args.next().ok_or("--flood-runs needs a value")?.parse()?
            }
            "--fixture" => {
                fixture = Some(PathBuf::from(args.next().ok_or("--fixture needs a path")?))
            }
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let fixture = match fixture {
        Some(path) => path,
        // target/<profile>/examples/ready_latency -> target/<profile>/bench-term-fixture-tui
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
    let options = |flags: &[&str]| {
        SpawnOptions::new(&fixture)
            .args(flags.iter().copied())
            .env("TERM", "xterm-256color")
            .size(120, 40)
    };

    // Pattern mode: the marker carries the fixture's timestamp.
    let marker = Regex::new(r"READY (\d+)")?;
    let mut pattern = Vec::with_capacity(runs);
    let mut pattern_read = Vec::with_capacity(runs);
    for _ in 0..runs {
        let mut terminal = Terminal::spawn(&options(&["--ready-marker"]))?;
        let ready = terminal.ready(&ReadyMode::Pattern(marker.clone()), TIMEOUT)?;
        let screen = terminal.screen_text();
        let stamp_ns: u128 = marker
            .captures(&screen)
            .and_then(|c| c[1].parse().ok())
            .ok_or("marker without a timestamp")?;
        let (read_ns, detected_ns) = clock(&terminal, ready);
        pattern_read.push((read_ns as f64 - stamp_ns as f64) / 1e9);
        pattern.push((detected_ns as f64 - stamp_ns as f64) / 1e9);
        terminal.close()?;
    }

    // Probe mode: the fixture appends the timestamp of each echo write to a file;
    // the first echo is the first probe that can appear.
    let folder = std::env::temp_dir().join(format!("ready-latency-{}", std::process::id()));
    std::fs::create_dir_all(&folder)?;
    let mut probe = Vec::with_capacity(runs);
    let mut probe_read = Vec::with_capacity(runs);
    for run in 0..runs {
        let stamps = folder.join(format!("stamps-{run}"));
        let stamps_arg = stamps.to_string_lossy().into_owned();
        let mut terminal = Terminal::spawn(&options(&["--echo", "--echo-stamps", &stamps_arg]))?;
        let ready = terminal.ready(&ReadyMode::Probe, TIMEOUT)?;
        let (read_ns, detected_ns) = clock(&terminal, ready);
        terminal.close()?;
        let first: u128 = std::fs::read_to_string(&stamps)?
            .lines()
            .next()
            .and_then(|l| l.parse().ok())
            .ok_or("no echo stamp")?;
        probe_read.push((read_ns as f64 - first as f64) / 1e9);
        probe.push((detected_ns as f64 - first as f64) / 1e9);
    }
    std::fs::remove_dir_all(&folder)?;

    // Keystroke-to-screen latency, for the ui phase.
    let mut terminal = Terminal::spawn(&options(&["--echo"]))?;
    terminal.ready(&ReadyMode::Probe, TIMEOUT)?;
    let keystrokes: Vec<f64> = terminal
        .keystroke_latency(runs)?
        .iter()
        .map(Duration::as_secs_f64)
        .collect();
    terminal.close()?;

    // Recording while reading: the same flood, without and with a transcript.
    let flood_bytes = (flood_kib * 1024).to_string();
    let flood_options = || options(&["--flood", &flood_bytes, "--ready-marker"]);
    let mut flood_plain = Vec::with_capacity(flood_runs);
    let mut flood_recorded = Vec::with_capacity(flood_runs);
    let mut close_plain = Vec::with_capacity(flood_runs);
    let mut close_recorded = Vec::with_capacity(flood_runs);
    let transcripts = std::env::temp_dir().join(format!("ready-flood-{}", std::process::id()));
    for run in 0..flood_runs {
        // Alternated, so that a slow spell of the machine hits both alike.
        for recorded in [run % 2 == 0, run % 2 != 0] {
            let options = if recorded {
                flood_options().transcript(transcripts.join(run.to_string()))
            } else {
                flood_options()
            };
            let mut terminal = Terminal::spawn(&options)?;
            let started = thread_cpu();
            terminal.ready(&ReadyMode::Pattern(marker.clone()), TIMEOUT)?;
            let read = thread_cpu() - started;
            let started = thread_cpu();
            terminal.close()?;
            let closed = thread_cpu() - started;
            let (ready_list, close_list) = if recorded {
                (&mut flood_recorded, &mut close_recorded)
            } else {
                (&mut flood_plain, &mut close_plain)
            };
            ready_list.push(read.as_secs_f64());
            close_list.push(closed.as_secs_f64());
        }
    }
    if transcripts.exists() {
        std::fs::remove_dir_all(&transcripts)?;
    }

    println!("over {runs} runs, from the fixture's write to bench-term's read / detection:");
    report("pattern read", &pattern_read);
    report("pattern det.", &pattern);
    report("probe read", &probe_read);
    report("probe det.", &probe);
    println!("keystroke-to-screen latency over {runs} keys:");
    report("keystroke", &keystrokes);
    println!("CPU time in ready, reading a {flood_kib} KiB flood, over {flood_runs} runs:");
    report("plain", &flood_plain);
    report("transcript", &flood_recorded);
    println!("CPU time in close (the transcript saved on close):");
    report("plain", &close_plain);
    report("transcript", &close_recorded);
    let status = std::fs::read_to_string("/proc/self/status")?;
    let hwm_kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or("no VmHWM")?;
    println!(
        "peak RSS of this process: {}",
        format_bytes(hwm_kib * 1024.0)
    );
    Ok(())
}

/// CPU time this thread has used so far.
fn thread_cpu() -> Duration {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(
        u64::try_from(now.tv_sec).unwrap_or(0),
        u32::try_from(now.tv_nsec).unwrap_or(0),
    )
}

/// CLOCK_MONOTONIC nanoseconds of the ready read and of its detection.
fn clock(terminal: &Terminal, ready: Duration) -> (u128, u128) {
    let spawn = terminal.spawn_monotonic();
    let detected = terminal.timeline().ready_detected.unwrap_or(ready);
    ((spawn + ready).as_nanos(), (spawn + detected).as_nanos())
}

fn report(name: &str, values: &[f64]) {
    let Some(summary) = Summary::from_values(values) else {
        println!("  {name}: no samples");
        return;
    };
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    println!(
        "  {name:<13} min {:>9}  median {:>9}  p95 {:>9}  p99 {:>9}  max {:>9}",
        format_seconds(summary.min),
        format_seconds(summary.median),
        format_seconds(summary.p95),
        format_seconds(percentile_of_sorted(&sorted, 0.99)),
        format_seconds(summary.max)
    );
}
