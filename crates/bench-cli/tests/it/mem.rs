//! `clibench mem` on real programs.

use crate::{clibench, run};
use bench_core::{Metric, Phase, ResultFile};
use rusty_fork::rusty_fork_test;
use std::process::Command;

/// The result file `clibench mem --json` printed.
fn result(stdout: &str) -> ResultFile {
    ResultFile::from_json_str(stdout).unwrap_or_else(|error| panic!("{error}: {stdout}"))
}

/// The family's total of `metric`, bytes.
fn total(result: &ResultFile, metric: Metric) -> u64 {
    let values = result.side.values(metric);
    assert_eq!(values.len(), 1, "{metric}: {result:?}");
    values[0] as u64
}

/// How many processes the family had.
fn process_count(result: &ResultFile) -> usize {
    let record = result
        .side
        .trials
        .iter()
        .find(|r| r.phase == Phase::Measure);
    record.and_then(|r| r.process_count).unwrap_or_default() as usize
}

fn exists(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

/// The interpreter itself, not a version manager's shim: pyenv's `python3` is a bash
/// script that runs several bash processes before python starts, which a family count
/// taken under load then sees.
fn real_python() -> String {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[test]
fn command_family_is_measured_then_stopped() {
    // bash with two children, one of them holding 32 MiB. The settle covers python's
    // start and allocation on a loaded machine: 1 s once measured it half way, and 3 s
    // was once too short with six builds running beside the suite.
    let script = format!(
        "sleep 60 & {} -c 'import time; x = b\"x\" * (32 << 20); time.sleep(60)' & wait",
        real_python()
    );
    let out = run(clibench().args([
        "mem", "--settle", "6s", "--json", "--", "bash", "-c", &script,
    ]));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let json = result(&out.stdout);
    let processes = &json.side.processes;
    let names: Vec<&str> = processes.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(
        names.contains(&"bash")
            && names.contains(&"sleep")
            && names.iter().any(|n| n.starts_with("python"))
    );
    let rss = total(&json, Metric::Rss);
    let pss = total(&json, Metric::Pss);
    let uss = total(&json, Metric::Uss);
    assert!(pss >= 32 << 20 && pss <= rss, "rss {rss} pss {pss}");
    assert!(uss >= 32 << 20 && uss <= pss, "pss {pss} uss {uss}");
    assert_eq!(total(&json, Metric::Swap), 0);
    // The family held its memory while settling, so the sampled peak is at
    // least about what the final snapshot saw (pages may come and go).
    let peak = total(&json, Metric::PeakRss);
    assert!(peak >= rss / 10 * 9, "peak {peak} rss {rss}");
    for process in processes {
        let pid = u64::from(process.pid);
        assert!(!exists(pid), "{pid} was left running");
    }
    assert!(out.stderr.contains("total"), "{}", out.stderr);
}

#[test]
fn pid_measures_a_running_tree() {
    let mut child = Command::new("sh")
        .args(["-c", "sleep 30 & sleep 30 & wait"])
        .spawn()
        .unwrap();
    let pid = child.id();
    // The shell forks its children right away; wait until both are there.
    let root = bench_proc::ProcRoot::live();
    for _ in 0..500 {
        if root
            .discover(&bench_proc::Selector::Tree(pid))
            .unwrap()
            .len()
            == 3
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let out = run(clibench().args(["mem", "--json", "--pid", &pid.to_string()]));
    let _ = bench_proc::stop(
        &bench_proc::Selector::Tree(pid),
        std::time::Duration::from_secs(1),
    );
    let _ = child.wait();
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let json = result(&out.stdout);
    assert_eq!(process_count(&json), 3, "{json:?}");
    assert!(json.side.processes.iter().any(|p| p.pid == pid), "{json:?}");
}

#[test]
fn bad_targets_are_usage_errors() {
    let none = run(clibench().arg("mem"));
    assert_eq!(none.code, Some(2));
    assert!(
        none.stderr.contains("exactly one of --pid"),
        "{}",
        none.stderr
    );
    let missing = run(clibench().args(["mem", "--pid", "4000000000"]));
    assert_eq!(missing.code, Some(2), "{}", missing.stderr);
    assert!(
        missing.stderr.contains("does not exist"),
        "{}",
        missing.stderr
    );
    let user = run(clibench().args(["mem", "--user", "no-such-user-here"]));
    assert_eq!(user.code, Some(2));
    assert!(user.stderr.contains("no such user"), "{}", user.stderr);
    let settle = run(clibench().args(["mem", "--settle", "soon", "--", "true"]));
    assert_eq!(settle.code, Some(2), "{}", settle.stderr);
}

#[test]
fn user_view_finds_processes_of_that_uid() {
    use std::os::unix::process::CommandExt;
    let mut child = Command::new("sleep")
        .arg("30")
        .uid(54_400)
        .gid(54_400)
        .spawn()
        .unwrap();
    let out = run(clibench().args(["mem", "--json", "--user", "54400"]));
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let json = result(&out.stdout);
    assert_eq!(process_count(&json), 1, "{json:?}");
    assert_eq!(json.side.processes[0].pid, child.id());
}

rusty_fork_test! {
    // Process-wide state (a subreaper, or the lack of one): a process of its own
    // under `cargo test` too, where tests share one process.
    #[test]
    fn a_parent_with_1400_children_is_measured_whole() {
        // The parent's `task/PID/children` is longer than one page: read a page
        // at a time, it lists only part of the children (683 of 1,400 where this
        // was found).
        const CHILDREN: usize = 1400;
        // Orphans re-parent to us, not to a pid 1 that may never reap them.
        bench_proc::become_subreaper().unwrap();
        let mut family = std::os::unix::process::CommandExt::process_group(
            Command::new("sh").args([
                "-c",
                &format!("for i in $(seq {CHILDREN}); do sleep 600 & done; echo ready; wait"),
            ]),
            0,
        )
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
        let mut ready = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(family.stdout.take().unwrap()),
            &mut ready,
        )
        .unwrap();
        // Every child is forked by "ready", but under load some have not yet exec'd sleep
        // (they are still named sh): wait until all have, so that the names below are
        // certain. A wait with a generous bound, not a timed assertion; the bound stays
        // under nextest's 120 s limit so that a failure says what it saw.
        let parent = family.id();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let mut children = children_of(parent);
        while children.iter().filter(|(_, name)| name == "sleep").count() < CHILDREN
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(50));
            children = children_of(parent);
        }
        let out = run(clibench().args(["mem", "--json", "--pid", &parent.to_string()]));
        // The whole group, then every zombie it leaves us.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", family.id())])
            .status();
        let _ = family.wait();
        while let Ok(Some(_)) = rustix::process::wait(rustix::process::WaitOptions::empty()) {}
        assert_eq!(ready.trim(), "ready");
        let sleeping = children.iter().filter(|(_, name)| name == "sleep").count();
        assert_eq!(
            (children.len(), sleeping),
            (CHILDREN, CHILDREN),
            "the children never all became sleep"
        );
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        let json = result(&out.stdout);
        let processes = &json.side.processes;
        assert_eq!(
            process_count(&json),
            CHILDREN + 1,
            "{} measured",
            processes.len()
        );
        // The whole family is counted and in the totals; the result lists the 128
        // processes with the most RSS, each once, every one the shell or its child.
        let listed: std::collections::BTreeSet<u32> = processes.iter().map(|p| p.pid).collect();
        assert_eq!(listed.len(), bench_core::MAX_PROCESSES);
        let children: std::collections::BTreeSet<u32> =
            children.iter().map(|(pid, _)| *pid).collect();
        assert!(
            listed.iter().all(|pid| *pid == parent || children.contains(pid)),
            "a listed process is not of the family"
        );
        let listed_rss: u64 = processes.iter().map(|p| p.rss).sum();
        assert!(total(&json, Metric::Rss) > listed_rss, "the totals miss the unlisted");
        for process in processes.iter().filter(|p| p.pid != parent) {
            assert_eq!(process.ppid, Some(parent), "{process:?}");
            assert_eq!(process.name, "sleep", "{process:?}");
        }
    }
}

