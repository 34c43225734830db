//! Giving the programs bench-term starts the default signal dispositions, on Linux.
//!
//! A signal the caller ignores stays ignored across fork and exec: a shell runs a
//! background job (`clibench run &` in a script, `nohup`) with SIGINT and SIGQUIT
//! (or SIGHUP) ignored, and a test harness's threads share whatever one test set. A
//! target started that way ignores the Ctrl-C a person presses: Python's REPL never
//! says KeyboardInterrupt, and a quit sequence measured there is not the one its users
//! meet. std resets SIGPIPE and the signal mask in the child; this resets the rest.

/// Sets every ignored signal back to its default action. Call it only between fork
/// and exec (in a `pre_exec` closure): it makes raw `sigaction` calls only, which are
/// async-signal-safe, and allocates nothing. Handlers need no reset: exec resets them.
pub(crate) fn default_ignored_signals() -> std::io::Result<()> {
    // Signals 1 to 31, the standard ones; real-time signals are not ignored by shells.
    for signal in 1..32 {
        if signal == libc::SIGKILL || signal == libc::SIGSTOP {
            continue;
        }
        // SAFETY: sigaction is plain data; all zeroes is a valid value of it.
        let mut current: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: a null new action only queries; `current` is a valid out-parameter.
        if unsafe { libc::sigaction(signal, std::ptr::null(), &mut current) } != 0 {
            continue;
        }
        if current.sa_sigaction == libc::SIG_IGN {
            // SAFETY: as above; SIG_DFL with an empty mask and no flags is a valid action.
            let mut default: libc::sigaction = unsafe { std::mem::zeroed() };
            default.sa_sigaction = libc::SIG_DFL;
            // SAFETY: `default` is a valid action and the old one is not asked for.
            if unsafe { libc::sigaction(signal, &default, std::ptr::null_mut()) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_target_of_a_caller_that_ignores_sigint_gets_it_back() {
        // In a child of this test only: the disposition is process-wide, and the other
        // tests' threads share it.
        let status = std::process::Command::new("/bin/sh")
            .args([
                "-c",
                "trap '' INT; exec \"$0\" --exact signals_linux::tests::child_side --nocapture",
            ])
            .arg(std::env::current_exe().unwrap())
            .env("BENCH_TERM_SIGNALS_CHILD", "1")
            .status()
            .unwrap();
        assert!(status.success());
    }

    #[test]
    fn child_side() {
        if std::env::var_os("BENCH_TERM_SIGNALS_CHILD").is_none() {
            return;
        }
        // Inherited from the shell: SIGINT ignored. The reset gives it back.
        let ignored = || {
            // SAFETY: sigaction is plain data; all zeroes is a valid value of it.
            let mut current: libc::sigaction = unsafe { std::mem::zeroed() };
            // SAFETY: a null new action only queries; `current` is a valid out-parameter.
            unsafe { libc::sigaction(libc::SIGINT, std::ptr::null(), &mut current) };
            current.sa_sigaction == libc::SIG_IGN
        };
        assert!(ignored(), "the shell's trap should have ignored SIGINT");
        super::default_ignored_signals().unwrap();
        assert!(!ignored());
    }
}
