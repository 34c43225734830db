//! Accuracy against a fixture whose memory is known exactly.

use crate::support::{Fixture, MIB, fixture_command, mib, within};
use bench_proc::settle::{self, Quiet, Settle, SettleEnd};
use bench_proc::staircase::{self, Instances, StaircaseOptions};
use bench_proc::{ProcRoot, Selector, snapshot, stop};
use std::os::unix::process::CommandExt;
use std::time::Duration;

const SIXTY_FOUR: f64 = (64 * MIB) as f64;

/// Instances that are 64 MiB regions of one shared sidecar process, as instances
/// that lease parts of one shared daemon are.
struct Regions<'a>(&'a mut Fixture);

#[derive(Debug, thiserror::Error)]
#[error("never fails")]
struct Never;

impl Instances for Regions<'_> {
    type Instance = ();
    type Error = Never;
    fn create(&mut self) -> Result<(), Never> {
        self.0.command("add 64", "added");
        Ok(())
    }
    fn start(&mut self, _: &mut ()) -> Result<(), Never> {
        Ok(())
    }
    fn verify(&mut self, _: &mut ()) -> Result<(), Never> {
        Ok(())
    }
    fn stop(&mut self, _: ()) -> Result<(), Never> {
        self.0.command("drop", "dropped");
        Ok(())
    }
}

#[test]
fn staircase_of_64_mib_regions_measures_64_mib_per_instance() {
    let mut sidecar = Fixture::spawn(&["--serve"]);
    let options = StaircaseOptions {
        count: 4,
        settle: Settle::Fixed(Duration::from_millis(50)),
        family: Selector::Tree(sidecar.pid),
        exclude_pids: Vec::new(),
        warmup: true,
    };
    let report = staircase::run(&mut Regions(&mut sidecar), &options).unwrap();
    let rss = report.avg_per_instance_rss_bytes as f64;
    let pss = report.avg_per_instance_pss_bytes.unwrap() as f64;
    eprintln!(
        "regions: RSS {} PSS {} per instance, reclaimed {}",
        mib(rss),
        mib(pss),
        mib(report.reclaimed_rss_bytes as f64)
    );
    assert!(
        within(rss, SIXTY_FOUR, 0.03),
        "RSS per instance {}",
        mib(rss)
    );
    assert!(
        within(pss, SIXTY_FOUR, 0.03),
        "PSS per instance {}",
        mib(pss)
    );
    for step in &report.steps {
        let delta = step.rss_delta_bytes as f64;
        assert!(
            within(delta, SIXTY_FOUR, 0.03),
            "step {}: {}",
            step.index,
            mib(delta)
        );
    }
    let added = (report.steps.last().unwrap().totals.rss_bytes - report.baseline.rss_bytes) as f64;
    let reclaimed = report.reclaimed_rss_bytes as f64;
    assert!(
        within(reclaimed, added, 0.05),
        "reclaimed {} of {}",
        mib(reclaimed),
        mib(added)
    );
}

/// A uid of its own, so the family is exactly the instances even when other
/// tests run in the same process (`cargo test`), as the pipeline measures a trial
/// user's processes.
const INSTANCE_UID: u32 = 54_323;

/// Instances that are whole fixture processes of 64 MiB each, run as
/// [`INSTANCE_UID`].
struct Processes(Vec<u32>);

