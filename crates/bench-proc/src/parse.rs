//! Pure parsers for the `/proc` files the snapshot reads.
//!
//! Every function takes the file's text and turns kibibytes and pages into bytes
//! here, so nothing downstream deals in other units.

/// The fields of `/proc/PID/stat` that a snapshot needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    /// Process id.
    pub pid: u32,
    /// `comm`: the name, at most 15 bytes, as the kernel keeps it.
    pub name: String,
    /// One-letter state (`R`, `S`, `D`, `Z`, ...).
    pub state: char,
    /// Parent process id.
    pub ppid: u32,
    /// Process group id.
    pub pgrp: u32,
    /// Session id.
    pub session: u32,
    /// Kernel flags (`PF_*`); [`Stat::is_kernel_thread`] reads `PF_KTHREAD`.
    pub flags: u64,
    /// User-mode CPU time in clock ticks.
    pub utime_ticks: u64,
    /// Kernel-mode CPU time in clock ticks.
    pub stime_ticks: u64,
    /// Number of threads.
    pub threads: u32,
    /// Start time after boot in clock ticks; with the pid it names one process
    /// even if the pid is reused.
    pub start_ticks: u64,
    /// Resident set size in pages (the kernel's approximate counter).
    pub rss_pages: u64,
    /// User CPU time of the children it has waited for, in clock ticks (`cutime`).
    pub children_utime_ticks: u64,
    /// System CPU time of the children it has waited for, in clock ticks (`cstime`).
    pub children_stime_ticks: u64,
}

impl Stat {
    /// Whether this is a kernel thread (`PF_KTHREAD`), which has no memory of its own.
    pub fn is_kernel_thread(&self) -> bool {
        const PF_KTHREAD: u64 = 0x0020_0000;
        self.flags & PF_KTHREAD != 0
    }

    /// Whether the process has exited and waits to be reaped.
    pub fn is_zombie(&self) -> bool {
        self.state == 'Z' || self.state == 'X'
    }
}

/// Parses `/proc/PID/stat`. The name sits in parentheses and may itself contain
/// spaces and parentheses, so it is cut at the last `)`. Returns `None` when the
/// text is not a stat line (for example, empty because the process vanished).
pub fn parse_stat(text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    let name = text.get(open + 1..close)?.to_string();
    // Fields after the name, numbered as in proc(5) starting at field 3 (state).
    let rest: Vec<&str> = text.get(close + 1..)?.split_ascii_whitespace().collect();
    let field = |number: usize| rest.get(number - 3).copied();
    let num = |number: usize| field(number)?.parse::<u64>().ok();
    Some(Stat {
        pid,
        name,
        state: field(3)?.chars().next()?,
        ppid: u32::try_from(num(4)?).ok()?,
        pgrp: u32::try_from(num(5)?).ok()?,
        session: u32::try_from(num(6)?).ok()?,
        flags: num(9)?,
        utime_ticks: num(14)?,
        stime_ticks: num(15)?,
        children_utime_ticks: field(16)?.parse::<i64>().ok()?.max(0).unsigned_abs(),
        children_stime_ticks: field(17)?.parse::<i64>().ok()?.max(0).unsigned_abs(),
        threads: u32::try_from(num(20)?).ok()?,
        start_ticks: num(22)?,
        rss_pages: field(24)?.parse::<i64>().ok()?.max(0).unsigned_abs(),
    })
}

/// `/proc/PID/task/TID/schedstat` (or `/proc/PID/schedstat`, the main thread's):
/// the scheduler's account of one thread, in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Schedstat {
    /// Time spent on a CPU (user and kernel together), in nanoseconds: the
    /// `sum_exec_runtime` that `utime` and `stime` are scaled from.
    pub run_ns: u64,
    /// Time spent runnable but waiting for a CPU, in nanoseconds.
    pub wait_ns: u64,
    /// How many times the thread ran on a CPU.
    pub timeslices: u64,
}

