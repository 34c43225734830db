//! Drive programs the way a person does: in a real terminal, or over the REPL
//! kernel protocol.
//!
//! [`Terminal`] starts a program in a fresh pseudo-terminal (exact environment,
//! working directory, optional user, always a new session), feeds everything it
//! writes to a VT100/xterm screen model, answers the queries TUIs block on at
//! start-up from that model, and tells when the program is ready for typing.
//!
//! ```no_run
//! use bench_term::{ReadyMode, SpawnOptions, Terminal};
//! use std::time::Duration;
//!
//! let options = SpawnOptions::new("python3")
//!     .env("PATH", "/usr/bin:/bin")
//!     .env("TERM", "xterm-256color")
//!     .size(120, 40);
//! let mut terminal = Terminal::spawn(&options)?;
//! let mode: ReadyMode = "pattern:>>> $".parse()?;
//! let ready = terminal.ready(&mode, Duration::from_secs(30))?;
//! println!("ready after {ready:?}:\n{}", terminal.screen_text());
//! terminal.close()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Sections
//! - [`ready`]: the ready modes (`probe`, `pattern:REGEX`, `first-frame`, `stable:DURATION`).
//! - [`dialog`]: what the screen at ready must (not) show; the blocking dialogs recognised.
//! - [`asciicast`]: transcripts as asciicast v2 recordings, with the ready moment marked.
//! - [`queries`]: which terminal queries are recognized and how they are answered.
//! - [`keys`]: keys as sent in legacy and kitty keyboard protocol encodings.
//! - [`screen`]: the screen model and what counts as a visible frame.
//! - [`kernel`]: the REPL kernel client.
#![warn(missing_docs)]

pub mod asciicast;
pub mod dialog;
mod drained;
mod error;
pub mod kernel;
pub mod keys;
mod pty_linux;
pub mod queries;
pub mod ready;
pub mod screen;
mod session_linux;
mod terminal;
mod transcript;

pub use dialog::{Blocked, ReadyGuard};
pub use drained::Drained;
pub use error::{Exit, ProbeWhere, ScreenDump, Stage, TermError};
pub use keys::{Key, parse_key_list, parse_keys};
pub use ready::ReadyMode;
pub use terminal::{
    CloseReport, KEYSTROKE_TIMEOUT, PROBE_CLEANUP_TIMEOUT, PROBE_INTERVAL, PROBE_LETTERS,
    QUIT_QUIET, SpawnOptions, Terminal, Timeline, monotonic_now,
};
pub use transcript::{
    CAST_FILE, INPUT_FILE, OUTPUT_FILE, READY_MARKER, READY_SCREEN_FILE, SCREEN_FILE,
    TRANSCRIPT_LIMIT_BYTES,
};
