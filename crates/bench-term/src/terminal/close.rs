//! Ending a terminal's session: quit keys, hang-up, kill, reaping, and the check
//! that nothing of the session is left.

use super::options::QUIT_QUIET;
use super::pump::{EXIT_CHECK_INTERVAL, Pumped};
use super::spawn::Terminal;
use crate::close::{CloseReport, Ending, QuitReaction, QuitStep};
use crate::error::TermError;
use crate::session_linux::{SessionProcess, kill_session, session_processes};
use bench_proc::parse::Stat;
use std::path::Path;
use std::time::{Duration, Instant};

/// How often close() looks whether the program left raw mode or exited while it
/// waits for a reaction to a quit key: neither wakes a read.
const REACTION_POLL: Duration = Duration::from_millis(2);

/// How long the output that answers a quit key must pause before close() takes
/// the answer as whole and presses the next key: a prompt redraw takes well under
/// a millisecond, and a key pressed in the middle of a TUI's way out (between its
/// farewell and leaving raw mode) would reach it as a signal.
const REACTION_QUIET: Duration = Duration::from_millis(10);

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
    /// Ends the session: the quit keys (by default Ctrl-C, Ctrl-C, Ctrl-D, see
    /// [`SpawnOptions::quit_keys`](crate::SpawnOptions::quit_keys)), each after the
    /// program reacted to the one before it or
    /// [`SpawnOptions::quit_reaction_wait`](crate::SpawnOptions::quit_reaction_wait)
    /// passed, stopping as soon as it exits or gives the terminal back; then up to
    /// [`SpawnOptions::quit_grace`](crate::SpawnOptions::quit_grace) for it to exit,
    /// cut short when it stays alive, silent and in the same terminal mode for
    /// [`QUIT_QUIET`] (the keys did nothing); the transcript saved; hang-up (closing
    /// the terminal sends SIGHUP to the session); SIGKILL to the process group and
    /// every process of the session; reaping; and a check that no process of the
    /// session is left. What each key met is in [`CloseReport::quit`].
    ///
    /// Processes that left the session (daemons that called setsid) are not found
    /// here; stop them by user or tree with bench-proc. Calling close twice returns
    /// the first report.
    pub fn close(&mut self) -> Result<CloseReport, TermError> {
        if let Some(report) = &self.close_report {
            return Ok(report.clone());
        }
        let started = Instant::now();
        let mut first_error = None;
        let mut ending = Ending::Exited;
        let mut quit = Vec::new();
        if !self.gone() {
            let raw_before = self.is_raw().unwrap_or(false);
            let keys = self.quit_keys.clone();
            for (index, key) in keys.iter().enumerate() {
                let pressed = Instant::now();
                if let Err(e) = self.send_keys(&[*key]) {
                    first_error.get_or_insert(e);
                }
                let last = index + 1 == keys.len();
                let (reaction, reacted) = if last {
                    self.await_exit(pressed, raw_before, &mut first_error)
                } else {
                    self.await_reaction(pressed, raw_before, &mut first_error)
                };
                quit.push(QuitStep {
                    key: *key,
                    pressed_at: pressed.saturating_duration_since(self.spawned_at),
                    reaction,
                    after: reacted.saturating_duration_since(pressed),
                });
                let stop = match reaction {
                    // Nobody left to press keys for. Exited: its terminal may close a
                    // moment before it can be reaped. Left raw mode: on its way out,
                    // where a Ctrl-C would be a SIGINT that cuts short whatever it
                    // saves. Either way no more keys, and the grace to finish.
                    QuitReaction::Exited | QuitReaction::LeftRawMode => {
                        if !last {
                            self.await_exit(Instant::now(), raw_before, &mut first_error);
                        }
                        true
                    }
                    QuitReaction::Output | QuitReaction::Nothing => false,
                };
                if stop {
                    break;
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
            quit,
        };
        self.close_report = Some(report.clone());
        if !survivors.is_empty() {
            return Err(TermError::Survivors {
                sid: self.pid,
                survivors: survivors.iter().map(SessionProcess::from).collect(),
            });
        }
        match first_error {
            Some(error) => Err(error),
            None => Ok(report),
        }
    }

    /// Whether the program is gone: it closed its terminal or exited.
    fn gone(&mut self) -> bool {
        self.eof || self.leader.has_exited()
    }

    /// After a quit key that is not the last: reads until the program has reacted
    /// to it or [`SpawnOptions::quit_reaction_wait`](crate::SpawnOptions::quit_reaction_wait)
    /// passed. Returns the reaction and when it began.
    ///
    /// Reacted means: it exited; or it wrote, the output paused for
    /// [`REACTION_QUIET`], and the terminal is in the mode it was in before the keys.
    /// A program that was in raw mode and is not (now) is not pressed again: a line
    /// REPL (python's readline) gives the terminal back while it handles a key and
    /// takes it again at its next prompt, which is when the next key is for it; a
    /// TUI leaves raw mode on its way out, where a Ctrl-C would be a SIGINT cutting
    /// short whatever it saves. Still out of raw mode at the end of the wait is
    /// [`QuitReaction::LeftRawMode`].
    fn await_reaction(
        &mut self,
        pressed: Instant,
        raw_before: bool,
        first_error: &mut Option<TermError>,
    ) -> (QuitReaction, Instant) {
        let until = pressed + self.quit_reaction_wait;
        // The first sign of a reaction (output, leaving raw mode) and the latest output.
        let mut first: Option<Instant> = None;
        let mut latest_output: Option<Instant> = None;
        loop {
            if self.gone() {
                return (QuitReaction::Exited, Instant::now());
            }
            let now = Instant::now();
            let left_raw = raw_before && !self.is_raw().unwrap_or(true);
            if left_raw {
                first.get_or_insert(now);
            }
            if let Some(latest) = latest_output
                && !left_raw
                && now.saturating_duration_since(latest) >= REACTION_QUIET
            {
                return (QuitReaction::Output, first.unwrap_or(latest));
            }
            if now >= until {
                return match (left_raw, first) {
                    (true, Some(first)) => (QuitReaction::LeftRawMode, first),
                    (false, Some(first)) => (QuitReaction::Output, first),
                    _ => (QuitReaction::Nothing, now),
                };
            }
            // Short slices: leaving or retaking raw mode and exiting make no output
            // to wake on.
            let wait = REACTION_POLL.min(until - now);
            match self.pump(wait, &mut |_| false) {
                Ok(Pumped::Data(_)) => {
                    let at = Instant::now();
                    first.get_or_insert(at);
                    latest_output = Some(at);
                }
                Ok(_) => {}
                Err(e) => {
                    first_error.get_or_insert(e);
                    return (QuitReaction::Nothing, Instant::now());
                }
            }
        }
    }

    /// After the last quit key: waits up to [`SpawnOptions::quit_grace`] for the
    /// program to exit, cut short once it stayed alive, silent and in the same mode
    /// for [`QUIT_QUIET`]. Returns the first reaction to the key and when it came
    /// ([`QuitReaction::Nothing`] and the end of the wait when there was none).
    ///
    /// [`SpawnOptions::quit_grace`]: crate::SpawnOptions::quit_grace
    fn await_exit(
        &mut self,
        pressed: Instant,
        raw_before: bool,
        first_error: &mut Option<TermError>,
    ) -> (QuitReaction, Instant) {
        let until = pressed + self.quit_grace;
        let mut last_heard = pressed;
        let mut first: Option<(QuitReaction, Instant)> = None;
        while Instant::now() < until && !self.leader.has_exited() {
            if self.eof {
                first.get_or_insert((QuitReaction::Exited, Instant::now()));
                // The terminal closes while the program exits, a moment before
                // it can be reaped.
                std::thread::sleep(Duration::from_millis(2));
                continue;
            }
            let now = Instant::now();
            let leaving = raw_before && !self.is_raw().unwrap_or(true);
            if leaving {
                first.get_or_insert((QuitReaction::LeftRawMode, now));
            }
            if now.saturating_duration_since(last_heard) >= QUIT_QUIET {
                // A program that gave the terminal back is on its way out (saving,
                // flushing): let it finish within the grace.
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
                Ok(Pumped::Data(_)) => {
                    last_heard = Instant::now();
                    first.get_or_insert((QuitReaction::Output, last_heard));
                }
                Ok(_) => {}
                Err(e) => {
                    first_error.get_or_insert(e);
                    break;
                }
            }
        }
        if self.leader.has_exited() {
            first.get_or_insert((QuitReaction::Exited, Instant::now()));
        }
        first.unwrap_or((QuitReaction::Nothing, Instant::now()))
    }

    /// The live processes of this terminal's session now (the program and
    /// everything it started that stayed in the session).
    pub fn session_processes(&self) -> Vec<SessionProcess> {
        session_processes(Path::new("/proc"), self.pid)
            .iter()
            .filter(|p| !p.is_zombie())
            .map(SessionProcess::from)
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
