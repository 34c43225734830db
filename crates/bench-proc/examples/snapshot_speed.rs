//! Benchmark: a full snapshot of a 200-process family against the floor, bare
//! sequential reads of `smaps_rollup` + `status` of the same processes, and
//! against `ps_mem -p` (PyPI) on the same pids, side by side in one run.
//!
//! ```text
//! cargo build --release -p bench-proc --bins --examples
//! target/release/examples/snapshot_speed [--fixtures 150] [--node 50] [--rounds 30]
//! ```
//!
//! The family is this process's children: `--fixtures` processes of the
//! `bench-proc-fixture` binary (one parent forking the rest, 1 MiB touched each)
//! and `--node` idle `node` processes (skipped if node is missing). Prints the
//! median and minimum of each way, interleaved round by round so machine noise
//! hits all of them alike.

use bench_proc::{ProcRoot, Selector, stop};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn main() {
    let mut fixtures = 150usize;
    let mut node = 50usize;
    let mut rounds = 30usize;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value: usize = args.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| {
            eprintln!("usage: snapshot_speed [--fixtures N] [--node N] [--rounds N]");
            std::process::exit(2)
        });
        match flag.as_str() {
            "--fixtures" => fixtures = value,
            "--node" => node = value,
            "--rounds" => rounds = value.max(1),
            other => {
                eprintln!("unknown flag {other}");
                std::process::exit(2)
            }
        }
    }
    let me = std::process::id();
    let fixture_bin = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.join("bench-proc-fixture")))
        .filter(|path| path.exists())
        .unwrap_or_else(|| {
            eprintln!("build the fixture first: cargo build --release -p bench-proc --bins");
            std::process::exit(2)
        });

    let mut spawned = Vec::new();
    if fixtures > 0 {
        let mut child = Command::new(&fixture_bin)
            .args(["--mib", "1", "--children", &(fixtures - 1).to_string()])
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn the fixture");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped"))
            .read_line(&mut line)
            .expect("fixture readiness");
        spawned.push(child);
    }
    for _ in 0..node {
        match Command::new("node")
            .args(["-e", "setInterval(() => {}, 1e9)"])
            .spawn()
        {
            Ok(child) => spawned.push(child),
            Err(error) => {
                eprintln!("node unavailable ({error}); continuing without it");
                break;
            }
        }
    }
    // Let node finish starting so every round measures the same steady family.
    std::thread::sleep(Duration::from_secs(if node > 0 { 3 } else { 1 }));

    let root = ProcRoot::live();
    let pids = root
        .discover(&Selector::Tree(me))
        .expect("discover the family");
    let family = root.snapshot(&Selector::Tree(me)).expect("snapshot");
    let pid_list: Vec<String> = pids
        .iter()
        .filter(|&&p| p != me)
        .map(u32::to_string)
        .collect();
    let ps_mem = Command::new("ps_mem")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());

    let sequential = ProcRoot::live().with_threads(1);
    let mut bare = Vec::new();
    let mut full = Vec::new();
    let mut full_one_thread = Vec::new();
    let mut ps_mem_times = Vec::new();
    let mut discover_times = Vec::new();
    let mut scan_times = Vec::new();
    let files = ["smaps_rollup", "status", "stat", "cmdline"];
    let mut per_file: Vec<Vec<Duration>> = vec![Vec::new(); files.len()];
    let mut buf = Vec::with_capacity(8192);
    for round in 0..rounds {
        let started = Instant::now();
        for pid in &pids {
            for file in ["smaps_rollup", "status"] {
                buf.clear();
                if let Ok(mut f) = std::fs::File::open(format!("/proc/{pid}/{file}")) {
                    let _ = std::io::Read::read_to_end(&mut f, &mut buf);
                }
            }
        }
        bare.push(started.elapsed());

        let started = Instant::now();
        let snap = root.snapshot(&Selector::Tree(me)).expect("snapshot");
        full.push(started.elapsed());
        assert!(snap.processes.len() + 5 >= pids.len());

        let started = Instant::now();
        let _ = sequential.snapshot(&Selector::Tree(me)).expect("snapshot");
        full_one_thread.push(started.elapsed());

        let started = Instant::now();
        let _ = root.discover(&Selector::Tree(me)).expect("discover");
        discover_times.push(started.elapsed());

        let started = Instant::now();
        for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
            if entry.file_name().as_encoded_bytes()[0].is_ascii_digit() {
                buf.clear();
                if let Ok(mut f) = std::fs::File::open(entry.path().join("stat")) {
                    let _ = std::io::Read::read_to_end(&mut f, &mut buf);
                }
            }
        }
        scan_times.push(started.elapsed());

        for (index, file) in files.iter().enumerate() {
            let started = Instant::now();
            for pid in &pids {
                buf.clear();
                if let Ok(mut f) = std::fs::File::open(format!("/proc/{pid}/{file}")) {
                    let _ = std::io::Read::read_to_end(&mut f, &mut buf);
                }
            }
            per_file[index].push(started.elapsed());
        }

        // ps_mem is slow to start (Python); a third of the rounds is plenty.
        if ps_mem && round % 3 == 0 {
            let started = Instant::now();
            let output = Command::new("ps_mem")
                .args(["-t", "-p", &pid_list.join(",")])
                .stderr(Stdio::null())
                .output()
                .expect("run ps_mem");
            ps_mem_times.push(started.elapsed());
            assert!(output.status.success(), "ps_mem failed");
        }
    }

    for child in &mut spawned {
        let _ = stop(&Selector::Tree(child.id()), Duration::from_secs(2));
        let _ = child.wait();
    }

    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let median = |times: &mut Vec<Duration>| {
        times.sort();
        times.get(times.len() / 2).copied().map_or(f64::NAN, ms)
    };
    let min = |times: &[Duration]| times.iter().min().copied().map_or(f64::NAN, ms);
    let bare_median = median(&mut bare);
    println!(
        "family: {} processes ({} fixture, {} node requested), {} rounds, {} cores",
        pids.len(),
        fixtures,
        node,
        rounds,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!(
        "family totals: RSS {:.1} MiB, PSS {:.1} MiB",
        family.total_rss_bytes() as f64 / 1048576.0,
        family.total_pss_bytes().unwrap_or(0) as f64 / 1048576.0
    );
    println!(
        "{:<44} {:>10} {:>10} {:>8}",
        "way", "median ms", "min ms", "ratio"
    );
    let row = |name: &str, times: &mut Vec<Duration>| {
        let med = median(times);
        println!(
            "{:<44} {:>10.2} {:>10.2} {:>7.2}x",
            name,
            med,
            min(times),
            med / bare_median
        );
    };
    row("bare sequential reads (smaps_rollup+status)", &mut bare);
    row("bench-proc snapshot (parallel)", &mut full);
    row("bench-proc snapshot (one thread)", &mut full_one_thread);
    row(
        "  of which: discovery (children files)",
        &mut discover_times,
    );
    row("  alternative: read every /proc/*/stat", &mut scan_times);
    for (file, times) in files.iter().zip(per_file.iter_mut()) {
        row(&format!("  one file, all processes: {file}"), times);
    }
    if ps_mem {
        row("ps_mem -t -p PIDS (whole program run)", &mut ps_mem_times);
    } else {
        println!("ps_mem not found (pip install ps_mem); skipped");
    }
}
