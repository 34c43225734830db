//! A differential test: bench-proc's own /proc parsers against procfs-core's, on every
//! live process. The own parsers exist for speed on the sampling path (docs/architecture.md
//! has the measurement); procfs-core is the well-kept reference they must agree with.

use bench_proc::parse::{parse_smaps_rollup, parse_stat, parse_status};
use procfs_core::process::{SmapsRollup, Stat, Status};
use procfs_core::{FromBufRead, FromRead};
use std::path::Path;
use std::process::{Command, Stdio};

/// The three files of one process, read at one moment (a process may vanish between
/// the reads: then it is skipped, as the walker skips it).
struct Files {
    pid: u32,
    stat: String,
    status: String,
    rollup: Option<String>,
}

fn read(pid: u32) -> Option<Files> {
    let dir = Path::new("/proc").join(pid.to_string());
    Some(Files {
        pid,
        stat: std::fs::read_to_string(dir.join("stat")).ok()?,
        status: std::fs::read_to_string(dir.join("status")).ok()?,
        // Kernel threads have an empty rollup; other users' processes are unreadable
        // without root.
        rollup: std::fs::read_to_string(dir.join("smaps_rollup"))
            .ok()
            .filter(|text| !text.is_empty()),
    })
}

fn compare(files: &Files) -> Vec<String> {
    let mut differences = Vec::new();
    let mut differ = |what: &str, own: String, oracle: String| {
        if own != oracle {
            differences.push(format!(
                "pid {} {what}: own {own}, procfs {oracle}",
                files.pid
            ));
        }
    };

    let own = parse_stat(&files.stat).expect("own stat parser");
    let oracle = Stat::from_read(files.stat.as_bytes()).expect("procfs stat parser");
    differ("stat pid", own.pid.to_string(), oracle.pid.to_string());
    differ("stat comm", own.name.clone(), oracle.comm.clone());
    differ(
        "stat state",
        own.state.to_string(),
        oracle.state.to_string(),
    );
    differ("stat ppid", own.ppid.to_string(), oracle.ppid.to_string());
    differ("stat pgrp", own.pgrp.to_string(), oracle.pgrp.to_string());
    differ(
        "stat session",
        own.session.to_string(),
        oracle.session.to_string(),
    );
    differ(
        "stat flags",
        own.flags.to_string(),
        oracle.flags.to_string(),
    );
    differ(
        "stat utime",
        own.utime_ticks.to_string(),
        oracle.utime.to_string(),
    );
    differ(
        "stat stime",
        own.stime_ticks.to_string(),
        oracle.stime.to_string(),
    );
    differ(
        "stat threads",
        own.threads.to_string(),
        oracle.num_threads.to_string(),
    );
    differ(
        "stat starttime",
        own.start_ticks.to_string(),
        oracle.starttime.to_string(),
    );
    differ(
        "stat rss",
        own.rss_pages.to_string(),
        oracle.rss.to_string(),
    );

    let own = parse_status(&files.status).expect("own status parser");
    let oracle = Status::from_read(files.status.as_bytes()).expect("procfs status parser");
    // procfs-core 0.18 splits each status line at every ':', so it cuts a name such as
    // "kworker/u8:2-writeback" or "memfd:sealed-91" at its first colon; the own parser
    // keeps the whole value, which stat's comm (compared above) confirms.
    let own_name = own.name.split(':').next().unwrap_or_default().to_owned();
    differ("status name", own_name, oracle.name.clone());
    if own.name.contains(':') {
        let comm = parse_stat(&files.stat).map(|stat| stat.name);
        differ(
            "status name vs comm",
            own.name.clone(),
            comm.unwrap_or_default(),
        );
    }
    differ(
        "status state",
        own.state.to_string(),
        oracle.state.chars().next().unwrap_or('?').to_string(),
    );
    differ("status ppid", own.ppid.to_string(), oracle.ppid.to_string());
    differ("status uid", own.uid.to_string(), oracle.ruid.to_string());
    differ(
        "status threads",
        own.threads.to_string(),
        oracle.threads.to_string(),
    );
    let kib = |value: Option<u64>| format!("{:?}", value.map(|kib| kib * 1024));
    differ(
        "status VmRSS",
        format!("{:?}", own.vm_rss_bytes),
        kib(oracle.vmrss),
    );
    differ(
        "status VmSwap",
        format!("{:?}", own.vm_swap_bytes),
        kib(oracle.vmswap),
    );

    if let Some(text) = &files.rollup {
        let own = parse_smaps_rollup(text).expect("own smaps_rollup parser");
        let oracle = SmapsRollup::from_buf_read(text.as_bytes()).expect("procfs rollup parser");
        let map = &oracle.memory_map_rollup.0[0].extension.map;
        let field = |key: &str| map.get(key).copied().unwrap_or(0);
        differ(
            "rollup Rss",
            own.rss_bytes.to_string(),
            field("Rss").to_string(),
        );
        differ(
            "rollup Pss",
            own.pss_bytes.to_string(),
            field("Pss").to_string(),
        );
        differ(
            "rollup Swap",
            own.swap_bytes.to_string(),
            field("Swap").to_string(),
        );
        differ(
            "rollup SwapPss",
            own.swap_pss_bytes.to_string(),
            field("SwapPss").to_string(),
        );
        differ(
            "rollup USS (Private_Clean + Private_Dirty)",
            own.uss_bytes.to_string(),
            (field("Private_Clean") + field("Private_Dirty")).to_string(),
        );
        for (name, value) in [
            ("Pss_Anon", own.pss_anon_bytes),
            ("Pss_File", own.pss_file_bytes),
            ("Pss_Shmem", own.pss_shmem_bytes),
        ] {
            differ(
                &format!("rollup {name}"),
                format!("{value:?}"),
                format!("{:?}", map.get(name).copied()),
            );
        }
    }
    differences
}

#[test]
fn own_parsers_agree_with_procfs_on_every_live_process() {
    // A process whose name has the characters that trip stat parsers: spaces and
    // parentheses (comm is cut at 15 bytes).
    let dir = tempfile::tempdir().unwrap();
    let tricky = dir.path().join("a) (b c");
    std::fs::copy("/bin/sleep", &tricky).unwrap();
    let mut child = Command::new(&tricky)
        .arg("30")
        .stdin(Stdio::null())
        .spawn()
        .unwrap();

    let mut compared = 0;
    let mut with_rollup = 0;
    let mut saw_tricky = false;
    let mut differences = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap() {
        let Some(pid) = entry
            .ok()
            .and_then(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        else {
            continue;
        };
        let Some(files) = read(pid) else { continue };
        saw_tricky |= pid == child.id();
        compared += 1;
        with_rollup += usize::from(files.rollup.is_some());
        differences.extend(compare(&files));
    }
    let _ = child.kill();
    let _ = child.wait();

    assert!(saw_tricky, "the process named \"a) (b c\" was not compared");
    // This test, its parents and the sleeper are always there, with readable rollups.
    assert!(
        compared >= 3 && with_rollup >= 2,
        "{compared} / {with_rollup}"
    );
    assert!(
        differences.is_empty(),
        "{} difference(s) in {compared} processes:\n{}",
        differences.len(),
        differences.join("\n")
    );
}
