//! Loads two clibench result files and prints their comparison, using only the
//! library API (`bench-core`), the way another Rust tool would embed clibench.
//!
//! ```text
//! cargo run --example compare_results [BASE.json CANDIDATE.json]
//! ```
//!
//! Without arguments it compares the example results shipped in `examples/results/`.
//! It prints the comparison as GitHub-flavoured Markdown, then one line per
//! verdict, and exits with 1 when a metric regressed.

use bench_core::ResultFile;
use bench_core::compare::{CompareOptions, compare};
use bench_core::export::Format;
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let shipped = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/results");
    let mut args = std::env::args_os().skip(1).map(PathBuf::from);
    let base_path = args.next().unwrap_or_else(|| shipped.join("base.json"));
    let candidate_path = args
        .next()
        .unwrap_or_else(|| shipped.join("candidate.json"));

    // A load error's message names the file and the JSON path of the problem.
    let load = |path: &PathBuf| ResultFile::load(path).map_err(|error| error.to_string());
    let (base, candidate) = match (load(&base_path), load(&candidate_path)) {
        (Ok(base), Ok(candidate)) => (base, candidate),
        (Err(error), _) | (_, Err(error)) => {
            eprintln!("error: {error}");
            return ExitCode::from(2);
        }
    };

    let comparison = compare(&base.side, &candidate.side, &CompareOptions::default());
    print!("{}", Format::Markdown.comparison(&comparison));
    println!();
    for row in &comparison.metrics {
        println!(
            "{:<13} {:>+7.1}%  {}",
            row.metric.name(),
            row.change() * 100.0,
            row.verdict.word()
        );
    }
    for missing in &comparison.missing {
        let sides: Vec<&str> = missing
            .missing_on()
            .iter()
            .map(|role| role.name())
            .collect();
        println!(
            "{:<13} missing on {}",
            missing.metric.name(),
            sides.join(" and ")
        );
    }
    if comparison.has_regression() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
