//! Unit tests of [`super`] on fixture trees shaped like `/proc`: discovery by tree, uid
//! and session, sampling, zombies and vanished processes, and whole reads of short and
//! long files.

use super::*;
use crate::test_tree::{children, process, set_threads};
use std::fs;
use std::io::Read;

#[test]
fn stats_lists_every_process_with_zombies_and_skips_what_vanished() {
    let root = tempfile::tempdir().unwrap();
    process(root.path(), 10, 1, 'S', 0, 400);
    process(root.path(), 11, 10, 'Z', 0, 0);
    process(root.path(), 12, 1, 'R', 0, 400);
    // 13 vanished between the listing and the read of its stat.
    fs::create_dir(root.path().join("13")).unwrap();
    fs::create_dir(root.path().join("self")).unwrap();
    let stats = ProcRoot::new(root.path()).stats().unwrap();
    let seen: Vec<(u32, char)> = stats.iter().map(|s| (s.pid, s.state)).collect();
    assert_eq!(seen, [(10, 'S'), (11, 'Z'), (12, 'R')]);
}

#[test]
fn tree_follows_children_of_every_thread() {
    let root = tempfile::tempdir().unwrap();
    process(root.path(), 10, 1, 'S', 0, 400);
    process(root.path(), 11, 10, 'S', 0, 400);
    process(root.path(), 12, 10, 'S', 0, 400);
    process(root.path(), 13, 12, 'S', 0, 400);
    process(root.path(), 99, 1, 'S', 0, 400);
    children(root.path(), 10, 10, "11 ");
    // A worker thread of 10 spawned 12; only its own children file says so.
    children(root.path(), 10, 15, "12");
    children(root.path(), 12, 12, "13");
    let snap = ProcRoot::new(root.path())
        .snapshot(&Selector::Tree(10))
        .unwrap();
    let pids: Vec<u32> = snap.processes.iter().map(|p| p.pid).collect();
    assert_eq!(pids, [10, 11, 12, 13]);
    assert_eq!(snap.total_rss_bytes(), 4 * 400 * 1024);
    assert_eq!(snap.total_pss_bytes(), Some(4 * 200 * 1024));
    assert_eq!(snap.total_uss_bytes(), Some(4 * 100 * 1024));
    let first = &snap.processes[0];
    assert_eq!(first.cmdline, "p10 --flag");
    assert_eq!(first.ppid, 1);
    assert_eq!(first.threads, 2);
}

#[test]
fn snapshot_with_cpu_counts_zombies_cpu_but_not_their_memory() {
    let root = tempfile::tempdir().unwrap();
    process(root.path(), 10, 1, 'S', 1001, 400);
    process(root.path(), 11, 10, 'Z', 1001, 0);
    process(root.path(), 12, 1, 'S', 0, 400);
    let proc_root = ProcRoot::new(root.path());
    let selector = Selector::Uid(1001);
    let (snap, cpu) = proc_root
        .snapshot_with_cpu(&selector, &[], MemoryRead::Proportional)
        .unwrap();
    let pids: Vec<u32> = snap.processes.iter().map(|p| p.pid).collect();
    assert_eq!(pids, [10]);
    // Each fixture process has 150 ticks of stat CPU and no schedstat: 1.5 s.
    assert!((cpu - 3.0).abs() < 1e-9, "{cpu}");
    let alone = proc_root.cpu_seconds(&selector, &[]).unwrap();
    assert!((cpu - alone).abs() < 1e-9, "{cpu} against {alone}");
    let (snap, cpu) = proc_root
        .snapshot_with_cpu(&selector, &[10], MemoryRead::Proportional)
        .unwrap();
    assert!(snap.processes.is_empty());
    assert!((cpu - 1.5).abs() < 1e-9, "{cpu}");
}