#[derive(Debug, thiserror::Error)]
#[error("fixture instance failed")]
struct Failed(#[source] bench_proc::StopError);

impl Instances for Processes {
    type Instance = Fixture;
    type Error = Failed;
    fn create(&mut self) -> Result<Fixture, Failed> {
        let mut command = fixture_command(&["--mib", "64"]);
        command.uid(INSTANCE_UID).gid(INSTANCE_UID);
        let fixture = Fixture::start(command);
        self.0.push(fixture.pid);
        Ok(fixture)
    }
    fn start(&mut self, _: &mut Fixture) -> Result<(), Failed> {
        Ok(())
    }
    fn verify(&mut self, fixture: &mut Fixture) -> Result<(), Failed> {
        assert!(
            fixture.child.try_wait().unwrap().is_none(),
            "instance exited"
        );
        Ok(())
    }
    fn stop(&mut self, fixture: Fixture) -> Result<(), Failed> {
        stop(&Selector::Tree(fixture.pid), Duration::from_secs(2)).map_err(Failed)?;
        Ok(())
    }
}

#[test]
fn staircase_of_64_mib_processes_measures_64_mib_pss_per_instance() {
    let options = StaircaseOptions {
        count: 3,
        settle: Settle::Fixed(Duration::from_millis(100)),
        family: Selector::Uid(INSTANCE_UID),
        exclude_pids: Vec::new(),
        warmup: true,
    };
    let mut instances = Processes(Vec::new());
    let report = staircase::run(&mut instances, &options).unwrap();
    let pss = report.avg_per_instance_pss_bytes.unwrap() as f64;
    let uss = report.avg_per_instance_uss_bytes.unwrap() as f64;
    let rss = report.avg_per_instance_rss_bytes as f64;
    eprintln!(
        "processes: RSS {} PSS {} USS {} per instance, reclaimed {}",
        mib(rss),
        mib(pss),
        mib(uss),
        mib(report.reclaimed_rss_bytes as f64)
    );
    assert!(
        within(pss, SIXTY_FOUR, 0.03),
        "PSS per instance {}",
        mib(pss)
    );
    assert!(
        within(uss, SIXTY_FOUR, 0.03),
        "USS per instance {}",
        mib(uss)
    );
    // RSS also counts each process's own copy of libc and the binary (about
    // 2 MiB here), which PSS shares out; it is at least the region.
    assert!(
        rss >= SIXTY_FOUR && rss < SIXTY_FOUR + (4 * MIB) as f64,
        "RSS per instance {}",
        mib(rss)
    );
    let reclaimed = report.reclaimed_rss_bytes as f64;
    let added = rss * 3.0;
    assert!(
        within(reclaimed, added, 0.05),
        "reclaimed {} of {}",
        mib(reclaimed),
        mib(added)
    );
    assert_eq!(report.after_teardown.process_count, 0);
    assert_eq!(instances.0.len(), 4, "warm-up plus three");
}

#[test]
fn pss_of_forked_children_sharing_64_mib_sums_to_64_mib_and_rss_does_not() {
    let family = |mib: &str| {
        let fixture = Fixture::spawn(&["--mib", mib, "--children", "3"]);
        let snap = snapshot(&Selector::Tree(fixture.pid)).unwrap();
        assert_eq!(snap.processes.len(), 4, "{snap:?}");
        (
            snap.total_rss_bytes() as f64,
            snap.total_pss_bytes().unwrap() as f64,
        )
    };
    let (rss_64, pss_64) = family("64");
    let (rss_0, pss_0) = family("0");
    let pss = pss_64 - pss_0;
    let rss = rss_64 - rss_0;
    eprintln!(
        "parent + 3 children sharing 64 MiB: PSS {} RSS {}",
        mib(pss),
        mib(rss)
    );
    assert!(
        within(pss, SIXTY_FOUR, 0.03),
        "PSS of the shared region {}",
        mib(pss)
    );
    assert!(
        within(rss, 4.0 * SIXTY_FOUR, 0.03),
        "RSS counts it four times: {}",
        mib(rss)
    );
}

#[test]
fn another_users_pss_is_unknown_not_zero() {
    let target = Fixture::spawn(&["--mib", "16"]);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_bench-proc-fixture"))
        .args(["--snapshot-tree", &target.pid.to_string()])
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let process = &json["processes"][0];
    assert_eq!(process["pid"], target.pid);
    assert!(process["pss_bytes"].is_null(), "{process}");
    assert!(process["uss_bytes"].is_null(), "{process}");
    assert!(
        process["rss_bytes"].as_u64().unwrap() >= 16 * MIB,
        "{process}"
    );
}

#[test]
fn zombie_child_is_not_counted() {
    // The shell's background child exits, and `exec sleep` never reaps it. It lives a
    // tenth of a second first, so the wait below must see it become a zombie: with a
    // child that exits at once the test passed or failed by how fast it did.
    let mut command = std::process::Command::new("sh");
    command
        .args(["-c", "sleep 0.1 & exec sleep 30"])
        .process_group(0);
    let mut child = command.spawn().unwrap();
    let pid = child.id();
    let root = bench_proc::ProcRoot::live();
    let mut discovered = Vec::new();
    // Until the shell is `sleep` and its child has exited: a child still running (the
    // shell forked it, it has not run `true` yet) is a live process the snapshot must
    // count, so waiting for two processes alone raced on a loaded machine.
    for _ in 0..2000 {
        discovered = root.discover(&Selector::Tree(pid)).unwrap();
        let is_sleep = std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .is_ok_and(|comm| comm.trim() == "sleep");
        let child_is_zombie = discovered
            .iter()
            .filter(|&&found| found != pid)
            .all(|found| is_zombie(*found));
        if discovered.len() == 2 && is_sleep && child_is_zombie {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let snap = snapshot(&Selector::Tree(pid)).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(discovered.len(), 2, "sleep and its zombie: {discovered:?}");
    assert_eq!(snap.processes.len(), 1, "{snap:?}");
    assert_eq!(snap.processes[0].name, "sleep");
}

/// Whether `pid` has exited and waits to be reaped (state `Z` in `/proc/PID/stat`).
fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        // The state follows the command name, which is in parentheses and may hold any byte.
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z'))
    })
}

