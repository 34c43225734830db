//! A small full-screen program for bench-term's tests and latency benchmark.
//!
//! It behaves like an agent CLI at start-up, as far as flags ask it to:
//!
//! ```text
//! bench-term-fixture-tui [FLAGS]
//!   --banner TEXT          the first line it paints (default "fixture tui")
//!   --raw-delay-ms N       wait N ms before entering raw mode
//!   --ask-dsr              ask the cursor position (DSR 6) and refuse to go on without an answer
//!   --ask-queries          ask DA1, DA2, kitty keyboard, DECRQM 2026/2004, 14t, 16t, 18t,
//!                          OSC 10/11, XTVERSION, each written one byte at a time; print the answers
//!   --sync                 paint every frame inside a synchronized update (mode 2026)
//!   --sync-ghost TEXT      inside one synchronized update, show TEXT for 300 ms, then erase it
//!   --echo                 echo typed input at the cursor (Backspace/DEL erases)
//!   --echo-limit N         with --echo, show at most N characters of a line (drop the rest)
//!   --kitty FLAGS          push kitty keyboard flags (CSI > FLAGS u) after entering raw mode
//!   --spawn-child          start a background child that sleeps (stays in the session)
//!   --never-ready          paint, then never enter raw mode
//!   --exit-early CODE      paint, then exit with CODE before entering raw mode
//!   --ignore-ctrl-c        do not quit on Ctrl-C
//!   --leave-raw-after MS   MS ms after painting the prompt, go back to cooked mode (ICANON,
//!                          ECHO and ISIG on) and stop reading input: the kernel echoes keys now
//!   --cooked-for MS        with --leave-raw-after: enter raw mode again after MS ms and carry on,
//!                          echoing (with --echo) only from then on, like a program that runs a
//!                          subprocess before it becomes interactive (without it, it stays in
//!                          cooked mode until a signal ends it)
//!   --cooked-before-exit CODE
//!                          with --leave-raw-after: exit with CODE 300 ms after restoring cooked mode
//!   --ready-marker         print "READY <ns>" with CLOCK_MONOTONIC ns just before writing it
//!   --flood BYTES          before the ready marker, write BYTES of coloured, partly non-ASCII
//!                          log lines at once, as an agent CLI replaying a long session does
//!   --echo-stamps FILE     append the CLOCK_MONOTONIC ns of every echo write to FILE
//!   --slow-quit MS         on Ctrl-C, go back to cooked mode, then stay silent for MS ms
//!                          before exiting with 0, as a TUI that saves its state on the way out
//!   --dialog               first show a folder-trust dialog ("Do you trust the files in this
//!                          folder? 1. Yes 2. No") with a text box that echoes letters, as
//!                          gemini-cli's dialogs do; a digit or Enter is taken as the choice
//!                          ("trusted: 1") and only then the real prompt is drawn
//! ```
//!
//! Ctrl-C (0x03; only `CSI 99;5u` once `--kitty` turned on flag 1) quits with status 0.

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::termios::{LocalModes, OptionalActions};
use std::io::Write;
use std::time::{Duration, Instant};

#[derive(Default)]
struct Flags {
    banner: String,
    raw_delay_ms: u64,
    ask_dsr: bool,
    ask_queries: bool,
    sync: bool,
    sync_ghost: Option<String>,
    echo: bool,
    echo_limit: Option<usize>,
    kitty: Option<u32>,
    spawn_child: bool,
    never_ready: bool,
    exit_early: Option<i32>,
    ignore_ctrl_c: bool,
    leave_raw_after_ms: Option<u64>,
    cooked_for_ms: Option<u64>,
    cooked_before_exit: Option<i32>,
    ready_marker: bool,
    flood_bytes: usize,
    echo_stamps: Option<String>,
    sleep_forever: bool,
    dialog: bool,
    slow_quit_ms: Option<u64>,
}

