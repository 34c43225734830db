//! `bench-proc-fixture`: a process with exactly known memory, for tests and
//! benchmarks of bench-proc.
//!
//! ```text
//! bench-proc-fixture [--mib N] [--children K] [--daemon] [--ignore-term]
//!                    [--late-mib N --late-after-ms D]
//! bench-proc-fixture --snapshot-tree PID
//! bench-proc-fixture --serve
//! bench-proc-fixture --fork-hop
//! ```
//!
//! Allocates and touches N MiB, forks K children that share it (copy-on-write,
//! never written again), optionally double-forks a daemon that leaves the tree,
//! then prints one line `ready pid=P children=C1,C2 daemon=D` on stdout and
//! sleeps until a signal ends it. `--ignore-term` makes every one of them ignore
//! SIGTERM. `--late-mib N --late-after-ms D`: D ms after the ready line, the
//! process allocates and touches N MiB more (a start-up that is not over when
//! it looks ready). `--snapshot-tree PID` prints the snapshot of a tree as JSON and exits
//! (used to read another user's processes without privilege).
//!
//! `--serve` is a shared "sidecar": it prints `ready pid=P`, then reads commands
//! on stdin, one per line: `add N` maps and touches a new N MiB region and
//! answers `added`, `drop` unmaps the newest region and answers `dropped`; it
//! exits at end of input.
//!
//! `--fork-hop` prints `ready pid=P`, then forks and exits in a loop, so the
//! running process has a new pid every moment: the case a stop that walks
//! `/proc` and then signals pids cannot catch. Instances that are regions of one process measure the
//! memory of the instance alone, without a process's own libraries.

use std::io::Write;

fn main() {
    let mut mib = 0usize;
    let mut children = 0usize;
    let mut daemon = false;
    let mut ignore_term = false;
    let mut late_mib = 0usize;
    let mut late_after_ms = 0usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut number = || -> usize {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| usage(&format!("{arg} needs a number")))
        };
        match arg.as_str() {
            "--mib" => mib = number(),
            "--children" => children = number(),
            "--late-mib" => late_mib = number(),
            "--late-after-ms" => late_after_ms = number(),
            "--daemon" => daemon = true,
            "--ignore-term" => ignore_term = true,
            "--serve" => serve(),
            "--fork-hop" => fork_hop(),
            "--snapshot-tree" => {
                let pid = u32::try_from(number()).unwrap_or_else(|_| usage("pid too large"));
                let snapshot = bench_proc::snapshot(&bench_proc::Selector::Tree(pid))
                    .unwrap_or_else(|error| fail(&error.to_string()));
                let json =
                    serde_json::to_string(&snapshot).unwrap_or_else(|e| fail(&e.to_string()));
                println!("{json}");
                return;
            }
            other => usage(&format!("unknown argument {other}")),
        }
    }

    if ignore_term {
        // SAFETY: setting a signal disposition to SIG_IGN has no preconditions.
        unsafe { libc::signal(libc::SIGTERM, libc::SIG_IGN) };
    }

    let region = Region::touched(mib);

    let mut child_pids = Vec::new();
    for _ in 0..children {
        match fork() {
            0 => sleep_forever(),
            pid => child_pids.push(pid),
        }
    }
    let daemon_pid = daemon.then(double_fork);

    let list: Vec<String> = child_pids.iter().map(i32::to_string).collect();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "ready pid={} children={} daemon={}",
        std::process::id(),
        list.join(","),
        daemon_pid.map_or_else(|| "-".to_string(), |pid| pid.to_string())
    );
    let _ = out.flush();
    drop(out);
    std::hint::black_box(&region);
    if late_mib > 0 {
        std::thread::sleep(std::time::Duration::from_millis(late_after_ms as u64));
        let late = Region::touched(late_mib);
        std::hint::black_box(&late);
        // The region stays mapped until the process ends.
        std::mem::forget(late);
    }
    sleep_forever()
}

/// An anonymous private mapping with every page written, so it is resident and
/// private until a fork shares it. mmap, not the allocator, so the size is exact
/// and unmapping gives it back at once.
struct Region {
    start: *mut libc::c_void,
    len: usize,
}

