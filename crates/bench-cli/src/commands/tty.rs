//! `--tty` for `clibench mem` and `clibench staircase`: the command runs in a
//! pseudo-terminal, as a person starts it, instead of with stdio on /dev/null.
//!
//! Interactive programs (REPLs, TUIs, agent CLIs) read their stdin: on /dev/null
//! they see end of file at once and quit, so without a terminal there is nothing
//! to measure. That case gets a hint that names `--tty`.

use super::mem::display_command;
use crate::exit::input_error;
use bench_term::{SpawnOptions, Terminal};
use std::ffi::OsString;
use std::process::ExitStatus;
use std::time::Duration;

/// A command that ends within this long after its start "exited at once".
pub(super) const AT_ONCE: Duration = Duration::from_secs(1);

/// Terminal size for `--tty`: the common default of `clibench startup`.
const COLS: u16 = 120;
const ROWS: u16 = 40;

/// How `command` is started in a terminal: this process's environment with
/// `TERM=xterm-256color` (as `clibench startup` does), in a new session.
pub(super) fn spawn_options(command: &[OsString]) -> anyhow::Result<SpawnOptions> {
    let (program, rest) = command
        .split_first()
        .ok_or_else(|| input_error("no command given after --"))?;
    let mut options = SpawnOptions::new(program.clone())
        .args(rest.iter().cloned())
        .size(COLS, ROWS);
    for (key, value) in std::env::vars_os() {
        options = options.env(key, value);
    }
    Ok(options.env("TERM", "xterm-256color"))
}

/// Starts `command` in a fresh terminal.
pub(super) fn spawn(command: &[OsString]) -> anyhow::Result<Terminal> {
    Terminal::spawn(&spawn_options(command)?).map_err(|error| {
        input_error(format!(
            "failed to start `{}` in a terminal: {error}",
            display_command(command)
        ))
    })
}

/// What to say when a command started with stdin on /dev/null left nothing to
/// measure: exiting at once is what an interactive program does at end of file.
pub(super) fn exited_without_terminal(
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
pub(super) fn exited_in_terminal(
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
}
