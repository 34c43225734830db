//! How long the comparison and the result file round trip take, in release builds.
//!
//! `cargo bench -p bench-core --bench compare`. Each case runs a fixed number of
//! times and prints the median and the fastest run; the goal is that comparing two
//! full result files (every metric, 101 trials) stays well under a second, so
//! `clibench compare` feels instant.

use bench_core::compare::{CompareOptions, compare};
use bench_core::export::Format;
use bench_core::{Metric, ProcessMemory, Request, ResultFile, Role, Sample, record};
use std::hint::black_box;
use std::time::{Duration, Instant};

fn main() {
    let small_base = example("base");
    let small_candidate = example("candidate");
    let full_base = synthetic("base", 1.0);
    let full_candidate = synthetic("candidate", 1.1);
    let full_text = full_base.to_json_string();
    let options = CompareOptions::default();

    time(
        "compare shipped examples (9 metrics x 5 trials)",
        20,
        || compare(&small_base.side, &small_candidate.side, &options),
    );
    time("compare full results (26 metrics x 101 trials)", 5, || {
        compare(&full_base.side, &full_candidate.side, &options)
    });
    let comparison = compare(&full_base.side, &full_candidate.side, &options);
    time("export full comparison as Markdown", 50, || {
        Format::Markdown.comparison(&comparison)
    });
    time(
        &format!(
            "parse and validate a full result ({} KiB)",
            full_text.len() / 1024
        ),
        50,
        || ResultFile::from_json_str(&full_text).unwrap(),
    );
    time("serialize a full result", 50, || full_base.to_json_string());
}

fn time<T>(name: &str, runs: usize, mut work: impl FnMut() -> T) {
    let mut samples: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            black_box(work());
            started.elapsed()
        })
        .collect();
    samples.sort();
    println!(
        "{name:<55} median {:>10.3} ms  min {:>10.3} ms  ({runs} runs)",
        samples[runs / 2].as_secs_f64() * 1e3,
        samples[0].as_secs_f64() * 1e3
    );
}

fn example(name: &str) -> ResultFile {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/results")
        .join(format!("{name}.json"));
    ResultFile::load(&path).unwrap()
}

/// Every metric with 101 trials of deterministic pseudo-random values around
/// `scale`, and 128 processes.
fn synthetic(sha: &str, scale: f64) -> ResultFile {
    let mut result = ResultFile::new(Request::new(sha, Role::Base));
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    for metric in Metric::ALL {
        for trial in 0..=100 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let jitter = (state >> 11) as f64 / (1u64 << 53) as f64;
            let base = match metric.unit() {
                bench_core::units::Unit::Seconds => 0.4,
                bench_core::units::Unit::Bytes => 128.0 * 1024.0 * 1024.0,
                bench_core::units::Unit::Share => 0.05,
            };
            let value = base * scale * (0.9 + 0.2 * jitter);
            record(&mut result.side, metric, trial, Sample::Value(value));
        }
    }
    result.side.set_processes(
        (0..128)
            .map(|pid| ProcessMemory {
                pid: 1000 + pid,
                ppid: Some(1),
                name: format!("worker-{pid}"),
                rss: u64::from(pid) << 20,
                pss: Some(u64::from(pid) << 19),
                uss: Some(u64::from(pid) << 18),
                swap: Some(0),
                cpu_seconds: Some(0.5),
                threads: Some(1),
                cmdline: None,
                role: None,
            })
            .collect(),
    );
    result
}
