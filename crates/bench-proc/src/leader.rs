//! [`Leader`]: a child we started that leads its own process group (and often its
//! own session), whose pid stays ours until we reap it.
//!
//! A process id is only a name for a process while that process, or its zombie,
//! exists. Once a parent reaps its child, the kernel may hand the same number to a
//! stranger's new process, and `kill(-pid)` would then signal the stranger's group.
//! So a leader is looked at without reaping ([`Leader::has_exited`], `waitid` with
//! `WNOWAIT`), its group is signalled only while it is unreaped
//! ([`Leader::kill_group`]), and reaping ([`Leader::reap`]) comes last.

use rustix::process::{Pid, Signal, WaitId, WaitIdOptions, WaitIdStatus};
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ExitStatus};
use std::time::Duration;

/// A child process that leads its own process group: spawned with
/// `CommandExt::process_group(0)`, or calling `setsid` before exec.
///
/// Its pid, and the process group (and session) id it leads, stay pinned while
/// it is unreaped, a zombie at most. The only calls that reap it are
/// [`Leader::try_reap`] and [`Leader::reap`]; everything else looks without
/// reaping. Something else in this process can still reap it behind the
/// leader's back ([`crate::stop`] reaps the zombies among our children), which
/// [`Leader::kill_group`] notices before it signals: it asks the kernel
/// whether the child is still ours to wait for, and on the same thread nothing
/// can reap in between.
#[derive(Debug)]
pub struct Leader {
    /// Held, never asked: owning the `Child` keeps anyone else from reaping it through
    /// std; reaping is `wait4` here, which keeps the rusage std's `wait` drops.
    _child: Child,
    pid: Pid,
    /// The exit status, once seen (without reaping, or when reaping).
    status: Option<ExitStatus>,
    /// Whether the child is known to be reaped: its pid is no longer ours.
    reaped: bool,
    /// The CPU time the kernel reported when we reaped it (`wait4`'s rusage).
    cpu: Option<Duration>,
}

impl Leader {
    /// Takes a freshly spawned child that leads its process group. Take its
    /// stdin, stdout and stderr first: the leader keeps the [`Child`] to itself,
    /// so that nothing reaps it behind its back.
    pub fn new(child: Child) -> Leader {
        // std's Child::id is the pid the kernel returned from fork, always > 0;
        // the fallback (our own pid, never a child of ours) only keeps this total.
        let pid = Pid::from_raw(child.id() as i32).unwrap_or_else(rustix::process::getpid);
        Leader {
            _child: child,
            pid,
            status: None,
            reaped: false,
            cpu: None,
        }
    }

    /// The leader's pid, which is also its process group id.
    pub fn pid(&self) -> u32 {
        self.pid.as_raw_nonzero().get() as u32
    }

    /// Whether the leader has exited, looked at without reaping it (`waitid` with
    /// `WEXITED | WNOHANG | WNOWAIT`), so that its pid stays ours. A leader that
    /// something else reaped counts as exited.
    pub fn has_exited(&mut self) -> bool {
        if self.status.is_some() || self.reaped {
            return true;
        }
        match self.peek() {
            Peek::Running => false,
            Peek::Exited(status) => {
                self.status = Some(status);
                true
            }
            Peek::Reaped => true,
        }
    }

