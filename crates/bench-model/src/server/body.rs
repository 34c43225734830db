//! A response body: all at once, or frames released on their schedule by the
//! connection's own task, woken at each frame's time by a timer of its own (a
//! `timerfd` the runtime's reactor watches).
//!
//! A thread per answer used to sleep until each frame was due and hand it to the task
//! through a channel: two wake-ups a frame (the thread's, then the task's), and at the
//! demo's 100 frames a second the timing threads were about a quarter of the endpoint's CPU
//! in `perf`. The timer wakes the task itself at the frame's time, to the microsecond
//! (tokio's own timer rounds up to the next millisecond).

use crate::journal::{ChunkRecord, Event, Journal};
use crate::schedule::Frame;
use bytes::Bytes;
use hyper::body::{Body, Frame as HttpFrame, SizeHint};
use rustix::fd::OwnedFd;
use rustix::time::{
    Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags, Timespec, timerfd_create,
    timerfd_settime,
};
use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// A response body: all at once, or frames released on schedule.
pub struct Out {
    inner: OutInner,
}

enum OutInner {
    Full(Option<Bytes>),
    Scheduled(Box<Scheduled>),
}

/// A streamed answer's frames and when each is due.
struct Scheduled {
    frames: VecDeque<Frame>,
    /// The answer's start: frames are due from it.
    start: Instant,
    /// The start on the journal's clock.
    since_start: Duration,
    /// The end of the answer's time: a frame due later ends it.
    deadline: Instant,
    /// The timer that wakes the task, or why none could be made (the body fails).
    alarm: std::io::Result<Alarm>,
    /// A cut fault: after the last frame, the stream is cut.
    cut: bool,
    /// When the cut comes, once the last frame was handed out.
    cut_at: Option<Instant>,
    journal: Journal,
    request: u64,
    index: u32,
    finished: bool,
    length: Option<u64>,
    _live: LiveSlot,
}

impl Out {
    pub(super) fn full(bytes: Vec<u8>) -> Out {
        Out {
            inner: OutInner::Full(Some(Bytes::from(bytes))),
        }
    }

    /// Frames released at `start` + each one's `due`; call it on the endpoint's runtime.
    pub(super) fn scheduled(
        frames: Vec<Frame>,
        start: Instant,
        journal: &Journal,
        request: u64,
        cut: bool,
        pacing: &Pacing,
        length: Option<u64>,
    ) -> Out {
        Out {
            inner: OutInner::Scheduled(Box::new(Scheduled {
                frames: frames.into(),
                start,
                since_start: start.saturating_duration_since(journal.start()),
                deadline: start + pacing.answer_timeout,
                // Without a timer the body ends with an error rather than hanging.
                alarm: Alarm::new(),
                cut,
                cut_at: None,
                journal: journal.clone(),
                request,
                index: 0,
                finished: false,
                length: if cut { None } else { length },
                _live: LiveSlot::take(&pacing.live),
            })),
        }
    }
}

/// What bounds the answers on schedule: their number and how long each may run.
#[derive(Debug, Clone)]
pub(super) struct Pacing {
    /// How long a whole answer may take, from its start.
    pub(super) answer_timeout: Duration,
    /// Answers on schedule alive now (each holds a timer until hyper drops its body:
    /// when it is written, or its client went away).
    pub(super) live: Arc<AtomicUsize>,
}

/// An answer on schedule, counted in [`Pacing::live`] while its body lives.
struct LiveSlot(Arc<AtomicUsize>);

impl LiveSlot {
    fn take(live: &Arc<AtomicUsize>) -> LiveSlot {
        live.fetch_add(1, Ordering::SeqCst);
        LiveSlot(Arc::clone(live))
    }
}

impl Drop for LiveSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// How long after its last frame a cut stream is cut: hyper drops what it has not written
/// yet when a body fails, so the frames reach the socket first (the body waits, which
/// makes hyper flush), then the cut.
const CUT_GRACE: Duration = Duration::from_millis(20);

/// A one-shot timer on CLOCK_MONOTONIC (the clock of [`Instant`]) that the runtime's
/// reactor watches: armed for a moment, it makes the task that waits on it runnable then.
struct Alarm {
    fd: AsyncFd<OwnedFd>,
    /// The moment it is armed for, so a task polled again before then does not re-arm it.
    armed_for: Option<Instant>,
}

