//! Runs clibench's pipeline on the built-in demo agent from Rust, the way another tool
//! would embed `bench-cli`'s library: write the demo, plan the phases, run them in this
//! process, then read the result.
//!
//! ```text
//! cargo run -p clibench-examples --example pipeline_demo -- OUT_DIR [PHASE,...]
//! ```
//!
//! PHASES defaults to `prepare,install,measure`, one trial. As root each install gets its
//! own throwaway Unix user (removed at the end); as a normal user, a fresh HOME under
//! OUT_DIR. It prints one line per step, then each metric's median.

use bench_cli::pipeline::{
    Execution, Observer, Plan, PlanSettings, Progress, Runner, SpecSource, StepResult,
};
use bench_core::{Phase, ResultFile};
use std::path::PathBuf;
use std::process::ExitCode;

/// Prints a line per finished step.
struct Lines;

impl Observer for Lines {
    fn step_finished(&mut self, progress: &Progress, result: &StepResult) {
        match result {
            StepResult::Succeeded => println!("{}: ok", progress.label()),
            StepResult::Failed { message, .. } => {
                println!("{}: failed: {message}", progress.label())
            }
            StepResult::Skipped { reason } => {
                println!("{}: skipped: {reason}", progress.label())
            }
        }
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<bool, Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out = PathBuf::from(args.next().ok_or("usage: pipeline_demo OUT_DIR [PHASES]")?);
    let phases = match args.next() {
        Some(list) => list
            .split(',')
            .map(str::parse::<Phase>)
            .collect::<Result<Vec<_>, _>>()?,
        None => vec![Phase::Prepare, Phase::Install, Phase::Measure],
    };
    let settings = PlanSettings {
        trials: 1,
        phases: Some(phases),
        ..PlanSettings::default()
    };
    let plan = Plan::new(SpecSource::Demo, &out, settings)?;
    let outcome = Runner::new(plan, Execution::InProcess).run(&mut Lines)?;

    let result = ResultFile::load(&out.join("result.json"))?;
    for phase in Phase::ALL {
        for metric in phase.metrics() {
            let values = result.side.values(metric);
            if values.is_empty() {
                continue;
            }
            let mut sorted = values.clone();
            sorted.sort_by(f64::total_cmp);
            let median = bench_core::stats::median_of_sorted(&sorted);
            println!(
                "{:<14} {} ({} sample{})",
                metric.name(),
                metric.unit().format(median),
                values.len(),
                if values.len() == 1 { "" } else { "s" }
            );
        }
    }
    Ok(outcome.failed.is_empty())
}
