//! The read loop: reading what the program wrote, feeding it to the screen model,
//! answering its queries, writing input, and waiting until a check on the screen
//! holds.

use super::spawn::Terminal;
use crate::error::{Exit, ScreenDump, Stage, TermError};
use crate::screen::shows_frame;
use rustix::event::{PollFd, PollFlags, Timespec};
use std::time::{Duration, Instant};

/// How often waits look whether the program exited while its terminal stays open.
pub(super) const EXIT_CHECK_INTERVAL: Duration = Duration::from_millis(50);

/// How long a write of input may wait for the program to read.
const WRITE_TIMEOUT: Duration = Duration::from_secs(2);

/// When a check on the screen first held.
#[derive(Debug, Clone, Copy)]
pub(super) struct Hit {
    /// When the output that made it hold was read.
    pub(super) read_at: Instant,
    /// When the check, after feeding that output to the screen model, held.
    pub(super) detected_at: Instant,
}

impl Hit {
    /// A check that already holds when a wait begins: the screen is what the last
    /// read made it (or blank, before any output), so that read is when it held.
    fn already(last_read: Instant) -> Hit {
        Hit {
            read_at: last_read,
            detected_at: Instant::now(),
        }
    }
}

pub(super) enum Pumped {
    /// Nothing arrived in time.
    Idle,
    /// Output arrived; a hit when a frame satisfied the check.
    Data(Option<Hit>),
    /// The program's side of the terminal is closed.
    Eof,
}

pub(super) fn timespec(duration: Duration) -> Timespec {
    Timespec {
        tv_sec: i64::try_from(duration.as_secs()).unwrap_or(i64::MAX),
        tv_nsec: i64::from(duration.subsec_nanos()),
    }
}

impl Terminal {
    pub(super) fn screen_dump(&self) -> ScreenDump {
        ScreenDump(self.screen.text())
    }

    pub(super) fn timeout(&self, stage: Stage, waited: Duration) -> TermError {
        TermError::Timeout {
            stage,
            waited,
            screen: self.screen_dump(),
        }
    }

