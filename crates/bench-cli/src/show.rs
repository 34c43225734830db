//! The one way the binary prints: every line goes through [`bench_core::text::inert`].
//!
//! What clibench prints mixes its own words with text from a target (an installer's
//! output, a kernel's line, a process name) or from a file (an error or a sha in a result
//! file). Rather than trusting each call site to escape the right fields, the whole text
//! is made inert here: clibench's own words hold no control characters but newline and
//! tab, so they come out unchanged. `main.rs` denies `print!`, `println!`, `eprint!` and
//! `eprintln!` everywhere else in the binary (clippy's `print_stdout` and `print_stderr`).
//!
//! - `say!` / `say_part!`: a line (or a part of one) on stderr, for people.
//! - `out!` / `outln!`: text on stdout (Markdown, CSV, HTML, a path).
//! - [`InertStderr`]: an `io::Write` for a library that reports on a writer.
//! - [`json`]: JSON on stdout, made inert with [`bench_core::text::inert_json`] so that it
//!   stays the same JSON value.

use bench_core::text::Inert;

/// A line on stderr, formatted like `eprintln!` and made inert.
macro_rules! say {
    () => {
        $crate::show::err_line(&bench_core::text::Inert::new(""))
    };
    ($($arg:tt)*) => {
        $crate::show::err_line(&bench_core::text::Inert::from_string(format!($($arg)*)))
    };
}

/// Text on stderr without a newline, formatted like `eprint!` and made inert.
macro_rules! say_part {
    ($($arg:tt)*) => {
        $crate::show::err(&bench_core::text::Inert::from_string(format!($($arg)*)))
    };
}

/// Text on stdout without a newline, formatted like `print!` and made inert.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::show::out(&bench_core::text::Inert::from_string(format!($($arg)*)))
    };
}

/// A line on stdout, formatted like `println!` and made inert.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::show::out_line(&bench_core::text::Inert::from_string(format!($($arg)*)))
    };
}

/// Writes inert text on stderr.
#[expect(
    clippy::print_stderr,
    reason = "the one place that prints, inert text only"
)]
pub fn err(text: &Inert<'_>) {
    eprint!("{text}");
}

/// Writes an inert line on stderr.
#[expect(
    clippy::print_stderr,
    reason = "the one place that prints, inert text only"
)]
pub fn err_line(text: &Inert<'_>) {
    eprintln!("{text}");
}

/// Writes inert text on stdout.
#[expect(
    clippy::print_stdout,
    reason = "the one place that prints, inert text only"
)]
pub fn out(text: &Inert<'_>) {
    print!("{text}");
}

/// Writes an inert line on stdout.
#[expect(
    clippy::print_stdout,
    reason = "the one place that prints, inert text only"
)]
pub fn out_line(text: &Inert<'_>) {
    println!("{text}");
}

/// Writes JSON text and a newline on stdout, the same JSON value with nothing in it that
/// drives a terminal.
pub fn json(json: &str) {
    out_line(&Inert::json(json));
}

/// An export on stdout: JSON made inert as JSON, any other format as text.
pub fn export(format: bench_core::export::Format, text: &str) {
    match format {
        bench_core::export::Format::Json => out(&Inert::json(text)),
        _ => out(&Inert::new(text)),
    }
}

/// `text` made inert, for the few places that hand text to a terminal some other way
/// (the progress bar's message and the lines it prints above itself).
pub fn inert(text: String) -> String {
    Inert::from_string(text).as_str().to_owned()
}

/// Stderr as an [`std::io::Write`] for a library that writes its report itself: whole
/// lines are made inert and printed; the rest of a line waits for its newline (or the
/// end), so an escape split across two writes is still caught.
#[derive(Debug, Default)]
pub struct InertStderr {
    pending: Vec<u8>,
}

impl InertStderr {
    fn emit(&mut self, upto: usize) {
        let line: Vec<u8> = self.pending.drain(..upto).collect();
        err(&Inert::new(&String::from_utf8_lossy(&line)));
    }
}

impl std::io::Write for InertStderr {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(bytes);
        if let Some(last) = self.pending.iter().rposition(|&b| b == b'\n') {
            self.emit(last + 1);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.pending.is_empty() {
            self.emit(self.pending.len());
        }
        Ok(())
    }
}

impl Drop for InertStderr {
    fn drop(&mut self) {
        let _ = std::io::Write::flush(self);
    }
}

/// How many columns the tables on stderr may use: `COLUMNS` when it is a number (as
/// shells export it, and as a user sets it to ask for a width), else the width of the
/// terminal stderr is, else no limit (stderr is a file or a pipe: the wide form, whole).
pub fn stderr_columns() -> usize {
    if let Some(columns) = std::env::var("COLUMNS")
        .ok()
        .and_then(|text| text.trim().parse::<usize>().ok())
        .filter(|&columns| columns > 0)
    {
        return columns;
    }
    let stderr = std::io::stderr();
    match rustix::termios::tcgetwinsize(&stderr) {
        Ok(size) if size.ws_col > 0 => usize::from(size.ws_col),
        _ => usize::MAX,
    }
}

/// Where and how `report` and `compare` print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// An aligned plain-text table for people, on stderr.
    Table,
    /// GitHub-flavoured Markdown on stdout.
    Markdown,
    /// JSON on stdout, numbers in seconds and bytes.
    Json,
    /// CSV on stdout, numbers in seconds and bytes.
    Csv,
    /// One self-contained HTML page with charts on stdout.
    Html,
}

impl OutputFormat {
    /// The library exporter, or `None` for the plain table and for HTML (which needs the
    /// whole result, not only its summary).
    pub fn export(self) -> Option<bench_core::export::Format> {
        match self {
            OutputFormat::Table => None,
            OutputFormat::Markdown => Some(bench_core::export::Format::Markdown),
            OutputFormat::Json => Some(bench_core::export::Format::Json),
            OutputFormat::Csv => Some(bench_core::export::Format::Csv),
            OutputFormat::Html => None,
        }
    }
}
