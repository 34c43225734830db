//! Terminal driving against the fixture TUI and real line-mode programs.

use bench_proc::Identity;
use bench_term::{
    DEFAULT_QUIT_KEYS, Ending, Key, QuitReaction, ReadyMode, SpawnOptions, Stage, TermError,
    Terminal,
};
use regex::Regex;
use std::cell::Cell;
use std::time::{Duration, Instant};

const FIXTURE: &str = env!("CARGO_BIN_EXE_bench-term-fixture-tui");
/// Generous: tests assert on what happens, never on how fast this machine is.
const TIMEOUT: Duration = Duration::from_secs(20);

fn fixture(flags: &[&str]) -> SpawnOptions {
    SpawnOptions::new(FIXTURE)
        .args(flags.iter().copied())
        .env("TERM", "xterm-256color")
        .size(80, 24)
}

fn spawn(flags: &[&str]) -> Terminal {
    Terminal::spawn(&fixture(flags)).expect("spawn the fixture")
}

fn line_mode(program: &str) -> SpawnOptions {
    SpawnOptions::new(program)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("TERM", "xterm-256color")
        .env("LANG", "C.UTF-8")
        .size(80, 24)
}

fn pattern(text: &str) -> ReadyMode {
    ReadyMode::Pattern(Regex::new(text).unwrap())
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|text| bench_proc::parse::parse_stat(&text))
        .is_some_and(|stat| !stat.is_zombie())
}