#[test]
fn uid_snapshot_finds_processes_of_that_user() {
    let mut command = fixture_command(&["--mib", "8"]);
    command.uid(54_321).gid(54_321);
    let fixture = Fixture::start(command);
    let snap = snapshot(&Selector::Uid(54_321)).unwrap();
    assert_eq!(snap.processes.len(), 1, "{snap:?}");
    assert_eq!(snap.processes[0].pid, fixture.pid);
    assert!(snap.total_rss_bytes() >= 8 * MIB);
}

#[test]
fn child_of_a_worker_thread_is_in_the_tree() {
    // The child is forked by a worker thread, so only that thread's
    // `task/TID/children` lists it; the main thread's file does not.
    // The worker stays alive: when a thread exits, the kernel moves its
    // children to another thread of the process.
    let script = "import subprocess, threading, time\n\
                  def work():\n\
                  \x20   subprocess.Popen(['sleep', '30'])\n\
                  \x20   print('ready', flush=True)\n\
                  \x20   time.sleep(30)\n\
                  t = threading.Thread(target=work)\n\
                  t.start(); t.join()\n";
    let mut command = std::process::Command::new("python3");
    command
        .args(["-c", script])
        .stdout(std::process::Stdio::piped())
        .process_group(0);
    let mut child = command.spawn().unwrap();
    let pid = child.id();
    let mut line = String::new();
    let stdout = child.stdout.take().unwrap();
    // Bounded by the test's own timeout; python prints at once.
    std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line).unwrap();
    let main_thread_children =
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    let snap = snapshot(&Selector::Tree(pid));
    let stopped = stop(&Selector::Tree(pid), Duration::from_secs(2));
    let _ = child.wait();
    let snap = snap.unwrap();
    assert_eq!(line.trim(), "ready");
    let names: Vec<&str> = snap.processes.iter().map(|p| p.name.as_str()).collect();
    assert!(names.contains(&"sleep"), "{names:?}");
    let sleep = snap
        .processes
        .iter()
        .find(|p| p.name == "sleep")
        .unwrap()
        .pid;
    assert!(
        !main_thread_children
            .split_whitespace()
            .any(|c| c == sleep.to_string()),
        "the main thread's children file lists {sleep}: {main_thread_children}"
    );
    assert!(stopped.unwrap().terminated.len() >= 2);
}

#[test]
fn a_quiet_settle_waits_for_memory_allocated_after_ready() {
    // 16 MiB at once, then 64 MiB more 300 ms after the ready line. The pause before
    // the late allocation is shorter than the quiet interval (400 ms), so the settle
    // must not end before it and must then see it quiet for a whole interval.
    let fixture = Fixture::spawn(&["--mib", "16", "--late-mib", "64", "--late-after-ms", "300"]);
    let quiet = Quiet {
        max: Duration::from_secs(20),
        quiet: Duration::from_millis(400),
        ..Quiet::default()
    };
    let report = settle::settle_sleeping(
        &ProcRoot::live(),
        &Selector::Tree(fixture.pid),
        &[],
        &Settle::Quiet(quiet),
    );
    let rss = snapshot(&Selector::Tree(fixture.pid))
        .unwrap()
        .total_rss_bytes() as f64;
    eprintln!(
        "settled after {:?} ({:?}) at {}",
        report.took,
        report.end,
        mib(rss)
    );
    assert_eq!(report.end, SettleEnd::Quiet, "{report:?}");
    assert!(
        report.took >= Duration::from_millis(300 + 400),
        "ended before the late allocation had been quiet: {report:?}"
    );
    assert!(rss >= (80 * MIB) as f64, "measured {}", mib(rss));
    assert!(report.samples >= 2, "{report:?}");
}
