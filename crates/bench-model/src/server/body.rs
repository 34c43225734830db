//! A response body: all at once, or frames released on their schedule by a timing
//! thread of the response's own.

use crate::journal::{ChunkRecord, Event, Journal};
use crate::schedule::Frame;
use bytes::Bytes;
use hyper::body::{Body, Frame as HttpFrame, SizeHint};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
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
    /// End the response abruptly: its next frame is due past the answer's deadline.
    Expired,
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
        pacing: &Pacing,
        length: Option<u64>,
    ) -> Out {
        let (sender, receiver) = mpsc::channel(64);
        let since = start.saturating_duration_since(journal.start());
        let slot = ThreadSlot::take(&pacing.threads);
        let (write_timeout, deadline) = (pacing.write_timeout, start + pacing.answer_timeout);
        // Without a thread for the timing the sender is dropped at once and the body
        // ends with an error rather than hanging (and the slot is given back).
        let _ = std::thread::Builder::new()
            .name("model-stream".into())
            .spawn(move || {
                let _slot = slot;
                release(frames, start, since, sender, cut, write_timeout, deadline);
            });
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

/// What bounds the timing threads: their number and how long each may run.
#[derive(Debug, Clone)]
pub(super) struct Pacing {
    /// How long a frame may wait for a client that does not read.
    pub(super) write_timeout: Duration,
    /// How long a whole answer may take, from its start.
    pub(super) answer_timeout: Duration,
    /// Timing threads alive now.
    pub(super) threads: Arc<AtomicUsize>,
}

/// A timing thread counted in [`Pacing::threads`] while it lives.
struct ThreadSlot(Arc<AtomicUsize>);

impl ThreadSlot {
    fn take(threads: &Arc<AtomicUsize>) -> ThreadSlot {
        threads.fetch_add(1, Ordering::SeqCst);
        ThreadSlot(Arc::clone(threads))
    }
}

impl Drop for ThreadSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The longest a timing thread sleeps before it looks whether its body is still read:
/// a client that closed its connection ends its answer's thread within this time.
const LOOK_EVERY: Duration = Duration::from_millis(20);

/// Sleeps until `due`; `false` as soon as the body was dropped (its client went away).
fn sleep_until(due: Instant, sender: &mpsc::Sender<Message>) -> bool {
    loop {
        if sender.is_closed() {
            return false;
        }
        let now = Instant::now();
        if now >= due {
            return true;
        }
        // The last slice ends at `due` itself, so the wake-up keeps its precision.
        std::thread::sleep((due - now).min(LOOK_EVERY));
    }
}

/// The timing thread of one response: sleeps until each frame is due and hands it on,
/// until `deadline`, the end of the answer's time.
fn release(
    frames: Vec<Frame>,
    start: Instant,
    since_start: Duration,
    sender: mpsc::Sender<Message>,
    cut: bool,
    write_timeout: Duration,
    deadline: Instant,
) {
    precise_timer_slack();
    let count = frames.len();
    for (index, frame) in frames.into_iter().enumerate() {
        let due = start + frame.due;
        if due > deadline {
            let _ = sender.try_send(Message::Expired);
            return;
        }
        if !sleep_until(due, &sender) {
            return;
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
    /// The answer would have lasted longer than [`Limits::answer_timeout`](super::Limits).
    #[error("the answer would outlast its deadline")]
    Expired,
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
                Poll::Ready(Some(Message::Expired)) => Poll::Ready(Some(Err(BodyError::Expired))),
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

    const FIVE_S: Duration = Duration::from_secs(5);

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
                FIVE_S,
                start + FIVE_S,
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
                FIVE_S,
                start + FIVE_S,
            )
        });
        let first = receiver.blocking_recv();
        assert!(matches!(first, Some(Message::Data { last: false, .. })));
        assert!(matches!(receiver.blocking_recv(), Some(Message::Cut)));
        timing.join().unwrap();
    }

    #[test]
    fn a_frame_due_past_the_deadline_ends_the_answer() {
        let (sender, mut receiver) = mpsc::channel(64);
        let start = Instant::now();
        let frames = vec![frame("a", 0), frame("b", 3_600_000)];
        let timing = std::thread::spawn(move || {
            release(
                frames,
                start,
                Duration::ZERO,
                sender,
                false,
                FIVE_S,
                start + FIVE_S,
            )
        });
        assert!(matches!(
            receiver.blocking_recv(),
            Some(Message::Data { .. })
        ));
        assert!(matches!(receiver.blocking_recv(), Some(Message::Expired)));
        assert!(receiver.blocking_recv().is_none());
        timing.join().unwrap();
    }

    #[test]
    fn a_dropped_body_ends_its_timing_thread() {
        let (sender, receiver) = mpsc::channel(64);
        let start = Instant::now();
        let hour = Duration::from_secs(3600);
        let timing = std::thread::spawn(move || {
            release(
                vec![frame("a", 3_600_000)],
                start,
                Duration::ZERO,
                sender,
                false,
                FIVE_S,
                start + hour,
            )
        });
        drop(receiver);
        // Joins at once rather than in an hour.
        timing.join().unwrap();
    }
}