#[test]
fn probe_waits_for_raw_mode_and_leaves_the_input_clean() {
    let mut terminal = spawn(&["--echo", "--raw-delay-ms", "200"]);
    let ready = terminal.ready(&ReadyMode::Probe, TIMEOUT).unwrap();
    let timeline = terminal.timeline();
    assert_eq!(timeline.ready, Some(ready));
    let first_byte = timeline.first_byte.unwrap();
    let first_frame = timeline.first_frame.unwrap();
    assert!(
        first_byte <= first_frame && first_frame <= ready,
        "{timeline:?}"
    );
    assert!(ready <= timeline.ready_detected.unwrap(), "{timeline:?}");
    // The probe can only appear after the 200 ms the fixture spends in cooked mode.
    assert!(ready >= Duration::from_millis(200), "{timeline:?}");
    assert!(terminal.is_raw().unwrap());
    insta::assert_snapshot!(terminal.screen_text(), @r"
    fixture tui
    >
    ");
    assert_eq!(terminal.cursor(), (1, 2));
    let report = terminal.close().unwrap();
    assert_eq!(report.ending, Ending::Quit, "{report:?}");
    assert_eq!(report.status.unwrap().code(), Some(0));
}

#[test]
fn probe_works_when_every_frame_is_a_synchronized_update() {
    let mut terminal = spawn(&["--echo", "--sync"]);
    terminal.ready(&ReadyMode::Probe, TIMEOUT).unwrap();
    assert!(!terminal.in_sync());
    assert_eq!(terminal.screen_text(), "fixture tui\n>");
    terminal.close().unwrap();
}

#[test]
fn frames_inside_a_synchronized_update_never_count() {
    // The fixture shows "ghost marker" for 300 ms, but only inside an update that
    // ends with the text erased: a person never sees it.
    let mut terminal = spawn(&["--echo", "--sync-ghost", "ghost marker"]);
    let error = terminal
        .ready(&pattern("ghost marker"), Duration::from_secs(2))
        .unwrap_err();
    assert!(
        matches!(
            error,
            TermError::PatternTimeout { ref pattern, .. } if pattern == "ghost marker"
        ),
        "{error}"
    );
    terminal.ready(&ReadyMode::Probe, TIMEOUT).unwrap();
    terminal.close().unwrap();
}

#[test]
fn pattern_mode_matches_the_screen_text() {
    let mut terminal = spawn(&["--ready-marker"]);
    let ready = terminal.ready(&pattern(r"READY \d+"), TIMEOUT).unwrap();
    assert!(terminal.timeline().first_byte.unwrap() <= ready);
    assert!(
        Regex::new(r"READY \d+")
            .unwrap()
            .is_match(&terminal.screen_text())
    );
    terminal.close().unwrap();
}

#[test]
fn every_returned_moment_is_on_the_clock_of_spawn() {
    let mut terminal = spawn(&["--echo"]);
    let ready = terminal.ready(&ReadyMode::Probe, TIMEOUT).unwrap();
    // The prompt is already on the screen: the wait ends at once, and says when
    // that screen was read, not how long the call took.
    let shown = terminal
        .wait_for(&Regex::new("fixture tui").unwrap(), TIMEOUT)
        .unwrap();
    let first_byte = terminal.timeline().first_byte.unwrap();
    assert!(
        first_byte <= shown,
        "{shown:?} before the first byte {first_byte:?}"
    );
    assert!(shown <= terminal.elapsed());
    // Typed text shows after it was typed, on the same clock.
    let typed_at = terminal.elapsed();
    terminal.type_text("hello").unwrap();
    let echoed = terminal
        .wait_for(&Regex::new("> hello").unwrap(), TIMEOUT)
        .unwrap();
    assert!(
        ready <= typed_at && typed_at <= echoed,
        "{ready:?} {typed_at:?} {echoed:?}"
    );
    assert!(echoed <= terminal.elapsed());
    terminal.close().unwrap();
}

#[test]
fn first_frame_mode_is_the_first_line_with_three_letters() {
    let mut terminal = spawn(&["--banner", "ok", "--ready-marker"]);
    // "ok" alone is not a frame; "READY <ns>" is.
    let ready = terminal.ready(&ReadyMode::FirstFrame, TIMEOUT).unwrap();
    assert_eq!(terminal.timeline().first_frame, Some(ready));
    assert!(terminal.screen_text().contains("READY"));
    terminal.close().unwrap();
}

#[test]
fn stable_mode_reports_the_last_change() {
    // The program changes the screen twice, the second time only after it read a key
    // this test types once the first change was seen: so the second change is read
    // after the first however slow the machine is, and the moment reported must be
    // the second one's, a full quiet period before stable mode saw the quiet end.
    let mut terminal = Terminal::spawn(&line_mode("/bin/sh").args([
        "-c",
        "printf 'first change\\n'; read answer; printf 'second change\\n'; exec sleep 60",
    ]))
    .unwrap();
    let first = terminal.ready(&pattern("first change"), TIMEOUT).unwrap();
    terminal.type_text("\r").unwrap();
    let quiet = Duration::from_millis(300);
    let last = terminal.ready(&ReadyMode::Stable(quiet), TIMEOUT).unwrap();
    assert!(
        terminal.screen_text().contains("second change"),
        "{}",
        terminal.screen_text()
    );
    assert!(
        last > first,
        "stable reported {last:?}, the first change was at {first:?}"
    );
    let timeline = terminal.timeline();
    assert_eq!(timeline.ready, Some(last));
    let detected = timeline.ready_detected.unwrap();
    assert!(
        detected >= last + quiet,
        "stable saw the quiet end at {detected:?}, less than {quiet:?} after the change it reported ({last:?})"
    );
    terminal.close().unwrap();
}

#[test]
fn a_program_that_insists_on_a_cursor_report_gets_one() {
    let mut terminal = spawn(&["--ask-dsr", "--echo"]);
    terminal.ready(&ReadyMode::Probe, TIMEOUT).unwrap();
    // The query was written on row 2, column 1 (1-based), after the banner line.
    assert!(
        terminal.screen_text().contains("cursor report ^[[2;1R"),
        "{}",
        terminal.screen_text()
    );
    terminal.close().unwrap();
}

#[test]
fn start_up_queries_are_answered_even_when_written_byte_by_byte() {
    let mut terminal = spawn(&["--ask-queries", "--echo"]);
    terminal.ready(&ReadyMode::Probe, TIMEOUT).unwrap();
    insta::assert_snapshot!(terminal.screen_text());
    terminal.close().unwrap();
}

#[test]
fn a_program_that_never_enters_raw_mode_times_out_with_its_screen() {
    let mut terminal = spawn(&["--never-ready", "--banner", "still loading"]);
    let error = terminal
        .ready(&ReadyMode::Probe, Duration::from_millis(500))
        .unwrap_err();
    let TermError::Timeout { stage, screen, .. } = &error else {
        panic!("expected a timeout, got {error}");
    };
    assert_eq!(*stage, Stage::RawMode);
    assert_eq!(screen.0, "still loading");
    let message = error.to_string();
    assert!(message.contains("waiting for raw mode"), "{message}");
    assert!(message.contains("  | still loading"), "{message}");
    // In cooked mode Ctrl-C reaches it as SIGINT, which ends it.
    terminal.close().unwrap();
}

#[test]
fn a_program_that_never_echoes_times_out_waiting_for_the_probe() {
    let mut terminal = spawn(&[]);
    let error = terminal
        .ready(&ReadyMode::Probe, Duration::from_millis(500))
        .unwrap_err();
    assert!(
        matches!(
            error,
            TermError::ProbeTimeout {
                stage: Stage::ProbeEcho,
                whereabouts: bench_term::ProbeWhere {
                    cursor: (1, 2),
                    probe_seen: None,
                    origin: None
                },
                ..
            }
        ),
        "{error}"
    );
    terminal.close().unwrap();
}

#[test]
fn a_probe_shown_only_in_part_times_out_saying_where_it_was_seen() {
    // Only 10 of a probe's 13 letters are shown: its tag, never a whole probe.
    let mut terminal = spawn(&["--echo", "--echo-limit", "10"]);
    let error = terminal
        .ready(&ReadyMode::Probe, Duration::from_millis(500))
        .unwrap_err();
    assert!(
        matches!(
            error,
            TermError::ProbeTimeout {
                stage: Stage::ProbeEcho,
                whereabouts: bench_term::ProbeWhere {
                    probe_seen: Some((1, 2)),
                    origin: None,
                    ..
                },
                ..
            }
        ),
        "{error}"
    );
    terminal.close().unwrap();
}

/// The one-letter state of `pid` in `/proc`, `None` once it has been reaped.
fn state(pid: u32) -> Option<char> {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|text| bench_proc::parse::parse_stat(&text))
        .map(|stat| stat.state)
}

#[test]
fn an_exited_program_keeps_its_pid_until_close() {
    // Until close() has verified that nothing of the session is left, the leader's pid
    // (which is also the session and group id that close() signals) must not be free
    // for the kernel to hand to another process.
    let mut terminal = spawn(&["--exit-early", "7"]);
    let pid = terminal.pid();
    let error = terminal.ready(&ReadyMode::Probe, TIMEOUT).unwrap_err();
    assert!(matches!(error, TermError::Exited { .. }), "{error}");
    assert_eq!(
        state(pid),
        Some('Z'),
        "the exited leader is held as a zombie"
    );
    let report = terminal.close().unwrap();
    assert_eq!(report.status.and_then(|s| s.code()), Some(7));
    assert_eq!(state(pid), None, "close() reaps the leader");
}

#[test]
fn an_early_exit_reports_the_status_and_screen() {
    let mut terminal = spawn(&["--exit-early", "7"]);
    let error = terminal.ready(&ReadyMode::Probe, TIMEOUT).unwrap_err();
    let TermError::Exited {
        stage,
        exit,
        screen,
    } = &error
    else {
        panic!("expected an exit, got {error}");
    };
    assert_eq!(*stage, Stage::RawMode);
    assert_eq!(exit.0.and_then(|s| s.code()), Some(7));
    assert!(screen.0.contains("exiting early with 7"));
    assert!(error.to_string().contains("exit status: 7"), "{error}");
    let report = terminal.close().unwrap();
    assert_eq!(report.ending, Ending::Exited, "{report:?}");
}

