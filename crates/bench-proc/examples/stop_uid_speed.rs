//! How long `stop_uid` takes on a uid without processes and on one with a few
//! sleeping ones (issue 24: the helper used to run all its rounds every time).
//! Run as root: `cargo run --release -p bench-proc --example stop_uid_speed`.

use std::os::unix::process::CommandExt;
use std::time::{Duration, Instant};

fn main() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("needs root");
        std::process::exit(2);
    }
    // A uid nobody has: no passwd entry needed for setresuid.
    let uid = 3_900_000 + std::process::id() % 50_000;
    let calls = 30;
    let mut empty = Vec::new();
    for _ in 0..calls {
        let started = Instant::now();
        bench_proc::stop_uid(uid, Duration::from_secs(10)).unwrap();
        empty.push(started.elapsed());
    }
    let mut busy = Vec::new();
    for _ in 0..calls {
        let mut children: Vec<_> = (0..3)
            .map(|_| {
                let mut command = std::process::Command::new("sleep");
                command.arg("60").uid(uid).process_group(0);
                command.spawn().unwrap()
            })
            .collect();
        let started = Instant::now();
        bench_proc::stop_uid(uid, Duration::from_secs(10)).unwrap();
        busy.push(started.elapsed());
        for child in &mut children {
            let _ = child.wait();
        }
    }
    for (what, mut times) in [("empty uid", empty), ("3 sleeping processes", busy)] {
        times.sort();
        let mean = times.iter().sum::<Duration>() / times.len() as u32;
        println!(
            "{what}: {calls} calls, median {:.2} ms, mean {:.2} ms, max {:.2} ms",
            times[times.len() / 2].as_secs_f64() * 1e3,
            mean.as_secs_f64() * 1e3,
            times[times.len() - 1].as_secs_f64() * 1e3
        );
    }
}
