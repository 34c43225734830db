//! Drive programs the way a person does: in a real terminal, or over the REPL
//! kernel protocol.
//!
//! [`Terminal`] starts a program in a fresh pseudo-terminal (exact environment,
//! working directory, optional user, always a new session), feeds everything it
//! writes to a VT100/xterm screen model, answers the queries TUIs block on at
//! start-up from that model (cursor position, device attributes, kitty keyboard
//! flags, DECRQM modes, window and cell sizes, colours, XTVERSION), and tells when
//! the program is ready for typing. Keys are sent in the legacy encoding or the
//! kitty keyboard protocol's, whichever the program turned on ([`Key`]).
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
//! - [`Drained`]: a terminal read on a thread of its own while the caller does other things.
//! - [`kernel`]: the REPL kernel client.
//! - [`output_counts`]: what the terminal receives (bytes, frames, full clears,
//!   alternate-screen switches), over any window ([`Terminal::output_counts`]).
//!
//! The screen model is [vt100](https://docs.rs/vt100)'s; it stays inside: the
//! screen is read as text ([`Terminal::screen_text`], [`Terminal::cursor`]).
#![warn(missing_docs)]

pub mod asciicast;
mod close;
pub mod dialog;
mod drained;
mod error;
pub mod kernel;
mod keys;
pub mod output_counts;
mod pty_linux;
mod queries;
pub mod ready;
mod screen;
mod session_linux;
mod signals_linux;
mod terminal;
mod transcript;

pub use close::{CloseReport, Ending, QuitReaction, QuitStep};
pub use dialog::{Blocked, DialogHit, ReadyGuard, find_waiting_dialog};
pub use drained::Drained;
pub use error::{Exit, ProbeWhere, ScreenDump, Stage, TermError};
pub use keys::{Key, KeyError, parse_key_list, parse_keys};
pub use output_counts::{OutputCounter, OutputCounts};
pub use ready::{ReadyMode, ready_regex};
pub use session_linux::SessionProcess;
pub use terminal::{Accepted, DEFAULT_QUIT_KEYS, QUIT_QUIET, SpawnOptions, Terminal, Timeline};

// Types of other crates that are part of bench-term's API on purpose: the same
// types the caller already has, not copies to convert between.

/// The regular expressions of [`ReadyMode::Pattern`], the [`ReadyGuard`] lists and
/// [`Terminal::wait_for`]: [regex](https://docs.rs/regex)'s, whose syntax is the
/// pattern language of specs and flags; a wrapper would only copy its API.
pub use regex::Regex;

/// The user a program runs as ([`SpawnOptions::user`],
/// [`kernel::KernelOptions::user`]): bench-proc's, the one description of a user
/// (uid, gid, groups) in the workspace, which a caller already holds for its
/// trial users and the stop helper.
pub use bench_proc::Identity;
pub use transcript::{
    CAST_FILE, INPUT_FILE, OUTPUT_FILE, READY_MARKER, READY_SCREEN_FILE, SCREEN_FILE,
    TRANSCRIPT_LIMIT_BYTES,
};