#[test]
fn a_probe_echoed_by_the_kernel_in_cooked_mode_is_not_ready() {
    // The fixture never echoes: once it goes back to cooked mode, only the kernel's
    // line discipline shows what is typed, and that is no sign of a program reading.
    let mut terminal = spawn(&["--leave-raw-after", "300"]);
    let error = terminal
        .ready(&ReadyMode::Probe, Duration::from_secs(2))
        .unwrap_err();
    let TermError::Timeout { stage, screen, .. } = &error else {
        panic!("expected a timeout, got {error}");
    };
    assert_eq!(*stage, Stage::RawMode, "{error}");
    // The echoed probe was erased before going back to waiting for raw mode.
    assert_eq!(screen.0, "fixture tui\n>", "{error}");
    assert!(!terminal.is_raw().unwrap());
    // In cooked mode Ctrl-C reaches it as SIGINT, which ends it.
    terminal.close().unwrap();
}

#[test]
fn a_program_back_in_raw_mode_after_cooked_mode_is_ready_with_a_clean_screen() {
    // Raw but silent for 300 ms, cooked for 600 ms (the kernel echoes the probe),
    // then raw and echoing.
    let flags = ["--echo", "--leave-raw-after", "300", "--cooked-for", "600"];
    let mut terminal = spawn(&flags);
    let ready = terminal.ready(&ReadyMode::Probe, TIMEOUT).unwrap();
    assert!(
        ready >= Duration::from_millis(900),
        "{:?}",
        terminal.timeline()
    );
    assert!(terminal.is_raw().unwrap());
    assert_eq!(terminal.screen_text(), "fixture tui\n>");
    assert_eq!(terminal.cursor(), (1, 2));
    // What is typed now reaches the program, not a leftover line of the kernel.
    terminal.type_text("typed").unwrap();
    terminal
        .wait_for(&Regex::new("> typed").unwrap(), TIMEOUT)
        .unwrap();
    assert_eq!(terminal.screen_text(), "fixture tui\n> typed");
    terminal.close().unwrap();
}

#[test]
fn a_program_that_restores_cooked_mode_and_dies_is_an_exit_not_ready() {
    let mut terminal = spawn(&["--leave-raw-after", "300", "--cooked-before-exit", "5"]);
    let error = terminal.ready(&ReadyMode::Probe, TIMEOUT).unwrap_err();
    let TermError::Exited {
        stage,
        exit,
        screen,
    } = &error
    else {
        panic!("expected an exit, got {error}");
    };
    // It dies after the echoed probe was seen: while waiting for raw mode again,
    // or, when it is reaped before the check, at the echo itself.
    assert!(
        matches!(stage, Stage::RawMode | Stage::ProbeEcho),
        "{error}"
    );
    assert_eq!(exit.0.and_then(|s| s.code()), Some(5), "{error}");
    assert!(screen.0.starts_with("fixture tui"), "{error}");
    assert!(error.to_string().contains("exit status: 5"), "{error}");
    let report = terminal.close().unwrap();
    assert_eq!(report.ending, Ending::Exited, "{report:?}");
}

#[test]
fn close_stops_background_children_in_the_session() {
    let mut terminal = spawn(&["--spawn-child", "--echo"]);
    terminal.ready(&ReadyMode::Probe, TIMEOUT).unwrap();
    let members = terminal.session_processes();
    assert_eq!(members.len(), 2, "{members:?}");
    let report = terminal.close().unwrap();
    assert_eq!(report.ending, Ending::Quit, "{report:?}");
    for member in members {
        assert!(!alive(member.pid), "{member:?} survived");
    }
}

#[test]
fn close_kills_a_program_that_ignores_its_quit_keys() {
    let mut terminal = spawn(&["--echo", "--ignore-ctrl-c"]);
    terminal.ready(&ReadyMode::Probe, TIMEOUT).unwrap();
    let pid = terminal.pid();
    let report = terminal.close().unwrap();
    // It dies of the hang-up; on a loaded machine that may come after the short wait
    // for it, and then the kill is what close saw.
    assert!(
        matches!(report.ending, Ending::HungUp | Ending::Killed),
        "{report:?}"
    );
    // Ended: by the SIGHUP or the SIGKILL, or by exiting 0 itself when the hang-up made
    // its read fail first (the fixture exits on a failed read): the three race.
    assert!(report.status.is_some(), "{report:?}");
    assert!(!alive(pid));
}

#[test]
fn quit_keys_follow_the_kitty_keyboard_protocol() {
    // With kitty flag 1 the fixture only accepts Ctrl-C as CSI 99;5u.
    let mut terminal = spawn(&["--echo", "--kitty", "1"]);
    terminal.ready(&ReadyMode::Probe, TIMEOUT).unwrap();
    let report = terminal.close().unwrap();
    assert_eq!(report.ending, Ending::Quit, "{report:?}");
}

#[test]
fn transcripts_keep_output_input_and_the_final_screen() {
    let folder = tempfile::tempdir().unwrap();
    let options = fixture(&["--echo"]).transcript(folder.path().join("cold-0"));
    let mut terminal = Terminal::spawn(&options).unwrap();
    terminal.ready(&ReadyMode::Probe, TIMEOUT).unwrap();
    terminal.type_text("hi").unwrap();
    terminal
        .wait_for(&Regex::new("> hi").unwrap(), TIMEOUT)
        .unwrap();
    terminal.close().unwrap();
    let read = |name: &str| std::fs::read(folder.path().join("cold-0").join(name)).unwrap();
    let output = read(bench_term::OUTPUT_FILE);
    // The terminal's output processing (ONLCR) turns the fixture's "\r\n" into "\r\r\n".
    assert!(
        output.starts_with(b"\x1b[2J\x1b[Hfixture tui\r\r\n"),
        "{output:?}"
    );
    assert!(output.ends_with(b"bye\r\r\n"), "{output:?}");
    let input = read(bench_term::INPUT_FILE);
    // It quit on the first Ctrl-C: close pressed no other key.
    assert!(input.ends_with(b"hi\x03"), "{input:?}");
    assert_eq!(read(bench_term::SCREEN_FILE), b"fixture tui\n> hi\nbye\n");
}