/// Parses a `schedstat` file: three decimal numbers on one line. Returns `None` for
/// anything else (an empty file of a vanished thread).
pub fn parse_schedstat(text: &str) -> Option<Schedstat> {
    let mut fields = text.split_ascii_whitespace().map(str::parse::<u64>);
    let schedstat = Schedstat {
        run_ns: fields.next()?.ok()?,
        wait_ns: fields.next()?.ok()?,
        timeslices: fields.next()?.ok()?,
    };
    fields.next().is_none().then_some(schedstat)
}

/// The totals of `/proc/PID/smaps_rollup`, in bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rollup {
    /// `Rss`.
    pub rss_bytes: u64,
    /// `Pss`.
    pub pss_bytes: u64,
    /// `Pss_Anon` (Linux 5.7+); `None` on older kernels.
    pub pss_anon_bytes: Option<u64>,
    /// `Pss_File` (Linux 5.7+).
    pub pss_file_bytes: Option<u64>,
    /// `Pss_Shmem` (Linux 5.7+).
    pub pss_shmem_bytes: Option<u64>,
    /// `Private_Clean` + `Private_Dirty`: the unique set size.
    pub uss_bytes: u64,
    /// `Swap`.
    pub swap_bytes: u64,
    /// `SwapPss`.
    pub swap_pss_bytes: u64,
}

/// Parses `/proc/PID/smaps_rollup`. Returns `None` when the text has no `Rss:`
/// line: a zombie or a kernel thread has no memory map and the file is empty.
pub fn parse_smaps_rollup(text: &str) -> Option<Rollup> {
    let mut rollup = Rollup::default();
    let mut saw_rss = false;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let Some(bytes) = kib_value(value) else {
            continue;
        };
        match key {
            "Rss" => {
                rollup.rss_bytes = bytes;
                saw_rss = true;
            }
            "Pss" => rollup.pss_bytes = bytes,
            "Pss_Anon" => rollup.pss_anon_bytes = Some(bytes),
            "Pss_File" => rollup.pss_file_bytes = Some(bytes),
            "Pss_Shmem" => rollup.pss_shmem_bytes = Some(bytes),
            "Private_Clean" | "Private_Dirty" => rollup.uss_bytes += bytes,
            "Swap" => rollup.swap_bytes = bytes,
            "SwapPss" => rollup.swap_pss_bytes = bytes,
            _ => {}
        }
    }
    saw_rss.then_some(rollup)
}

/// The fields of `/proc/PID/status` that a snapshot needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// `Name`.
    pub name: String,
    /// First letter of `State`.
    pub state: char,
    /// `PPid`.
    pub ppid: u32,
    /// Real uid (first number of `Uid`), the owner as `ps -u` sees it.
    pub uid: u32,
    /// `Threads`.
    pub threads: u32,
    /// `VmRSS`, absent for kernel threads and zombies.
    pub vm_rss_bytes: Option<u64>,
    /// `VmSwap`, absent for kernel threads and zombies.
    pub vm_swap_bytes: Option<u64>,
}

/// Parses `/proc/PID/status`. Returns `None` when a required field is missing.
pub fn parse_status(text: &str) -> Option<Status> {
    let mut name = None;
    let mut state = None;
    let mut ppid = None;
    let mut uid = None;
    let mut threads = None;
    let mut vm_rss_bytes = None;
    let mut vm_swap_bytes = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key {
            // The name is escaped by the kernel (`\n` for a newline), kept as is.
            "Name" => name = Some(value.to_string()),
            "State" => state = value.chars().next(),
            "PPid" => ppid = value.parse().ok(),
            "Uid" => uid = value.split_ascii_whitespace().next()?.parse().ok(),
            "Threads" => threads = value.parse().ok(),
            "VmRSS" => vm_rss_bytes = kib_value(value),
            "VmSwap" => vm_swap_bytes = kib_value(value),
            _ => {}
        }
    }
    Some(Status {
        name: name?,
        state: state?,
        ppid: ppid?,
        uid: uid?,
        threads: threads?,
        vm_rss_bytes,
        vm_swap_bytes,
    })
}