    /// The error for a program that went away during `stage`, after giving it a
    /// moment to be reaped so that the status can be reported.
    pub(super) fn exited(&mut self, stage: Stage) -> TermError {
        let until = Instant::now() + Duration::from_secs(1);
        while !self.leader.has_exited() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(2));
        }
        TermError::Exited {
            stage,
            exit: Exit(self.leader.exit_status()),
            screen: self.screen_dump(),
        }
    }

    /// Reads what arrives within `wait`, feeding the screen, answering queries and
    /// calling `check` at every visible frame.
    pub(super) fn pump(
        &mut self,
        wait: Duration,
        check: &mut dyn FnMut(&vt100::Screen) -> bool,
    ) -> Result<Pumped, TermError> {
        let Some(master) = &self.master else {
            return Ok(Pumped::Eof);
        };
        if self.eof {
            return Ok(Pumped::Eof);
        }
        let pid = self.pid;
        let mut fds = [PollFd::new(master, PollFlags::IN)];
        match rustix::event::poll(&mut fds, Some(&timespec(wait))) {
            Ok(0) => return Ok(Pumped::Idle),
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => return Ok(Pumped::Idle),
            Err(errno) => {
                return Err(TermError::Io {
                    action: "poll",
                    pid,
                    source: errno.into(),
                });
            }
        }
        let count = match rustix::io::read(master, &mut self.buffer[..]) {
            Ok(0) | Err(rustix::io::Errno::IO) => {
                self.eof = true;
                return Ok(Pumped::Eof);
            }
            Ok(count) => count,
            Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => return Ok(Pumped::Idle),
            Err(errno) => {
                return Err(TermError::Io {
                    action: "read",
                    pid,
                    source: errno.into(),
                });
            }
        };
        let at = Instant::now();
        self.last_output_at = Some(at);
        let since_spawn = at.saturating_duration_since(self.spawned_at);
        self.timeline.first_byte.get_or_insert(since_spawn);
        let Terminal {
            screen,
            timeline,
            buffer,
            replies,
            transcript,
            output,
            ..
        } = self;
        let chunk = &buffer[..count];
        output.feed(chunk, at);
        replies.clear();
        let mut detected: Option<Instant> = None;
        screen.feed(chunk, at, replies, &mut |s| {
            if timeline.first_frame.is_none() && shows_frame(s) {
                timeline.first_frame = Some(since_spawn);
            }
            if check(s) {
                detected.get_or_insert_with(Instant::now);
            }
        });
        let recorded = match transcript {
            Some(transcript) => transcript.record_output(chunk, at),
            None => Ok(()),
        };
        if !self.replies.is_empty() {
            let replies = std::mem::take(&mut self.replies);
            let written = self.write_input(&replies);
            self.replies = replies;
            written?;
        }
        recorded?;
        Ok(Pumped::Data(detected.map(|detected_at| Hit {
            read_at: at,
            detected_at,
        })))
    }

    /// Writes input, waiting up to [`WRITE_TIMEOUT`] for room. Input to a program
    /// that closed its terminal is dropped.
    pub(super) fn write_input(&mut self, mut bytes: &[u8]) -> Result<(), TermError> {
        if let Some(transcript) = &mut self.transcript {
            transcript.record_input(bytes, Instant::now());
        }
        let pid = self.pid;
        let Some(master) = &self.master else {
            return Ok(());
        };
        let deadline = Instant::now() + WRITE_TIMEOUT;
        while !bytes.is_empty() {
            match rustix::io::write(master, bytes) {
                Ok(count) => bytes = &bytes[count..],
                Err(rustix::io::Errno::IO) => return Ok(()),
                Err(rustix::io::Errno::INTR) => {}
                Err(rustix::io::Errno::AGAIN) => {
                    let now = Instant::now();
                    if now >= deadline {
                        return Err(TermError::Io {
                            action: "write input to (the program stopped reading)",
                            pid,
                            source: std::io::ErrorKind::TimedOut.into(),
                        });
                    }
                    let mut fds = [PollFd::new(master, PollFlags::OUT)];
                    let _ = rustix::event::poll(&mut fds, Some(&timespec(deadline - now)));
                }
                Err(errno) => {
                    return Err(TermError::Io {
                        action: "write input to",
                        pid,
                        source: errno.into(),
                    });
                }
            }
        }
        Ok(())
    }

    /// Waits until `check` holds on a visible frame (or already holds now), returning
    /// the read time of that frame (for a check that already holds, of the last read).
    pub(super) fn wait_until(
        &mut self,
        stage: Stage,
        deadline: Instant,
        check: &mut dyn FnMut(&vt100::Screen) -> bool,
    ) -> Result<Hit, TermError> {
        self.wait_until_open(stage, deadline, &mut || true, check)
    }

    /// [`Terminal::wait_until`] for a check that cannot hold before `open` says so:
    /// `check` is called only at frames read while `open()` is true; when `open` turns
    /// true after a frame it skipped (or a start it skipped), the screen as it stands is
    /// checked, and a hit is timed at the last read.
    pub(super) fn wait_until_open(
        &mut self,
        stage: Stage,
        deadline: Instant,
        open: &mut dyn FnMut() -> bool,
        check: &mut dyn FnMut(&vt100::Screen) -> bool,
    ) -> Result<Hit, TermError> {
        let started = Instant::now();
        // Whether the screen as it stands went unchecked because the gate was closed. A
        // wait that begins inside a synchronized update checks nothing until a frame.
        let mut skipped = false;
        if !self.screen.in_sync(started) {
            if !open() {
                skipped = true;
            } else if check(self.screen.vt()) {
                return Ok(Hit::already(self.last_output_at.unwrap_or(self.spawned_at)));
            }
        }
        loop {
            let now = Instant::now();
            if skipped && !self.screen.in_sync(now) && open() {
                skipped = false;
                if check(self.screen.vt()) {
                    return Ok(Hit::already(self.last_output_at.unwrap_or(self.spawned_at)));
                }
            }
            if now >= deadline {
                return Err(self.timeout(stage, now - started));
            }
            let pumped = self.pump((deadline - now).min(EXIT_CHECK_INTERVAL), &mut |s| {
                skipped = !open();
                !skipped && check(s)
            })?;
            match pumped {
                Pumped::Data(Some(hit)) => return Ok(hit),
                Pumped::Data(None) => {}
                Pumped::Idle => {
                    if self.leader.has_exited() {
                        return Err(self.exited(stage));
                    }
                }
                Pumped::Eof => return Err(self.exited(stage)),
            }
        }
    }
}