#[test]
fn output_past_the_transcript_cap_is_a_clear_error() {
    let folder = tempfile::tempdir().unwrap();
    let mut options = fixture(&["--echo", "--banner", &"x".repeat(200)]).transcript(folder.path());
    options.transcript_limit_bytes = 64;
    let mut terminal = Terminal::spawn(&options).unwrap();
    let error = terminal.ready(&ReadyMode::Probe, TIMEOUT).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the program wrote more than 64 bytes, the transcript cap"
    );
    let _ = terminal.close();
    let output = std::fs::read(folder.path().join(bench_term::OUTPUT_FILE)).unwrap();
    assert_eq!(output.len(), 64);
}

#[test]
fn keystroke_latency_collects_one_sample_per_key() {
    let mut terminal = spawn(&["--echo"]);
    terminal.ready(&ReadyMode::Probe, TIMEOUT).unwrap();
    let samples = terminal.keystroke_latency(12).unwrap();
    assert_eq!(samples.len(), 12);
    assert!(samples.iter().all(|s| *s > Duration::ZERO));
    // Every word was erased again.
    assert_eq!(terminal.screen_text(), "fixture tui\n>");
    terminal.close().unwrap();
}

#[test]
fn bash_in_line_mode_is_ready_by_pattern() {
    let options = line_mode("bash")
        .args(["--norc", "--noprofile", "-i"])
        .env("PS1", "bench$ ");
    let mut terminal = Terminal::spawn(&options).unwrap();
    terminal.ready(&pattern(r"bench\$"), TIMEOUT).unwrap();
    terminal.type_text("echo $((6 * 7))\n").unwrap();
    terminal
        .wait_for(&Regex::new(r"(?m)^42$").unwrap(), TIMEOUT)
        .unwrap();
    terminal.send_keys(&[Key::Ctrl('d')]).unwrap();
    terminal.settle(Duration::from_millis(50)).unwrap();
    terminal.close().unwrap();
}

#[test]
fn python_in_line_mode_is_ready_by_pattern() {
    let mut terminal = Terminal::spawn(&line_mode("python3")).unwrap();
    terminal.ready(&pattern(r"(?m)^>>> ?$"), TIMEOUT).unwrap();
    terminal.type_text("print(6 * 7)\n").unwrap();
    terminal
        .wait_for(&Regex::new(r"(?m)^42$").unwrap(), TIMEOUT)
        .unwrap();
    terminal.close().unwrap();
}

/// The first python3 on the test PATH, or `None` (after saying SKIPPED) without one.
fn python3() -> Option<std::path::PathBuf> {
    let found = "/usr/local/bin:/usr/bin:/bin"
        .split(':')
        .map(|folder| std::path::Path::new(folder).join("python3"))
        .find(|path| path.is_file());
    if found.is_none() {
        eprintln!("SKIPPED: no python3 on /usr/local/bin:/usr/bin:/bin");
    }
    found
}

#[test]
fn a_python_repl_quits_on_the_default_keys_without_a_hang_up() {
    let Some(python) = python3() else { return };
    // The wait for each key's reaction ends on the first output, so a long one costs
    // nothing where Python answers at once; with the default 100 ms, a busy machine (CI
    // beside other builds) let Python answer the first Ctrl-C after the next key was
    // pressed, and which key got the "Output" reaction was a matter of luck.
    let options = line_mode(&python.to_string_lossy()).quit_reaction_wait(TIMEOUT);
    let mut terminal = Terminal::spawn(&options).unwrap();
    terminal.ready(&pattern(r"(?m)^>>> ?$"), TIMEOUT).unwrap();
    let report = terminal.close().unwrap();
    // Ctrl-C answers with a new prompt; Ctrl-D on that empty line ends it.
    assert_eq!(report.ending, Ending::Quit, "{report:?}");
    assert_eq!(report.status.unwrap().code(), Some(0), "{report:?}");
    let keys: Vec<Key> = report.quit.iter().map(|step| step.key).collect();
    assert_eq!(keys, DEFAULT_QUIT_KEYS, "{report:?}");
    assert_eq!(report.quit[0].reaction, QuitReaction::Output, "{report:?}");
    // Pressed in order, on the terminal's clock.
    assert!(
        report
            .quit
            .windows(2)
            .all(|w| w[0].pressed_at <= w[1].pressed_at)
    );
    let screen = terminal.screen_text();
    assert!(screen.contains("KeyboardInterrupt"), "{screen}");
}

#[test]
fn the_default_keys_stop_once_a_tui_gives_the_terminal_back() {
    // The fixture leaves raw mode on Ctrl-C and takes a while to exit: a second
    // Ctrl-C would reach the cooked terminal as SIGINT and kill it mid-way.
    let quiet_ms = (bench_term::QUIT_QUIET * 2).as_millis().to_string();
    let options =
        fixture(&["--echo", "--slow-quit", &quiet_ms]).quit_grace(Duration::from_secs(20));
    let mut terminal = Terminal::spawn(&options).unwrap();
    terminal.ready(&ReadyMode::Probe, TIMEOUT).unwrap();
    let report = terminal.close().unwrap();
    assert_eq!(report.ending, Ending::Quit, "{report:?}");
    assert_eq!(report.status.unwrap().code(), Some(0), "{report:?}");
    assert_eq!(report.quit.len(), 1, "{report:?}");
    assert_eq!(
        report.quit[0].reaction,
        QuitReaction::LeftRawMode,
        "{report:?}"
    );
}