/// The four uids of a `/proc/PID/status` text's `Uid:` line: real, effective,
/// saved and filesystem. `None` when the line is missing or malformed.
pub fn parse_status_uids(text: &str) -> Option<[u32; 4]> {
    let line = text.lines().find_map(|line| line.strip_prefix("Uid:"))?;
    let mut numbers = line.split_ascii_whitespace().map(|n| n.parse::<u32>());
    let mut uids = [0; 4];
    for uid in &mut uids {
        *uid = numbers.next()?.ok()?;
    }
    Some(uids)
}

/// Parses a `/proc/PID/task/TID/children` list: pids separated by spaces.
pub fn parse_children(text: &str) -> impl Iterator<Item = u32> + '_ {
    text.split_ascii_whitespace()
        .filter_map(|token| token.parse().ok())
}

/// Turns `/proc/PID/cmdline` (arguments separated and ended by NUL) into one
/// line with spaces. Empty for kernel threads and zombies.
pub fn parse_cmdline(bytes: &[u8]) -> String {
    let trimmed = bytes.strip_suffix(&[0]).unwrap_or(bytes);
    String::from_utf8_lossy(trimmed).replace('\0', " ")
}

/// `"  1234 kB"` to bytes.
fn kib_value(value: &str) -> Option<u64> {
    let mut parts = value.split_ascii_whitespace();
    let number: u64 = parts.next()?.parse().ok()?;
    match parts.next() {
        Some("kB") => number.checked_mul(1024),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_uid_of_a_status_is_read() {
        let text = "Name:\tpython3\nUid:\t1000\t2001\t2002\t2003\nGid:\t5\t5\t5\t5\n";
        assert_eq!(parse_status_uids(text), Some([1000, 2001, 2002, 2003]));
        assert_eq!(parse_status_uids("Uid:\t1 2 3\n"), None);
        assert_eq!(parse_status_uids("Name: x\n"), None);
    }

    #[test]
    fn children_cpu_is_fields_16_and_17_after_the_name() {
        let stat = parse_stat(
            "4242 (a (b) c) S 1 4242 4242 0 -1 4194304 100 5 0 0 \
             12 34 56 78 20 0 1 0 999 1000 50",
        )
        .unwrap();
        assert_eq!((stat.utime_ticks, stat.stime_ticks), (12, 34));
        assert_eq!(
            (stat.children_utime_ticks, stat.children_stime_ticks),
            (56, 78)
        );
    }

    const ROLLUP: &str = "\
55d0c0a4e000-7ffd5b7fd000 ---p 00000000 00:00 0                          [rollup]
Rss:               67944 kB
Pss:               66012 kB
Pss_Dirty:         65700 kB
Pss_Anon:          65600 kB
Pss_File:            412 kB
Pss_Shmem:             0 kB
Shared_Clean:       1932 kB
Shared_Dirty:          0 kB
Private_Clean:       312 kB
Private_Dirty:     65700 kB
Referenced:        67944 kB
Anonymous:         65600 kB
KSM:                   0 kB
LazyFree:              0 kB
AnonHugePages:         0 kB
ShmemPmdMapped:        0 kB
FilePmdMapped:         0 kB
Shared_Hugetlb:        0 kB
Private_Hugetlb:       0 kB
Swap:                 16 kB
SwapPss:               8 kB
Locked:                0 kB
";

    #[test]
    fn rollup_turns_kib_into_bytes() {
        let rollup = parse_smaps_rollup(ROLLUP).unwrap();
        assert_eq!(rollup.rss_bytes, 67944 * 1024);
        assert_eq!(rollup.pss_bytes, 66012 * 1024);
        assert_eq!(rollup.pss_anon_bytes, Some(65600 * 1024));
        assert_eq!(rollup.pss_file_bytes, Some(412 * 1024));
        assert_eq!(rollup.pss_shmem_bytes, Some(0));
        assert_eq!(rollup.uss_bytes, (312 + 65700) * 1024);
        assert_eq!(rollup.swap_bytes, 16 * 1024);
        assert_eq!(rollup.swap_pss_bytes, 8 * 1024);
    }

    #[test]
    fn empty_rollup_of_a_zombie_is_none() {
        assert_eq!(parse_smaps_rollup(""), None);
    }

    #[test]
    fn old_kernel_rollup_has_no_pss_split() {
        let rollup = parse_smaps_rollup("Rss: 8 kB\nPss: 4 kB\n").unwrap();
        assert_eq!(rollup.pss_anon_bytes, None);
        assert_eq!(rollup.pss_bytes, 4096);
    }

    #[test]
    fn stat_name_may_contain_spaces_and_parentheses() {
        let text = "4242 (tmux: server) (x)) S 1 4242 4242 0 -1 4194560 1210 0 0 0 \
                    150 25 0 0 20 0 3 0 98765 23306240 1024 18446744073709551615 1 1 0 0 0 0 0 \
                    4096 134433283 0 0 0 17 1 0 0 0 0 0\n";
        let stat = parse_stat(text).unwrap();
        assert_eq!(stat.pid, 4242);
        assert_eq!(stat.name, "tmux: server) (x)");
        assert_eq!(stat.state, 'S');
        assert_eq!(stat.ppid, 1);
        assert_eq!(stat.pgrp, 4242);
        assert_eq!(stat.session, 4242);
        assert_eq!(stat.utime_ticks, 150);
        assert_eq!(stat.stime_ticks, 25);
        assert_eq!(stat.threads, 3);
        assert_eq!(stat.start_ticks, 98765);
        assert_eq!(stat.rss_pages, 1024);
        assert!(!stat.is_kernel_thread());
        assert!(!stat.is_zombie());
    }

    #[test]
    fn kernel_thread_flag_is_read() {
        let text = "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 2 0 0 \
                    18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 0 0 0 0 0 0\n";
        assert!(parse_stat(text).unwrap().is_kernel_thread());
    }

    #[test]
    fn truncated_stat_is_none() {
        assert_eq!(parse_stat(""), None);
        assert_eq!(parse_stat("12 (sh) S 1"), None);
    }

    #[test]
    fn status_reads_real_uid_and_rss() {
        let text = "Name:\tnode\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t77\nPid:\t77\n\
                    PPid:\t70\nUid:\t1001\t1002\t1003\t1004\nGid:\t100\t100\t100\t100\n\
                    VmRSS:\t   51200 kB\nVmSwap:\t       0 kB\nThreads:\t11\n";
        let status = parse_status(text).unwrap();
        assert_eq!(status.name, "node");
        assert_eq!(status.state, 'S');
        assert_eq!(status.ppid, 70);
        assert_eq!(status.uid, 1001);
        assert_eq!(status.threads, 11);
        assert_eq!(status.vm_rss_bytes, Some(51200 * 1024));
        assert_eq!(status.vm_swap_bytes, Some(0));
    }

    #[test]
    fn zombie_status_has_no_rss() {
        let text = "Name:\tsh\nState:\tZ (zombie)\nPPid:\t1\nUid:\t0\t0\t0\t0\nThreads:\t1\n";
        let status = parse_status(text).unwrap();
        assert_eq!(status.state, 'Z');
        assert_eq!(status.vm_rss_bytes, None);
    }

    #[test]
    fn children_list_is_split_on_spaces() {
        assert_eq!(
            parse_children("12 13 4000 \n").collect::<Vec<_>>(),
            [12, 13, 4000]
        );
        assert_eq!(parse_children("").count(), 0);
    }

    #[test]
    fn cmdline_nuls_become_spaces() {
        assert_eq!(
            parse_cmdline(b"python3\0-m\0http.server\0"),
            "python3 -m http.server"
        );
        assert_eq!(parse_cmdline(b""), "");
    }

    #[test]
    fn schedstat_is_three_numbers_in_nanoseconds() {
        assert_eq!(
            parse_schedstat("1234567891 42 7\n"),
            Some(Schedstat {
                run_ns: 1_234_567_891,
                wait_ns: 42,
                timeslices: 7
            })
        );
        assert_eq!(parse_schedstat(""), None);
        assert_eq!(parse_schedstat("1 2"), None);
        assert_eq!(parse_schedstat("1 2 3 4"), None);
        assert_eq!(parse_schedstat("1 -2 3"), None);
    }
}
