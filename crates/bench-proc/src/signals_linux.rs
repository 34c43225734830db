//! Acting once on the first SIGINT, SIGTERM or SIGHUP, on a thread of its own.
//!
//! A process that starts targets must stop them when it is told to end: the default action
//! of these signals ends the process at once and leaves its children running. The handler
//! itself only writes the signal's number to a pipe (async-signal-safe); a thread reads it
//! and runs the caller's action with the full language at hand.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// The signals [`on_termination_signal`] watches.
pub const TERMINATION_SIGNALS: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// The write end of the pipe the handler writes to; -1 until installed.
static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);
/// Set by the first successful install: a process has one termination action.
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// The watch could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SignalWatchError {
    /// This process already has a termination action.
    #[error("a termination action is already installed in this process")]
    AlreadyInstalled,
    /// A system call failed.
    #[error("{call}")]
    Os {
        /// The call: "pipe2", "sigaction" or "spawning the signal thread".
        call: &'static str,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

extern "C" fn write_signal_number(signal: libc::c_int) {
    // SAFETY: __errno_location returns this thread's errno slot; saving and restoring it
    // keeps the interrupted code's errno intact, as a signal handler must.
    let errno = unsafe { *libc::__errno_location() };
    let fd = PIPE_WRITE.load(Ordering::SeqCst);
    if fd >= 0 {
        let byte = signal as u8;
        // SAFETY: write(2) is async-signal-safe; the buffer is one byte on this stack. A
        // full pipe (a second signal not yet read) is fine to drop: only the first counts.
        unsafe { libc::write(fd, (&raw const byte).cast(), 1) };
    }
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
}

/// Runs `action` with the signal's number on a dedicated thread when the process first
/// receives SIGINT, SIGTERM or SIGHUP; later signals are ignored while it runs (the
/// action normally ends the process). Once per process.
pub fn on_termination_signal(
    action: impl FnOnce(i32) + Send + 'static,
) -> Result<(), SignalWatchError> {
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return Err(SignalWatchError::AlreadyInstalled);
    }
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two descriptors into the array it is given. Both are CLOEXEC,
    // so no child inherits them; the write end does not block the handler.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(os_error("pipe2"));
    }
    let [read_fd, write_fd] = fds;
    // SAFETY: fcntl on a descriptor we just created.
    unsafe {
        let flags = libc::fcntl(write_fd, libc::F_GETFL);
        libc::fcntl(write_fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
    PIPE_WRITE.store(write_fd, Ordering::SeqCst);
    std::thread::Builder::new()
        .name("termination-signal".into())
        .spawn(move || {
            let mut byte = 0u8;
            loop {
                // SAFETY: a one-byte read into a byte on this stack.
                let read = unsafe { libc::read(read_fd, (&raw mut byte).cast(), 1) };
                if read == 1 {
                    break;
                }
                if read < 0
                    && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
                {
                    continue;
                }
                // The pipe cannot close while the process lives (the write end is never
                // closed): any other outcome means the watch is broken; stop watching.
                return;
            }
            action(i32::from(byte));
        })
        .map_err(|source| SignalWatchError::Os {
            call: "spawning the signal thread",
            source,
        })?;
    for signal in TERMINATION_SIGNALS {
        // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" value; the handler
        // only makes async-signal-safe calls.
        let result = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = write_signal_number as *const () as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut())
        };
        if result != 0 {
            return Err(os_error("sigaction"));
        }
    }
    Ok(())
}

fn os_error(call: &'static str) -> SignalWatchError {
    SignalWatchError::Os {
        call,
        source: std::io::Error::last_os_error(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn the_first_termination_signal_runs_the_action_once_and_a_second_install_is_refused() {
        let (sender, received) = mpsc::channel();
        on_termination_signal(move |signal| sender.send(signal).unwrap()).unwrap();
        assert!(matches!(
            on_termination_signal(|_| {}),
            Err(SignalWatchError::AlreadyInstalled)
        ));
        // SAFETY: raising a signal whose handler was installed above.
        unsafe { libc::raise(libc::SIGHUP) };
        let got = received.recv_timeout(Duration::from_secs(10));
        // The test process shares its signals with the other tests: give them back.
        for signal in TERMINATION_SIGNALS {
            // SAFETY: restoring the default action.
            unsafe { libc::signal(signal, libc::SIG_DFL) };
        }
        assert_eq!(got, Ok(libc::SIGHUP));
    }
}
