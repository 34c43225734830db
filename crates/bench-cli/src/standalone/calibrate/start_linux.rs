//! The process-start half of `clibench calibrate`: a command started back to back, each
//! timed from spawn to exit, in its own process group with stdio on /dev/null, and
//! killed with its group when it outlives the timeout.

use rustix::process::{Pid, Signal, WaitId, WaitIdOptions, kill_process_group, waitid};
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Why a start could not be timed.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The command line was empty.
    #[error("no command given after --")]
    NoCommand,
    /// The program could not be started.
    #[error("failed to start `{command}`")]
    Spawn {
        /// The command line, as shown to people.
        command: String,
        /// The system error.
        #[source]
        source: std::io::Error,
    },
    /// Waiting for the program failed.
    #[error("failed to wait for `{command}`")]
    Wait {
        /// The command line, as shown to people.
        command: String,
        /// The system error.
        #[source]
        source: std::io::Error,
    },
    /// The program did not exit within the timeout; it was killed with its group.
    #[error(
        "`{command}` did not exit within {timeout:?}: calibrate times a command that exits by itself"
    )]
    Timeout {
        /// The command line, as shown to people.
        command: String,
        /// The timeout.
        timeout: Duration,
    },
}

/// Starts `command` once and returns the time from spawn to its exit. Whatever its
/// group left running is killed before the leader is reaped, so the group's id cannot
/// have been reused by then.
pub fn time_one_start(command: &[OsString], timeout: Duration) -> Result<Duration, StartError> {
    let (program, rest) = command.split_first().ok_or(StartError::NoCommand)?;
    let shown = crate::standalone::spawn::display_command(command);
    let started = Instant::now();
    let mut child = Command::new(program)
        .args(rest)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|source| StartError::Spawn {
            command: shown.clone(),
            source,
        })?;
    let pid = Pid::from_child(&child);
    // The waiter sees the exit without reaping (WNOWAIT), so the group's id stays ours
    // until the kill below.
    let (sender, receiver) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let outcome = waitid(
            WaitId::Pid(pid),
            WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
        );
        let took = started.elapsed();
        // The receiver is gone only when the timeout already fired.
        let _ = sender.send(outcome.map(|_| took));
    });
    let outcome = receiver.recv_timeout(timeout);
    // ESRCH means the group has no one left in it: nothing to kill.
    let _ = kill_process_group(pid, Signal::KILL);
    let _ = waiter.join();
    let reaped = child.wait();
    match outcome {
        Ok(Ok(took)) => reaped.map(|_| took).map_err(|source| StartError::Wait {
            command: shown,
            source,
        }),
        Ok(Err(errno)) => Err(StartError::Wait {
            command: shown,
            source: errno.into(),
        }),
        Err(_) => Err(StartError::Timeout {
            command: shown,
            timeout,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_that_exits_is_timed() {
        let took = time_one_start(&["/bin/true".into()], Duration::from_secs(30)).unwrap();
        assert!(took > Duration::ZERO);
    }

    #[test]
    fn a_command_that_never_exits_is_killed_at_the_timeout() {
        let error = time_one_start(
            &["/bin/sleep".into(), "1000".into()],
            Duration::from_millis(200),
        )
        .unwrap_err();
        assert!(matches!(error, StartError::Timeout { .. }), "{error}");
    }

    #[test]
    fn a_missing_program_is_a_spawn_error() {
        let error =
            time_one_start(&["/nonexistent/program".into()], Duration::from_secs(1)).unwrap_err();
        assert!(matches!(error, StartError::Spawn { .. }), "{error}");
    }
}