fn parse() -> Flags {
    let mut flags = Flags {
        banner: "fixture tui".into(),
        ..Flags::default()
    };
    let mut args = std::env::args().skip(1);
    let value = |name: &str, args: &mut dyn Iterator<Item = String>| {
        args.next()
            .unwrap_or_else(|| fail(&format!("{name} needs a value")))
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--banner" => flags.banner = value(&arg, &mut args),
            "--raw-delay-ms" => flags.raw_delay_ms = number(&value(&arg, &mut args)),
            "--ask-dsr" => flags.ask_dsr = true,
            "--ask-queries" => flags.ask_queries = true,
            "--sync" => flags.sync = true,
            "--sync-ghost" => flags.sync_ghost = Some(value(&arg, &mut args)),
            "--echo" => flags.echo = true,
            "--echo-limit" => flags.echo_limit = Some(number(&value(&arg, &mut args)) as usize),
            "--kitty" => flags.kitty = Some(number(&value(&arg, &mut args)) as u32),
            "--spawn-child" => flags.spawn_child = true,
            "--never-ready" => flags.never_ready = true,
            "--exit-early" => flags.exit_early = Some(number(&value(&arg, &mut args)) as i32),
            "--ignore-ctrl-c" => flags.ignore_ctrl_c = true,
            "--leave-raw-after" => {
                flags.leave_raw_after_ms = Some(number(&value(&arg, &mut args)));
            }
            "--cooked-for" => flags.cooked_for_ms = Some(number(&value(&arg, &mut args))),
            "--cooked-before-exit" => {
                flags.cooked_before_exit = Some(number(&value(&arg, &mut args)) as i32);
            }
            "--ready-marker" => flags.ready_marker = true,
            "--flood" => flags.flood_bytes = number(&value(&arg, &mut args)) as usize,
            "--echo-stamps" => flags.echo_stamps = Some(value(&arg, &mut args)),
            "--sleep-forever" => flags.sleep_forever = true,
            "--dialog" => flags.dialog = true,
            "--slow-quit" => flags.slow_quit_ms = Some(number(&value(&arg, &mut args))),
            other => fail(&format!("unknown flag {other}")),
        }
    }
    flags
}

fn fail(message: &str) -> ! {
    eprintln!("bench-term-fixture-tui: {message}");
    std::process::exit(2)
}

fn number(text: &str) -> u64 {
    text.parse()
        .unwrap_or_else(|_| fail(&format!("not a number: {text}")))
}

fn monotonic_ns() -> u128 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    now.tv_sec as u128 * 1_000_000_000 + now.tv_nsec as u128
}

fn out(bytes: &[u8]) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(bytes);
    let _ = stdout.flush();
}

/// About `bytes` bytes of log lines: colours, box drawing and multi-byte letters,
/// so that characters are split across the terminal's reads.
fn flood(bytes: usize) -> Vec<u8> {
    let mut text = Vec::with_capacity(bytes + 128);
    let mut line = 0u64;
    while text.len() < bytes {
        line += 1;
        let _ = write!(
            text,
            "\x1b[32m✓\x1b[0m step {line:06} │ résumé → naïve 🦀 \x1b[1mbuilding\x1b[0m crate {} of the workspace\r\n",
            line % 97
        );
    }
    text
}

/// Paints `body` as one frame, inside a synchronized update when asked.
fn frame(flags: &Flags, body: &str) {
    if flags.sync {
        out(format!("\x1b[?2026h{body}\x1b[?2026l").as_bytes());
    } else {
        out(body.as_bytes());
    }
}

/// Reads what arrives on stdin within `timeout`.
fn read_input(timeout: Duration) -> Vec<u8> {
    let stdin = std::io::stdin();
    let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
    let spec = Timespec {
        tv_sec: timeout.as_secs() as i64,
        tv_nsec: i64::from(timeout.subsec_nanos()),
    };
    match rustix::event::poll(&mut fds, Some(&spec)) {
        Ok(n) if n > 0 => {
            let mut buffer = [0u8; 4096];
            match rustix::io::read(&stdin, &mut buffer) {
                Ok(0) | Err(_) => std::process::exit(0),
                Ok(count) => buffer[..count].to_vec(),
            }
        }
        _ => Vec::new(),
    }
}

