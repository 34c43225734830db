//! A response body: all at once, or frames released on their schedule by a timing
//! thread of the response's own.

use crate::journal::{ChunkRecord, Event, Journal};
use crate::schedule::Frame;
use bytes::Bytes;
use hyper::body::{Body, Frame as HttpFrame, SizeHint};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// A message from a response's timing thread to its body.
enum Message {
    /// A frame that is due.
    Data {
        bytes: Bytes,
        scheduled: Duration,
        tokens: u32,
        last: bool,
    },
    /// End the response abruptly (a cut fault).
    Cut,
}

/// A response body: all at once, or frames released on schedule.
pub struct Out {
    inner: OutInner,
}

enum OutInner {
    Full(Option<Bytes>),
    Scheduled {
        frames: mpsc::Receiver<Message>,
        journal: Journal,
        request: u64,
        index: u32,
        finished: bool,
        length: Option<u64>,
    },
}

impl Out {
    pub(super) fn full(bytes: Vec<u8>) -> Out {
        Out {
            inner: OutInner::Full(Some(Bytes::from(bytes))),
        }
    }

    pub(super) fn scheduled(
        frames: Vec<Frame>,
        start: Instant,
        journal: &Journal,
        request: u64,
        cut: bool,
        write_timeout: Duration,
        length: Option<u64>,
    ) -> Out {
        let (sender, receiver) = mpsc::channel(64);
        let since = start.saturating_duration_since(journal.start());
        // Without a thread for the timing the sender is dropped at once and the body
        // ends with an error rather than hanging.
        let _ = std::thread::Builder::new()
            .name("model-stream".into())
            .spawn(move || release(frames, start, since, sender, cut, write_timeout));
        Out {
            inner: OutInner::Scheduled {
                frames: receiver,
                journal: journal.clone(),
                request,
                index: 0,
                finished: false,
                length: if cut { None } else { length },
            },
        }
    }
}

/// The timing thread of one response: sleeps until each frame is due and hands it on.
fn release(
    frames: Vec<Frame>,
    start: Instant,
    since_start: Duration,
    sender: mpsc::Sender<Message>,
    cut: bool,
    write_timeout: Duration,
) {
    precise_timer_slack();
    let count = frames.len();
    for (index, frame) in frames.into_iter().enumerate() {
        let due = start + frame.due;
        loop {
            let now = Instant::now();
            if now >= due {
                break;
            }
            std::thread::sleep(due - now);
        }
        let mut message = Message::Data {
            bytes: Bytes::from(frame.bytes),
            scheduled: since_start + frame.due,
            tokens: frame.tokens,
            last: index + 1 == count && !cut,
        };
        // The channel fills only when the client stops reading; bounded like a write.
        let give_up = Instant::now() + write_timeout;
        loop {
            match sender.try_send(message) {
                Ok(()) => break,
                Err(mpsc::error::TrySendError::Closed(_)) => return,
                Err(mpsc::error::TrySendError::Full(back)) => {
                    if Instant::now() >= give_up {
                        // Dropping the sender ends the body with an error.
                        return;
                    }
                    message = back;
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        }
    }
    if cut {
        // hyper drops what it has not written yet when a body fails: let the frames
        // reach the socket first (the body takes them all and goes idle, which makes
        // hyper flush), then cut.
        let give_up = Instant::now() + write_timeout;
        while sender.capacity() < sender.max_capacity() && Instant::now() < give_up {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(CUT_GRACE);
        let _ = sender.try_send(Message::Cut);
    }
}

/// How long after its last frame a cut stream is cut.
const CUT_GRACE: Duration = Duration::from_millis(20);

/// Asks the kernel to wake this thread's sleeps within 1 µs of their time rather than
/// the default 50 µs of slack.
fn precise_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and changes only the
    // calling thread's timer slack; a failure leaves the default slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong);
    }
}

/// A response body that ended before its last frame.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// A cut fault.
    #[error("stream cut on demand by the script")]
    Cut,
    /// The client read nothing for the write timeout.
    #[error("the client stopped reading")]
    Stalled,
}

impl Body for Out {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<HttpFrame<Bytes>, BodyError>>> {
        match &mut self.inner {
            OutInner::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(HttpFrame::data(b)))),
            OutInner::Scheduled {
                frames,
                journal,
                request,
                index,
                finished,
                ..
            } => match frames.poll_recv(cx) {
                Poll::Ready(Some(Message::Data {
                    bytes,
                    scheduled,
                    tokens,
                    last,
                })) => {
                    journal.push(Event::Chunk(ChunkRecord {
                        request: *request,
                        index: *index,
                        scheduled,
                        written: journal.elapsed(),
                        bytes: bytes.len(),
                        tokens,
                        last,
                    }));
                    *index += 1;
                    *finished = last;
                    Poll::Ready(Some(Ok(HttpFrame::data(bytes))))
                }
                Poll::Ready(Some(Message::Cut)) => Poll::Ready(Some(Err(BodyError::Cut))),
                Poll::Ready(None) if *finished => Poll::Ready(None),
                Poll::Ready(None) => Poll::Ready(Some(Err(BodyError::Stalled))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.inner, OutInner::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match &self.inner {
            OutInner::Full(Some(bytes)) => SizeHint::with_exact(bytes.len() as u64),
            OutInner::Full(None) => SizeHint::with_exact(0),
            OutInner::Scheduled {
                length: Some(length),
                ..
            } => SizeHint::with_exact(*length),
            OutInner::Scheduled { .. } => SizeHint::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(text: &str, due_ms: u64) -> Frame {
        Frame {
            bytes: text.as_bytes().to_vec(),
            due: Duration::from_millis(due_ms),
            tokens: 1,
        }
    }

    #[test]
    fn frames_are_released_in_order_and_the_last_is_marked() {
        let (sender, mut receiver) = mpsc::channel(64);
        let frames = vec![frame("a", 0), frame("b", 1), frame("c", 2)];
        let start = Instant::now();
        let timing = std::thread::spawn(move || {
            release(
                frames,
                start,
                Duration::ZERO,
                sender,
                false,
                Duration::from_secs(5),
            )
        });
        let mut seen = Vec::new();
        while let Some(message) = receiver.blocking_recv() {
            let Message::Data { bytes, last, .. } = message else {
                panic!("a cut in a stream without a cut fault");
            };
            seen.push((String::from_utf8_lossy(&bytes).into_owned(), last));
        }
        timing.join().unwrap();
        let expected = [("a", false), ("b", false), ("c", true)].map(|(t, l)| (t.to_owned(), l));
        assert_eq!(seen, expected);
    }

    #[test]
    fn a_cut_stream_ends_with_a_cut_after_its_frames() {
        let (sender, mut receiver) = mpsc::channel(64);
        let start = Instant::now();
        let timing = std::thread::spawn(move || {
            release(
                vec![frame("a", 0)],
                start,
                Duration::ZERO,
                sender,
                true,
                Duration::from_secs(5),
            )
        });
        let first = receiver.blocking_recv();
        assert!(matches!(first, Some(Message::Data { last: false, .. })));
        assert!(matches!(receiver.blocking_recv(), Some(Message::Cut)));
        timing.join().unwrap();
    }
}
