//! How a failed command becomes a message and an exit code.
//!
//! Exit codes: 0 success; 1 the benchmark found a problem (a regression under
//! `--fail-on-regression`, a failed trial); 2 usage and input errors (a file that
//! does not parse, a bad flag value). clap itself exits 2 on bad flags.

use std::fmt;
use std::process::ExitCode;

/// Exit code for a measurement that ran but failed, or a regression that was asked to fail.
pub const FAILURE: u8 = 1;
/// Exit code for usage and input errors.
pub const USAGE: u8 = 2;

/// Marks an error as caused by what the user gave us (a file, a flag value)
/// rather than by the program under test, so that `main` exits with [`USAGE`].
///
/// Build one with [`input_error`], or attach it to any error with
/// `result.map_err(|e| input_error(format!("...: {e}")))`.
#[derive(Debug)]
pub struct InputError(pub String);

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InputError {}

/// An [`anyhow::Error`] that exits with [`USAGE`].
pub fn input_error(message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(InputError(message.into()))
}

/// Prints the error chain on stderr and picks the exit code.
pub fn report(error: &anyhow::Error) -> ExitCode {
    say!("error: {error:#}");
    let is_input = error.chain().any(|cause| {
        cause.is::<InputError>()
            || cause
                .downcast_ref::<bench_cli::pipeline::Error>()
                .is_some_and(bench_cli::pipeline::Error::is_input)
            || cause
                .downcast_ref::<bench_cli::standalone::mem::Error>()
                .is_some_and(bench_cli::standalone::mem::Error::is_input)
    });
    ExitCode::from(if is_input { USAGE } else { FAILURE })
}
