//! Subreaper, stopping by tree, group, session and uid.

use crate::support::{Fixture, exists, fixture_command, kill_if_fixture};
use bench_proc::{Selector, become_subreaper, is_subreaper, snapshot, stop};
use rusty_fork::rusty_fork_test;
use std::time::Duration;

fn stat(pid: u32) -> bench_proc::parse::Stat {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    bench_proc::parse::parse_stat(&text).unwrap()
}

fn ppid(pid: u32) -> u32 {
    stat(pid).ppid
}

rusty_fork_test! {
    // Process-wide state (a subreaper, or the lack of one): a process of its own
    // under `cargo test` too, where tests share one process.
    #[test]
    fn subreaper_keeps_a_double_forked_daemon_in_the_tree() {
        become_subreaper().unwrap();
        assert!(is_subreaper().unwrap());
        let me = std::process::id();
        let fixture = Fixture::spawn(&["--daemon"]);
        let daemon = fixture.daemon.unwrap();
        assert_eq!(ppid(daemon), me, "the orphaned daemon re-parents to us");
        let pids: Vec<u32> = snapshot(&Selector::Tree(me))
            .unwrap()
            .processes
            .iter()
            .map(|p| p.pid)
            .collect();
        assert!(
            pids.contains(&daemon) && pids.contains(&fixture.pid),
            "{pids:?}"
        );
        // The daemon is not under the fixture any more, only under us.
        let under_fixture = snapshot(&Selector::Tree(fixture.pid)).unwrap();
        assert!(under_fixture.processes.iter().all(|p| p.pid != daemon));

        let report = stop(&Selector::Tree(me), Duration::from_secs(2)).unwrap();
        assert!(report.terminated.contains(&daemon), "{report:?}");
        assert!(
            report.reaped.contains(&daemon),
            "we are its parent, so we reap it: {report:?}"
        );
        assert!(!exists(daemon) && !exists(fixture.pid));
        assert!(!report.terminated.contains(&me));
    }
}

rusty_fork_test! {
    // Process-wide state (a subreaper, or the lack of one): a process of its own
    // under `cargo test` too, where tests share one process.
    #[test]
    fn without_subreaper_the_daemon_escapes_and_the_session_view_finds_it() {
        let fixture = Fixture::spawn(&["--daemon"]);
        let daemon = fixture.daemon.unwrap();
        let tree: Vec<u32> = snapshot(&Selector::Tree(std::process::id()))
            .unwrap()
            .processes
            .iter()
            .map(|p| p.pid)
            .collect();
        // Under `cargo test` (one process for all tests) the subreaper test may
        // have made this process a subreaper already; then the daemon is ours.
        let kept = is_subreaper().unwrap();
        let escaped = !tree.contains(&daemon);
        // The middle process called setsid, so the daemon is alone in a session
        // named after that (now exited) leader.
        let sid = stat(daemon).session;
        assert_ne!(sid, stat(std::process::id()).session);
        let session = snapshot(&Selector::Session(sid)).unwrap();
        let report = stop(&Selector::Session(sid), Duration::from_secs(2));
        let gone = !exists(daemon);
        kill_if_fixture(daemon);
        if kept {
            assert!(
                !escaped,
                "we are a subreaper, so {daemon} is ours: {tree:?}"
            );
        } else {
            assert!(
                escaped,
                "daemon {daemon} should have left our tree: {tree:?}"
            );
        }
        assert_eq!(session.processes.len(), 1);
        assert_eq!(session.processes[0].pid, daemon);
        assert!(report.is_ok() && gone, "{report:?}");
    }
}

#[test]
fn sigterm_ignoring_family_is_killed() {
    let fixture = Fixture::spawn(&["--ignore-term", "--children", "2"]);
    let mut all = fixture.children.clone();
    all.push(fixture.pid);
    let report = stop(&Selector::Tree(fixture.pid), Duration::from_millis(200)).unwrap();
    let mut killed = report.killed.clone();
    killed.sort_unstable();
    all.sort_unstable();
    assert_eq!(killed, all, "{report:?}");
    assert!(all.iter().all(|&pid| !exists(pid)));
}

#[test]
fn an_environment_stop_ends_every_family_with_that_home_in_one_pass() {
    let home = format!("/nonexistent/clibench-env-stop-{}", std::process::id());
    let spawn = |home: &str| {
        let mut command = fixture_command(&["--ignore-term", "--children", "1"]);
        command.env("HOME", home);
        Fixture::start(command)
    };
    let families = [spawn(&home), spawn(&home), spawn(&home)];
    let stranger = spawn(&format!("{home}-other"));
    let report = bench_proc::stop_environment(
        format!("HOME={home}").as_bytes(),
        Duration::from_millis(300),
    )
    .unwrap();
    // One stop for all three families: all six processes ignored SIGTERM and were
    // killed together after the one grace period.
    let mut expected: Vec<u32> = families
        .iter()
        .flat_map(|family| std::iter::once(family.pid).chain(family.children.iter().copied()))
        .collect();
    expected.sort_unstable();
    let mut killed = report.killed.clone();
    killed.sort_unstable();
    assert_eq!(killed, expected, "{report:?}");
    assert!(expected.iter().all(|&pid| !exists(pid)));
    assert!(
        exists(stranger.pid),
        "a process with another HOME was stopped"
    );
}

