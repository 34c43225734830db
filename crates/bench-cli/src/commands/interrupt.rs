//! SIGINT, SIGTERM and SIGHUP to a measuring command (`mem -- CMD`, `startup`,
//! `staircase`): stop everything it started, then exit 128 + the signal
//! (130, 143, 129), as a shell reports a command a signal ended.
//!
//! Without this the default action ends clibench at once and leaves what it
//! started running: programs in their own process groups or sessions never see
//! the signal, and a daemon they detached is nobody's concern.

use anyhow::Context;
use bench_proc::Selector;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

/// Makes this process a child subreaper (so detached daemons re-parent to it
/// and stay in its tree), then watches for SIGINT, SIGTERM and SIGHUP on a
/// thread: on the first, it stops its whole tree (SIGTERM, `grace`, SIGKILL)
/// and exits with 128 + the signal number.
pub fn stop_family_on_signal(grace: Duration) -> anyhow::Result<()> {
    bench_proc::become_subreaper()?;
    let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP])
        .context("failed to install the SIGINT, SIGTERM and SIGHUP handlers")?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                stop_and_exit(signal, grace);
            }
        })
        .context("failed to start the signal thread")?;
    Ok(())
}

/// The signal being handled, 0 while none was received.
static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// When a signal is being handled, waits for the signal thread, which ends the process
/// with 128 + the signal once everything is stopped. The main thread calls this before it
/// exits: a measurement that failed because the stop killed its program must not exit
/// first with its own code.
pub fn wait_if_interrupted() {
    if RECEIVED.load(Ordering::SeqCst) != 0 {
        loop {
            std::thread::park();
        }
    }
}

fn stop_and_exit(signal: i32, grace: Duration) -> ! {
    RECEIVED.store(signal, Ordering::SeqCst);
    let name = match signal {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        _ => "SIGHUP",
    };
    say!("\nclibench: {name} received; stopping every process it started");
    let me = std::process::id();
    // The main thread may be starting a process right now: the stop re-reads
    // the tree on every poll, and a last pass without grace catches one
    // started as the first pass ended.
    let first = bench_proc::stop(&Selector::Tree(me), grace);
    let last = bench_proc::stop(&Selector::Tree(me), Duration::ZERO);
    for error in [first.err(), last.err()].into_iter().flatten() {
        say!("error: {error}");
    }
    std::process::exit(128 + signal)
}
