//! How closing a session we lead ended: one report for [`crate::Terminal::close`] and
//! [`crate::kernel::Kernel::close`].

use crate::keys::Key;
use std::fmt;
use std::process::ExitStatus;
use std::time::Duration;

/// What closing a program we started (and lead the session of) found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloseReport {
    /// How the program ended (`None` when it could not be reaped, or was not ours to
    /// reap any more).
    pub status: Option<ExitStatus>,
    /// Whether it left by itself or had to be ended.
    pub ending: Ending,
    /// How long close took: asking, the grace periods, hang-up, kill and reaping.
    pub took: Duration,
    /// The quit keys close pressed, in order, and what each met (a terminal's; empty
    /// for a kernel, and for a program that had exited before close).
    pub quit: Vec<QuitStep>,
}

/// One quit key [`crate::Terminal::close`] pressed and what followed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuitStep {
    /// Which quit key was pressed.
    pub key: Key,
    /// When it was pressed, since spawn (the terminal's clock).
    pub pressed_at: Duration,
    /// The first thing the program did after it.
    pub reaction: QuitReaction,
    /// How long after the key that came; for [`QuitReaction::Nothing`], how long
    /// close waited in vain.
    pub after: Duration,
}

/// What a program did after a quit key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuitReaction {
    /// It wrote to its terminal (a new prompt, "press Ctrl-C again to exit", the
    /// screen restored on its way out); the next key follows once the output
    /// paused and the terminal is back in its mode.
    Output,
    /// It turned raw mode off, giving the terminal back as a TUI does on its way
    /// out, and (after a key but the last) kept it off for the reaction wait; no
    /// key follows, it gets the grace to finish. (A line REPL that takes raw mode
    /// back at its next prompt reacted with [`QuitReaction::Output`].)
    LeftRawMode,
    /// It exited or closed its terminal.
    Exited,
    /// None of these within the wait: after a key but the last, the reaction wait;
    /// after the last, the grace or the quiet period that ended it.
    Nothing,
}

impl CloseReport {
    /// A report without quit keys (a kernel's; a program that had exited).
    pub(crate) fn without_keys(
        status: Option<ExitStatus>,
        ending: Ending,
        took: Duration,
    ) -> CloseReport {
        CloseReport {
            status,
            ending,
            took,
            quit: Vec::new(),
        }
    }

    /// True when the program exited by itself after it was asked to (the quit keys, the
    /// `shutdown` request): the clean way out.
    pub fn quit_when_asked(&self) -> bool {
        self.ending == Ending::Quit
    }
}

/// How a closed program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// It exited by itself, not on close's request (it had already ended before close
    /// asked it to).
    Exited,
    /// It exited by itself after it was asked to (a terminal's quit keys; a kernel's
    /// `shutdown` request and closed stdin), within the grace period.
    Quit,
    /// It exited on the hang-up when its terminal was closed.
    HungUp,
    /// It was still running at the end of the grace periods and was killed (SIGKILL to
    /// its process group and session).
    Killed,
}

impl fmt::Display for Ending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Ending::Exited => "had already exited",
            Ending::Quit => "quit when asked",
            Ending::HungUp => "on hang-up",
            Ending::Killed => "killed by close",
        })
    }
}

/// An exit status in words: `exit status 0`, `killed by signal 9`.
pub(crate) fn describe_status(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => status.to_string(),
    }
}

impl fmt::Display for CloseReport {
    /// `exit status 0 (quit when asked)`, `killed by signal 9 (killed by close)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.status {
            Some(status) => write!(f, "{} ({})", describe_status(status), self.ending),
            None => write!(f, "exit status unknown ({})", self.ending),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn a_report_says_the_status_and_how_it_ended_in_words() {
        let report = CloseReport::without_keys(
            Some(ExitStatus::from_raw(9)),
            Ending::Killed,
            Duration::from_millis(5),
        );
        assert_eq!(report.to_string(), "killed by signal 9 (killed by close)");
        assert!(!report.quit_when_asked());
        let report =
            CloseReport::without_keys(Some(ExitStatus::from_raw(0)), Ending::Quit, Duration::ZERO);
        assert_eq!(report.to_string(), "exit status 0 (quit when asked)");
        assert!(report.quit_when_asked());
    }
}
