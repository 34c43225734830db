//! [`Terminal`]: one program running in a pseudo-terminal, watched through a
//! screen model, typed into like a person would.
//!
//! One file per job: `options` (how to start it), `spawn` (the terminal and what
//! can be read about it), `pump` (the read loop), `wait` (ready modes and
//! settling), `exit` (exit mode and the exit status), `paste` (pasting and waiting for it to be shown), `probe` (probe readiness), `typing` (keys and keystroke latency),
//! `close` (ending the session).

mod close;
mod exit;
mod options;
mod paste;
mod probe;
mod pump;
mod spawn;
mod typing;
mod wait;

pub use options::{DEFAULT_QUIT_KEYS, QUIT_QUIET, SpawnOptions};
pub use paste::Accepted;
pub use spawn::{Terminal, Timeline};
