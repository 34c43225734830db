//! What can go wrong while driving a program in a terminal.

use bench_core::units::format_seconds;
use std::fmt;
use std::process::ExitStatus;
use std::time::Duration;

/// The step a wait was in when it failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Probe mode: waiting for the program to turn off ICANON and ECHO.
    RawMode,
    /// Probe mode: typing probes and waiting for one to appear on the screen.
    ProbeEcho,
    /// Probe mode: waiting for the erased probe to leave the screen.
    ProbeErase,
    /// Probe mode: waiting for the cursor to return to where the probe began.
    CursorReturn,
    /// Pattern mode: waiting for the screen to match.
    Pattern,
    /// Waiting for the first frame (a line with 3 letters or digits).
    FirstFrame,
    /// Waiting for the screen to stay unchanged.
    Stable,
    /// Waiting for the output to go quiet.
    Quiet,
    /// Waiting for a pattern after typing.
    WaitFor,
    /// Waiting for a typed character to be echoed.
    Keystroke,
    /// Exit mode: waiting for the program to exit.
    Exit,
    /// Writing a paste: waiting for the program to read it.
    Paste,
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stage::RawMode => "waiting for raw mode (ICANON and ECHO off)",
            Stage::ProbeEcho => "waiting for the probe echo",
            Stage::ProbeErase => "waiting for the erased probe to disappear",
            Stage::CursorReturn => "waiting for the cursor to return",
            Stage::Pattern => "waiting for the screen to match the ready pattern",
            Stage::FirstFrame => "waiting for the first frame",
            Stage::Stable => "waiting for the screen to stay unchanged",
            Stage::Quiet => "waiting for the output to go quiet",
            Stage::WaitFor => "waiting for the screen to match",
            Stage::Keystroke => "waiting for a typed character to appear",
            Stage::Exit => "waiting for the program to exit",
            Stage::Paste => "waiting for the program to read a paste",
        })
    }
}

/// How the program ended, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit(pub Option<ExitStatus>);

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(status) => write!(f, "{status}"),
            None => f.write_str("closed the terminal (exit status not yet known)"),
        }
    }
}

/// `pid (name)` of each survivor, comma-separated.
struct Pids<'a>(&'a [crate::SessionProcess]);

impl fmt::Display for Pids<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, survivor) in self.0.iter().enumerate() {
            if index > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{} ({})", survivor.pid, survivor.name)?;
        }
        Ok(())
    }
}

/// Indents the screen under a message so that it reads as a block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScreenDump(pub String);

impl fmt::Display for ScreenDump {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.0.trim_end();
        if text.is_empty() {
            return f.write_str("  (empty screen)");
        }
        for (index, line) in text.lines().enumerate() {
            if index > 0 {
                f.write_str("\n")?;
            }
            if line.is_empty() {
                f.write_str("  |")?;
            } else {
                write!(f, "  | {line}")?;
            }
        }
        Ok(())
    }
}

/// Where the cursor and the probe were when probe mode gave up, to tell a program
/// that drew the probe somewhere unexpected (or moved the cursor away) from one that
/// never showed it. Rows and columns are 1-based, as people count them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeWhere {
    /// The cursor (row, column), 0-based.
    pub cursor: (u16, u16),
    /// Where the probe's tag was last seen on a visible frame, 0-based.
    pub probe_seen: Option<(u16, u16)>,
    /// Where the cursor should return to (the probe's first cell), 0-based.
    pub origin: Option<(u16, u16)>,
}

impl fmt::Display for ProbeWhere {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = |(row, col): (u16, u16)| format!("row {}, column {}", row + 1, col + 1);
        write!(f, "the cursor is at {}", at(self.cursor))?;
        match self.probe_seen {
            Some(seen) => write!(f, "; the probe was last seen at {}", at(seen))?,
            None => f.write_str("; the probe was never seen on the screen")?,
        }
        if let Some(origin) = self.origin {
            write!(f, "; the cursor should return to {}", at(origin))?;
        }
        Ok(())
    }
}

