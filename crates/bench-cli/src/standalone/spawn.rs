//! How a command given on the command line is started: in a pseudo-terminal, as a
//! person starts it, or quietly with stdio on /dev/null.
//!
//! Interactive programs (REPLs, TUIs, agent CLIs) read their stdin: on /dev/null
//! they see end of file at once and quit, so without a terminal there is nothing
//! to measure. The messages for that case name `--tty`.

use bench_term::{SpawnOptions, TermError, Terminal};
use std::ffi::OsString;
use std::process::ExitStatus;
use std::time::Duration;

/// Terminal width, in columns, of `clibench mem --tty` and `clibench staircase --tty`
/// (the common default of `clibench startup`).
pub const COLS: u16 = 120;
/// Terminal height, in rows (see [`COLS`]).
pub const ROWS: u16 = 40;

/// A command that ends within this long after its start "exited at once".
const AT_ONCE: Duration = Duration::from_secs(1);

/// Why a command could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// The command line was empty.
    #[error("no command given after --")]
    NoCommand,
    /// The program could not be started with stdio on /dev/null.
    #[error("failed to start `{command}`")]
    Quiet {
        /// The command line, as shown to people.
        command: String,
        /// The system error.
        #[source]
        source: std::io::Error,
    },
    /// The program could not be started in a pseudo-terminal.
    // The terminal's error is part of the message, not a `source`: the command line has
    // always shown it this way, without the system error under it.
    #[error("failed to start `{command}` in a terminal: {error}")]
    Terminal {
        /// The command line, as shown to people.
        command: String,
        /// What the terminal said.
        error: TermError,
    },
}

/// How `command` is started in a terminal of `cols` x `rows`: this process's
/// environment with `TERM=xterm-256color`, in a new session. Callers add what is
/// theirs (more variables, quit keys) to the options returned.
pub(crate) fn terminal_options(
    command: &[OsString],
    cols: u16,
    rows: u16,
) -> Result<SpawnOptions, SpawnError> {
    let (program, rest) = command.split_first().ok_or(SpawnError::NoCommand)?;
    let mut options = SpawnOptions::new(program.clone())
        .args(rest.iter().cloned())
        .size(cols, rows);
    for (key, value) in std::env::vars_os() {
        options = options.env(key, value);
    }
    Ok(options.env("TERM", "xterm-256color"))
}

/// Starts `command` in a fresh terminal of [`COLS`] x [`ROWS`].
pub(crate) fn in_terminal(command: &[OsString]) -> Result<Terminal, SpawnError> {
    Terminal::spawn(&terminal_options(command, COLS, ROWS)?).map_err(|error| SpawnError::Terminal {
        command: display_command(command),
        error,
    })
}

/// The command line as people read it: its parts joined by spaces.
pub(crate) fn display_command(command: &[OsString]) -> String {
    command
        .iter()
        .map(|part| part.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

/// What to say when a command started with stdin on /dev/null left nothing to
/// measure: exiting at once is what an interactive program does at end of file.
pub(crate) fn exited_without_terminal(
    command: &[OsString],
    status: Option<ExitStatus>,
    after: Option<Duration>,
) -> String {
    let program = command
        .first()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let status = status.map_or_else(|| "unknown status".to_string(), |s| s.to_string());
    match after {
        Some(after) if after < AT_ONCE => format!(
            "{program} exited at once ({status}) — interactive programs need a terminal: try --tty \
             (without it, stdin is /dev/null, at end of file)"
        ),
        _ => format!(
            "`{}` exited ({status}) within the settle time and left no process to measure; \
             if it is interactive, it needs a terminal: try --tty",
            display_command(command)
        ),
    }
}

/// What to say when a command started in a terminal left nothing to measure,
/// with the screen it left.
pub(crate) fn exited_in_terminal(
    command: &[OsString],
    status: Option<ExitStatus>,
    screen: &str,
) -> String {
    let status = status.map_or_else(|| "unknown status".to_string(), |s| s.to_string());
    let screen: String = screen.lines().map(|line| format!("  | {line}\n")).collect();
    format!(
        "`{}` exited ({status}) within the settle time and left no process to measure; \
         its last screen:\n{}",
        display_command(command),
        screen.trim_end()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    fn node() -> Vec<OsString> {
        vec!["node".into()]
    }

    #[test]
    fn an_instant_exit_suggests_a_terminal() {
        let message = exited_without_terminal(
            &node(),
            Some(ExitStatus::from_raw(0)),
            Some(Duration::from_millis(80)),
        );
        assert_eq!(
            message,
            "node exited at once (exit status: 0) — interactive programs need a terminal: try \
             --tty (without it, stdin is /dev/null, at end of file)"
        );
    }

    #[test]
    fn a_later_exit_still_mentions_the_terminal() {
        let message = exited_without_terminal(
            &["sh".into(), "-c".into(), "sleep 1".into()],
            Some(ExitStatus::from_raw(0)),
            Some(Duration::from_secs(3)),
        );
        assert!(message.starts_with("`sh -c sleep 1` exited (exit status: 0) within the settle"));
        assert!(message.ends_with("try --tty"), "{message}");
    }

    #[test]
    fn an_exit_in_a_terminal_shows_the_screen() {
        let message = exited_in_terminal(
            &node(),
            Some(ExitStatus::from_raw(1 << 8)),
            "Error: no config\n> ",
        );
        assert_eq!(
            message,
            "`node` exited (exit status: 1) within the settle time and left no process to \
             measure; its last screen:\n  | Error: no config\n  | >"
        );
    }

    #[test]
    fn a_terminal_gets_this_environment_with_xterm_and_the_size() {
        let options = terminal_options(&["node".into(), "-i".into()], 100, 30).unwrap();
        assert_eq!(options.program, "node");
        assert_eq!(options.args, ["-i"]);
        assert_eq!((options.cols, options.rows), (100, 30));
        let var = |key: &std::ffi::OsStr| {
            options
                .env
                .iter()
                .find(|(k, _)| k.as_os_str() == key)
                .map(|(_, value)| value.clone())
        };
        assert_eq!(var("TERM".as_ref()), Some("xterm-256color".into()));
        // Every variable of this process is passed on (TERM aside, which is replaced).
        for (key, value) in std::env::vars_os().filter(|(key, _)| key != "TERM") {
            assert_eq!(var(&key), Some(value), "{key:?}");
        }
    }

    #[test]
    fn an_empty_command_line_is_refused() {
        assert!(matches!(
            terminal_options(&[], COLS, ROWS),
            Err(SpawnError::NoCommand)
        ));
    }
}