    /// How the leader ended, once [`Leader::has_exited`], [`Leader::try_reap`] or
    /// [`Leader::reap`] saw it; `None` while it runs, and when something else
    /// reaped it before its status was seen.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        self.status
    }

    /// The CPU time, user and system, of the leader and of every descendant it waited
    /// for, as the kernel reported it when we reaped the leader (`wait4`'s rusage: the
    /// scheduler's nanosecond run time, in microseconds). `/proc/PID/stat` gives a
    /// zombie's time in 10 ms ticks only, and its `schedstat` the main thread's alone,
    /// which is all a program that exits at ready leaves to read: a 15 ms command is
    /// one or two ticks there. `None` until we reap it, and when something else did.
    pub fn cpu_time(&self) -> Option<Duration> {
        self.cpu
    }

    /// Whether the leader has been reaped, by us or by something else in this
    /// process: from then on its pid may belong to another process.
    pub fn is_reaped(&self) -> bool {
        self.reaped
    }

    /// Sends `signal` to the leader's process group, only while the leader is
    /// unreaped (running, or a zombie whose pid nobody else can have). Returns
    /// whether the signal was sent: `false` when the leader was reaped (nothing
    /// is signalled) or its group is empty (`ESRCH`).
    ///
    /// The check and the signal are two system calls: call this from the thread
    /// that reaps (as every caller in this workspace does), so that no reaping
    /// falls between them.
    pub fn kill_group(&mut self, signal: Signal) -> io::Result<bool> {
        if self.reaped || matches!(self.peek(), Peek::Reaped) {
            return Ok(false);
        }
        match rustix::process::kill_process_group(self.pid, signal) {
            Ok(()) => Ok(true),
            Err(rustix::io::Errno::SRCH) => Ok(false),
            Err(errno) => Err(errno.into()),
        }
    }

    /// Reaps the leader if it has exited, without waiting: its status, or
    /// `Ok(None)` while it runs. Once reaped, returns the same status again.
    /// Fails with `ECHILD` when something else reaped it before its status was
    /// seen.
    pub fn try_reap(&mut self) -> io::Result<Option<ExitStatus>> {
        if self.reaped {
            return self.known_status().map(Some);
        }
        match self.wait4(true) {
            Ok(Some(status)) => Ok(Some(self.reaped_with(status))),
            Ok(None) => Ok(None),
            Err(error) if is_echild(&error) => {
                self.reaped = true;
                self.known_status().map(Some)
            }
            Err(error) => Err(error),
        }
    }

    /// Waits for the leader to exit and reaps it. Once reaped, returns the same
    /// status again. Fails with `ECHILD` when something else reaped it before its
    /// status was seen.
    pub fn reap(&mut self) -> io::Result<ExitStatus> {
        if self.reaped {
            return self.known_status();
        }
        match self.wait4(false) {
            Ok(Some(status)) => Ok(self.reaped_with(status)),
            // Blocking: only an exit returns (EINTR is retried below).
            Ok(None) => self.reap(),
            Err(error) if is_echild(&error) => {
                self.reaped = true;
                self.known_status()
            }
            Err(error) => Err(error),
        }
    }

    /// Reaps the child with `wait4`, keeping its rusage; `Ok(None)` while it runs (with
    /// `nohang`). `std::process::Child` would reap it without the rusage; it is never
    /// asked afterwards, as `reaped` answers for it.
    fn wait4(&mut self, nohang: bool) -> io::Result<Option<ExitStatus>> {
        let options = if nohang { libc::WNOHANG } else { 0 };
        let mut raw = 0;
        // SAFETY: an all-zero `rusage` is a valid value of the plain C struct.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        loop {
            // SAFETY: `raw` and `usage` are valid and writable for the call; the pid is
            // our own unreaped child's.
            let pid = unsafe {
                libc::wait4(
                    self.pid.as_raw_nonzero().get(),
                    &mut raw,
                    options,
                    &mut usage,
                )
            };
            match pid {
                0 => return Ok(None),
                -1 => {
                    let error = io::Error::last_os_error();
                    if error.kind() == io::ErrorKind::Interrupted {
                        continue;
                    }
                    return Err(error);
                }
                _ => break,
            }
        }
        let micros = |time: libc::timeval| {
            Duration::from_secs(time.tv_sec.max(0) as u64)
                + Duration::from_micros(time.tv_usec.max(0) as u64)
        };
        self.cpu = Some(micros(usage.ru_utime) + micros(usage.ru_stime));
        Ok(Some(ExitStatus::from_raw(raw)))
    }

    fn reaped_with(&mut self, status: ExitStatus) -> ExitStatus {
        self.reaped = true;
        self.status = Some(status);
        status
    }

    /// The status of a reaped leader, `ECHILD` when it was never seen.
    fn known_status(&self) -> io::Result<ExitStatus> {
        self.status
            .ok_or_else(|| io::Error::from_raw_os_error(rustix::io::Errno::CHILD.raw_os_error()))
    }

    /// What the kernel says about the child, without reaping it.
    fn peek(&mut self) -> Peek {
        let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
        match rustix::process::waitid(WaitId::Pid(self.pid), options) {
            Ok(None) => Peek::Running,
            Ok(Some(status)) => match wait_status(&status) {
                Some(status) => Peek::Exited(status),
                // WEXITED reports only exits and deaths by signal; anything else
                // is still a child that has not ended.
                None => Peek::Running,
            },
            // ECHILD: no such child of ours any more, so it was reaped. waitid's
            // other errors (EINVAL for bad options, EINTR while blocking) cannot
            // happen with these fixed, non-blocking options; were one to, the
            // child is treated as running, which signals nothing unsafe: its pid
            // is ours until ECHILD says otherwise.
            Err(rustix::io::Errno::CHILD) => {
                self.reaped = true;
                Peek::Reaped
            }
            Err(_) => Peek::Running,
        }
    }
}