impl Alarm {
    /// A new timer; fails outside a tokio runtime, or without a descriptor left.
    fn new() -> std::io::Result<Alarm> {
        // Registering outside a runtime panics: a body made there fails instead.
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(std::io::Error::other("not on a tokio runtime"));
        }
        let fd = timerfd_create(
            TimerfdClockId::Monotonic,
            TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
        )?;
        // SAFETY: `fd` is an open timerfd that the `AsyncFd` owns from here until it is
        // dropped; nothing else closes or replaces it.
        let fd = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }?;
        Ok(Alarm {
            fd,
            armed_for: None,
        })
    }

    /// Ready once `due` has come; until then the task is woken at `due`.
    fn poll_until(&mut self, cx: &mut Context<'_>, due: Instant) -> Poll<std::io::Result<()>> {
        loop {
            let now = Instant::now();
            if now >= due {
                return Poll::Ready(Ok(()));
            }
            if self.armed_for != Some(due) {
                // Relative to a `now` taken before arming: the timer cannot fire early.
                let wait = due - now;
                let value = Itimerspec {
                    it_interval: Timespec {
                        tv_sec: 0,
                        tv_nsec: 0,
                    },
                    it_value: Timespec {
                        tv_sec: i64::try_from(wait.as_secs()).unwrap_or(i64::MAX),
                        tv_nsec: i64::from(wait.subsec_nanos()),
                    },
                };
                timerfd_settime(self.fd.get_ref(), TimerfdTimerFlags::empty(), &value)?;
                self.armed_for = Some(due);
            }
            let mut ready = match self.fd.poll_read_ready(cx) {
                Poll::Ready(ready) => ready?,
                Poll::Pending => return Poll::Pending,
            };
            // It fired (or the readiness was stale): drain the count and look again.
            let mut count = [0u8; 8];
            match rustix::io::read(self.fd.get_ref(), &mut count) {
                Ok(_) => self.armed_for = None,
                Err(rustix::io::Errno::AGAIN) => ready.clear_ready(),
                Err(errno) => return Poll::Ready(Err(errno.into())),
            }
        }
    }
}

/// A response body that ended before its last frame.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// A cut fault.
    #[error("stream cut on demand by the script")]
    Cut,
    /// The answer would have lasted longer than [`Limits::answer_timeout`](super::Limits).
    #[error("the answer would outlast its deadline")]
    Expired,
    /// The timer that paces the answer could not be made or read.
    #[error("the timer of a streamed answer failed")]
    Timer(#[source] std::io::Error),
}

