//! One start of the program in a terminal, from its spawn to ready: what the measure
//! phase's cold and warm starts and `clibench startup`'s runs both time, so that the two
//! agree on when a program is ready. After ready both settle the program with
//! [`settle_reading`], the one settle that reads the terminal meanwhile.
//!
//! A start is ready when its ready mode sees it ready and the screen at that moment
//! passes the guard. A screen the guard refuses (a blocking dialog, a rejected pattern)
//! is not ready, although the mode saw it and the terminal's own timeline keeps that
//! time: [`Started::ready`] is then [`TermError::Blocked`], and [`timeline`] has no ready.
//!
//! [`settle_reading`]: super::terminal::settle_reading

use bench_term::{ReadyGuard, ReadyMode, SpawnOptions, TermError, Terminal, Timeline};
use std::process::ExitStatus;
use std::time::Duration;

/// When a start counts as ready: its mode, what the screen at ready must and must not
/// show, and the longest it waits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadyWait<'a> {
    /// When the program counts as ready; [`ReadyMode::Exit`] times it to its exit.
    pub(crate) mode: &'a ReadyMode,
    /// What the screen at ready must and must not show.
    pub(crate) guard: &'a ReadyGuard,
    /// The longest the start waits for ready.
    pub(crate) timeout: Duration,
}

/// A program started in a terminal and waited on until it was ready, or until it was
/// clear that it would not be.
pub(crate) struct Started {
    /// Its terminal, still open whether or not it became ready: its screen, its timeline
    /// and its close are the caller's.
    pub(crate) terminal: Terminal,
    /// Ready, or why not (a timeout, an exit before ready, a blocking dialog).
    pub(crate) ready: Result<Ready, TermError>,
}

/// How a start became ready.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Ready {
    /// Ready by its mode this long after the spawn; the program runs on.
    Running(Duration),
    /// Ready was the program's exit ([`ReadyMode::Exit`]), this long after the spawn,
    /// with its status when it could be seen. Nothing is left to settle or measure.
    Exited {
        /// From the spawn to the exit.
        elapsed: Duration,
        /// How it ended (`None` when the status could not be seen).
        status: Option<ExitStatus>,
    },
}

impl Ready {
    /// From the spawn to ready.
    pub(crate) fn elapsed(&self) -> Duration {
        match *self {
            Ready::Running(elapsed) | Ready::Exited { elapsed, .. } => elapsed,
        }
    }
}

/// Starts `options` in a terminal and waits until it is ready by `wait`. The error is
/// the spawn's; everything after the spawn is in [`Started::ready`].
pub(crate) fn spawn_to_ready(
    options: &SpawnOptions,
    wait: ReadyWait<'_>,
) -> Result<Started, TermError> {
    let mut terminal = Terminal::spawn(options)?;
    let ready = terminal
        .ready_guarded(wait.mode, wait.timeout, wait.guard)
        .map(|elapsed| match wait.mode {
            // Looked at without reaping the program, so its CPU time is still its own.
            ReadyMode::Exit => Ready::Exited {
                elapsed,
                status: terminal.exit_status(),
            },
            _ => Ready::Running(elapsed),
        });
    Ok(Started { terminal, ready })
}

/// The first byte, first frame and ready of a start, from its spawn, as its terminal has
/// seen them so far (a program may write its first byte only after ready), with ready
/// only when the start was: `ready` is [`Started::ready`] when it succeeded.
pub(crate) fn timeline(terminal: &Terminal, ready: Option<&Ready>) -> Timeline {
    Timeline {
        ready: ready.map(Ready::elapsed),
        ..terminal.timeline()
    }
}

impl<'a> From<&'a crate::spec::Measure> for ReadyWait<'a> {
    /// The wait of `[measure]`: `ready`, `ready_guard` and `ready_timeout`.
    fn from(measure: &'a crate::spec::Measure) -> Self {
        ReadyWait {
            mode: &measure.ready,
            guard: &measure.ready_guard,
            timeout: measure.ready_timeout.0,
        }
    }
}
