//! What a step recorded in each side's result, handed to the runner rather than read back
//! from `OUT/result.json`, which is written for people and other commands.
//!
//! In this process the phase returns it in its
//! [`PhaseOutcome`](super::phase_run::PhaseOutcome). A phase child sends it as one JSON
//! line through its stdout, a pipe whose read end only the runner holds: the child first
//! moves the pipe to a close-on-exec descriptor and points its stdout at its stderr (the
//! step's log), so no command or target it starts inherits the pipe, and whatever they or
//! the phase print lands in the log as before. Nothing a target writes can reach the pipe;
//! at worst an extra line makes the runner take no outcome, and it then reports the step
//! by its exit status and its log's last line, as for a child that died before sending.

use bench_core::Side;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::sync::mpsc;
use std::time::Duration;

/// The largest outcome the runner reads from a phase child: a result file's own limit, as
/// the outcome is mostly the side that file holds.
const MAX_OUTCOME_BYTES: u64 = bench_core::io::MAX_INPUT_BYTES;

/// How long the runner waits for the end of the outcome once the child has exited. Only a
/// process the child forked and that has not exec'd yet can still hold the pipe then.
const OUTCOME_WAIT: Duration = Duration::from_secs(5);

/// One side's result after a step.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SideRecord {
    /// The trial's errors as the side's result records them, first the one that says what
    /// failed (see [`bench_core::trial_errors_without`]); empty when the trial succeeded.
    pub errors: Vec<String>,
    /// The side as the phase saved it.
    pub side: Side,
}

/// What a step recorded: its own side's result and, for a tight pair, the partner's.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recorded {
    /// The side of the step's own output folder.
    pub own: SideRecord,
    /// The side of a tight pair's partner.
    pub partner: Option<SideRecord>,
}

/// A phase child's end of the pipe.
#[derive(Debug)]
pub(crate) struct OutcomeSender(std::fs::File);

impl OutcomeSender {
    /// Takes this process's stdout as the pipe to the runner: it moves to a close-on-exec
    /// descriptor, and stdout becomes a copy of stderr. Call it first thing in the child,
    /// before anything is started or printed.
    pub(crate) fn take_stdout() -> std::io::Result<OutcomeSender> {
        let pipe = std::io::stdout().as_fd().try_clone_to_owned()?;
        rustix::stdio::dup2_stdout(std::io::stderr())?;
        Ok(OutcomeSender(pipe.into()))
    }

    /// Sends `recorded` as one line and closes the pipe.
    pub(crate) fn send(mut self, recorded: &Recorded) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(recorded)?;
        line.push(b'\n');
        self.0.write_all(&line)
    }
}

/// The runner's end of a phase child's pipe, read while the child runs (a side larger than
/// the pipe's buffer would otherwise stop the child before it exits).
#[derive(Debug)]
pub(crate) struct OutcomeReceiver(Option<mpsc::Receiver<Option<Vec<u8>>>>);

impl OutcomeReceiver {
    /// Starts reading `pipe` in a thread of its own. When the thread cannot start, the
    /// pipe is closed and the child's send fails: there is no outcome, and nothing waits.
    pub(crate) fn start(pipe: impl Read + Send + 'static) -> OutcomeReceiver {
        let (sender, receiver) = mpsc::sync_channel(1);
        let reader = std::thread::Builder::new()
            .name("phase outcome".to_owned())
            .spawn(move || {
                let _ = sender.send(read_bounded(pipe, MAX_OUTCOME_BYTES));
            });
        OutcomeReceiver(reader.ok().map(|_| receiver))
    }

    /// What the child sent, once it has exited; `None` when it sent nothing whole (it was
    /// killed or crashed, or failed before its phase ran).
    pub(crate) fn finish(self) -> Option<Recorded> {
        let bytes = self.0?.recv_timeout(OUTCOME_WAIT).ok()??;
        parse(&bytes)
    }
}

/// Everything `pipe` gives until its end, when that is at most `max` bytes; what comes past
/// `max` is read and dropped, so that the writer is never left blocked on a full pipe.
fn read_bounded(mut pipe: impl Read, max: u64) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    let read = (&mut pipe).take(max + 1).read_to_end(&mut bytes);
    let _ = std::io::copy(&mut pipe, &mut std::io::sink());
    (read.is_ok() && bytes.len() as u64 <= max).then_some(bytes)
}

/// One JSON line, and nothing else.
fn parse(bytes: &[u8]) -> Option<Recorded> {
    let line = std::str::from_utf8(bytes).ok()?.strip_suffix('\n')?;
    if line.contains('\n') {
        return None;
    }
    serde_json::from_str(line).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded() -> Recorded {
        let mut side = Side::new("abc");
        bench_core::record(
            &mut side,
            bench_core::Metric::Cold,
            0,
            bench_core::Sample::Error("exit status: 3".to_owned()),
        );
        Recorded {
            own: SideRecord {
                errors: vec!["cold: exit status: 3".to_owned()],
                side,
            },
            partner: None,
        }
    }

    fn line(recorded: &Recorded) -> Vec<u8> {
        let mut line = serde_json::to_vec(recorded).unwrap();
        line.push(b'\n');
        line
    }

    #[test]
    fn a_sent_outcome_is_received_whole() {
        let sent = recorded();
        let receiver = OutcomeReceiver::start(std::io::Cursor::new(line(&sent)));
        assert_eq!(receiver.finish(), Some(sent));
    }

    #[test]
    fn a_line_printed_before_the_outcome_voids_it_rather_than_forging_it() {
        let mut forged = recorded();
        forged.own.errors = vec!["forged".to_owned()];
        let mut bytes = line(&forged);
        bytes.extend(line(&recorded()));
        assert_eq!(parse(&bytes), None);
        assert_eq!(
            parse(&line(&forged)[..10]),
            None,
            "a cut line is no outcome"
        );
        assert_eq!(parse(b""), None, "a child that sent nothing");
    }

    #[test]
    fn an_outcome_past_the_limit_is_drained_and_refused() {
        let bytes = vec![b'x'; 100];
        let mut pipe = std::io::Cursor::new(bytes);
        assert_eq!(read_bounded(&mut pipe, 10), None);
        assert_eq!(pipe.position(), 100, "the writer is never left blocked");
        let mut pipe = std::io::Cursor::new(vec![b'x'; 10]);
        assert_eq!(read_bounded(&mut pipe, 10), Some(vec![b'x'; 10]));
    }
}