/// An error from [`crate::Terminal`].
#[derive(Debug, thiserror::Error)]
pub enum TermError {
    /// The PTY could not be opened or set up.
    #[error("failed to {action} the pseudo-terminal")]
    Pty {
        /// What was being done.
        action: &'static str,
        /// The system error.
        #[source]
        source: std::io::Error,
    },
    /// The program could not be started.
    #[error("failed to start {program} in a pseudo-terminal")]
    Spawn {
        /// The program.
        program: String,
        /// The system error.
        #[source]
        source: std::io::Error,
    },
    /// Reading the program's output or writing its input failed.
    #[error("failed to {action} the pseudo-terminal of pid {pid}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The program's pid.
        pid: u32,
        /// The system error.
        #[source]
        source: std::io::Error,
    },
    /// A wait ran out of time.
    #[error(
        "timed out after {} {stage}; last screen:\n{screen}",
        format_seconds(waited.as_secs_f64())
    )]
    Timeout {
        /// What the wait was for.
        stage: Stage,
        /// How long it waited.
        waited: Duration,
        /// The screen when it gave up.
        screen: ScreenDump,
    },
    /// Pattern mode ran out of time; names the pattern that never matched.
    #[error(
        "timed out after {} waiting for the screen to match the ready pattern {pattern:?} \
         (^ and $ match at each line's start and end); last screen:\n{screen}",
        format_seconds(waited.as_secs_f64())
    )]
    PatternTimeout {
        /// The ready pattern as written.
        pattern: String,
        /// How long it waited.
        waited: Duration,
        /// The screen when it gave up.
        screen: ScreenDump,
    },
    /// Probe mode ran out of time; says where the cursor and the probe were.
    #[error(
        "timed out after {} {stage}; {whereabouts}; last screen:\n{screen}",
        format_seconds(waited.as_secs_f64())
    )]
    ProbeTimeout {
        /// What the wait was for.
        stage: Stage,
        /// How long it waited.
        waited: Duration,
        /// Where the cursor and the probe were.
        whereabouts: ProbeWhere,
        /// The screen when it gave up.
        screen: ScreenDump,
    },
    /// The program looked ready, but the screen at ready is not what a person can
    /// type into: a dialog, a rejected pattern, or the required pattern missing.
    #[error("{blocked}; the screen at ready:\n{screen}")]
    Blocked {
        /// Why.
        blocked: crate::dialog::Blocked,
        /// The screen at ready.
        screen: ScreenDump,
    },
    /// The program exited (or closed the terminal) before the wait was over.
    #[error("the program exited while {stage}: {exit}; last screen:\n{screen}")]
    Exited {
        /// What the wait was for.
        stage: Stage,
        /// How it exited.
        exit: Exit,
        /// The last screen.
        screen: ScreenDump,
    },
    /// The output exceeded the transcript cap.
    #[error("the program wrote more than {limit_bytes} bytes, the transcript cap")]
    TranscriptTooLarge {
        /// The cap.
        limit_bytes: usize,
    },
    /// A transcript file could not be written.
    #[error("failed to save the terminal transcript")]
    Transcript(#[source] bench_core::io::WriteError),
    /// Processes of the session outlived close().
    #[error("processes of session {sid} survived close: {}", Pids(survivors))]
    Survivors {
        /// The session id (the program's pid).
        sid: u32,
        /// The processes still alive after the kill.
        survivors: Vec<crate::SessionProcess>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_say_how_long_in_units_for_people() {
        let long = TermError::Timeout {
            stage: Stage::ProbeEcho,
            waited: Duration::new(30, 173_361),
            screen: ScreenDump("pi".into()),
        };
        let short = TermError::Timeout {
            stage: Stage::WaitFor,
            waited: Duration::from_micros(300_412),
            screen: ScreenDump(String::new()),
        };
        insta::assert_snapshot!(format!("{long}\n{short}"), @r"
        timed out after 30.0 s waiting for the probe echo; last screen:
          | pi
        timed out after 300 ms waiting for the screen to match; last screen:
          (empty screen)
        ");
    }

    #[test]
    fn survivors_are_named_by_pid_and_name() {
        let survivor = |pid, name: &str| crate::SessionProcess {
            pid,
            name: name.to_owned(),
            state: 'S',
        };
        let error = TermError::Survivors {
            sid: 40,
            survivors: vec![survivor(41, "sleep"), survivor(42, "node")],
        };
        assert_eq!(
            error.to_string(),
            "processes of session 40 survived close: 41 (sleep), 42 (node)"
        );
    }

    #[test]
    fn probe_timeouts_say_where_the_cursor_and_the_probe_were() {
        let lost = TermError::ProbeTimeout {
            stage: Stage::CursorReturn,
            waited: Duration::from_secs(5),
            whereabouts: ProbeWhere {
                cursor: (0, 9),
                probe_seen: Some((2, 2)),
                origin: Some((2, 2)),
            },
            screen: ScreenDump("loading\n\n> ".into()),
        };
        let unseen = TermError::ProbeTimeout {
            stage: Stage::ProbeEcho,
            waited: Duration::from_secs(30),
            whereabouts: ProbeWhere {
                cursor: (3, 0),
                probe_seen: None,
                origin: None,
            },
            screen: ScreenDump("menu".into()),
        };
        insta::assert_snapshot!(format!("{lost}\n{unseen}"), @r"
        timed out after 5.00 s waiting for the cursor to return; the cursor is at row 1, column 10; the probe was last seen at row 3, column 3; the cursor should return to row 3, column 3; last screen:
          | loading
          |
          | >
        timed out after 30.0 s waiting for the probe echo; the cursor is at row 4, column 1; the probe was never seen on the screen; last screen:
          | menu
        ");
    }
}
