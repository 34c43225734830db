//! Opening a pseudo-terminal and starting a program in it, on Linux.

use crate::error::TermError;
use crate::screen::CELL_PIXELS;
use crate::terminal::SpawnOptions;
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{Mode, OFlags};
use rustix::pty::OpenptFlags;
use rustix::termios::{InputModes, LocalModes, OptionalActions, Winsize};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

/// The two ends of a fresh pseudo-terminal.
pub(crate) struct Pty {
    pub master: OwnedFd,
    pub slave: OwnedFd,
}

fn pty_error(action: &'static str) -> impl FnOnce(rustix::io::Errno) -> TermError {
    move |errno| TermError::Pty {
        action,
        source: errno.into(),
    }
}

/// Opens a PTY of `rows` x `cols` (with pixel sizes to match [`CELL_PIXELS`]);
/// the master is non-blocking, both ends close on exec, the slave has IUTF8 set
/// so that line editing erases whole UTF-8 characters.
pub(crate) fn open(rows: u16, cols: u16) -> Result<Pty, TermError> {
    let master =
        rustix::pty::openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)
            .map_err(pty_error("open"))?;
    rustix::pty::grantpt(&master).map_err(pty_error("grant"))?;
    rustix::pty::unlockpt(&master).map_err(pty_error("unlock"))?;
    let name = rustix::pty::ptsname(&master, Vec::new()).map_err(pty_error("name"))?;
    let slave = rustix::fs::open(
        name.as_c_str(),
        OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(pty_error("open the slave of"))?;
    let mut termios = rustix::termios::tcgetattr(&slave).map_err(pty_error("read the modes of"))?;
    termios.input_modes |= InputModes::IUTF8;
    rustix::termios::tcsetattr(&slave, OptionalActions::Now, &termios)
        .map_err(pty_error("set the modes of"))?;
    rustix::termios::tcsetwinsize(
        &master,
        Winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: cols.saturating_mul(CELL_PIXELS.0),
            ws_ypixel: rows.saturating_mul(CELL_PIXELS.1),
        },
    )
    .map_err(pty_error("set the size of"))?;
    rustix::io::ioctl_fionbio(&master, true).map_err(pty_error("make non-blocking"))?;
    Ok(Pty { master, slave })
}

/// Whether the program put the terminal in raw mode: ICANON and ECHO both off.
/// On Linux the master reports the modes the slave side set.
pub(crate) fn is_raw(master: BorrowedFd<'_>) -> std::io::Result<bool> {
    let termios = rustix::termios::tcgetattr(master)?;
    Ok(!termios
        .local_modes
        .intersects(LocalModes::ICANON | LocalModes::ECHO))
}

/// Starts `options.program` with the slave as its stdin, stdout, stderr and
/// controlling terminal, in a new session, with exactly `options.env`, no other
/// descriptor of this process, and as `options.user` when given (groups, then
/// gid, then uid, before exec).
pub(crate) fn spawn(pty: &Pty, options: &SpawnOptions) -> Result<Child, TermError> {
    let program = options.program.to_string_lossy().into_owned();
    let spawn_error = |source| TermError::Spawn {
        program: program.clone(),
        source,
    };
    let stdio = || -> Result<Stdio, TermError> {
        let fd = pty
            .slave
            .as_fd()
            .try_clone_to_owned()
            .map_err(&spawn_error)?;
        Ok(Stdio::from(fd))
    };
    let mut command = Command::new(&options.program);
    command
        .args(&options.args)
        .env_clear()
        .envs(options.env.iter().map(|(k, v)| (k, v)))
        .stdin(stdio()?)
        .stdout(stdio()?)
        .stderr(stdio()?);
    if let Some(cwd) = &options.cwd {
        command.current_dir(cwd);
    }
    // Prepared here: the closure below runs between fork and exec, where it must not allocate.
    let identity = options.user.as_ref().map(bench_proc::Identity::switch);
    // SAFETY: the closure runs in the forked child before exec and only makes raw
    // system calls (setsid, ioctl, close_range or fcntl, sigaction, setgroups, setgid, setuid),
    // which are async-signal-safe; it allocates nothing and touches no locks. The
    // child is single-threaded there, so the per-thread id calls change the whole
    // process.
    unsafe {
        command.pre_exec(move || {
            bench_proc::close_descriptors_above_stderr()?;
            crate::signals_linux::default_ignored_signals()?;
            rustix::process::setsid()?;
            // std has already made the slave fd 0; a session leader without a
            // controlling terminal acquires it here.
            rustix::process::ioctl_tiocsctty(BorrowedFd::borrow_raw(0))?;
            if let Some(identity) = &identity {
                identity.apply()?;
            }
            Ok(())
        });
    }
    let child = command.spawn().map_err(spawn_error);
    // Dropping the command closes our copies of the slave, so that the master reads
    // EIO once the program's side is closed.
    drop(command);
    child
}