#[test]
fn the_environment_is_exactly_what_was_given() {
    let options = SpawnOptions::new("/usr/bin/env").env("ONLY", "this");
    let mut terminal = Terminal::spawn(&options).unwrap();
    terminal
        .settle_quiet(Duration::from_millis(200), TIMEOUT)
        .unwrap();
    assert_eq!(terminal.screen_text(), "ONLY=this");
    terminal.close().unwrap();
}

#[test]
fn the_working_directory_is_set() {
    let folder = tempfile::tempdir().unwrap();
    let options = SpawnOptions::new("/bin/pwd").cwd(folder.path());
    let mut terminal = Terminal::spawn(&options).unwrap();
    let real = std::fs::canonicalize(folder.path()).unwrap();
    terminal
        .wait_for(
            &Regex::new(&regex::escape(&real.to_string_lossy())).unwrap(),
            TIMEOUT,
        )
        .unwrap();
    terminal.close().unwrap();
}

#[test]
fn the_program_has_a_controlling_terminal_in_its_own_session() {
    // The shell reads its own session and tty from /proc; `tty` names the terminal.
    let options = SpawnOptions::new("/bin/sh").args([
        "-c",
        "read -r _ _ _ _ pgrp sid tty _ < /proc/self/stat; echo \"pid=$$ pgrp=$pgrp sid=$sid tty=$tty\"; tty",
    ]);
    let mut terminal = Terminal::spawn(&options).unwrap();
    terminal
        .settle_quiet(Duration::from_millis(200), TIMEOUT)
        .unwrap();
    let pid = terminal.pid();
    let text = terminal.screen_text();
    assert!(text.contains(&format!("sid={pid}")), "{text}");
    assert!(!text.contains("tty=0 "), "{text}");
    assert!(text.contains("/dev/pts/"), "{text}");
    terminal.close().unwrap();
}

#[test]
fn the_program_runs_as_the_given_user() {
    if !rustix::process::geteuid().is_root() {
        bench_core::skip_test!("changing user needs root");
    }
    let options = SpawnOptions::new("/usr/bin/id")
        .cwd("/")
        .user(Identity::new(65534, 65534).with_groups([65534, 4242]));
    let mut terminal = Terminal::spawn(&options).unwrap();
    terminal
        .settle_quiet(Duration::from_millis(200), TIMEOUT)
        .unwrap();
    let text = terminal.screen_text();
    assert!(text.starts_with("uid=65534"), "{text}");
    assert!(text.contains("gid=65534"), "{text}");
    assert!(text.contains("4242"), "{text}");
    assert!(!text.contains("(root)"), "{text}");
    terminal.close().unwrap();
}

#[test]
fn a_missing_program_is_a_spawn_error() {
    let error = Terminal::spawn(&SpawnOptions::new("/nonexistent/program")).unwrap_err();
    assert!(matches!(error, TermError::Spawn { .. }), "{error}");
}

/// A program whose screen changes every 50 ms, forever.
fn ticking() -> SpawnOptions {
    SpawnOptions::new("/bin/sh")
        .args([
            "-c",
            "i=0; while :; do i=$((i+1)); echo \"tick $i\"; sleep 0.05; done",
        ])
        .size(80, 24)
}

#[test]
fn a_screen_that_keeps_changing_is_never_stable() {
    let mut terminal = Terminal::spawn(&ticking()).unwrap();
    let error = terminal
        .ready(
            &ReadyMode::Stable(Duration::from_millis(500)),
            Duration::from_millis(1500),
        )
        .unwrap_err();
    let TermError::Timeout { stage, screen, .. } = &error else {
        panic!("expected a timeout, got {error}");
    };
    assert_eq!(*stage, Stage::Stable);
    assert!(screen.0.contains("tick "), "{error}");
    terminal.close().unwrap();
}

#[test]
fn output_that_never_stops_is_never_quiet() {
    let mut terminal = Terminal::spawn(&ticking()).unwrap();
    let error = terminal
        .settle_quiet(Duration::from_millis(500), Duration::from_millis(1500))
        .unwrap_err();
    assert!(
        matches!(
            error,
            TermError::Timeout {
                stage: Stage::Quiet,
                ..
            }
        ),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .contains("waiting for the output to go quiet"),
        "{error}"
    );
    terminal.close().unwrap();
}

#[test]
fn wait_for_times_out_with_the_screen() {
    let mut terminal = spawn(&["--echo"]);
    terminal.ready(&ReadyMode::Probe, TIMEOUT).unwrap();
    let error = terminal
        .wait_for(
            &Regex::new("never shown").unwrap(),
            Duration::from_millis(300),
        )
        .unwrap_err();
    insta::assert_snapshot!(
        // The exact wording of durations is pinned by error.rs's unit tests.
        Regex::new(r"after [0-9.]+ (ms|s) ")
            .unwrap()
            .replace(&error.to_string(), "after [duration] "),
        @r"
    timed out after [duration] waiting for the screen to match; last screen:
      | fixture tui
      | >
    "
    );
    terminal.close().unwrap();
}

#[test]
fn dropping_without_close_kills_the_session() {
    let terminal = Terminal::spawn(&ticking()).unwrap();
    let pid = terminal.pid();
    drop(terminal);
    assert!(!alive(pid));
}

#[test]
fn close_reports_how_a_killed_program_ended() {
    // Deaf to Ctrl-C and to the hang-up: only SIGKILL ends it.
    let options = SpawnOptions::new("/bin/sh").args([
        "-c",
        "trap '' INT HUP; echo deaf; while :; do sleep 0.05; done",
    ]);
    let mut terminal = Terminal::spawn(&options).unwrap();
    terminal
        .wait_for(&Regex::new("deaf").unwrap(), TIMEOUT)
        .unwrap();
    let report = terminal.close().unwrap();
    assert_eq!(report.ending, Ending::Killed, "{report:?}");
    let status = report.status.expect("the exit status is known");
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );
}

