//! Fixture trees shaped like `/proc`, for unit tests.

use std::fs;
use std::path::Path;

/// Writes one fake process into a fixture proc root.
pub fn process(root: &Path, pid: u32, ppid: u32, state: char, uid: u32, rss_kib: u64) {
    let dir = root.join(pid.to_string());
    fs::create_dir_all(dir.join("task").join(pid.to_string())).unwrap();
    fs::write(
        dir.join("stat"),
        format!(
            "{pid} (p{pid}) {state} {ppid} {pid} 77 0 -1 4194560 0 0 0 0 \
             100 50 0 0 20 0 2 0 1000 0 {} 0 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
            rss_kib / 4
        ),
    )
    .unwrap();
    fs::write(
        dir.join("status"),
        format!("Name:\tp{pid}\nState:\t{state}\nPPid:\t{ppid}\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\nThreads:\t2\n"),
    )
    .unwrap();
    let rollup = if state == 'Z' {
        String::new()
    } else {
        format!(
            "Rss: {rss_kib} kB\nPss: {} kB\nPss_Anon: {} kB\nPss_File: 0 kB\nPss_Shmem: 0 kB\n\
             Private_Clean: 0 kB\nPrivate_Dirty: {} kB\nSwap: 0 kB\nSwapPss: 0 kB\n",
            rss_kib / 2,
            rss_kib / 2,
            rss_kib / 4
        )
    };
    fs::write(dir.join("smaps_rollup"), rollup).unwrap();
    fs::write(dir.join("cmdline"), format!("p{pid}\0--flag\0")).unwrap();
    fs::write(dir.join("task").join(pid.to_string()).join("children"), "").unwrap();
}

pub fn children(root: &Path, pid: u32, tid: u32, list: &str) {
    let dir = root
        .join(pid.to_string())
        .join("task")
        .join(tid.to_string());
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("children"), list).unwrap();
}

/// Rewrites the thread count in a fixture process's `stat`.
pub fn set_threads(root: &Path, pid: u32, threads: u32) {
    let path = root.join(pid.to_string()).join("stat");
    let stat = fs::read_to_string(&path).unwrap();
    let mut fields: Vec<String> = stat.split(' ').map(str::to_string).collect();
    // Field 20 (num_threads), 1-based, with the name as one field here.
    fields[19] = threads.to_string();
    fs::write(&path, fields.join(" ")).unwrap();
}
