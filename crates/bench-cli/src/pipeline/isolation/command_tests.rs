//! Unit tests of [`super`]: a step's session, descriptors, start errors and captured output, and stopping what a trial user left running (some need root).

use super::*;
use rusty_fork::rusty_fork_test;

#[test]
fn stopping_a_user_catches_a_process_that_keeps_forking() {
    if !rustix::process::geteuid().is_root() {
        bench_core::skip_test!("needs root to run processes as another uid");
    }
    // Orphaned generations re-parent to us (not to a pid 1 that may not reap).
    bench_proc::become_subreaper().unwrap();
    // setresuid needs no account, so a uid nobody uses stands for a trial user.
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap();
    let uid = (3_200_000 + std::process::id() % 100_000..)
        .find(|uid| {
            !passwd.contains(&format!(":{uid}:"))
                && bench_proc::ProcRoot::live()
                    .discover(&Selector::Uid(*uid))
                    .unwrap()
                    .is_empty()
        })
        .unwrap();
    // A detached child that forks and exits in a loop: a new pid every moment. Its
    // generations share a deadline, so a test killed before it stops the hopper does
    // not leave it hopping for good.
    let hopper = "import os, time\nos.setsid()\nend = time.monotonic() + 120\n\
                  while time.monotonic() < end:\n    if os.fork(): os._exit(0)\n";
    let mut first = std::process::Command::new("python3");
    first.args(["-c", hopper]);
    std::os::unix::process::CommandExt::uid(&mut first, uid);
    let mut first = first.spawn().unwrap();
    let _ = first.wait();
    let user = TrialUser {
        install: 0,
        name: format!("uid-{uid}"),
        identity: bench_proc::Identity::new(uid, 0),
        home: std::path::PathBuf::from("/nonexistent"),
        dedicated: true,
    };
    let stopped = stop_user(&user);
    let left = bench_proc::ProcRoot::live()
        .discover(&Selector::Uid(uid))
        .unwrap();
    let running: Vec<u32> = left
        .iter()
        .copied()
        .filter(|&pid| bench_proc::process_stat(pid).is_some_and(|s| !s.is_zombie()))
        .collect();
    if !running.is_empty() {
        // Do not leave the hopper behind for the next test.
        let _ = bench_proc::stop_uid(uid, Duration::from_secs(10));
    }
    while let Ok(Some(_)) = rustix::process::wait(rustix::process::WaitOptions::NOHANG) {}
    assert!(running.is_empty(), "uid {uid} still runs {running:?}");
    stopped.unwrap();
}

/// The process's peak resident memory so far (`VmHWM`), in bytes.
fn peak_rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib << 10
}

fn shell_step(script: &str, log: Option<PathBuf>) -> Step<'static> {
    Step {
        what: "test step".into(),
        argv: vec!["sh".into(), "-c".into(), script.into()],
        cwd: std::env::temp_dir(),
        env: BTreeMap::from([("PATH".to_owned(), "/usr/bin:/bin".to_owned())]),
        user: None,
        home: None,
        timeout: Duration::from_secs(600),
        log,
    }
}

/// The step's `/proc/PID/stat` fields pid, session and tty_nr, whether it could
/// open /dev/tty, and its open descriptors.
fn step_view() -> (Vec<u64>, String, Vec<String>) {
    let finished = run(&shell_step(
        "read -r pid comm state ppid pgrp sid tty rest < /proc/$$/stat; echo $pid $sid $tty; \
         if (exec 3<>/dev/tty) 2>/dev/null; then echo tty-open; else echo no-tty; fi; \
         ls /proc/$$/fd",
        None,
    ))
    .unwrap();
    assert!(finished.status.success(), "{finished:?}");
    let mut lines = finished.stdout.lines();
    let ids = lines
        .next()
        .unwrap()
        .split(' ')
        .map(|n| n.parse().unwrap())
        .collect();
    let tty = lines.next().unwrap().to_owned();
    (ids, tty, lines.map(str::to_owned).collect())
}

#[test]
fn a_step_leads_its_own_session_without_a_terminal() {
    let (ids, tty, _) = step_view();
    let own = std::fs::read_to_string("/proc/self/stat").unwrap();
    let own_session: u64 = own
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .nth(3)
        .unwrap()
        .parse()
        .unwrap();
    // setsid made the step (the shell) the leader of a new session.
    assert_eq!(ids[1], ids[0], "session {} of pid {}", ids[1], ids[0]);
    assert_ne!(ids[1], own_session);
    assert_eq!(ids[2], 0, "tty_nr of the step");
    assert_eq!(tty, "no-tty");
}

#[test]
fn no_descriptor_above_2_reaches_a_step() {
    // Not close-on-exec, as a caller's `clibench run 9<secret` is.
    let file = File::open("/etc/hostname").unwrap();
    // SAFETY: dup of a descriptor we own, closed below.
    let inherited = unsafe { libc::dup(std::os::fd::AsRawFd::as_raw_fd(&file)) };
    assert!(inherited > 2);
    let (_, _, fds) = step_view();
    // SAFETY: the descriptor dup'ed above.
    unsafe { libc::close(inherited) };
    assert_eq!(fds, ["0", "1", "2"]);
}