impl Region {
    fn touched(mib: usize) -> Region {
        let len = mib << 20;
        if len == 0 {
            return Region {
                start: std::ptr::null_mut(),
                len,
            };
        }
        // SAFETY: a fresh anonymous mapping; no existing memory is affected.
        let start = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if start == libc::MAP_FAILED {
            fail("mmap failed");
        }
        // SAFETY: `start..start+len` is the writable mapping made just above.
        unsafe { std::ptr::write_bytes(start.cast::<u8>(), 0xA5, len) };
        Region { start, len }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: unmaps exactly the mapping this region owns.
            unsafe { libc::munmap(self.start, self.len) };
        }
    }
}

fn serve() -> ! {
    let mut regions: Vec<Region> = Vec::new();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "ready pid={}", std::process::id());
    let _ = out.flush();
    for line in std::io::stdin().lines() {
        let Ok(line) = line else { break };
        let reply = match line.split_ascii_whitespace().collect::<Vec<_>>().as_slice() {
            ["add", n] => match n.parse() {
                Ok(mib) => {
                    regions.push(Region::touched(mib));
                    "added"
                }
                Err(_) => "error: add needs a number of MiB",
            },
            ["drop"] => match regions.pop() {
                Some(_) => "dropped",
                None => "error: nothing to drop",
            },
            _ => "error: unknown command",
        };
        let _ = writeln!(out, "{reply}");
        let _ = out.flush();
    }
    std::process::exit(0)
}

fn fork_hop() -> ! {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "ready pid={}", std::process::id());
    let _ = out.flush();
    drop(out);
    // Each generation inherits the deadline: a test killed before it stops the hopper
    // leaves it hopping for two minutes, not until the machine runs out of pids.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while std::time::Instant::now() < deadline {
        if fork() != 0 {
            // SAFETY: _exit ends this generation without running atexit
            // handlers; the child carries on.
            unsafe { libc::_exit(0) };
        }
    }
    std::process::exit(0)
}

/// fork(2); the fixture is single-threaded, so the child may run Rust code.
fn fork() -> i32 {
    let _ = std::io::stdout().flush();
    // SAFETY: the process is single-threaded here, so the child inherits no
    // lock held by another thread.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        fail("fork failed");
    }
    pid
}

/// The classic daemon: fork, the child starts a new session and forks again,
/// the middle process exits, so the grandchild is orphaned and re-parented (to
/// init, or to the nearest child subreaper). Returns the grandchild's pid.
fn double_fork() -> i32 {
    let mut fds = [0i32; 2];
    // SAFETY: `fds` is a valid array of two ints for pipe(2) to fill.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        fail("pipe failed");
    }
    let [read_end, write_end] = fds;
    let middle = fork();
    if middle == 0 {
        // SAFETY: setsid has no preconditions; failure (already a leader) is harmless.
        unsafe { libc::setsid() };
        let grandchild = fork();
        if grandchild == 0 {
            let pid = std::process::id().to_ne_bytes();
            // SAFETY: writes 4 bytes from a live buffer to our pipe's write end.
            unsafe { libc::write(write_end, pid.as_ptr().cast(), pid.len()) };
            sleep_forever();
        }
        // SAFETY: _exit ends the middle process without running atexit handlers
        // or flushing the parent's duplicated stdio buffers.
        unsafe { libc::_exit(0) };
    }
    let mut status = 0;
    // SAFETY: reaps our own child; `status` is a valid out pointer.
    unsafe { libc::waitpid(middle, &mut status, 0) };
    let mut buf = [0u8; 4];
    // SAFETY: reads at most 4 bytes into a live 4-byte buffer.
    let read = unsafe { libc::read(read_end, buf.as_mut_ptr().cast(), buf.len()) };
    if read != 4 {
        fail("daemon did not report its pid");
    }
    // SAFETY: closing the two pipe ends we own.
    unsafe {
        libc::close(read_end);
        libc::close(write_end);
    }
    i32::from_ne_bytes(buf)
}

fn sleep_forever() -> ! {
    loop {
        // SAFETY: pause(2) has no preconditions.
        unsafe { libc::pause() };
    }
}

fn usage(message: &str) -> ! {
    eprintln!("bench-proc-fixture: {message}");
    eprintln!(
        "usage: bench-proc-fixture [--mib N] [--children K] [--daemon] [--ignore-term] | --snapshot-tree PID"
    );
    std::process::exit(2)
}

fn fail(message: &str) -> ! {
    eprintln!("bench-proc-fixture: {message}");
    std::process::exit(1)
}
