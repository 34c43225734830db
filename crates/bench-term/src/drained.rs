//! [`Drained`]: a [`Terminal`] read on a thread of its own, for programs that run
//! while the caller does something else (several instances of a staircase, a
//! memory measurement while other instances settle).
//!
//! A terminal is otherwise read only while one of its methods runs. A program
//! whose output nobody reads blocks once the PTY's buffer is full (a few KiB: one
//! spinner running for a few seconds), and a program whose start-up query (cursor
//! position, colours) is not answered may wait forever: neither is the program a
//! user runs, so neither should be measured.

use crate::error::TermError;
use crate::terminal::Terminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long the reading thread holds the terminal at a time: the longest a caller
/// of [`Drained::with`] waits, and how late [`Drained::finish`] is noticed.
const DRAIN_SLICE: Duration = Duration::from_millis(20);

/// A terminal whose output is read, fed to its screen and answered on a
/// background thread until [`Drained::finish`].
#[derive(Debug)]
pub struct Drained {
    /// Always `Some` until [`Drained::finish`] takes it.
    terminal: Option<Arc<Mutex<Terminal>>>,
    stop: Arc<AtomicBool>,
    closed: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<(), TermError>>>,
    pid: u32,
}

impl Drained {
    /// Starts reading `terminal` on a new thread.
    pub fn start(terminal: Terminal) -> Drained {
        let pid = terminal.pid();
        let terminal = Arc::new(Mutex::new(terminal));
        let stop = Arc::new(AtomicBool::new(false));
        let closed = Arc::new(AtomicBool::new(false));
        let thread = {
            let terminal = Arc::clone(&terminal);
            let stop = Arc::clone(&stop);
            let closed = Arc::clone(&closed);
            std::thread::spawn(move || {
                while !stop.load(Ordering::Acquire) {
                    let mut terminal = lock(&terminal);
                    terminal.settle(DRAIN_SLICE)?;
                    // The terminal's own end of file (EIO or an empty read on the
                    // master once no process holds the program's side open), not
                    // a silence: a program may say nothing for a long time.
                    if terminal.is_closed() {
                        closed.store(true, Ordering::Release);
                        break;
                    }
                }
                Ok(())
            })
        };
        Drained {
            terminal: Some(terminal),
            stop,
            closed,
            thread: Some(thread),
            pid,
        }
    }

    /// The program's pid, which is also its session and process group id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Whether the program's side of the terminal was closed (it exited, or closed
    /// its terminal); reading stopped then.
    pub fn closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Runs `f` on the terminal between two reads (waiting at most about 20 ms for
    /// the reading thread to let go of it).
    pub fn with<R>(&self, f: impl FnOnce(&mut Terminal) -> R) -> R {
        let terminal = self
            .terminal
            .as_ref()
            .expect("the terminal is only taken by finish, which consumes self");
        f(&mut lock(terminal))
    }

    /// Stops reading and hands the terminal back (to close it), with the first
    /// error the reading thread met, if any.
    pub fn finish(mut self) -> (Terminal, Result<(), TermError>) {
        self.stop.store(true, Ordering::Release);
        let read = match self.thread.take().map(JoinHandle::join) {
            Some(Ok(read)) => read,
            // The reading thread runs only bench-term's own code; a panic there is
            // a bug, reported as it was rather than hidden.
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            None => Ok(()),
        };
        let shared = self
            .terminal
            .take()
            .expect("the terminal is only taken here, which consumes self");
        let terminal = match Arc::try_unwrap(shared) {
            Ok(mutex) => mutex.into_inner().unwrap_or_else(PoisonError::into_inner),
            // The thread that held the other reference was joined above.
            Err(_) => unreachable!("the reading thread was joined"),
        };
        (terminal, read)
    }
}

impl Drop for Drained {
    /// Without [`Drained::finish`], the reading thread stops within a slice and
    /// the terminal is dropped with it, which kills its session.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}

/// A panic in a caller's closure leaves the terminal as it was between two reads,
/// still usable: poisoning is ignored.
fn lock(terminal: &Mutex<Terminal>) -> MutexGuard<'_, Terminal> {
    terminal.lock().unwrap_or_else(PoisonError::into_inner)
}