/// The processes whose parent is `pid`, with their names, from every `/proc/PID/stat`
/// (not the parent's `children` file, which is what clibench reads).
fn children_of(pid: u32) -> Vec<(u32, String)> {
    let mut children = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(child) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        // Gone meanwhile: not a child any more.
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let ppid = stat[close + 1..].split_whitespace().nth(1);
        if ppid.and_then(|p| p.parse::<u32>().ok()) == Some(pid) {
            children.push((child, stat[open + 1..close].to_owned()));
        }
    }
    children
}

/// A program that, like a TUI, refuses to run without a terminal: it exits 1 at
/// once unless stdin is a terminal, then holds 16 MiB and writes a line every 10 ms
/// (so an unread terminal would fill up and block it).
pub(crate) const TTY_ONLY: &str = "import os, sys, time\n\
if not sys.stdin.isatty(): sys.exit(1)\n\
x = b'x' * (16 << 20)\n\
while True:\n    print('tick ' * 20, flush=True); time.sleep(0.01)\n";

/// The same refusal from a shell, which starts in a moment however loaded the
/// machine is: what "exits at once" is checked with.
pub(crate) const SH_TTY_ONLY: &str = "[ -t 0 ] || exit 1; exec sleep 60";

#[test]
fn tty_runs_an_interactive_program_in_a_terminal() {
    // The settle covers python's start and its allocation on a loaded machine too.
    let out = run(clibench().args([
        "mem", "--tty", "--settle", "3s", "--json", "--", "python3", "-c", TTY_ONLY,
    ]));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let json = result(&out.stdout);
    assert_eq!(process_count(&json), 1, "{json:?}");
    let pss = total(&json, Metric::Pss);
    assert!(
        pss >= 16 << 20,
        "pss {pss}: the 16 MiB were never allocated"
    );
    let pid = u64::from(json.side.processes[0].pid);
    assert!(!exists(pid), "{pid} was left running");
}