#[test]
fn a_resident_read_takes_the_stat_counter_and_leaves_pss_unknown() {
    let root = tempfile::tempdir().unwrap();
    process(root.path(), 10, 1, 'S', 1001, 400);
    let proc_root = ProcRoot::new(root.path());
    let selector = Selector::Uid(1001);
    let (full, full_cpu) = proc_root
        .snapshot_with_cpu(&selector, &[], MemoryRead::Proportional)
        .unwrap();
    let (resident, resident_cpu) = proc_root
        .snapshot_with_cpu(&selector, &[], MemoryRead::Resident)
        .unwrap();
    assert_eq!(resident.processes.len(), 1);
    let (full, resident) = (&full.processes[0], &resident.processes[0]);
    assert!(full.pss_bytes.is_some());
    assert_eq!((resident.pss_bytes, resident.uss_bytes), (None, None));
    // The fixture's stat counts 400 KiB in 4 KiB pages: 100 of them.
    let page = rustix::param::page_size() as u64;
    assert_eq!(resident.rss_bytes, 100 * page);
    assert_eq!(
        (resident.cmdline.as_str(), resident.pid),
        (full.cmdline.as_str(), 10)
    );
    assert!((resident_cpu - full_cpu).abs() < 1e-9);
}

#[test]
fn zombie_is_not_counted() {
    let root = tempfile::tempdir().unwrap();
    process(root.path(), 10, 1, 'S', 0, 400);
    process(root.path(), 11, 10, 'Z', 0, 0);
    children(root.path(), 10, 10, "11");
    let snap = ProcRoot::new(root.path())
        .snapshot(&Selector::Tree(10))
        .unwrap();
    assert_eq!(snap.processes.len(), 1);
    assert_eq!(snap.processes[0].pid, 10);
}

#[test]
fn stat_totals_count_live_processes_and_their_stat_rss() {
    let root = tempfile::tempdir().unwrap();
    process(root.path(), 10, 1, 'S', 0, 400);
    process(root.path(), 11, 10, 'S', 0, 800);
    process(root.path(), 12, 10, 'Z', 0, 0);
    children(root.path(), 10, 10, "11 12");
    let proc_root = ProcRoot::new(root.path());
    let page = rustix::param::page_size() as u64;
    // The fixture's stat says rss_kib / 4 pages.
    process(root.path(), 13, 10, 'R', 0, 4);
    children(root.path(), 10, 10, "11 12 13");
    assert_eq!(
        proc_root.stat_totals(&Selector::Tree(10), &[]).unwrap(),
        StatTotals {
            process_count: 3,
            rss_bytes: (100 + 200 + 1) * page,
            busy_count: 1,
        }
    );
    assert_eq!(
        proc_root
            .stat_totals(&Selector::Tree(10), &[10, 13])
            .unwrap(),
        StatTotals {
            process_count: 1,
            rss_bytes: 200 * page,
            busy_count: 0,
        }
    );
}

#[test]
fn vanished_process_is_skipped() {
    let root = tempfile::tempdir().unwrap();
    process(root.path(), 10, 1, 'S', 0, 400);
    // 11 is listed as a child, but its /proc directory is already gone.
    children(root.path(), 10, 10, "11");
    let snap = ProcRoot::new(root.path())
        .snapshot(&Selector::Tree(10))
        .unwrap();
    assert_eq!(snap.processes.len(), 1);
}

#[test]
fn missing_root_is_an_error() {
    let root = tempfile::tempdir().unwrap();
    let error = ProcRoot::new(root.path())
        .snapshot(&Selector::Tree(10))
        .unwrap_err();
    assert!(matches!(error, SnapshotError::NoSuchProcess { pid: 10 }));
}

#[test]
fn uid_and_session_select_by_status_and_stat() {
    let root = tempfile::tempdir().unwrap();
    process(root.path(), 10, 1, 'S', 1001, 400);
    process(root.path(), 20, 1, 'S', 1002, 400);
    process(root.path(), 30, 1, 'S', 1001, 400);
    fs::create_dir(root.path().join("self")).unwrap();
    let proc_root = ProcRoot::new(root.path());
    let uid: Vec<u32> = proc_root
        .snapshot(&Selector::Uid(1001))
        .unwrap()
        .processes
        .iter()
        .map(|p| p.pid)
        .collect();
    assert_eq!(uid, [10, 30]);
    // The fixture puts every process in session 77.
    assert_eq!(
        proc_root.discover(&Selector::Session(77)).unwrap(),
        [10, 20, 30]
    );
    assert_eq!(
        proc_root.discover(&Selector::Session(78)).unwrap(),
        Vec::<u32>::new()
    );
    assert_eq!(
        proc_root.discover(&Selector::ProcessGroup(20)).unwrap(),
        [20]
    );
}