#[test]
fn process_group_stop_ends_every_member() {
    let fixture = Fixture::spawn(&["--children", "2"]);
    // Spawned with process_group(0): the group id is the fixture's pid.
    let report = stop(&Selector::ProcessGroup(fixture.pid), Duration::from_secs(2)).unwrap();
    assert_eq!(report.terminated.len(), 3, "{report:?}");
    assert!(report.killed.is_empty(), "{report:?}");
    assert!(fixture.children.iter().all(|&pid| !exists(pid)));
    assert!(!exists(fixture.pid));
}

#[test]
fn uid_stop_ends_every_process_of_the_user() {
    use std::os::unix::process::CommandExt;
    // Stopping a uid signals every process of it on the machine: a uid no account has
    // and no process runs as, outside the range of ordinary users (54,322 was inside
    // it, where a person's or a trial user's processes may run).
    let uid = fresh_uid();
    let mut command = fixture_command(&["--children", "1"]);
    command.uid(uid).gid(uid);
    let fixture = Fixture::start(command);
    let report = stop(&Selector::Uid(uid), Duration::from_secs(2)).unwrap();
    assert_eq!(report.terminated.len(), 2, "{report:?}");
    assert!(snapshot(&Selector::Uid(uid)).unwrap().processes.is_empty());
    assert!(!exists(fixture.pid));
}

#[test]
fn a_wide_live_family_is_found_and_stopped_whole() {
    // 1,400 children: the parent's `task/PID/children` is longer than the
    // page the kernel returns per read, so a walker that takes a short read
    // for the end of the file sees only part of them (683 on the machine where
    // this was found) and a stop leaves the rest running.
    const CHILDREN: usize = 1400;
    let fixture = Fixture::spawn(&["--children", &CHILDREN.to_string()]);
    assert_eq!(fixture.children.len(), CHILDREN);
    let found: std::collections::HashSet<u32> = snapshot(&Selector::Tree(fixture.pid))
        .unwrap()
        .processes
        .iter()
        .map(|p| p.pid)
        .collect();
    let missing = fixture
        .children
        .iter()
        .filter(|pid| !found.contains(pid))
        .count();
    let report = stop(&Selector::Tree(fixture.pid), Duration::from_secs(5));
    let left: Vec<u32> = fixture
        .children
        .iter()
        .copied()
        .filter(|&pid| exists(pid))
        .collect();
    for &pid in &left {
        kill_if_fixture(pid);
    }
    assert_eq!(
        missing, 0,
        "the snapshot missed {missing} of {CHILDREN} children"
    );
    assert!(left.is_empty(), "stop left {} children running", left.len());
    assert!(report.is_ok(), "{report:?}");
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// A uid no process runs as and no account has (setresuid needs no account).
fn fresh_uid() -> u32 {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    (3_000_000 + std::process::id() % 100_000..)
        .find(|uid| {
            !passwd.contains(&format!(":{uid}:"))
                && bench_proc::ProcRoot::live()
                    .discover(&Selector::Uid(*uid))
                    .unwrap()
                    .is_empty()
        })
        .unwrap()
}

rusty_fork_test! {
    // Process-wide state (a subreaper, or the lack of one): a process of its own
    // under `cargo test` too, where tests share one process.
    #[test]
    fn stop_uid_catches_a_process_that_keeps_forking() {
        if !is_root() {
            bench_core::skip_test!("needs root to run processes as another uid");
        }
        // Each generation's orphan re-parents to us, not to a pid 1 that may not
        // reap, so the test leaves no zombies behind.
        become_subreaper().unwrap();
        let uid = fresh_uid();
        let mut command = fixture_command(&["--fork-hop"]);
        std::os::unix::process::CommandExt::uid(&mut command, uid);
        let mut fixture = Fixture::start(command);
        let report = bench_proc::stop_uid(uid, Duration::from_secs(20));
        // The first generation is our child: reap it whatever happened.
        let _ = fixture.child.wait();
        reap_orphans();
        let left: Vec<u32> = bench_proc::ProcRoot::live()
            .discover(&Selector::Uid(uid))
            .unwrap()
            .into_iter()
            .filter(|&pid| exists(pid))
            .collect();
        let report = report.unwrap();
        assert_eq!(report.uid, uid);
        assert!(left.is_empty(), "uid {uid} still runs {left:?}");
    }
}

/// Reaps every zombie child (orphans that re-parented to us as a subreaper).
fn reap_orphans() {
    while let Ok(Some(_)) = rustix::process::wait(rustix::process::WaitOptions::NOHANG) {}
}