#[test]
fn the_probe_does_not_answer_a_dialog_and_the_dialog_fails_the_start() {
    let mut terminal = spawn(&["--echo", "--dialog"]);
    let error = terminal.ready(&ReadyMode::Probe, TIMEOUT).unwrap_err();
    assert!(
        matches!(&error, TermError::Blocked { blocked: bench_term::Blocked::Dialog(hit), .. } if hit.name == "folder trust"),
        "{error}"
    );
    // The dialog is still open: no key of the probe was taken as a choice.
    insta::assert_snapshot!(error.to_string(), @r#"
    blocked by a dialog (folder trust: "Do you trust the files in this folder?"); if it is expected, allow dialogs (ready_allow_dialog, --allow-dialog) or require a pattern that matches that line; the screen at ready:
      | fixture tui
      | Do you trust the files in this folder?
      |   1. Yes
      |   2. No
      | >
    "#);
    assert_eq!(
        terminal.ready_screen(),
        Some(terminal.screen_text().as_str())
    );
    assert!(terminal.timeline().ready.is_some());
    // The fixture does take a digit as the answer, so a probe with digits would
    // have been "ready" at the real prompt behind the dialog.
    terminal.type_text("1").unwrap();
    terminal
        .wait_for(&Regex::new("trusted: 1").unwrap(), TIMEOUT)
        .unwrap();
    terminal.close().unwrap();
}

#[test]
fn a_dialog_the_guard_allows_is_ready_with_the_dialog_still_open() {
    let mut terminal = spawn(&["--echo", "--dialog"]);
    let guard = bench_term::ReadyGuard {
        allow_dialog: true,
        ..Default::default()
    };
    terminal
        .ready_guarded(&ReadyMode::Probe, TIMEOUT, &guard)
        .unwrap();
    assert!(terminal.screen_text().contains("Do you trust the files"));
    assert!(!terminal.screen_text().contains("trusted:"));
    terminal.close().unwrap();
}

#[test]
fn ready_require_and_reject_judge_the_screen_at_ready() {
    let mut terminal = spawn(&["--echo", "--banner", "update available"]);
    let guard = bench_term::ReadyGuard {
        reject: vec![Regex::new("update available").unwrap()],
        ..Default::default()
    };
    let error = terminal
        .ready_guarded(&ReadyMode::Probe, TIMEOUT, &guard)
        .unwrap_err();
    insta::assert_snapshot!(error.to_string(), @r"
    blocked by: update available; the screen at ready:
      | update available
      | >
    ");
    terminal.close().unwrap();

    let mut terminal = spawn(&["--echo"]);
    let guard = bench_term::ReadyGuard {
        require: Some(Regex::new("^welcome").unwrap()),
        ..Default::default()
    };
    let error = terminal
        .ready_guarded(&ReadyMode::Probe, TIMEOUT, &guard)
        .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("the screen at ready does not match the required ^welcome"),
        "{error}"
    );
    terminal.close().unwrap();
}

#[test]
fn a_required_prompt_ending_in_a_blank_matches_as_the_ready_pattern_does() {
    // The fixture's prompt is "> ": the pattern sees its blank, and so must the guard.
    let prompt = Regex::new(r"(?m)^>.$").unwrap();
    let mut terminal = spawn(&["--echo"]);
    let guard = bench_term::ReadyGuard {
        require: Some(prompt.clone()),
        ..Default::default()
    };
    terminal
        .ready_guarded(&ReadyMode::Pattern(prompt.clone()), TIMEOUT, &guard)
        .unwrap();
    terminal.close().unwrap();
    let mut terminal = spawn(&["--echo"]);
    terminal
        .ready_guarded(&ReadyMode::Probe, TIMEOUT, &guard)
        .unwrap();
    terminal.close().unwrap();
}

#[test]
fn a_program_that_ignores_its_quit_keys_is_hung_up_without_waiting_the_grace() {
    // A grace far longer than close() needs: it must not wait it out.
    let options = fixture(&["--echo", "--ignore-ctrl-c"]).quit_grace(Duration::from_secs(60));
    let mut terminal = Terminal::spawn(&options).unwrap();
    terminal.ready(&ReadyMode::Probe, TIMEOUT).unwrap();
    let report = terminal.close().unwrap();
    // It dies of the hang-up; on a loaded machine that may come after the short wait
    // for it, and then the kill is what close saw.
    assert!(
        matches!(report.ending, Ending::HungUp | Ending::Killed),
        "{report:?}"
    );
    assert!(report.took < Duration::from_secs(60), "{report:?}");
    // Every key was tried; none ended it.
    assert_eq!(report.quit.len(), DEFAULT_QUIT_KEYS.len(), "{report:?}");
    assert_ne!(report.quit[2].reaction, QuitReaction::Exited, "{report:?}");
    // Ended by the hang-up: SIGHUP, the SIGKILL after it, or its own exit when the
    // hang-up made its read fail first (the fixture exits 0 on a failed read).
    assert!(report.status.is_some(), "{report:?}");
}

#[test]
fn the_recording_replays_the_output_with_the_ready_moment_marked() {
    use bench_term::asciicast::{Code, Recording};
    let folder = tempfile::tempdir().unwrap();
    let options = fixture(&["--echo", "--banner", "héllo → wörld"]).transcript(folder.path());
    let mut terminal = Terminal::spawn(&options).unwrap();
    let ready = terminal.ready(&ReadyMode::Probe, TIMEOUT).unwrap();
    terminal.close().unwrap();
    let cast = std::fs::read_to_string(folder.path().join(bench_term::CAST_FILE)).unwrap();
    let recording = Recording::parse(&cast).unwrap();
    assert_eq!(recording.header.version, 2);
    assert_eq!((recording.header.width, recording.header.height), (80, 24));
    assert_eq!(
        recording.header.env.get("TERM").map(String::as_str),
        Some("xterm-256color")
    );
    assert!(
        recording.events.windows(2).all(|w| w[0].at <= w[1].at),
        "times go back"
    );
    let marker = recording.marker(bench_term::READY_MARKER).unwrap();
    // The file keeps microseconds.
    assert!(
        marker.abs_diff(ready) <= Duration::from_micros(1),
        "{marker:?} {ready:?}"
    );
    let raw = std::fs::read(folder.path().join(bench_term::OUTPUT_FILE)).unwrap();
    assert_eq!(recording.output().as_bytes(), raw.as_slice());
    let typed: String = recording
        .events
        .iter()
        .filter(|e| e.code == Code::Input)
        .map(|e| e.data.as_str())
        .collect();
    let input = std::fs::read(folder.path().join(bench_term::INPUT_FILE)).unwrap();
    assert_eq!(typed.as_bytes(), input.as_slice());
    let at_ready =
        std::fs::read_to_string(folder.path().join(bench_term::READY_SCREEN_FILE)).unwrap();
    assert_eq!(at_ready, "héllo → wörld\n>\n");
}

#[test]
fn a_long_recording_keeps_characters_whole_across_reads() {
    use bench_term::asciicast::{Code, Recording};
    let folder = tempfile::tempdir().unwrap();
    // 256 KiB of lines with 2-, 3- and 4-byte characters: far more than one read,
    // so reads end inside characters.
    let options = fixture(&["--flood", "262144", "--ready-marker"]).transcript(folder.path());
    let mut terminal = Terminal::spawn(&options).unwrap();
    terminal.ready(&pattern("READY"), TIMEOUT).unwrap();
    terminal.close().unwrap();
    let raw = std::fs::read(folder.path().join(bench_term::OUTPUT_FILE)).unwrap();
    assert!(raw.len() > 262_144);
    let cast = std::fs::read_to_string(folder.path().join(bench_term::CAST_FILE)).unwrap();
    let recording = Recording::parse(&cast).unwrap();
    let outputs = recording
        .events
        .iter()
        .filter(|e| e.code == Code::Output)
        .count();
    assert!(outputs > 1, "one read: nothing was split");
    assert_eq!(recording.output().as_bytes(), raw.as_slice());
    assert!(!recording.output().contains('\u{FFFD}'));
}

#[test]
fn a_program_that_quits_slowly_after_leaving_raw_mode_is_not_hung_up() {
    // Silent for three times QUIT_QUIET after it gave the terminal back, within the grace.
    let quiet_ms = (bench_term::QUIT_QUIET * 3).as_millis().to_string();
    // One Ctrl-C: a second one would reach the now cooked terminal as SIGINT.
    let options = fixture(&["--echo", "--slow-quit", &quiet_ms])
        .quit_keys(vec![Key::Ctrl('c')])
        .quit_grace(Duration::from_secs(20));
    let mut terminal = Terminal::spawn(&options).unwrap();
    terminal.ready(&ReadyMode::Probe, TIMEOUT).unwrap();
    let report = terminal.close().unwrap();
    assert_eq!(report.ending, Ending::Quit, "{report:?}");
    assert_eq!(report.status.unwrap().code(), Some(0), "{report:?}");
}

#[test]
fn a_drained_terminal_keeps_a_chatty_program_running_while_nobody_calls_it() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("wrote-everything");
    // 512 KiB is far more than a PTY buffers: unread, the writer would block forever.
    let script = format!(
        "head -c 524288 /dev/zero | tr '\\0' x; touch {}; sleep 60",
        marker.display()
    );
    let terminal = Terminal::spawn(&line_mode("sh").args(["-c", &script])).unwrap();
    let drained = bench_term::Drained::start(terminal);
    let deadline = std::time::Instant::now() + TIMEOUT;
    while !marker.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(marker.exists(), "the writer blocked on a full terminal");
    assert!(
        !drained.closed(),
        "the program still sleeps, its terminal open"
    );
    let pid = drained.pid();
    assert!(drained.with(|terminal| terminal.screen_text().contains("xxxx")));
    let (mut terminal, read) = drained.finish();
    read.unwrap();
    terminal.close().unwrap();
    assert!(!alive(pid));
}

