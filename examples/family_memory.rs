//! Measures the memory of a command's process family with `bench-proc`, the way
//! another Rust tool (a test harness, a CI job) would embed it: become a child
//! subreaper so daemons stay in the family, start the command, sample the
//! family's totals in the background while it settles, take a full snapshot,
//! then stop everything and check nothing is left.
//!
//! ```text
//! cargo run --example family_memory [-- COMMAND ARGS...]
//! ```
//!
//! Without a command it runs a shell with two children, one holding 8 MiB.

use bench_core::units::format_bytes;
use bench_proc::{HostFacts, Sampler, SamplerOptions, Selector, become_subreaper, snapshot, stop};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

const DEFAULT: &[&str] = &[
    "sh",
    "-c",
    "sleep 30 & python3 -c 'import time; x = b\"x\" * (8 << 20); time.sleep(30)' & wait",
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let command: Vec<String> = if args.is_empty() {
        DEFAULT.iter().map(|s| s.to_string()).collect()
    } else {
        args
    };
    match measure(&command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn measure(command: &[String]) -> Result<(), String> {
    let host = HostFacts::read().map_err(|e| e.to_string())?;
    eprintln!(
        "host: {} ({} cores), {} RAM, Linux {} {}",
        host.cpu_model,
        host.cores,
        format_bytes(host.memory_bytes as f64),
        host.kernel_release,
        host.arch
    );
    // Orphans of the command (double-forked daemons) re-parent to us, so our
    // own tree is the family.
    become_subreaper().map_err(|e| e.to_string())?;
    let me = std::process::id();
    let family = Selector::Tree(me);
    let sampler = Sampler::start(SamplerOptions {
        selector: family,
        interval: Duration::from_millis(20),
        exclude_pids: vec![me],
        // A command watched to its end: every sample is kept.
        max_points: None,
    });
    let mut child = Command::new(&command[0])
        .args(&command[1..])
        .stdin(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("failed to start {}: {e}", command[0]))?;

    // Settle: wait until the family stops growing, at most 10 s.
    let mut last = 0;
    let mut same = 0;
    for _ in 0..200 {
        std::thread::sleep(Duration::from_millis(50));
        let now = snapshot(&family).map_err(|e| e.to_string())?.without(&[me]);
        let rss = now.total_rss_bytes();
        same = if rss == last { same + 1 } else { 0 };
        last = rss;
        if same >= 4 {
            break;
        }
    }
    let snap = snapshot(&family).map_err(|e| e.to_string())?.without(&[me]);
    let series = sampler.stop();
    let report = stop(&family, Duration::from_secs(2)).map_err(|e| e.to_string())?;
    let _ = child.try_wait();

    let mut names: Vec<&str> = snap.processes.iter().map(|p| p.name.as_str()).collect();
    names.sort_unstable();
    println!(
        "family: {} processes ({})",
        snap.processes.len(),
        names.join(", ")
    );
    let unknown = || "unknown".to_string();
    let size = |bytes: Option<u64>| bytes.map_or_else(unknown, |b| format_bytes(b as f64));
    println!("rss:  {}", format_bytes(snap.total_rss_bytes() as f64));
    println!("pss:  {}", size(snap.total_pss_bytes()));
    println!("uss:  {}", size(snap.total_uss_bytes()));
    println!("swap: {}", size(snap.total_swap_bytes()));
    let biggest = snap
        .processes
        .iter()
        .max_by_key(|p| p.pss_bytes.unwrap_or(p.rss_bytes));
    if let Some(p) = biggest {
        println!("largest: {} ({} PSS)", p.name, size(p.pss_bytes));
    }
    println!(
        "peak while settling: {} RSS, {} PSS, {} processes ({} samples)",
        format_bytes(series.peak_rss_bytes as f64),
        size(series.peak_pss_bytes),
        series.peak_process_count,
        series.points.len()
    );
    println!(
        "stopped: {} terminated, {} killed, {} reaped",
        report.terminated.len(),
        report.killed.len(),
        report.reaped.len()
    );
    let left = snapshot(&family).map_err(|e| e.to_string())?.without(&[me]);
    println!("left running: {}", left.processes.len());
    Ok(())
}
