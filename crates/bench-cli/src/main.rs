//! `clibench`: benchmark interactive command-line programs the way their users feel them.
//!
//! `main` stays short: parse, run the chosen command, map the outcome to an exit code.
// Everything printed goes through `show`, which makes target and file text inert.
#![deny(clippy::print_stdout, clippy::print_stderr)]

#[macro_use]
mod show;
mod commands;
mod exit;
mod settings;
mod text;

// The library half: what clibench does. The binary only asks and shows.
use bench_cli::{demo, pipeline, spec};

use std::process::ExitCode;

fn main() -> ExitCode {
    exit::quiet_on_closed_output();
    // A step of `clibench run` re-executed as its own process (Execution::ReExec).
    if let Some(child) = pipeline::PhaseChild::from_args(std::env::args_os()) {
        return ExitCode::from(pipeline::PhaseChild::run_or_report(
            child,
            &mut show::InertStderr::default(),
        ));
    }
    let cli = commands::parse();
    // Printing into a pipe its reader closed (`clibench ... | head -1`) panics in `print!`;
    // unwinding stops and reaps what the command started before the quiet exit below.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| commands::run(cli)));
    // A Ctrl-C (or SIGTERM, SIGHUP) being handled decides the exit code, not the
    // measurement it cut short.
    commands::wait_if_interrupted();
    match outcome {
        Ok(Ok(code)) => code,
        Ok(Err(error)) => exit::report(&error),
        Err(panic) if exit::is_closed_output(panic.as_ref()) => exit::CLOSED_OUTPUT,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}
