//! Keeping the caller's descriptors out of the programs bench-term starts, on Linux.
//!
//! std opens every descriptor of its own with close-on-exec, but a process is also
//! handed descriptors by whoever started it (`clibench run SPEC 9<secret`, a CI
//! runner's pipes), and those survive exec. A measured program or kernel must get
//! only its standard streams.

/// Marks every descriptor above 2 close-on-exec, so that none crosses the coming
/// exec. Call it only between fork and exec (in a `pre_exec` closure): it is
/// async-signal-safe, making raw system calls only and allocating nothing.
///
/// Close-on-exec rather than closing: std's `Command` reports a failed exec to
/// the parent through a close-on-exec pipe of its own in this range; closing it
/// here would make a missing program look like one that started and exited 1.
/// Marked, it still carries that report and closes at a successful exec like
/// every other descriptor above 2.
///
/// `close_range(3, ~0, CLOSE_RANGE_CLOEXEC)` does it in one call on Linux 5.11
/// and later; older kernels get `F_SETFD` on every number below the
/// `RLIMIT_NOFILE` soft limit, above which no descriptor can be open.
pub(crate) fn close_on_exec_above_stdio() -> std::io::Result<()> {
    // SAFETY: close_range takes no pointers; a raw system call is async-signal-safe.
    let marked = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if marked == 0 {
        return Ok(());
    }
    let error = std::io::Error::last_os_error();
    // ENOSYS before Linux 5.9, EINVAL for the CLOEXEC flag before 5.11.
    if !matches!(error.raw_os_error(), Some(libc::ENOSYS | libc::EINVAL)) {
        return Err(error);
    }
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(u64::from(libc::c_uint::MAX));
    let last = i32::try_from(limit).unwrap_or(i32::MAX);
    for fd in 3..last {
        // SAFETY: F_SETFD takes no pointers; EBADF for a number not in use is expected.
        unsafe {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
    Ok(())
}
