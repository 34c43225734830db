//! What can go wrong while talking to a kernel.

use crate::close::describe_status;
use bench_core::units::format_seconds;
use std::fmt;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

/// The longest quote of a frame or of the kernel's stderr kept in an error message.
pub const QUOTE_CHARS: usize = 400;

/// Shortens `text` to at most [`QUOTE_CHARS`] characters for an error message.
pub fn quote(text: &str) -> String {
    let trimmed = text.trim_end_matches(['\n', '\r']);
    if trimmed.chars().count() <= QUOTE_CHARS {
        return trimmed.to_owned();
    }
    let mut short: String = trimmed.chars().take(QUOTE_CHARS).collect();
    short.push_str("...");
    short
}

/// A line from the kernel's stdout is not a protocol event.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FrameError {
    /// The line is not JSON.
    #[error("kernel sent a line that is not JSON ({message}): {}", quote(line))]
    NotJson {
        /// The offending line.
        line: String,
        /// What the JSON parser said.
        message: String,
    },
    /// The line is JSON, but not an object with a string `event`.
    #[error("kernel sent an event without a string `event` field: {}", quote(line))]
    MissingEvent {
        /// The offending line.
        line: String,
    },
    /// A known event lacks a field it must have, or the field has the wrong type.
    #[error(
        "kernel sent a `{event}` event whose `{field}` is missing or malformed: {}",
        quote(line)
    )]
    BadField {
        /// The event's kind.
        event: String,
        /// The missing or malformed field.
        field: &'static str,
        /// The offending line.
        line: String,
    },
}

/// What was known of the kernel's exit once it closed its stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelExit {
    /// It exited with this status.
    Status(ExitStatus),
    /// It exited, but something else reaped it, so its status is unknown.
    ReapedElsewhere,
    /// It closed its stdout but was still running a moment later.
    StillRunning,
}

impl fmt::Display for KernelExit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelExit::Status(status) => f.write_str(&describe_status(*status)),
            KernelExit::ReapedElsewhere => {
                f.write_str("exit status unknown: it was reaped elsewhere")
            }
            KernelExit::StillRunning => f.write_str("closed its stdout but is still running"),
        }
    }
}

/// Talking to a kernel failed.
///
/// As everywhere in the workspace, the message names the failure and the cause is the
/// [`source`](std::error::Error::source): show it with its causes joined by `: `.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// The kernel process could not be started.
    #[error("failed to spawn kernel `{program}`")]
    Spawn {
        /// The program that was to be run.
        program: String,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// The transcript file could not be created or written.
    #[error("failed to write the kernel transcript {path}", path = path.display())]
    Transcript {
        /// The transcript's path.
        path: PathBuf,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// A request could not be written to the kernel's stdin.
    #[error("failed to send a `{kind}` request to the kernel")]
    Send {
        /// The request type.
        kind: String,
        /// Why it failed (a closed pipe means the kernel is gone).
        #[source]
        source: std::io::Error,
    },
    /// The kernel's stdout carried something that is not a protocol event.
    #[error("protocol error while waiting for {waiting_for}")]
    Frame {
        /// What the client was waiting for.
        waiting_for: String,
        /// The bad frame.
        #[source]
        source: FrameError,
    },
    /// The first event was not `ready`.
    #[error("kernel's first event was not `ready`: {}", quote(line))]
    NotReady {
        /// The first line the kernel sent.
        line: String,
    },
    /// The kernel announced a protocol version other than 3.
    #[error(
        "kernel speaks protocol {protocol}, this client speaks 3: {}",
        quote(line)
    )]
    UnsupportedProtocol {
        /// The `protocol` field as sent.
        protocol: String,
        /// The `ready` line.
        line: String,
    },
    /// A `done` arrived for a request id the client never sent or already saw finish.
    #[error(
        "kernel sent `done` for unknown request id {id:?} while waiting for {waiting_for}: {}",
        quote(line)
    )]
    UnknownDone {
        /// The id in the `done` event.
        id: String,
        /// What the client was waiting for.
        waiting_for: String,
        /// The `done` line.
        line: String,
    },
    /// The kernel closed its stdout (it exited or crashed) while the client waited.
    #[error(
        "kernel exited while waiting for {waiting_for} ({status}); last frames: {seen}; stderr: {}",
        quote(stderr)
    )]
    Exited {
        /// What the client was waiting for.
        waiting_for: String,
        /// The exit status, or why it is not known.
        status: KernelExit,
        /// The last frames received, newest last.
        seen: String,
        /// The end of what the kernel wrote on stderr.
        stderr: String,
    },
    /// Nothing conclusive arrived in time.
    #[error(
        "timed out after {} waiting for {waiting_for}; last frames: {seen}; stderr: {}",
        format_seconds(timeout.as_secs_f64()),
        quote(stderr)
    )]
    Timeout {
        /// What the client was waiting for.
        waiting_for: String,
        /// How long it waited.
        timeout: Duration,
        /// The last frames received, newest last (`nothing` when none).
        seen: String,
        /// The end of what the kernel wrote on stderr.
        stderr: String,
    },
    /// The kernel answered a request with a `ProtocolError` that names no request
    /// (`id: null`): it could not read the request, so no `done` will come for it.
    #[error("kernel rejected the {waiting_for}: ProtocolError: {evalue}")]
    Rejected {
        /// What the client was waiting for.
        waiting_for: String,
        /// The error's message.
        evalue: String,
    },
    /// The kernel was already found dead or broken by an earlier call.
    #[error("kernel is no longer usable: {reason}")]
    Unusable {
        /// The earlier failure.
        reason: String,
    },
    /// Waiting for or signalling the kernel process failed.
    #[error("failed to {action} kernel process {pid}")]
    Process {
        /// What was attempted.
        action: &'static str,
        /// The kernel's pid.
        pid: u32,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_say_how_long_in_units_for_people() {
        let error = KernelError::Timeout {
            waiting_for: "the `ready` event".into(),
            timeout: Duration::new(30, 173_361),
            seen: "nothing".into(),
            stderr: "Traceback".into(),
        };
        insta::assert_snapshot!(
            error.to_string(),
            @"timed out after 30.0 s waiting for the `ready` event; last frames: nothing; stderr: Traceback"
        );
    }
}