#[test]
fn a_drained_terminal_notices_the_program_closing_it() {
    let terminal = Terminal::spawn(&line_mode("sh").args(["-c", "echo bye"])).unwrap();
    let drained = bench_term::Drained::start(terminal);
    let deadline = std::time::Instant::now() + TIMEOUT;
    while !drained.closed() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(drained.closed());
    let (mut terminal, read) = drained.finish();
    read.unwrap();
    assert!(terminal.screen_text().contains("bye"));
    let report = terminal.close().unwrap();
    assert_eq!(report.status.and_then(|s| s.code()), Some(0));
}

#[test]
fn a_drained_terminal_is_closed_when_the_program_closes_its_side_while_alive() {
    // Alive and silent after it let go of its terminal: closed, though not exited.
    let script = "echo bye; exec </dev/null >/dev/null 2>&1; sleep 60";
    let terminal = Terminal::spawn(&line_mode("sh").args(["-c", script])).unwrap();
    let drained = bench_term::Drained::start(terminal);
    let deadline = std::time::Instant::now() + TIMEOUT;
    while !drained.closed() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(drained.closed());
    assert!(alive(drained.pid()), "the program still sleeps");
    let (mut terminal, read) = drained.finish();
    read.unwrap();
    assert!(terminal.screen_text().contains("bye"));
    terminal.close().unwrap();
}

