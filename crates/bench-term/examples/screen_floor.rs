//! What bench-term's screen model costs per frame, against a real terminal's for the
//! same bytes: the floor of what watching a TUI can cost.
//!
//! A session watches every frame an agent draws: the PTY read, the VT100 emulation, and
//! the squashed text that the turn's checks search. Against a cheap agent (the demo, a
//! Python TUI that redraws 1.7 KB a frame) that is a large share of the agent's own CPU;
//! whether it is more than it must be is answered by a terminal that does the same job for
//! a person: tmux, detached (it parses into its grid and draws to no client).
//!
//! Each round replays one recorded stream of frames (ending each at a synchronized
//! update's end, `ESC [ ? 2026 l`) from a writer process, one frame per write with a pause
//! between, into:
//! - `parse`: a [`Terminal`] that only reads and emulates ([`Terminal::settle`]);
//! - `session`: a [`Terminal`] that also builds the squashed text of every frame and
//!   searches it, as a session's wait does ([`Terminal::wait_for_squashed`]);
//! - `tmux`: a pane of a detached tmux server of the same size.
//!
//! CPU is this process's own (`getrusage`, every thread; the writer is a child and not
//! counted) for the first two, the tmux server's (`/proc/PID/schedstat`, nanoseconds) for
//! the third, each less an idle round of the same length. Modes alternate round by round,
//! so drift of a shared machine hits them alike.
//!
//! Run with `scripts/screen-floor.py` (which writes the stream from the demo agent's own
//! drawing code), or `cargo run --release -p bench-term --example screen_floor -- STREAM
//! [ROUNDS] [PAUSE_US]`; `... -- --write STREAM PAUSE_US DONE_FILE` is the writer.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bench_term::{SpawnOptions, Terminal};

/// The end of a synchronized update: where the writer cuts the stream into frames.
const SYNC_END: &[u8] = b"\x1b[?2026l";
/// Screen size of every mode (the demo's classic 80x24).
const SIZE: (u16, u16) = (80, 24);
/// What the session mode searches for in every frame (absent: every frame is searched
/// to the end, the most a failing check costs).
const NEEDLE: &str = "Thisisnotonthescreen";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--write") {
        let [_, stream, pause, done] = &args[..] else {
            return Err("--write STREAM PAUSE_US DONE_FILE".into());
        };
        return write_frames(
            Path::new(stream),
            Duration::from_micros(pause.parse()?),
            Path::new(done),
        );
    }
    let stream = PathBuf::from(
        args.first()
            .ok_or("usage: screen_floor STREAM [ROUNDS] [PAUSE_US]")?,
    );
    let rounds: usize = args.get(1).map_or(Ok(5), |text| text.parse())?;
    let pause = Duration::from_micros(args.get(2).map_or(Ok(500), |text| text.parse())?);
    let bytes = std::fs::read(&stream)?;
    let frames = frames_of(&bytes).count();
    println!(
        "stream {}: {} frames, {} bytes ({:.0} bytes a frame), pause {} µs, {} rounds",
        stream.display(),
        frames,
        bytes.len(),
        bytes.len() as f64 / frames.max(1) as f64,
        pause.as_micros(),
        rounds
    );
    let exe = std::env::current_exe()?;
    let scratch = std::env::temp_dir().join(format!("screen-floor-{}", std::process::id()));
    std::fs::create_dir(&scratch)?;
    let mut per_frame: [Vec<f64>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for round in 0..rounds {
        for (index, mode) in ["parse", "session", "tmux"].iter().enumerate() {
            let done = scratch.join(format!("done-{round}-{mode}"));
            let cpu = match *mode {
                "tmux" => tmux_round(&exe, &stream, pause, &done, round)?,
                _ => terminal_round(&exe, &stream, pause, &done, *mode == "session")?,
            };
            per_frame[index].push(cpu.as_secs_f64() / frames.max(1) as f64);
        }
        println!(
            "round {}: parse {:.1} µs, session {:.1} µs, tmux {:.1} µs a frame",
            round + 1,
            per_frame[0][round] * 1e6,
            per_frame[1][round] * 1e6,
            per_frame[2][round] * 1e6
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
    for (mode, values) in ["parse", "session", "tmux"].iter().zip(&mut per_frame) {
        values.sort_by(f64::total_cmp);
        println!(
            "{mode:>8}: median {:.1} µs a frame (min {:.1}, max {:.1})",
            values[values.len() / 2] * 1e6,
            values[0] * 1e6,
            values[values.len() - 1] * 1e6
        );
    }
    Ok(())
}

/// The stream's frames: each ends at a synchronized update's end (the rest is one frame).
fn frames_of(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = bytes;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = memchr::memmem::find(rest, SYNC_END).map_or(rest.len(), |at| at + SYNC_END.len());
        let (frame, after) = rest.split_at(end);
        rest = after;
        Some(frame)
    })
}

