//! Exit mode: ready is the moment the program exits, as hyperfine times a command, but
//! in a real terminal; and the status it ended with.

use super::pump::{Hit, Pumped, timespec};
use super::spawn::Terminal;
use crate::error::{Stage, TermError};
use rustix::event::{PollFd, PollFlags};
use std::time::{Duration, Instant};

impl Terminal {
    /// Exit mode: reads the terminal until the program exits. The moment is taken when
    /// its pidfd becomes readable (the kernel's exit notification, after the program
    /// closed its end of the terminal), so the wake-up of one `poll` is all that lies
    /// between the exit and its detection; without pidfds (Linux before 5.3) the exit
    /// is checked every millisecond. Output still buffered is read afterwards, so the
    /// screen at ready is the program's last.
    pub(super) fn ready_exit(&mut self, deadline: Instant) -> Result<Hit, TermError> {
        let started = Instant::now();
        let pidfd = rustix::process::Pid::from_raw(self.pid as i32).and_then(|pid| {
            rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
        });
        let exited_at = loop {
            if self.leader.has_exited() {
                break Instant::now();
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(self.timeout(Stage::Exit, now - started));
            }
            let wait = if pidfd.is_some() {
                deadline - now
            } else {
                (deadline - now).min(Duration::from_millis(1))
            };
            let mut fds = Vec::with_capacity(2);
            if let Some(pidfd) = &pidfd {
                fds.push(PollFd::new(pidfd, PollFlags::IN));
            }
            let master_polled = match &self.master {
                Some(master) if !self.eof => {
                    fds.push(PollFd::new(master, PollFlags::IN));
                    true
                }
                _ => false,
            };
            match rustix::event::poll(&mut fds, Some(&timespec(wait))) {
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(errno) => {
                    return Err(TermError::Io {
                        action: "poll",
                        pid: self.pid,
                        source: errno.into(),
                    });
                }
            }
            let at = Instant::now();
            let exit_seen = pidfd.is_some() && !fds[0].revents().is_empty();
            let output = master_polled && !fds[fds.len() - 1].revents().is_empty();
            drop(fds);
            if exit_seen {
                break at;
            }
            if output {
                self.pump(Duration::ZERO, &mut |_| false)?;
            } else if pidfd.is_none() && self.eof {
                std::thread::sleep(Duration::from_millis(1));
            }
        };
        // What the program wrote before it exited is still in the terminal's buffer.
        while let Pumped::Data(_) = self.pump(Duration::ZERO, &mut |_| false)? {}
        self.leader.has_exited();
        Ok(Hit {
            read_at: exited_at,
            detected_at: exited_at,
        })
    }

    /// The CPU time, user and system, of the program and of every process it waited for,
    /// once the terminal has reaped it ([`Terminal::close`]): the kernel's own account
    /// at the reaping, to the microsecond ([`bench_proc::Leader::cpu_time`]). What a
    /// program that exits at ready spent, where `/proc` keeps 10 ms ticks of a zombie.
    /// `None` before it is reaped.
    pub fn reaped_cpu_time(&self) -> Option<Duration> {
        self.leader.cpu_time()
    }

    /// How the program ended, once it has exited (`None` while it runs, or when its
    /// status could not be seen); looked at without reaping it.
    pub fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.leader.has_exited();
        self.leader.exit_status()
    }
}