impl Scheduled {
    /// The next frame once it is due, the end, or an error.
    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, BodyError>>> {
        let alarm = match &mut self.alarm {
            Ok(alarm) => alarm,
            Err(error) => {
                let error = std::mem::replace(error, std::io::Error::other("reported before"));
                return Poll::Ready(Some(Err(BodyError::Timer(error))));
            }
        };
        let Some(frame) = self.frames.front() else {
            if !self.cut {
                return Poll::Ready(None);
            }
            let cut_at = *self
                .cut_at
                .get_or_insert_with(|| Instant::now() + CUT_GRACE);
            return match alarm.poll_until(cx, cut_at) {
                Poll::Ready(Ok(())) => Poll::Ready(Some(Err(BodyError::Cut))),
                Poll::Ready(Err(error)) => Poll::Ready(Some(Err(BodyError::Timer(error)))),
                Poll::Pending => Poll::Pending,
            };
        };
        let due = self.start + frame.due;
        if due > self.deadline {
            return Poll::Ready(Some(Err(BodyError::Expired)));
        }
        match alarm.poll_until(cx, due) {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(error)) => return Poll::Ready(Some(Err(BodyError::Timer(error)))),
            Poll::Pending => return Poll::Pending,
        }
        let Some(frame) = self.frames.pop_front() else {
            return Poll::Ready(None);
        };
        let last = self.frames.is_empty() && !self.cut;
        self.journal.push(Event::Chunk(ChunkRecord {
            request: self.request,
            index: self.index,
            scheduled: self.since_start + frame.due,
            written: self.journal.elapsed(),
            bytes: frame.bytes.len(),
            tokens: frame.tokens,
            last,
        }));
        self.index += 1;
        self.finished = last;
        Poll::Ready(Some(Ok(Bytes::from(frame.bytes))))
    }
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
            OutInner::Scheduled(scheduled) => scheduled
                .poll_next(cx)
                .map(|next| next.map(|frame| frame.map(HttpFrame::data))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.inner {
            OutInner::Full(bytes) => bytes.is_none(),
            OutInner::Scheduled(scheduled) => scheduled.finished,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.inner {
            OutInner::Full(Some(bytes)) => SizeHint::with_exact(bytes.len() as u64),
            OutInner::Full(None) => SizeHint::with_exact(0),
            OutInner::Scheduled(scheduled) => match scheduled.length {
                Some(length) => SizeHint::with_exact(length),
                None => SizeHint::default(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    const FIVE_S: Duration = Duration::from_secs(5);

    fn frame(text: &str, due_ms: u64) -> Frame {
        Frame {
            bytes: text.as_bytes().to_vec(),
            due: Duration::from_millis(due_ms),
            tokens: 1,
        }
    }

    fn pacing(answer_timeout: Duration) -> Pacing {
        Pacing {
            answer_timeout,
            live: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// A runtime like the endpoint's: one thread, with timers and I/O.
    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .unwrap()
    }

    /// Reads `out` to its end on a runtime like the endpoint's: each frame's text and
    /// when it came, then the error that ended it, if one did.
    fn read_all(
        frames: Vec<Frame>,
        cut: bool,
        timeout: Duration,
    ) -> (Vec<(String, Duration)>, Option<BodyError>, Journal) {
        let runtime = runtime();
        let journal = Journal::new(Instant::now());
        let result = runtime.block_on(async {
            let start = Instant::now();
            let mut out = Out::scheduled(frames, start, &journal, 1, cut, &pacing(timeout), None);
            let mut seen = Vec::new();
            loop {
                match out.frame().await {
                    Some(Ok(frame)) => {
                        let bytes = frame.into_data().unwrap();
                        seen.push((
                            String::from_utf8_lossy(&bytes).into_owned(),
                            start.elapsed(),
                        ));
                    }
                    Some(Err(error)) => return (seen, Some(error)),
                    None => return (seen, None),
                }
            }
        });
        (result.0, result.1, journal)
    }

    #[test]
    fn frames_are_released_in_order_at_their_time_and_the_last_is_marked() {
        let (seen, error, journal) = read_all(
            vec![frame("a", 0), frame("b", 30), frame("c", 60)],
            false,
            FIVE_S,
        );
        assert!(error.is_none(), "{error:?}");
        let texts: Vec<&str> = seen.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(texts, ["a", "b", "c"]);
        // Never early: a frame is handed out at its time or after (how late is the
        // model_schedule example's to measure).
        assert!(seen[1].1 >= Duration::from_millis(30), "{seen:?}");
        assert!(seen[2].1 >= Duration::from_millis(60), "{seen:?}");
        let lasts: Vec<bool> = journal.chunks(1).iter().map(|c| c.last).collect();
        assert_eq!(lasts, [false, false, true]);
    }

    #[test]
    fn a_cut_stream_ends_with_a_cut_after_its_frames() {
        let (seen, error, _) = read_all(vec![frame("a", 0)], true, FIVE_S);
        assert_eq!(seen.len(), 1);
        assert!(matches!(error, Some(BodyError::Cut)), "{error:?}");
        // After the grace that lets hyper write the frames first.
        assert!(seen[0].1 < CUT_GRACE);
    }

    #[test]
    fn a_frame_due_past_the_deadline_ends_the_answer() {
        let (seen, error, _) = read_all(vec![frame("a", 0), frame("b", 3_600_000)], false, FIVE_S);
        assert_eq!(seen.len(), 1);
        assert!(matches!(error, Some(BodyError::Expired)), "{error:?}");
    }

    #[test]
    fn a_dropped_body_gives_back_its_slot_and_its_timer() {
        let runtime = runtime();
        let journal = Journal::new(Instant::now());
        let pacing = pacing(Duration::from_secs(7200));
        runtime.block_on(async {
            let mut out = Out::scheduled(
                vec![frame("a", 3_600_000)],
                Instant::now(),
                &journal,
                1,
                false,
                &pacing,
                None,
            );
            assert_eq!(pacing.live.load(Ordering::SeqCst), 1);
            // Waiting for a frame an hour away: armed, not ready.
            let waited = tokio::time::timeout(Duration::from_millis(20), out.frame()).await;
            assert!(waited.is_err());
            drop(out);
        });
        assert_eq!(pacing.live.load(Ordering::SeqCst), 0);
    }
}
