//! How long the own /proc parsers take against procfs-core's on the same text: the
//! measurement behind the choice written in docs/architecture.md.
//!
//! ```text
//! cargo run --release -p bench-proc --example parse_speed
//! ```
//!
//! Reads this process's stat, status and smaps_rollup once, then parses each text
//! 20,000 times with both parsers and prints the median of 15 rounds per parse.

use bench_proc::parse::{parse_smaps_rollup, parse_stat, parse_status};
use procfs_core::process::{SmapsRollup, Stat, Status};
use procfs_core::{FromBufRead, FromRead};
use std::hint::black_box;
use std::time::{Duration, Instant};

const ITERATIONS: u32 = 20_000;
const ROUNDS: usize = 15;

fn per_parse(mut parse: impl FnMut()) -> Duration {
    let mut rounds: Vec<Duration> = (0..ROUNDS)
        .map(|_| {
            let started = Instant::now();
            for _ in 0..ITERATIONS {
                parse();
            }
            started.elapsed() / ITERATIONS
        })
        .collect();
    rounds.sort();
    rounds[ROUNDS / 2]
}

fn main() -> std::io::Result<()> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    let status = std::fs::read_to_string("/proc/self/status")?;
    let rollup = std::fs::read_to_string("/proc/self/smaps_rollup")?;
    println!("file          own        procfs-core  ratio");
    let rows = [
        (
            "stat",
            per_parse(|| {
                black_box(parse_stat(black_box(&stat)));
            }),
            per_parse(|| {
                black_box(Stat::from_read(black_box(stat.as_bytes())).ok());
            }),
        ),
        (
            "status",
            per_parse(|| {
                black_box(parse_status(black_box(&status)));
            }),
            per_parse(|| {
                black_box(Status::from_read(black_box(status.as_bytes())).ok());
            }),
        ),
        (
            "smaps_rollup",
            per_parse(|| {
                black_box(parse_smaps_rollup(black_box(&rollup)));
            }),
            per_parse(|| {
                black_box(SmapsRollup::from_buf_read(black_box(rollup.as_bytes())).ok());
            }),
        ),
    ];
    for (file, own, oracle) in rows {
        println!(
            "{file:<13} {:>7.2} us  {:>8.2} us  {:>5.1}x",
            own.as_secs_f64() * 1e6,
            oracle.as_secs_f64() * 1e6,
            oracle.as_secs_f64() / own.as_secs_f64()
        );
    }
    Ok(())
}
