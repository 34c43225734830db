//! Ending a terminal's session: quit keys, hang-up, kill, reaping, and the check
//! that nothing of the session is left.

use super::options::QUIT_QUIET;
use super::pump::{EXIT_CHECK_INTERVAL, Pumped};
use super::spawn::Terminal;
use crate::close::{CloseReport, Ending};
use crate::error::TermError;
use crate::session_linux::{kill_session, session_processes};
use bench_proc::Survivor;
use bench_proc::parse::Stat;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long close() lets the program exit after the hang-up before killing it.
const HANGUP_GRACE: Duration = Duration::from_millis(200);

/// How long close() waits for killed processes to disappear.
const KILL_GRACE: Duration = Duration::from_secs(3);

impl Drop for Terminal {
    fn drop(&mut self) {
        if self.close_report.is_none() {
            self.master = None;
            let _ = self.kill_and_verify();
        }
    }
}

impl Terminal {
    /// Ends the session: the quit keys (default Ctrl-C twice, 150 ms apart) and up
    /// to [`SpawnOptions::quit_grace`] for the program to exit, cut short when it
    /// stays alive, silent and in the same terminal mode for [`QUIT_QUIET`] (the keys
    /// did nothing); the
    /// transcript saved; hang-up (closing the terminal sends SIGHUP to the session);
    /// SIGKILL to the process group and every process of the session; reaping; and
    /// a check that no process of the session is left.
    ///
    /// Processes that left the session (daemons that called setsid) are not found
    /// here; stop them by user or tree with bench-proc. Calling close twice returns
    /// the first report.
    pub fn close(&mut self) -> Result<CloseReport, TermError> {
        if let Some(report) = self.close_report {
            return Ok(report);
        }
        let started = Instant::now();
        let mut first_error = None;
        let mut ending = Ending::Exited;
        if !self.eof && !self.leader.has_exited() {
            let raw_before = self.is_raw().unwrap_or(false);
            let keys = self.quit_keys.clone();
            for (index, key) in keys.iter().enumerate() {
                if index > 0
                    && let Err(e) = self.settle(self.quit_interval)
                {
                    first_error.get_or_insert(e);
                }
                if let Err(e) = self.send_keys(&[*key]) {
                    first_error.get_or_insert(e);
                }
            }
            let last_key = Instant::now();
            let until = last_key + self.quit_grace;
            let mut last_heard = last_key;
            while Instant::now() < until && !self.leader.has_exited() {
                if self.eof {
                    // The terminal closes while the program exits, a moment before
                    // it can be reaped.
                    std::thread::sleep(Duration::from_millis(2));
                    continue;
                }
                let now = Instant::now();
                if now.saturating_duration_since(last_heard) >= QUIT_QUIET {
                    // A program that gave the terminal back is on its way out (saving,
                    // flushing): let it finish within the grace.
                    let leaving = raw_before && !self.is_raw().unwrap_or(true);
                    if !leaving {
                        // Alive, silent, in the same mode: the keys did nothing.
                        break;
                    }
                    last_heard = now;
                }
                let wait = EXIT_CHECK_INTERVAL
                    .min(until.saturating_duration_since(now))
                    .min((last_heard + QUIT_QUIET).saturating_duration_since(now));
                match self.pump(wait, &mut |_| false) {
                    Ok(Pumped::Data(_)) => last_heard = Instant::now(),
                    Ok(_) => {}
                    Err(e) => {
                        first_error.get_or_insert(e);
                        break;
                    }
                }
            }
            if self.leader.has_exited() {
                ending = Ending::Quit;
            }
        }
        // Whatever is still buffered belongs to the transcript and the final screen.
        while !self.eof {
            match self.pump(Duration::ZERO, &mut |_| false) {
                Ok(Pumped::Data(_)) => {}
                Ok(_) => break,
                Err(e) => {
                    first_error.get_or_insert(e);
                    break;
                }
            }
        }
        let final_screen = self.screen.text();
        if let Some(transcript) = &mut self.transcript
            && let Err(e) = transcript.save(&final_screen)
        {
            first_error.get_or_insert(e);
        }
        let exited_before_hangup = self.leader.has_exited();
        // Closing the master hangs up: the kernel sends SIGHUP to the session.
        self.master = None;
        let until = Instant::now() + HANGUP_GRACE;
        while Instant::now() < until && !self.leader.has_exited() {
            std::thread::sleep(Duration::from_millis(5));
        }
        if !exited_before_hangup {
            ending = if self.leader.has_exited() {
                Ending::HungUp
            } else {
                Ending::Killed
            };
        }
        let survivors = self.kill_and_verify();
        let report = CloseReport {
            status: self.leader.exit_status(),
            ending,
            took: started.elapsed(),
        };
        self.close_report = Some(report);
        if !survivors.is_empty() {
            return Err(TermError::Survivors {
                sid: self.pid,
                survivors: survivors
                    .iter()
                    .map(|stat| Survivor {
                        pid: stat.pid,
                        name: stat.name.clone(),
                        state: stat.state,
                    })
                    .collect(),
            });
        }
        match first_error {
            Some(error) => Err(error),
            None => Ok(report),
        }
    }

    /// The live processes of this terminal's session now (the program and
    /// everything it started that stayed in the session).
    pub fn session_processes(&self) -> Vec<Stat> {
        session_processes(Path::new("/proc"), self.pid)
            .into_iter()
            .filter(|p| !p.is_zombie())
            .collect()
    }

    /// Kills what is left of the session, then reaps the leader. Until that last
    /// step the leader is a zombie at most, which keeps its pid, and so the session
    /// and group ids we signal, from being handed to another process: with pids
    /// wrapping quickly on a busy machine, signalling a freed id could kill a
    /// stranger's new session.
    fn kill_and_verify(&mut self) -> Vec<Stat> {
        if self.leader.is_reaped() {
            // The ids are no longer ours to signal (see above).
            return Vec::new();
        }
        let until = Instant::now() + KILL_GRACE;
        loop {
            let alive = kill_session(&mut self.leader);
            if alive.is_empty() && self.leader.has_exited() {
                // Nothing of the session is left to signal: the pid may go now.
                let _ = self.leader.try_reap();
                return Vec::new();
            }
            if Instant::now() >= until {
                return alive;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
