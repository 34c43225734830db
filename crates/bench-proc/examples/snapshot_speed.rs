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
//! median and minimum wall time of each way, and its median CPU time (all
//! threads of this process, or of the `ps_mem` child), interleaved round by
//! round so machine noise hits all of them alike. CPU time is the fairer
//! number on a machine shared with other work; wall time is what a caller waits.

use bench_proc::{ProcRoot, Selector, stop};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Wall and CPU time of one measured way.
#[derive(Clone, Copy)]
struct Took {
    wall: Duration,
    cpu: Duration,
}

fn cpu_time(children: bool) -> Duration {
    if children {
        // SAFETY: getrusage fills the zeroed struct it is given.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: valid pointer to a rusage struct.
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
        let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
        return tv(usage.ru_utime) + tv(usage.ru_stime);
    }
    // SAFETY: clock_gettime fills the zeroed timespec it is given.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Runs `f` and records its wall and CPU time.
fn time<T>(times: &mut Vec<Took>, children: bool, f: impl FnOnce() -> T) -> T {
    let cpu = cpu_time(children);
    let started = Instant::now();
    let value = f();
    times.push(Took {
        wall: started.elapsed(),
        cpu: cpu_time(children) - cpu,
    });
    value
}

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
    let read_all = |pids: &[u32], files: &[&str], buf: &mut Vec<u8>| {
        for pid in pids {
            for file in files {
                buf.clear();
                if let Ok(mut f) = std::fs::File::open(format!("/proc/{pid}/{file}")) {
                    let _ = std::io::Read::read_to_end(&mut f, buf);
                }
            }
        }
    };
    let mut bare = Vec::new();
    let mut full = Vec::new();
    let mut full_one_thread = Vec::new();
    let mut ps_mem_times = Vec::new();
    let mut discover_times = Vec::new();
    let mut scan_times = Vec::new();
    let files = ["smaps_rollup", "status", "stat", "cmdline"];
    let mut per_file: Vec<Vec<Took>> = vec![Vec::new(); files.len()];
    let mut buf = Vec::with_capacity(8192);
    let all_pids: Vec<u32> = std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
        .collect();
    for round in 0..rounds {
        time(&mut bare, false, || {
            read_all(&pids, &["smaps_rollup", "status"], &mut buf)
        });
        let snap = time(&mut full, false, || {
            root.snapshot(&Selector::Tree(me)).expect("snapshot")
        });
        assert!(snap.processes.len() + 5 >= pids.len());
        time(&mut full_one_thread, false, || {
            sequential.snapshot(&Selector::Tree(me)).expect("snapshot")
        });
        time(&mut discover_times, false, || {
            root.discover(&Selector::Tree(me)).expect("discover")
        });
        time(&mut scan_times, false, || {
            read_all(&all_pids, &["stat"], &mut buf)
        });
        for (index, file) in files.iter().enumerate() {
            time(&mut per_file[index], false, || {
                read_all(&pids, &[file], &mut buf)
            });
        }
        // ps_mem is slow to start (Python); a third of the rounds is plenty.
        if ps_mem && round % 3 == 0 {
            let output = time(&mut ps_mem_times, true, || {
                Command::new("ps_mem")
                    .args(["-t", "-p", &pid_list.join(",")])
                    .stderr(Stdio::null())
                    .output()
                    .expect("run ps_mem")
            });
            assert!(output.status.success(), "ps_mem failed");
        }
    }

    for child in &mut spawned {
        let _ = stop(&Selector::Tree(child.id()), Duration::from_secs(2));
        let _ = child.wait();
    }

    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let median = |times: &[Took], pick: fn(&Took) -> Duration| {
        let mut values: Vec<Duration> = times.iter().map(pick).collect();
        values.sort();
        values.get(values.len() / 2).copied().map_or(f64::NAN, ms)
    };
    let min_wall = |times: &[Took]| times.iter().map(|t| t.wall).min().map_or(f64::NAN, ms);
    let bare_wall = median(&bare, |t| t.wall);
    let bare_cpu = median(&bare, |t| t.cpu);
    println!(
        "family: {} processes ({} fixture, {} node requested), {} rounds, {} cores, load average {}",
        pids.len(),
        fixtures,
        node,
        rounds,
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split_whitespace()
            .next()
            .unwrap_or("?")
    );
    println!(
        "family totals: RSS {:.1} MiB, PSS {:.1} MiB",
        family.total_rss_bytes() as f64 / 1048576.0,
        family.total_pss_bytes().unwrap_or(0) as f64 / 1048576.0
    );
    println!(
        "{:<44} {:>9} {:>8} {:>7} {:>8} {:>7}",
        "way", "wall ms", "min ms", "ratio", "cpu ms", "ratio"
    );
    let row = |name: &str, times: &[Took]| {
        let wall = median(times, |t| t.wall);
        let cpu = median(times, |t| t.cpu);
        println!(
            "{:<44} {:>9.2} {:>8.2} {:>6.2}x {:>8.2} {:>6.2}x",
            name,
            wall,
            min_wall(times),
            wall / bare_wall,
            cpu,
            cpu / bare_cpu
        );
    };
    row("bare sequential reads (smaps_rollup+status)", &bare);
    row("bench-proc snapshot (parallel)", &full);
    row("bench-proc snapshot (one thread)", &full_one_thread);
    row(
        "  of which: discovery (stat+children files)",
        &discover_times,
    );
    row("  for scale: read every /proc/*/stat", &scan_times);
    for (file, times) in files.iter().zip(&per_file) {
        row(&format!("  one file, all processes: {file}"), times);
    }
    if ps_mem {
        row("ps_mem -t -p PIDS (whole program run)", &ps_mem_times);
    } else {
        println!("ps_mem not found (pip install ps_mem); skipped");
    }
}
