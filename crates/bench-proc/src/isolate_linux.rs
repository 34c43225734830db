//! Cutting a child off from what its parent holds, between fork and exec: its own
//! session (so no controlling terminal) and no descriptor above 2.
//!
//! A target that shares clibench's session has the operator's terminal as its
//! controlling tty: it can open `/dev/tty` and push a line into the operator's
//! shell with `TIOCSTI` (CVE-2017-5226, why bubblewrap has `--new-session`), or
//! change the terminal's modes. A descriptor clibench inherited (`clibench run
//! 9<secret`) would reach it too. [`detach`] takes both away.

use std::io;

/// Makes the calling process a session leader without a controlling terminal,
/// and every descriptor above 2 close when it execs.
///
/// Call it only in a forked child before exec (a `pre_exec` hook), after the
/// standard streams are in place (std's `Command` has put them on 0, 1 and 2 by
/// then). It makes raw, async-signal-safe system calls only and allocates
/// nothing. The child must not already lead a process group (`setsid` refuses
/// then): do not combine it with `CommandExt::process_group`; a session leader
/// leads its process group too.
pub fn detach() -> io::Result<()> {
    new_session()?;
    close_descriptors_above_stderr()
}

/// `setsid()`: a new session and process group led by the caller, with no
/// controlling terminal. Only between fork and exec (see [`detach`]).
pub fn new_session() -> io::Result<()> {
    // SAFETY: setsid takes no arguments and is async-signal-safe.
    if unsafe { libc::setsid() } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Marks every descriptor above 2 close-on-exec, so the program exec'ed gets
/// only its standard streams. Only between fork and exec (see [`detach`]).
///
/// Close-on-exec rather than closed at once: std's `Command` keeps a
/// close-on-exec pipe open until exec, through which the child reports an exec
/// that failed; closing it here would turn "no such program" into an exit
/// status. `close_range(3, ~0, CLOSE_RANGE_CLOEXEC)` does it in one call
/// (Linux 5.11); on older kernels every descriptor up to the soft
/// `RLIMIT_NOFILE` gets `FD_CLOEXEC` one by one (a descriptor cannot be
/// above that limit, whatever the parent did before lowering it: a lowered
/// limit is the reason the fallback reads it at the moment of the call).
pub fn close_descriptors_above_stderr() -> io::Result<()> {
    // SAFETY: close_range only changes flags of this process's descriptors.
    let done = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if done == 0 {
        return Ok(());
    }
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills the struct we own; async-signal-safe.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // A descriptor opened before the soft limit was lowered can lie above it,
    // up to the hard limit; infinity (or a huge hard limit) is capped at the
    // kernel's own ceiling, fs.nr_open (1 << 20 by default).
    let end = limit.rlim_cur.max(limit.rlim_max).min(1 << 20) as libc::c_int;
    for fd in 3..end {
        // SAFETY: fcntl on a number that may not be open: EBADF is the answer then.
        unsafe {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    /// The descriptors and the session of a child started with [`detach`].
    fn child_view(detached: bool) -> (Vec<String>, String) {
        // A descriptor without close-on-exec, as a caller's `9<secret` would be.
        let file = std::fs::File::open("/proc/self/status").unwrap();
        // SAFETY: dup of a descriptor we own; the new one is closed below.
        let inherited = unsafe { libc::dup(file.as_raw_fd()) };
        assert!(inherited > 2);
        let mut command = Command::new("/bin/sh");
        command.args(["-c", "ls /proc/$$/fd; cut -d' ' -f6 /proc/$$/stat"]);
        if detached {
            // SAFETY: detach makes raw async-signal-safe calls only.
            unsafe {
                command.pre_exec(detach);
            }
        }
        let output = command.output().unwrap();
        // SAFETY: closes the descriptor dup'ed above.
        unsafe {
            libc::close(inherited);
        }
        assert!(output.status.success(), "{output:?}");
        let text = String::from_utf8(output.stdout).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let session = lines.pop().unwrap();
        (lines, session)
    }

    #[test]
    fn a_detached_child_keeps_only_its_standard_streams() {
        let (fds, _) = child_view(true);
        // The shell's own descriptors: 0, 1, 2, and possibly the one `ls`'s
        // shell keeps for its script (never one we passed, which would be >= 3
        // and open in the parent too).
        assert_eq!(fds, ["0", "1", "2"], "{fds:?}");
        // The same child without detach sees the inherited descriptor: the
        // check above can fail.
        let (fds, _) = child_view(false);
        assert!(fds.len() > 3, "{fds:?}");
    }

    #[test]
    fn a_detached_child_leads_its_own_session() {
        let own = std::fs::read_to_string("/proc/self/stat").unwrap();
        let own_session = own.rsplit(')').next().unwrap().split_whitespace().nth(3);
        let (_, session) = child_view(true);
        assert_ne!(Some(session.as_str()), own_session);
        let (_, session) = child_view(false);
        assert_eq!(Some(session.as_str()), own_session);
    }

    #[test]
    fn a_program_that_cannot_start_still_says_why() {
        let mut command = Command::new("/nonexistent/program");
        // SAFETY: detach makes raw async-signal-safe calls only.
        unsafe {
            command.pre_exec(detach);
        }
        let error = command.spawn().unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::NotFound, "{error}");
    }
}