/// The writer: each frame in one write, `pause` after it, then `done` is created and the
/// writer waits to be killed (so the terminal stays open while the reader finishes).
fn write_frames(
    stream: &Path,
    pause: Duration,
    done: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let bytes = std::fs::read(stream)?;
    let mut out = std::io::stdout().lock();
    for frame in frames_of(&bytes) {
        out.write_all(frame)?;
        out.flush()?;
        std::thread::sleep(pause);
    }
    std::fs::write(done, b"")?;
    std::thread::sleep(Duration::from_secs(600));
    Ok(())
}

/// This process's CPU time so far (user and system, every thread).
fn own_cpu() -> Duration {
    // SAFETY: getrusage writes one rusage into the zeroed struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// One round through a [`Terminal`]: the CPU the reading took, less what the same wall
/// time of idle waiting costs.
fn terminal_round(
    exe: &Path,
    stream: &Path,
    pause: Duration,
    done: &Path,
    search: bool,
) -> Result<Duration, Box<dyn std::error::Error>> {
    let options = SpawnOptions::new(exe)
        .args([
            "--write".into(),
            stream.as_os_str().to_owned(),
            pause.as_micros().to_string().into(),
            done.as_os_str().to_owned(),
        ])
        .env("TERM", "xterm-256color")
        .size(SIZE.0, SIZE.1);
    let started = Instant::now();
    let before = own_cpu();
    let mut terminal = Terminal::spawn(&options)?;
    let mut searched = 0u64;
    while !done.exists() {
        if search {
            // A check that never holds, so every frame is searched, as a turn's wait is
            // until its reply's end shows.
            let _ = terminal.wait_for_squashed(Duration::from_millis(100), &mut |text| {
                searched += 1;
                text.contains(NEEDLE)
            });
        } else {
            terminal.settle(Duration::from_millis(100))?;
        }
    }
    // What the writer wrote before it created the file is in the terminal: read it all.
    terminal.settle(Duration::from_millis(100))?;
    let used = own_cpu() - before;
    let wall = started.elapsed();
    drop(terminal);
    Ok(used.saturating_sub(idle_cost(wall)))
}

/// What waiting in poll for `wall` costs this process (timer wake-ups), measured.
fn idle_cost(wall: Duration) -> Duration {
    let before = own_cpu();
    let until = Instant::now() + wall.min(Duration::from_millis(300));
    while Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
    }
    let spent = own_cpu() - before;
    // Scaled to the round's length.
    spent.mul_f64(wall.as_secs_f64() / wall.min(Duration::from_millis(300)).as_secs_f64().max(1e-9))
}

/// One round through tmux: a fresh detached server whose one pane runs the writer; its
/// CPU from the moment the pane starts until the writer is done and the tail is read,
/// less an idle server's over the same time.
fn tmux_round(
    exe: &Path,
    stream: &Path,
    pause: Duration,
    done: &Path,
    round: usize,
) -> Result<Duration, Box<dyn std::error::Error>> {
    let socket = format!("screen-floor-{}-{round}", std::process::id());
    let tmux = |args: &[&str]| -> Result<String, Box<dyn std::error::Error>> {
        let output = Command::new("tmux")
            .args(["-L", &socket, "-f", "/dev/null"])
            .args(args)
            .stdin(Stdio::null())
            .output()?;
        if !output.status.success() {
            return Err(
                format!("tmux {args:?}: {}", String::from_utf8_lossy(&output.stderr)).into(),
            );
        }
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    };
    let (cols, rows) = (SIZE.0.to_string(), SIZE.1.to_string());
    tmux(&["new-session", "-d", "-x", &cols, "-y", &rows, "sleep 600"])?;
    let server: u32 = tmux(&["display-message", "-p", "#{pid}"])?.parse()?;
    let writer = format!(
        "'{}' --write '{}' {} '{}'",
        exe.display(),
        stream.display(),
        pause.as_micros(),
        done.display()
    );
    let idle_before = server_cpu(server)?;
    std::thread::sleep(Duration::from_millis(300));
    let idle = server_cpu(server)? - idle_before;
    let started = Instant::now();
    let before = server_cpu(server)?;
    tmux(&["respawn-pane", "-k", &writer])?;
    while !done.exists() {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(100));
    let used = server_cpu(server)? - before;
    let wall = started.elapsed();
    let _ = tmux(&["kill-server"]);
    Ok(used.saturating_sub(idle.mul_f64(wall.as_secs_f64() / 0.3)))
}

/// A process's time on a CPU so far, to the nanosecond (`/proc/PID/schedstat`).
fn server_cpu(pid: u32) -> Result<Duration, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/schedstat"))?;
    let nanos: u64 = text
        .split_whitespace()
        .next()
        .ok_or("empty schedstat")?
        .parse()?;
    Ok(Duration::from_nanos(nanos))
}