#[test]
fn a_program_that_cannot_start_is_named_with_its_cause_once() {
    let mut step = shell_step("", None);
    step.argv = vec!["/nonexistent/program".into()];
    let error = run(&step).unwrap_err();
    assert!(matches!(error, ExecError::Spawn { .. }), "{error}");
    let message = bench_core::error_chain(&error);
    assert!(
        message.starts_with("test step: cannot start `/nonexistent/program` in "),
        "{message}"
    );
    // The cause once: from the chain, not also in the message.
    assert_eq!(message.matches("No such file").count(), 1, "{message}");
}

#[test]
fn capture_keeps_the_start_and_the_end_and_counts_the_rest() {
    let mut capture = Capture::default();
    capture.push(b"first line\n");
    assert_eq!(capture.text(), "first line\n");
    let filler = vec![b'x'; CAPTURE_HEAD_BYTES + 3 * CAPTURE_TAIL_BYTES];
    capture.push(&filler);
    capture.push(b"\nthe last line");
    let text = capture.text();
    assert!(text.starts_with("first line\nxxx"));
    assert!(text.ends_with("xxx\nthe last line"));
    let dropped =
        11 + filler.len() as u64 + 14 - CAPTURE_HEAD_BYTES as u64 - CAPTURE_TAIL_BYTES as u64;
    assert_eq!(capture.dropped_bytes, dropped);
    assert!(
        text.contains(&format!(
            "[clibench dropped {dropped} bytes of output here]"
        )),
        "{}",
        &text[CAPTURE_HEAD_BYTES - 20..CAPTURE_HEAD_BYTES + 80]
    );
}

/// A pipe's read end whose first read waits first, as a capture thread the
/// machine's load keeps off the CPU would.
struct LateReader(std::io::PipeReader, Option<Duration>);

impl Read for LateReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if let Some(late) = self.1.take() {
            std::thread::sleep(late);
        }
        self.0.read(buf)
    }
}

impl AsFd for LateReader {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.0.as_fd()
    }
}

#[test]
fn what_a_command_wrote_before_it_ended_is_captured_however_late_the_reader_runs() {
    let (reader, mut writer) = std::io::pipe().unwrap();
    writer.write_all(b"the end\n").unwrap();
    // The writer stays open, as a daemon the command left would keep it: no end of
    // file tells the capture that it has everything.
    let capture = CaptureThread::start(LateReader(reader, Some(Duration::from_secs(3)))).unwrap();
    assert_eq!(capture.finish(), "the end\n");
    drop(writer);
}

// Each runs in a process of its own: the peak RSS (VmHWM) is the whole process's,
// and beside the other unit tests, running at once in this one, it measured
// theirs (65 and 188 MiB in a full run), not the capture's.
rusty_fork_test! {
    #[test]
    fn a_command_that_prints_hundreds_of_mib_is_captured_capped() {
        const PRINTED: u64 = 256 << 20;
        let finished = run(&shell_step(
            &format!("head -c {PRINTED} /dev/zero | tr '\\0' a; echo the end"),
            None,
        ))
        .unwrap();
        assert!(finished.status.success());
        let kept = (CAPTURE_HEAD_BYTES + CAPTURE_TAIL_BYTES) as u64;
        let dropped = PRINTED + "the end\n".len() as u64 - kept;
        assert!(
            finished.stdout.contains(&format!(
                "[clibench dropped {dropped} bytes of output here]"
            )),
            "{} bytes captured",
            finished.stdout.len()
        );
        assert!(finished.stdout.ends_with("aaathe end\n"));
        assert!(finished.stdout.len() < (CAPTURE_HEAD_BYTES + CAPTURE_TAIL_BYTES + 100));
        assert!(
            peak_rss_bytes() < 64 << 20,
            "peak RSS {} MiB",
            peak_rss_bytes() >> 20
        );
    }

    #[test]
    fn the_tail_of_a_huge_log_is_read_from_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("install.log");
        // 512 MiB of (sparse) zeros, then the error: reading it whole would
        // take 512 MiB of memory.
        std::fs::File::create(&log)
            .unwrap()
            .set_len(512 << 20)
            .unwrap();
        let error = run_ok(&shell_step(
            "echo 'npm ERR! the real error'; exit 3",
            Some(log),
        ))
        .unwrap_err()
        .to_string();
        assert!(error.ends_with("npm ERR! the real error"), "{error}");
        assert!(
            peak_rss_bytes() < 64 << 20,
            "peak RSS {} MiB",
            peak_rss_bytes() >> 20
        );
    }
}

#[test]
fn a_system_uid_is_never_stopped() {
    let user = TrialUser {
        install: 0,
        name: "clibench-x-0".into(),
        identity: bench_proc::Identity::new(0, 0),
        home: PathBuf::from("/nonexistent"),
        dedicated: true,
    };
    let error = stop_user(&user).unwrap_err().to_string();
    assert!(error.contains("a system account"), "{error}");
}