/// Writes `query` one byte at a time (so the terminal sees it split across reads)
/// and reads the answer until `complete` says it is whole; exits if none comes.
/// Keys typed meanwhile (everything before the answer's ESC) go to `typed`, to be
/// handled like any other input once start-up is over, as a real TUI does.
fn ask(query: &[u8], complete: impl Fn(&[u8]) -> bool, typed: &mut Vec<u8>) -> Vec<u8> {
    for byte in query {
        out(&[*byte]);
        std::thread::sleep(Duration::from_millis(2));
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut answer: Vec<u8> = Vec::new();
    while !complete(&answer) {
        if Instant::now() >= deadline {
            out(format!(
                "\r\nno answer to {:?}; refusing to continue\r\n",
                escape(query)
            )
            .as_bytes());
            std::process::exit(3);
        }
        for byte in read_input(Duration::from_millis(50)) {
            if (answer.is_empty() && byte != 0x1b) || complete(&answer) {
                typed.push(byte);
            } else {
                answer.push(byte);
            }
        }
    }
    answer
}

/// Says whether an answer is whole.
type Complete = Box<dyn Fn(&[u8]) -> bool>;

fn escape(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .replace('\x1b', "^[")
        .replace('\x07', "^G")
}

fn set_raw(raw: bool) {
    let stdin = std::io::stdin();
    let Ok(mut termios) = rustix::termios::tcgetattr(&stdin) else {
        fail("stdin is not a terminal")
    };
    if raw {
        termios
            .local_modes
            .remove(LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG);
    } else {
        termios
            .local_modes
            .insert(LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG);
    }
    if rustix::termios::tcsetattr(&stdin, OptionalActions::Now, &termios).is_err() {
        fail("cannot set terminal modes");
    }
}

/// Goes back to cooked mode without reading input, as a program that restores the
/// terminal before it exits (or while it runs a subprocess) does; meanwhile the
/// kernel's line discipline echoes whatever is typed.
fn leave_raw(flags: &Flags) {
    set_raw(false);
    if let Some(code) = flags.cooked_before_exit {
        std::thread::sleep(Duration::from_millis(300));
        std::process::exit(code);
    }
    match flags.cooked_for_ms {
        Some(ms) => {
            std::thread::sleep(Duration::from_millis(ms));
            set_raw(true);
        }
        // Ctrl-C reaches it as SIGINT in cooked mode, which ends it.
        None => loop {
            std::thread::sleep(Duration::from_secs(3600));
        },
    }
}

fn main() {
    let flags = parse();
    if flags.sleep_forever {
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    if flags.spawn_child {
        let exe = std::env::current_exe().unwrap_or_else(|_| fail("no current exe"));
        let child = std::process::Command::new(exe)
            .arg("--sleep-forever")
            .stdin(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| fail(&format!("cannot spawn child: {e}")));
        // The child outlives us on purpose: close() must find and stop it.
        std::mem::forget(child);
    }
    frame(&flags, &format!("\x1b[2J\x1b[H{}\r\n", flags.banner));

    if let Some(ghost) = &flags.sync_ghost {
        out(format!("\x1b[?2026h\x1b[3;1H{ghost}").as_bytes());
        std::thread::sleep(Duration::from_millis(300));
        out(b"\x1b[3;1H\x1b[2K\x1b[?2026l");
    }
    if let Some(code) = flags.exit_early {
        out(format!("exiting early with {code}\r\n").as_bytes());
        std::process::exit(code);
    }
    if flags.never_ready {
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    std::thread::sleep(Duration::from_millis(flags.raw_delay_ms));
    set_raw(true);
    let mut typed = Vec::new();

    if flags.ask_dsr {
        let answer = ask(b"\x1b[6n", |a| a.ends_with(b"R"), &mut typed);
        frame(&flags, &format!("cursor report {}\r\n", escape(&answer)));
    }
    if flags.ask_queries {
        let csi_final = |last: u8| move |a: &[u8]| a.last() == Some(&last);
        let st = |a: &[u8]| a.ends_with(b"\x1b\\") || a.ends_with(b"\x07");
        let queries: Vec<(&str, &[u8], Complete)> = vec![
            ("da1", b"\x1b[c", Box::new(csi_final(b'c'))),
            ("da2", b"\x1b[>c", Box::new(csi_final(b'c'))),
            ("kitty", b"\x1b[?u", Box::new(csi_final(b'u'))),
            ("decrqm 2026", b"\x1b[?2026$p", Box::new(csi_final(b'y'))),
            ("decrqm 2004", b"\x1b[?2004$p", Box::new(csi_final(b'y'))),
            ("14t", b"\x1b[14t", Box::new(csi_final(b't'))),
            ("16t", b"\x1b[16t", Box::new(csi_final(b't'))),
            ("18t", b"\x1b[18t", Box::new(csi_final(b't'))),
            ("osc 10", b"\x1b]10;?\x1b\\", Box::new(st)),
            ("osc 11", b"\x1b]11;?\x07", Box::new(st)),
            ("xtversion", b"\x1b[>q", Box::new(st)),
            ("dsr 6", b"\x1b[6n", Box::new(csi_final(b'R'))),
        ];
        for (name, query, complete) in queries {
            let answer = ask(query, complete, &mut typed);
            frame(&flags, &format!("{name}: {}\r\n", escape(&answer)));
        }
    }
    if let Some(kitty) = flags.kitty {
        out(format!("\x1b[>{kitty}u").as_bytes());
    }
    if flags.flood_bytes > 0 {
        out(&flood(flags.flood_bytes));
    }
    if flags.ready_marker {
        let stamp = monotonic_ns();
        frame(&flags, &format!("READY {stamp}\r\n"));
    }
    let mut dialog_open = flags.dialog;
    if dialog_open {
        frame(
            &flags,
            "Do you trust the files in this folder?\r\n  1. Yes\r\n  2. No\r\n",
        );
    }
    frame(&flags, "> ");

    let stamps = flags.echo_stamps.as_ref().map(|path| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap_or_else(|e| fail(&format!("cannot open {path}: {e}")))
    });
    let mut stamps = stamps;
    // Characters typed on the current line, so that Backspace never erases the prompt.
    let mut line_len = 0usize;
    let mut echoing = flags.echo && flags.cooked_for_ms.is_none();
    let mut leave_raw_at = flags
        .leave_raw_after_ms
        .map(|ms| Instant::now() + Duration::from_millis(ms));
    loop {
        if let Some(at) = leave_raw_at
            && Instant::now() >= at
        {
            leave_raw_at = None;
            leave_raw(&flags);
            echoing = flags.echo;
        }
        let input = if typed.is_empty() {
            let wait = leave_raw_at.map_or(Duration::from_secs(3600), |at| {
                at.saturating_duration_since(Instant::now())
            });
            read_input(wait)
        } else {
            std::mem::take(&mut typed)
        };
        if input.is_empty() {
            continue;
        }
        // Under the kitty protocol's "disambiguate" flag a terminal sends Ctrl-C as
        // CSI 99;5u, never as 0x03; accepting only that form checks the encoding.
        let disambiguate = flags.kitty.is_some_and(|k| k & 1 != 0);
        let ctrl_c = if disambiguate {
            input.windows(7).any(|w| w == b"\x1b[99;5u")
        } else {
            input.contains(&0x03)
        };
        if ctrl_c && !flags.ignore_ctrl_c {
            set_raw(false);
            if let Some(ms) = flags.slow_quit_ms {
                std::thread::sleep(Duration::from_millis(ms));
                std::process::exit(0);
            }
            out(b"\r\nbye\r\n");
            std::process::exit(0);
        }
        if dialog_open
            && let Some(choice) = input.iter().find(|b| b.is_ascii_digit() || **b == b'\r')
        {
            // The dialog takes the key as its answer, as a real menu does.
            dialog_open = false;
            line_len = 0;
            let choice = if *choice == b'\r' { b'1' } else { *choice };
            frame(
                &flags,
                &format!(
                    "\x1b[2J\x1b[H{}\r\ntrusted: {}\r\n> ",
                    flags.banner,
                    char::from(choice)
                ),
            );
            continue;
        }
        if !echoing {
            continue;
        }
        let mut echo = String::new();
        for byte in input {
            match byte {
                0x7f | 0x08 if line_len > 0 => {
                    line_len -= 1;
                    echo.push_str("\x08 \x08");
                }
                b'\r' => {
                    line_len = 0;
                    echo.push_str("\r\n> ");
                }
                0x20..=0x7e if flags.echo_limit.is_none_or(|limit| line_len < limit) => {
                    line_len += 1;
                    echo.push(char::from(byte));
                }
                _ => {}
            }
        }
        if echo.is_empty() {
            continue;
        }
        let stamp = monotonic_ns();
        frame(&flags, &echo);
        if let Some(file) = &mut stamps {
            let _ = writeln!(file, "{stamp}");
        }
    }
}
