//! How a failed command becomes a message and an exit code.
//!
//! Exit codes: 0 success; 1 the benchmark found a problem (a regression under
//! `--fail-on-regression`, a failed trial); 2 usage and input errors (a file that
//! does not parse, a bad flag value). clap itself exits 2 on bad flags.
//!
//! Output into a pipe whose reader has gone (`clibench compare ... | head -1`) ends
//! clibench quietly with exit code 0, as ripgrep does: the reader took what it wanted,
//! which is not a failure of the benchmark (a shell with `pipefail` would otherwise fail
//! the pipeline over `head`). SIGPIPE stays ignored, as Rust sets it, so that a target
//! closing its end of a pipe or PTY never kills clibench before it has cleaned up.

use std::fmt;
use std::io::Write;
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

/// A library's error that says whether the user's input caused it (`is_input`): then an
/// input error (exit code 2) with its message, else the error as it is.
pub fn input_if<E>(is_input: bool, error: E) -> anyhow::Error
where
    E: std::error::Error + Send + Sync + 'static,
{
    if is_input {
        input_error(error.to_string())
    } else {
        anyhow::Error::new(error)
    }
}

/// As [`input_if`], with the error's whole chain as the message.
pub fn input_chain_if<E>(is_input: bool, error: E) -> anyhow::Error
where
    E: std::error::Error + Send + Sync + 'static,
{
    if is_input {
        input_error(bench_core::error_chain(&error))
    } else {
        anyhow::Error::new(error)
    }
}

/// A library's settings error: an input error (exit code 2) with its whole chain, unless
/// the file system failed.
pub fn settings_error(error: crate::settings::SettingsError) -> anyhow::Error {
    input_chain_if(error.is_input(), error)
}

/// Exit code when stdout or stderr was closed by its reader (see the module doc).
pub const CLOSED_OUTPUT: ExitCode = ExitCode::SUCCESS;

/// `print!` and `eprint!` panic with this message on a failed write.
const PRINT_PANIC: &str = "failed printing to std";

/// Whether a panic's payload is `print!`'s or `eprint!`'s on a closed pipe.
pub fn is_closed_output(payload: &(dyn std::any::Any + Send)) -> bool {
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("");
    message.starts_with(PRINT_PANIC) && message.contains("Broken pipe")
}

/// Makes the panic hook silent for [`is_closed_output`] panics (`main` turns them into
/// [`CLOSED_OUTPUT`]); every other panic is reported as before.
pub fn quiet_on_closed_output() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !is_closed_output(info.payload()) {
            default(info);
        }
    }));
}

/// Whether the error is a write into a closed pipe.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Prints the error chain on stderr and picks the exit code.
pub fn report(error: &anyhow::Error) -> ExitCode {
    if is_broken_pipe(error) {
        return CLOSED_OUTPUT;
    }
    // stderr may be the closed pipe: the exit code still says what happened.
    let _ = writeln!(
        std::io::stderr(),
        "{}",
        bench_core::text::Inert::from_string(format!("error: {error:#}"))
    );
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