fn is_echild(error: &io::Error) -> bool {
    error.raw_os_error() == Some(rustix::io::Errno::CHILD.raw_os_error())
}

/// What `waitid(WNOWAIT)` saw.
enum Peek {
    Running,
    Exited(ExitStatus),
    Reaped,
}

/// The [`ExitStatus`] that `waitpid` would report for what `waitid` saw: an exit
/// code in bits 8..16, or the terminating signal in the low bits (0x80: core dumped).
fn wait_status(status: &WaitIdStatus) -> Option<ExitStatus> {
    if let Some(code) = status.exit_status() {
        return Some(ExitStatus::from_raw((code & 0xff) << 8));
    }
    let signal = status.terminating_signal()?;
    let core = if status.dumped() { 0x80 } else { 0 };
    Some(ExitStatus::from_raw(signal | core))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::Command;
    use std::time::{Duration, Instant};

    /// `sh -c script` in its own process group.
    fn leader(script: &str) -> Leader {
        let child = Command::new("/bin/sh")
            .args(["-c", script])
            .process_group(0)
            .spawn()
            .unwrap();
        Leader::new(child)
    }

    /// Polls `has_exited` for up to a minute (a bound for a loaded machine, not a
    /// speed expectation).
    fn wait_exited(leader: &mut Leader) {
        let until = Instant::now() + Duration::from_secs(60);
        while !leader.has_exited() {
            assert!(Instant::now() < until, "the child never exited");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Whether `pid` is still our child to wait for (running or a zombie), asked
    /// of the kernel directly.
    fn still_ours(pid: u32) -> bool {
        let pid = Pid::from_raw(pid as i32).unwrap();
        let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
        rustix::process::waitid(WaitId::Pid(pid), options).is_ok()
    }

    #[test]
    fn has_exited_sees_the_exit_without_reaping_the_child() {
        let mut leader = leader("exit 7");
        wait_exited(&mut leader);
        assert_eq!(leader.exit_status().and_then(|s| s.code()), Some(7));
        // The zombie is still there: the pid and the group id stay ours.
        assert!(still_ours(leader.pid()), "has_exited reaped the child");
        assert!(!leader.is_reaped());
        let state = std::fs::read_to_string(format!("/proc/{}/stat", leader.pid())).unwrap();
        assert!(state.contains(") Z "), "{state}");
        assert_eq!(leader.reap().unwrap().code(), Some(7));
        assert!(!still_ours(leader.pid()));
        assert!(leader.is_reaped());
    }

    #[test]
    fn reaping_keeps_the_cpu_time_of_the_leader_and_what_it_waited_for_to_the_microsecond() {
        // Busy work in the leader and in a child it waits for.
        let mut leader = leader(
            "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; \
             sh -c 'j=0; while [ $j -lt 20000 ]; do j=$((j+1)); done'",
        );
        wait_exited(&mut leader);
        assert_eq!(leader.cpu_time(), None, "not reaped yet");
        // What /proc keeps of the zombie: its main thread's run time in nanoseconds.
        let schedstat =
            std::fs::read_to_string(format!("/proc/{}/schedstat", leader.pid())).unwrap();
        let own_ns: u64 = schedstat
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(leader.reap().unwrap().success());
        let cpu = leader.cpu_time().expect("reaped by us: the rusage is kept");
        // The leader's own time and its child's, which ran the same loop: well past the
        // leader's alone.
        let own = Duration::from_nanos(own_ns);
        assert!(
            cpu.as_secs_f64() > 1.4 * own.as_secs_f64(),
            "{cpu:?} vs {own:?}"
        );
        // Microseconds, not the 10 ms ticks of /proc/PID/stat.
        assert_ne!(cpu.as_micros() % 10_000, 0, "{cpu:?}");
    }

    #[test]
    fn a_running_child_has_not_exited_and_is_not_reaped_by_try_reap() {
        let mut leader = leader("exec sleep 60");
        assert!(!leader.has_exited());
        assert_eq!(leader.try_reap().unwrap(), None);
        assert!(leader.exit_status().is_none());
        assert!(leader.kill_group(Signal::KILL).unwrap());
        let status = leader.reap().unwrap();
        assert_eq!(status.signal(), Some(9));
    }

    #[test]
    fn kill_group_reaches_every_member_of_the_group() {
        // The shell's background child stays in the group; the shell waits for it.
        let mut leader = leader("sleep 60 & wait");
        let group = leader.pid();
        let members = || {
            crate::ProcRoot::live()
                .discover(&crate::Selector::ProcessGroup(group))
                .unwrap()
                .into_iter()
                .filter(|&pid| crate::process_stat(pid).is_some_and(|s| !s.is_zombie()))
                .count()
        };
        let until = Instant::now() + Duration::from_secs(60);
        while members() < 2 {
            assert!(Instant::now() < until, "the background sleep never started");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(leader.kill_group(Signal::KILL).unwrap());
        leader.reap().unwrap();
        // The sleep is re-parented to init (or a subreaper) and may linger as a
        // zombie until reaped there; it must not run.
        let until = Instant::now() + Duration::from_secs(60);
        while members() > 0 {
            assert!(Instant::now() < until, "a member of the group survived");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn a_reaped_leader_is_never_signalled() {
        let mut leader = leader("exit 0");
        let status = leader.reap().unwrap();
        assert!(status.success());
        assert!(leader.has_exited() && leader.is_reaped());
        assert!(!leader.kill_group(Signal::KILL).unwrap());
        assert_eq!(leader.try_reap().unwrap(), Some(status));
    }

    #[test]
    fn a_leader_reaped_behind_its_back_is_not_signalled() {
        let mut leader = leader("exit 3");
        let pid = Pid::from_raw(leader.pid() as i32).unwrap();
        // Something else in this process (bench_proc::stop does this) reaps it.
        rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty()).unwrap();
        assert!(!leader.kill_group(Signal::KILL).unwrap());
        assert!(leader.is_reaped());
        assert!(leader.has_exited());
        let error = leader.reap().unwrap_err();
        assert!(
            is_echild(&error),
            "its status went to the other reaper: {error}"
        );
    }

    #[test]
    fn a_signal_death_reads_as_waitpid_would_report_it() {
        let mut leader = leader("kill -TERM $$");
        wait_exited(&mut leader);
        let seen = leader.exit_status().unwrap();
        assert_eq!(seen.signal(), Some(15));
        assert_eq!(leader.reap().unwrap(), seen);
    }
}