#[test]
fn exit_mode_is_ready_when_the_program_exits_with_its_status_and_last_screen() {
    // Prints, waits a little, prints again and exits 3: ready is the exit, after both
    // lines, and the screen at ready is the program's last.
    let mut terminal = Terminal::spawn(
        &line_mode("/bin/sh").args(["-c", "echo hello; sleep 0.2; echo bye; exit 3"]),
    )
    .unwrap();
    let ready = terminal.ready(&ReadyMode::Exit, TIMEOUT).unwrap();
    assert!(ready >= Duration::from_millis(200), "{ready:?}");
    let timeline = terminal.timeline();
    assert!(timeline.first_byte.unwrap() < ready, "{timeline:?}");
    assert_eq!(terminal.screen_text(), "hello\nbye");
    assert_eq!(terminal.ready_screen(), Some("hello\nbye"));
    assert_eq!(terminal.exit_status().and_then(|s| s.code()), Some(3));
    let report = terminal.close().unwrap();
    assert_eq!(report.ending, Ending::Exited, "{report:?}");
    assert_eq!(report.status.and_then(|s| s.code()), Some(3));
}

#[test]
fn exit_mode_times_out_on_a_program_that_stays() {
    let mut terminal =
        Terminal::spawn(&line_mode("/bin/sh").args(["-c", "exec sleep 30"])).unwrap();
    let error = terminal
        .ready(&ReadyMode::Exit, Duration::from_millis(300))
        .unwrap_err();
    assert!(
        matches!(
            error,
            TermError::Timeout {
                stage: Stage::Exit,
                ..
            }
        ),
        "{error}"
    );
    assert_eq!(terminal.exit_status(), None);
    terminal.close().unwrap();
}

#[test]
fn output_counts_cover_what_the_program_wrote_between_two_snapshots() {
    // A TUI's life in miniature: the alternate screen, a clear, two synchronized frames,
    // then back to the main screen; `DONE` marks the end of what is counted.
    let script = r"printf '\033[?1049h\033[2J'; printf '\033[?2026hone\033[?2026l'; \
        printf '\033[?2026htwo\033[?2026l'; printf '\033[?1049lDONE'; sleep 5";
    let mut terminal = Terminal::spawn(&line_mode("/bin/sh").args(["-c", script])).unwrap();
    let before = terminal.output_counts();
    terminal
        .wait_for(&Regex::new("DONE").unwrap(), TIMEOUT)
        .unwrap();
    let counts = terminal.output_counts().since(&before);
    assert_eq!(counts.alt_screen_switches, 2, "{counts:?}");
    assert_eq!(counts.full_clears, 1, "{counts:?}");
    assert_eq!(counts.sync_frames, 2, "{counts:?}");
    assert_eq!(counts.frames(), 2, "{counts:?}");
    let written =
        "\x1b[?1049h\x1b[2J\x1b[?2026hone\x1b[?2026l\x1b[?2026htwo\x1b[?2026l\x1b[?1049lDONE";
    assert_eq!(counts.bytes, written.len() as u64, "{counts:?}");
    terminal.close().unwrap();
}

#[test]
fn a_fresh_word_is_fresh_on_the_squashed_screen_the_waits_read() {
    // Every two-letter lead but those of 'z', each shown only with a space inside it
    // ("a b."): the plain text has no two letters side by side, the squashed text every
    // such lead.
    let mut text = String::new();
    for a in b'a'..=b'y' {
        for b in b'a'..=b'z' {
            text.extend([a as char, ' ', b as char, '.']);
        }
    }
    let mut terminal = Terminal::spawn(
        &line_mode("/bin/sh")
            .args(["-c", "printf '%s' \"$1\"; exec sleep 60", "sh", &text])
            .size(120, 40),
    )
    .unwrap();
    terminal.ready(&pattern(r"y z\.$"), TIMEOUT).unwrap();
    let squashed = terminal.squashed_text();
    for _ in 0..20 {
        let word = terminal.fresh_word(6, 2);
        assert!(
            !squashed.contains(&word[..2]),
            "{word}: its lead is on the screen the waits read"
        );
        assert!(word.starts_with('z'), "{word}");
    }
    terminal.close().unwrap();
}

#[test]
fn a_gated_wait_checks_no_frame_before_its_gate_opens() {
    let mut terminal = Terminal::spawn(&ticking()).unwrap();
    let (asked, opened, checks) = (Cell::new(0), Cell::new(false), Cell::new(0));
    terminal
        .wait_for_squashed_gated(
            TIMEOUT,
            &mut || {
                asked.set(asked.get() + 1);
                opened.set(asked.get() > 5);
                opened.get()
            },
            &mut |squashed| {
                assert!(opened.get(), "checked while the gate was closed");
                checks.set(checks.get() + 1);
                squashed.contains("tick")
            },
        )
        .unwrap();
    // The ticks were on the screen long before: the first check after the gate opened
    // found them.
    assert_eq!((asked.get(), checks.get()), (6, 1));
    terminal.close().unwrap();
}

#[test]
fn a_gate_that_opens_after_the_last_frame_checks_the_screen_as_it_stands() {
    let mut terminal =
        Terminal::spawn(&line_mode("/bin/sh").args(["-c", "printf 'hello world'; exec sleep 60"]))
            .unwrap();
    let shown = terminal
        .wait_for(&Regex::new("hello world").unwrap(), TIMEOUT)
        .unwrap();
    // Closed for the first few asks while nothing more arrives: the wait keeps asking,
    // then checks the screen the last read made, and times the hit at that read.
    let mut asked = 0;
    let mut opened_at = None;
    let found = terminal
        .wait_for_squashed_gated(
            TIMEOUT,
            &mut || {
                asked += 1;
                let open = asked > 3;
                if open {
                    opened_at.get_or_insert_with(Instant::now);
                }
                open
            },
            &mut |squashed| squashed.contains("helloworld"),
        )
        .unwrap();
    assert_eq!(found, shown);
    let opened = opened_at.unwrap().duration_since(terminal.spawned_at());
    assert!(
        found < opened,
        "{found:?}, after the gate opened at {opened:?}"
    );
    terminal.close().unwrap();
}