#[test]
fn large_tree_of_threaded_processes_finishes_from_the_ppid_scan() {
    let root = tempfile::tempdir().unwrap();
    process(root.path(), 10, 1, 'S', 0, 400);
    process(root.path(), 5, 1, 'S', 0, 400); // not in the tree
    let kids: Vec<String> = (100..200).map(|pid| pid.to_string()).collect();
    children(root.path(), 10, 10, &kids.join(" "));
    for pid in 100..200 {
        process(root.path(), pid, 10, 'S', 0, 8);
        set_threads(root.path(), pid, 8);
        let grandchild = pid + 1000;
        process(root.path(), grandchild, pid, 'S', 0, 8);
        // Late grandchildren are known only by their ppid: found only if
        // the walk switched to the scan (800 queued threads > 202 processes).
        if pid < 150 {
            children(root.path(), pid, pid, &grandchild.to_string());
        }
    }
    let mut pids = ProcRoot::new(root.path())
        .discover(&Selector::Tree(10))
        .unwrap();
    assert_eq!(pids[0], 10);
    pids.sort_unstable();
    let mut expected: Vec<u32> = std::iter::once(10)
        .chain(100..200)
        .chain(1100..1200)
        .collect();
    expected.sort_unstable();
    assert_eq!(pids, expected);
}

#[test]
fn small_tree_keeps_walking_children_files() {
    let root = tempfile::tempdir().unwrap();
    process(root.path(), 10, 1, 'S', 0, 400);
    let kids: Vec<String> = (100..120).map(|pid| pid.to_string()).collect();
    children(root.path(), 10, 10, &kids.join(" "));
    for pid in 100..120 {
        process(root.path(), pid, 10, 'S', 0, 8);
    }
    // Many unrelated processes: a scan would cost more than the walk.
    for pid in 2000..2400 {
        process(root.path(), pid, 1, 'S', 0, 8);
    }
    // A process that claims 10 as parent but no children file lists it
    // is found only by a scan, so the walk must not have switched.
    process(root.path(), 3000, 10, 'S', 0, 8);
    let pids = ProcRoot::new(root.path())
        .discover(&Selector::Tree(10))
        .unwrap();
    assert_eq!(pids.len(), 21);
    assert!(!pids.contains(&3000));
}

#[test]
fn parallel_sampling_keeps_discovery_order() {
    let root = tempfile::tempdir().unwrap();
    process(root.path(), 10, 1, 'S', 0, 400);
    let kids: Vec<String> = (100..160).map(|pid| pid.to_string()).collect();
    for pid in 100..160 {
        process(root.path(), pid, 10, 'S', 0, 8);
    }
    children(root.path(), 10, 10, &kids.join(" "));
    let sequential = ProcRoot::new(root.path())
        .with_threads(1)
        .snapshot(&Selector::Tree(10));
    let parallel = ProcRoot::new(root.path())
        .with_threads(4)
        .snapshot(&Selector::Tree(10));
    let sequential = sequential.unwrap();
    assert_eq!(sequential.processes.len(), 61);
    assert_eq!(sequential, parallel.unwrap());
}

#[test]
fn long_files_are_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cmdline");
    let text: String = (0..20_000)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    fs::write(&path, &text).unwrap();
    let mut buf = Vec::new();
    assert_eq!(read_file(&path, &mut buf).unwrap(), text);
    fs::write(&path, "short").unwrap();
    assert_eq!(read_file(&path, &mut buf).unwrap(), "short");
}

/// Yields its text a few bytes per read, as `task/TID/children` does a
/// page at a time.
struct Trickle<'a>(&'a [u8]);

impl Read for Trickle<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = self.0.len().min(out.len()).min(7);
        out[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

#[test]
fn short_reads_are_not_the_end_of_the_file() {
    let text = "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 ";
    let mut buf = Vec::new();
    Trickle(text.as_bytes()).read_to_end(&mut buf).unwrap();
    assert_eq!(buf, text.as_bytes());
}

#[test]
fn live_snapshot_of_self_has_memory() {
    let snap = snapshot(&Selector::Tree(std::process::id())).unwrap();
    let me = &snap.processes[0];
    assert_eq!(me.pid, std::process::id());
    assert!(me.rss_bytes > 0);
    assert!(
        me.pss_bytes
            .is_some_and(|pss| pss > 0 && pss <= me.rss_bytes)
    );
    assert!(me.uss_bytes.is_some_and(|uss| uss > 0));
    assert!(me.threads >= 1);
}
