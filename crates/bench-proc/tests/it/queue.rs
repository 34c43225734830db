//! What a start waits for a CPU: only the processes started after the mark count.

use bench_proc::{ProcRoot, Selector};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

/// The main thread's run-queue wait of `pid`, read the way the kernel shows it.
fn main_thread_wait_ns(pid: u32) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/schedstat")).unwrap();
    text.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Waits until `pid` runs `sleep` and sleeps: its wait no longer moves.
fn wait_until_asleep(pid: u32) {
    loop {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().next());
        if comm.trim() == "sleep" && state == Some("S") {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[test]
fn only_the_processes_started_since_the_mark_count_their_wait() {
    // A shell that starts one sleeper, waits for a line, starts another.
    let mut shell = Command::new("sh")
        .args([
            "-c",
            "sleep 30 & a=$!; echo $a; read line; sleep 30 & b=$!; echo $b; read line; kill $a $b",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(shell.stdout.take().unwrap()).lines();
    let mut stdin = shell.stdin.take().unwrap();
    let mut next_pid = || -> u32 { lines.next().unwrap().unwrap().trim().parse().unwrap() };
    let before = next_pid();
    wait_until_asleep(before);
    let root = ProcRoot::live();
    let tree = Selector::Tree(shell.id());
    let mark = root.mark(&tree).unwrap();
    writeln!(stdin).unwrap();
    let after = next_pid();
    wait_until_asleep(after);
    // The shell and the first sleeper were there at the mark; the second was not.
    let queued = root.queued_since(&tree, &[], &mark).unwrap();
    assert_eq!(queued.as_nanos() as u64, main_thread_wait_ns(after));
    // Left out by pid as well, it counts nothing.
    let none = root.queued_since(&tree, &[after], &mark).unwrap();
    assert_eq!(none.as_nanos(), 0);
    writeln!(stdin).unwrap();
    shell.wait().unwrap();
}
