//! No descriptor of the caller above 2 crosses into a program bench-term starts:
//! a caller started as `clibench run SPEC 9<secret` must not hand fd 9 to the
//! measured program or to the kernel.

use bench_term::kernel::{Kernel, KernelOptions, REFERENCE_KERNEL};
use bench_term::{ReadyMode, SpawnOptions, Terminal};
use rustix::fd::{AsRawFd, OwnedFd};
use std::time::Duration;

const FIXTURE: &str = env!("CARGO_BIN_EXE_bench-term-fixture-tui");
const TIMEOUT: Duration = Duration::from_secs(20);

/// A descriptor of this process without close-on-exec, as a shell's `9<secret`
/// leaves one: std opens everything with `O_CLOEXEC`, `dup` clears it.
fn inherited_descriptor(folder: &std::path::Path) -> OwnedFd {
    let secret = std::fs::File::create(folder.join("secret")).unwrap();
    let duplicate = rustix::io::dup(&secret).unwrap();
    let flags = rustix::io::fcntl_getfd(&duplicate).unwrap();
    assert!(
        !flags.contains(rustix::io::FdFlags::CLOEXEC),
        "the duplicate must be inheritable for the test to mean anything"
    );
    duplicate
}

/// The descriptors `pid` holds above 2, with what each one is.
fn descriptors_above_stdio(pid: u32) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap() {
        let entry = entry.unwrap();
        let Ok(fd) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if fd > 2 {
            let target = std::fs::read_link(entry.path())
                .map(|path| path.display().to_string())
                .unwrap_or_default();
            found.push((fd, target));
        }
    }
    found
}

#[test]
fn the_measured_program_inherits_no_descriptor_above_two() {
    let folder = tempfile::tempdir().unwrap();
    let inherited = inherited_descriptor(folder.path());
    let options = SpawnOptions::new(FIXTURE)
        .args(["--echo"])
        .env("TERM", "xterm-256color")
        .size(80, 24);
    let mut terminal = Terminal::spawn(&options).unwrap();
    // Ready means the program runs its own code, long after exec.
    terminal.ready(&ReadyMode::Probe, TIMEOUT).unwrap();
    let held = descriptors_above_stdio(terminal.pid());
    terminal.close().unwrap();
    assert_eq!(
        held,
        Vec::new(),
        "fd {} of the caller",
        inherited.as_raw_fd()
    );
}

/// What each descriptor above 2 of this process that survives exec (no
/// close-on-exec flag) is: what a child could inherit from us.
fn inheritable_targets_of_this_process() -> Vec<String> {
    // O_CLOEXEC as /proc/PID/fdinfo prints it (octal, on every Linux architecture
    // but alpha, hppa and sparc).
    const O_CLOEXEC: u32 = 0o2_000_000;
    descriptors_above_stdio(std::process::id())
        .into_iter()
        .filter(|(fd, _)| {
            let info =
                std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")).unwrap_or_default();
            info.lines()
                .find_map(|line| line.strip_prefix("flags:"))
                .and_then(|flags| u32::from_str_radix(flags.trim(), 8).ok())
                .is_some_and(|flags| flags & O_CLOEXEC == 0)
        })
        .map(|(_, target)| target)
        .collect()
}

#[test]
fn the_kernel_inherits_no_descriptor_of_the_caller() {
    let folder = tempfile::tempdir().unwrap();
    let inherited = inherited_descriptor(folder.path());
    std::fs::write(folder.path().join("kernel.py"), REFERENCE_KERNEL).unwrap();
    let options = KernelOptions::new(
        "python3",
        [folder.path().join("kernel.py")],
        folder.path(),
        [
            ("PATH", "/usr/local/bin:/usr/bin:/bin"),
            ("LANG", "C.UTF-8"),
        ],
    );
    let ours = inheritable_targets_of_this_process();
    let secret = folder.path().join("secret").display().to_string();
    assert!(ours.contains(&secret), "{ours:?}");
    let mut kernel = Kernel::spawn(options).unwrap();
    kernel.ready().unwrap();
    // Python opens descriptors of its own (asyncio's pipes, sockets and epoll), so
    // the kernel is checked for ours: what each is, a pipe or socket by its inode.
    // A /dev/null it opened itself would look like one of ours.
    let held = descriptors_above_stdio(kernel.pid());
    kernel.close().unwrap();
    let leaked: Vec<_> = held
        .iter()
        .filter(|(_, target)| target != "/dev/null" && ours.contains(target))
        .collect();
    assert_eq!(
        leaked,
        Vec::<&(u32, String)>::new(),
        "the kernel holds descriptors of the caller (fd {} is the test's)",
        inherited.as_raw_fd()
    );
}