#[test]
fn an_instant_exit_without_a_terminal_suggests_tty() {
    let out = run(clibench().args(["mem", "--settle", "1s", "--", "sh", "-c", SH_TTY_ONLY]));
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "sh exited at once (exit status: 1) — interactive programs need a terminal: try --tty"
        ),
        "{}",
        out.stderr
    );
}

/// The "processes" count of the peak line and of the table's totals row.
fn peak_and_table_counts(stderr: &str) -> (u32, u32) {
    let count_before = |line: &str, word: &str| -> u32 {
        let words: Vec<&str> = line.split_whitespace().collect();
        let at = words
            .iter()
            .position(|w| w.trim_end_matches(',') == word)
            .unwrap_or_else(|| panic!("no {word:?} in {line:?}"));
        words[at - 1].parse().unwrap()
    };
    let peak = stderr
        .lines()
        .find(|line| line.starts_with("peak while settling"))
        .unwrap_or_else(|| panic!("no peak line in {stderr}"));
    let total = stderr
        .lines()
        .find(|line| line.starts_with("total"))
        .unwrap_or_else(|| panic!("no totals row in {stderr}"));
    (
        count_before(peak, "processes"),
        count_before(total, "processes"),
    )
}

#[test]
fn the_peak_is_of_the_settling_only_and_never_counts_more_than_a_growing_family() {
    // A family that only grows (a child every 5 ms, none exits) has at every moment of
    // the settling at most the processes the table then finds. A peak sample taken
    // while or after the table is measured sees children born meanwhile, and the note
    // called those "short-lived" although they live on.
    let out = run(clibench().args([
        "mem",
        "--settle",
        "1500ms",
        "--",
        "python3",
        "-c",
        "import subprocess, time\n\
         kids = []\n\
         for _ in range(3000):\n    \
             kids.append(subprocess.Popen(['sleep', '60']))\n    \
             time.sleep(0.005)\n",
    ]));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let (peak, table) = peak_and_table_counts(&out.stderr);
    assert!(table > 10, "the family grew: {}", out.stderr);
    assert!(
        peak <= table,
        "peak {peak} > table {table}:\n{}",
        out.stderr
    );
    assert!(!out.stderr.contains("short-lived"), "{}", out.stderr);
}

#[test]
fn a_process_name_set_with_prctl_cannot_drive_the_terminal() {
    // PR_SET_NAME (15): the name `mem`'s table shows, at most 15 bytes.
    let out = run(clibench().args([
        "mem",
        "--settle",
        "1s",
        "--",
        "python3",
        "-c",
        "import ctypes, time\n\
         ctypes.CDLL(None).prctl(15, b'\\x1b]0;OWN\\x07\\x1b[2J', 0, 0, 0)\n\
         time.sleep(60)\n",
    ]));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(!out.stderr.contains('\x1b'), "{:?}", out.stderr);
    assert!(!out.stderr.contains('\x07'), "{:?}", out.stderr);
    assert!(
        out.stderr.contains("\\x1b]0;OWN\\x07\\x1b[2J"),
        "{}",
        out.stderr
    );
}
