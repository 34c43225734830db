//! Running as root on a shared machine: clibench reads only the state it wrote, removes
//! only the users, homes and folders it made, takes over no folder that is not its own,
//! finishes what a killed run started, leaves nothing of a trial uid behind, keeps two runs
//! out of one folder, hides credentials, and works with `--out` in a private folder.
//! Tests that need root say so on stderr and return when not root (CI runs them as root).

use crate::target::{INSTALLER, Target, is_root, uid_of, user_exists};
use crate::{clibench, run, shadow_tool, system_tool};
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn chmod(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

/// A Unix user made by a test (with a home under /home), removed when dropped.
struct TestUser {
    name: String,
}

impl TestUser {
    fn create(name: &str, comment: &str) -> TestUser {
        let output = shadow_tool(system_tool("useradd").args([
            "--create-home",
            "--shell",
            "/bin/sh",
            "--comment",
            comment,
            name,
        ]));
        assert!(
            output.status.success(),
            "useradd {name}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        TestUser {
            name: name.to_owned(),
        }
    }

    fn home(&self) -> PathBuf {
        Path::new("/home").join(&self.name)
    }
}

impl Drop for TestUser {
    fn drop(&mut self) {
        if user_exists(&self.name) {
            shadow_tool(system_tool("userdel").args(["--remove", &self.name]));
        }
    }
}

/// A run id no other test uses: six hex digits from the pid and a counter.
fn unique_run_id(salt: u32) -> String {
    format!(
        "{:06x}",
        (std::process::id().wrapping_mul(31).wrapping_add(salt)) & 0xff_ffff
    )
}

/// An output folder with a state file as clibench writes it (root's, 0600, in a 0700
/// folder of root's), listing `users` for run `run_id`.
fn out_with_state(dir: &Path, run_id: &str, users: &[(&str, &Path)]) -> PathBuf {
    let out = dir.join("out");
    fs::create_dir(&out).unwrap();
    chmod(&out, 0o700);
    let users: Vec<serde_json::Value> = users
        .iter()
        .enumerate()
        .map(|(install, (name, home))| {
            serde_json::json!({
                "install": install,
                "name": name,
                "home": home,
                "dedicated": true,
            })
        })
        .collect();
    let state = serde_json::json!({ "run_id": run_id, "users": users });
    fs::write(out.join("state.json"), state.to_string()).unwrap();
    chmod(&out.join("state.json"), 0o600);
    out
}

fn cleanup(out: &Path) -> crate::Run {
    run(clibench().arg("cleanup").arg("--out").arg(out))
}

#[test]
fn cleanup_is_listed_in_the_help() {
    let help = run(clibench().arg("--help"));
    assert_eq!(help.code, Some(0));
    assert!(
        help.stdout
            .lines()
            .any(|line| line.trim_start().starts_with("cleanup ")),
        "{}",
        help.stdout
    );
}

#[test]
fn a_state_file_planted_by_another_user_is_refused_and_nothing_is_removed() {
    if !is_root() {
        bench_core::skip_test!("needs root (CI runs it as root)");
    }
    let victim = TestUser::create(&format!("cbv{}", std::process::id()), "");
    let dir = tempfile::tempdir().unwrap();
    let precious = dir.path().join("precious");
    fs::create_dir(&precious).unwrap();
    fs::write(precious.join("data"), "keep me").unwrap();
    // What an unprivileged user can write: a folder of its own with a state file in it.
    let out = dir.path().join("out");
    fs::create_dir(&out).unwrap();
    let state = serde_json::json!({
        "run_id": "abcdef",
        "users": [{"install": 0, "name": victim.name, "home": victim.home(), "dedicated": true}],
        "folders": [precious],
    });
    fs::write(out.join("state.json"), state.to_string()).unwrap();
    for path in [out.as_path(), &out.join("state.json")] {
        std::os::unix::fs::chown(path, Some(65534), Some(65534)).unwrap();
    }
    let result = cleanup(&out);
    assert_ne!(result.code, Some(0), "{}", result.stderr);
    assert!(
        result.stderr.contains("refusing to use") && result.stderr.contains("uid 65534"),
        "{}",
        result.stderr
    );
    assert!(user_exists(&victim.name), "the victim user was removed");
    assert!(victim.home().is_dir(), "the victim's home was removed");
    assert!(
        precious.join("data").exists(),
        "the unrelated folder was removed"
    );
}

#[test]
fn a_user_without_clibenchs_mark_is_refused_even_in_clibenchs_own_state() {
    if !is_root() {
        bench_core::skip_test!("needs root (CI runs it as root)");
    }
    let run_id = unique_run_id(1);
    let name = format!("clibench-{run_id}-0");
    // Named as clibench names its users, but not made by clibench: no mark.
    let victim = TestUser::create(&name, "someone else");
    let dir = tempfile::tempdir().unwrap();
    let out = out_with_state(dir.path(), &run_id, &[(&name, &victim.home())]);
    let result = cleanup(&out);
    assert_ne!(result.code, Some(0), "{}", result.stderr);
    assert!(
        result.stderr.contains(&format!(
            "refusing to touch user {name}: its passwd comment is \"someone else\""
        )),
        "{}",
        result.stderr
    );
    assert!(user_exists(&name));
    assert!(victim.home().is_dir());
    // Refused once and dropped from the state: the next cleanup finishes.
    let again = cleanup(&out);
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    assert!(user_exists(&name));
}

#[test]
fn cleanup_finishes_a_run_killed_before_or_after_useradd() {
    if !is_root() {
        bench_core::skip_test!("needs root (CI runs it as root)");
    }
    let run_id = unique_run_id(2);
    // Install 0: recorded, never created (killed before useradd).
    let planned = format!("clibench-{run_id}-0");
    // Install 1: created with clibench's mark, but the run was killed before any other save.
    let created = format!("clibench-{run_id}-1");
    let user = TestUser::create(&created, &format!("clibench run {run_id}"));
    let dir = tempfile::tempdir().unwrap();
    let planned_home = Path::new("/home").join(&planned);
    let out = out_with_state(
        dir.path(),
        &run_id,
        &[(&planned, &planned_home), (&created, &user.home())],
    );
    let result = cleanup(&out);
    assert_eq!(result.code, Some(0), "{}", result.stderr);
    assert!(!user_exists(&created), "{created} was left");
    assert!(!user.home().exists(), "{} was left", user.home().display());
    assert!(!out.join("state.json").exists());
}

#[test]
fn cleanup_of_an_ab_folder_cleans_both_sides() {
    if !is_root() {
        bench_core::skip_test!("needs root (CI runs it as root)");
    }
    // `clibench ab` killed outright: its folder holds base/ and head/, each a run with
    // its own state and user, and nothing of its own. Cleanup of the folder said nothing
    // and left both users.
    let dir = tempfile::tempdir().unwrap();
    let ab = dir.path().join("ab");
    fs::create_dir(&ab).unwrap();
    chmod(&ab, 0o700);
    let mut users = Vec::new();
    for (salt, side) in [(3, "base"), (4, "head")] {
        let run_id = unique_run_id(salt);
        let name = format!("clibench-{run_id}-0");
        let user = TestUser::create(&name, &format!("clibench run {run_id}"));
        let out = out_with_state(dir.path(), &run_id, &[(&name, &user.home())]);
        fs::rename(&out, ab.join(side)).unwrap();
        users.push((name, user));
    }
    let result = cleanup(&ab);
    assert_eq!(result.code, Some(0), "{}", result.stderr);
    for (name, user) in &users {
        assert!(!user_exists(name), "{name} was left: {}", result.stderr);
        assert!(!user.home().exists());
    }
    // A folder with no state anywhere says so.
    let empty = dir.path().join("empty");
    fs::create_dir(&empty).unwrap();
    chmod(&empty, 0o700);
    let result = cleanup(&empty);
    assert_eq!(result.code, Some(0), "{}", result.stderr);
    assert!(
        result.stderr.contains("holds no run state"),
        "{}",
        result.stderr
    );
}

#[test]
fn run_into_a_folder_with_someone_elses_files_is_refused_and_nothing_changes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mine");
    fs::create_dir(&out).unwrap();
    for name in ["demo", "source", "artifacts"] {
        fs::create_dir(out.join(name)).unwrap();
        fs::write(out.join(name).join("file"), name).unwrap();
    }
    chmod(&out, 0o700);
    let result = run(clibench().arg("run").arg("--out").arg(&out));
    assert_eq!(result.code, Some(2), "{}", result.stderr);
    assert!(
        result.stderr.contains("was not made by clibench"),
        "{}",
        result.stderr
    );
    for name in ["demo", "source", "artifacts"] {
        assert_eq!(
            fs::read_to_string(out.join(name).join("file")).unwrap(),
            name
        );
    }
    assert_eq!(mode(&out), 0o700);
    let entries = fs::read_dir(&out).unwrap().count();
    assert_eq!(entries, 3, "clibench wrote into a folder it refused");
}

#[test]
fn a_folder_every_user_can_write_is_refused_and_keeps_its_sticky_bit() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    fs::create_dir(&shared).unwrap();
    chmod(&shared, 0o1777);
    let result = run(clibench().arg("run").arg("--out").arg(&shared));
    assert_eq!(result.code, Some(2), "{}", result.stderr);
    assert!(
        result.stderr.contains("every user can write into it"),
        "{}",
        result.stderr
    );
    assert_eq!(mode(&shared), 0o1777);
    assert_eq!(fs::read_dir(&shared).unwrap().count(), 0);
}

#[test]
fn a_second_clibench_on_one_folder_fails_at_once_naming_the_first() {
    let target = Target::new(INSTALLER);
    target.spec(&target.first_commit(), "", "");
    let first = target.phase("prepare", 0, &[]);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    // Hold the lock as a running clibench does, with a pid in the file.
    let lock = target.out.join(".clibench-lock");
    fs::write(&lock, "424242\n").unwrap();
    let mut holder = Command::new("flock")
        .arg("--no-fork")
        .arg(&lock)
        .args(["sleep", "60"])
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let second = loop {
        let second = target.phase("prepare", 0, &[]);
        if second.code != Some(0) || Instant::now() > deadline {
            break second;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let cleaned = cleanup(&target.out);
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert_eq!(second.code, Some(2), "{}", second.stderr);
    assert!(
        second
            .stderr
            .contains("is in use by another clibench (pid 424242)"),
        "{}",
        second.stderr
    );
    assert_ne!(cleaned.code, Some(0), "cleanup ran under another's lock");
    target.cleanup();
}

#[test]
fn a_rerun_starts_a_new_result_and_sets_the_old_one_aside() {
    let target = Target::new(INSTALLER);
    let spec = target.spec(&target.first_commit(), "", "");
    let rerun = || {
        run(clibench()
            .arg("run")
            .arg(&spec)
            .arg("--out")
            .arg(&target.out)
            .args(["--phases", "prepare"]))
    };
    let first = rerun();
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    let second = rerun();
    assert_eq!(second.code, Some(0), "{}", second.stderr);
    let previous: Vec<String> = fs::read_dir(&target.out)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("result.previous-"))
        .collect();
    assert_eq!(previous.len(), 1, "{previous:?}");
    assert!(
        second
            .stderr
            .contains("the earlier run's result was moved to"),
        "{}",
        second.stderr
    );
    // The new result holds one prepare, not the first run's merged in.
    let result = target.result();
    let timings = result["side"]["timings"].as_object().unwrap();
    assert_eq!(
        timings.keys().filter(|k| k.starts_with("phase:")).count(),
        1,
        "{timings:?}"
    );
}

#[test]
fn credentials_in_the_repository_url_are_written_and_printed_nowhere() {
    let target = Target::new(INSTALLER);
    let spec = target.spec(&target.first_commit(), "", "");
    let secret = "s3cr3tT0ken";
    let result = run(clibench()
        .arg("run")
        .arg(&spec)
        .arg("--out")
        .arg(&target.out)
        .args(["--phases", "prepare"])
        .arg("--repository")
        .arg(format!("http://user:{secret}@127.0.0.1:1/x.git")));
    assert_eq!(result.code, Some(1), "{}", result.stderr);
    assert!(!result.stderr.contains(secret), "{}", result.stderr);
    assert!(!result.stdout.contains(secret), "{}", result.stdout);
    let mut files = Vec::new();
    let mut stack = vec![target.out.clone()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap().flatten() {
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                files.push(entry.path());
            }
        }
    }
    assert!(files.len() > 2, "{files:?}");
    for file in &files {
        let text = String::from_utf8_lossy(&fs::read(file).unwrap()).into_owned();
        assert!(
            !text.contains(secret),
            "{} holds the token:\n{text}",
            file.display()
        );
    }
    let saved = target.result();
    assert_eq!(
        saved["request"]["source_repository"],
        "http://user:***@127.0.0.1:1/x.git"
    );
}

#[test]
fn trial_leftovers_in_tmp_shm_and_sysv_ipc_are_removed_and_the_uid_is_not_reused() {
    if !is_root() {
        bench_core::skip_test!("needs root (CI runs it as root)");
    }
    let tag = format!("cbleak{}", std::process::id());
    let installer = format!(
        "{INSTALLER}echo private > /tmp/{tag}\nmkdir /var/tmp/{tag}\necho x > /var/tmp/{tag}/f\n\
         echo private > /dev/shm/{tag}\nipcmk -M 4096\nipcmk -Q\n\
         echo private > /run/lock/{tag}\ncp /bin/true /tmp/{tag}-suid\nchmod 4755 /tmp/{tag}-suid\n\
         mkdir -p -m 0777 /tmp/{tag}-held\n\
         python3 -c \"import ctypes; libc = ctypes.CDLL(None); c = ctypes.c_long; \
         assert libc.syscall(c(248), b'user', b'k', b'secret', c(6), c(-4)) > 0; \
         assert libc.syscall(c(250), c(22), c(-1), c(-1)) > 0\"\n"
    );
    let target = Target::new(&installer);
    target.spec(&target.first_commit(), "", "");
    let prepared = target.phase("prepare", 0, &[]);
    assert_eq!(prepared.code, Some(0), "{}", prepared.stderr);
    let installed = target.phase("install", 0, &[]);
    assert_eq!(installed.code, Some(0), "{}", installed.stderr);
    assert!(
        installed
            .stderr
            .contains("remove them with `clibench cleanup --out out`"),
        "{}",
        installed.stderr
    );
    let uid = target.uid();
    let ipc_of = |uid: u32| -> usize {
        ["shm", "msg"]
            .iter()
            .map(|table| {
                let text = fs::read_to_string(format!("/proc/sysvipc/{table}")).unwrap();
                let mut lines = text.lines();
                let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
                let column = header.iter().position(|c| *c == "uid").unwrap();
                lines
                    .filter(|l| l.split_whitespace().nth(column) == Some(&uid.to_string()))
                    .count()
            })
            .sum()
    };
    let tmp = PathBuf::from(format!("/tmp/{tag}"));
    assert_eq!(fs::metadata(&tmp).unwrap().uid(), uid);
    let key_users = || -> Vec<u32> {
        fs::read_to_string("/proc/key-users")
            .unwrap()
            .lines()
            .filter_map(|l| l.split(':').next()?.trim().parse().ok())
            .collect()
    };
    assert!(key_users().contains(&uid), "the installer added a key");
    // Something the cleanup cannot remove: a file of root's in a folder of the uid, so the
    // uid's folder stays and the uid must not be handed out again.
    let held = PathBuf::from(format!("/tmp/{tag}-held"));
    fs::write(held.join("roots"), "root's").unwrap();
    assert_eq!(
        ipc_of(uid),
        2,
        "the installer made a shm segment and a queue"
    );
    // A local user opens the setuid copy before cleanup, to execute it later through
    // /proc/self/fd/N as the uid (issue 30, item 1).
    let suid = PathBuf::from(format!("/tmp/{tag}-suid"));
    assert_eq!(mode(&suid), 0o4755);
    let suid_held = fs::File::open(&suid).unwrap();
    let cleaned = cleanup(&target.out);
    let suid_after = suid_held.metadata().unwrap();
    assert_eq!(
        suid_after.mode() & 0o7777,
        0o755,
        "a descriptor held on the removed setuid file still executes as uid {uid}"
    );
    assert_eq!(suid_after.nlink(), 0);
    assert_eq!(cleaned.code, Some(1), "{}", cleaned.stderr);
    assert!(
        cleaned.stderr.contains(&format!("left {}", held.display())),
        "{}",
        cleaned.stderr
    );
    for path in [
        tmp.clone(),
        PathBuf::from(format!("/var/tmp/{tag}")),
        PathBuf::from(format!("/dev/shm/{tag}")),
        PathBuf::from(format!("/run/lock/{tag}")),
        PathBuf::from(format!("/tmp/{tag}-suid")),
    ] {
        assert!(!path.exists(), "{} survived the cleanup", path.display());
    }
    assert_eq!(ipc_of(uid), 0, "SysV IPC objects of uid {uid} survived");
    assert!(!key_users().contains(&uid), "keys of uid {uid} survived");
    assert_eq!(fs::metadata(&held).unwrap().uid(), uid);

    // The cleanup left the uid's folder: the next trial user must get another uid.
    // The cleanup removed the staging folder with the artifacts: prepare again.
    let prepared = target.phase("prepare", 0, &[]);
    assert_eq!(prepared.code, Some(0), "{}", prepared.stderr);
    let again = target.phase("install", 0, &[]);
    let next = target.uid();
    let _ = fs::remove_dir_all(&held);
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    assert_ne!(
        next, uid,
        "a uid that still owns a folder in /tmp was reused"
    );
    target.cleanup();
}

#[test]
fn a_run_with_out_inside_a_private_mktemp_folder_succeeds() {
    if !is_root() {
        bench_core::skip_test!("needs root (CI runs it as root)");
    }
    // As `T=$(mktemp -d); clibench run --out $T/d`: the trial user cannot enter $T.
    let private = tempfile::tempdir().unwrap();
    chmod(private.path(), 0o700);
    let out = private.path().join("d");
    let result = run(clibench().arg("run").arg("--out").arg(&out).args([
        "--trials",
        "1",
        "--phases",
        "prepare,install,measure",
    ]));
    assert_eq!(result.code, Some(0), "{}", result.stderr);
    assert!(
        result.stderr.contains("install trial 0: ok"),
        "{}",
        result.stderr
    );
    assert!(
        result.stderr.contains("measure trial 0: ok"),
        "{}",
        result.stderr
    );
    // The output folder stays private, and the staging folder and group are gone.
    assert_eq!(mode(&out), 0o700);
    assert_eq!(mode(private.path()), 0o700);
    assert!(!out.join("state.json").exists());
    let mut logs = String::new();
    for entry in fs::read_dir(out.join("logs")).unwrap().flatten() {
        logs.push_str(&fs::read_to_string(entry.path()).unwrap_or_default());
    }
    let stages: Vec<&str> = regex::Regex::new(r"/var/tmp/clibench-[0-9a-f]{6}-[0-9a-f]{12}")
        .unwrap()
        .find_iter(&logs)
        .map(|m| m.as_str())
        .collect();
    assert!(!stages.is_empty(), "the source was not staged:\n{logs}");
    let groups = fs::read_to_string("/etc/group").unwrap();
    for stage in stages {
        assert!(!Path::new(stage).exists(), "{stage} was left");
        let run_id = &stage["/var/tmp/clibench-".len()..][..6];
        let user = format!("clibench-{run_id}-0");
        assert!(uid_of(&user).is_none(), "{user} was left");
        assert!(
            !groups.contains(&format!("clibench-{run_id}:")),
            "the group of run {run_id} was left"
        );
    }
}

#[test]
fn the_staging_folder_is_readable_by_the_runs_group_only_and_removed_at_cleanup() {
    let target = Target::new(INSTALLER);
    target.spec(&target.first_commit(), "", "");
    let prepared = target.phase("prepare", 0, &[]);
    assert_eq!(prepared.code, Some(0), "{}", prepared.stderr);
    let stage = target.stage();
    let meta = fs::symlink_metadata(&stage).unwrap();
    assert!(meta.is_dir());
    assert_eq!(meta.uid(), fs::metadata("/proc/self").unwrap().uid());
    assert_eq!(
        mode(&target.out),
        0o700,
        "the output folder is the caller's alone"
    );
    if is_root() {
        assert_eq!(mode(&stage), 0o750);
        let group = target.state()["group"].as_str().unwrap().to_owned();
        let groups = fs::read_to_string("/etc/group").unwrap();
        let gid: u32 = groups
            .lines()
            .find_map(|line| line.strip_prefix(&format!("{group}:x:")))
            .and_then(|rest| rest.split(':').next()?.parse().ok())
            .unwrap_or_else(|| panic!("group {group} does not exist"));
        assert_eq!(meta.gid(), gid);
        target.cleanup();
        let groups = fs::read_to_string("/etc/group").unwrap();
        assert!(!groups.contains(&format!("{group}:")), "{group} was left");
    } else {
        assert_eq!(mode(&stage), 0o700);
        target.cleanup();
    }
    assert!(!stage.exists(), "{} was left", stage.display());
}

/// Runs `command` in a new PTY that is its controlling terminal (as an operator's shell
/// would), with a descriptor 9 open on /etc/hostname that is not close-on-exec (as
/// `clibench run ... 9<file` gives it); returns the exit code and what it printed.
fn under_a_terminal(command: &mut Command) -> (Option<i32>, String) {
    const PTY: &str = r#"
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    try:
        os.close(os.open("/dev/tty", os.O_RDWR))
    except OSError:
        os._exit(99)
    os.dup2(os.open("/etc/hostname", os.O_RDONLY), 9)
    os.execv(sys.argv[1], sys.argv[1:])
out = b""
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
sys.exit(os.waitstatus_to_exitcode(status))
"#;
    let mut wrapped = Command::new("python3");
    wrapped
        .args(["-c", PTY])
        .arg(command.get_program())
        .args(command.get_args());
    if let Some(dir) = command.get_current_dir() {
        wrapped.current_dir(dir);
    }
    let output = wrapped.output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn an_installer_run_from_a_terminal_has_no_terminal_and_no_inherited_descriptor() {
    // No root needed: without it the installer runs as the caller, in the same step.
    let installer = format!(
        "{INSTALLER}if (exec 3<>/dev/tty) 2>/dev/null; then echo tty-open; else echo no-tty; fi > \"$HOME/tty.txt\"\n\
         read -r pid comm state ppid pgrp sid tty rest < /proc/$$/stat\n\
         echo \"$pid $sid $tty\" >> \"$HOME/tty.txt\"\n\
         ls -l /proc/$$/fd > \"$HOME/fds.txt\"\n"
    );
    let target = Target::new(&installer);
    target.spec(&target.first_commit(), "", "");
    let prepared = target.phase("prepare", 0, &[]);
    assert_eq!(prepared.code, Some(0), "{}", prepared.stderr);
    let mut install = clibench();
    install
        .args(["phase", "install", "--spec", "spec.toml", "--out", "out"])
        .args(["--trial", "0"])
        .current_dir(target.dir.path());
    let (code, printed) = under_a_terminal(&mut install);
    assert_ne!(
        code,
        Some(99),
        "the test's PTY did not become a controlling terminal"
    );
    assert_eq!(code, Some(0), "{printed}");
    let seen = fs::read_to_string(target.home().join("tty.txt")).unwrap();
    let fds = fs::read_to_string(target.home().join("fds.txt")).unwrap();
    target.cleanup();
    let mut lines = seen.lines();
    assert_eq!(
        lines.next(),
        Some("no-tty"),
        "the installer opened /dev/tty"
    );
    let ids: Vec<u64> = lines
        .next()
        .unwrap()
        .split(' ')
        .map(|n| n.parse().unwrap())
        .collect();
    assert_eq!(ids[1], ids[0], "the installer leads its own session");
    assert_eq!(ids[2], 0, "the installer's tty_nr");
    // The shell keeps its script above 2 (dash: from 10 on), and a copy of stdout (the
    // log) while `ls`'s output is redirected; nothing else may be there, least of
    // all our descriptor 9.
    for line in fds.lines().filter(|line| line.contains(" -> ")) {
        let (left, target) = line.split_once(" -> ").unwrap();
        let fd: u32 = left.rsplit(' ').next().unwrap().parse().unwrap();
        assert!(
            fd <= 2 || target.ends_with("/install.sh") || target.ends_with("/install-0.log"),
            "the installer inherited descriptor {fd} ({target}):\n{fds}"
        );
    }
    assert!(!fds.contains("/etc/hostname"), "{fds}");
}

#[test]
fn a_trial_home_and_the_files_written_into_it_are_private() {
    if !is_root() {
        bench_core::skip_test!("needs root (CI runs it as root)");
    }
    let target = Target::new(INSTALLER);
    target.spec(&target.first_commit(), "", "");
    let prepared = target.phase("prepare", 0, &[]);
    assert_eq!(prepared.code, Some(0), "{}", prepared.stderr);
    let installed = target.phase("install", 0, &[]);
    assert_eq!(installed.code, Some(0), "{}", installed.stderr);
    let home_mode = mode(&target.home());
    let written_mode = mode(&target.home().join(".tool/settings.json"));
    target.cleanup();
    assert_eq!(home_mode, 0o700, "the home is {home_mode:o}");
    assert_eq!(
        written_mode, 0o600,
        "[[install.write]] wrote {written_mode:o}"
    );
}

#[test]
fn an_executable_linked_to_a_root_only_file_is_not_read_by_root() {
    if !is_root() {
        bench_core::skip_test!("needs root (CI runs it as root)");
    }
    let target = Target::new(&format!("{INSTALLER}ln -s /etc/shadow \"$HOME/planted\"\n"));
    let spec = target.spec(&target.first_commit(), "", "");
    let text = fs::read_to_string(&spec).unwrap().replace(
        "executable = \"{home}/.local/bin/tool\"",
        "executable = \"{home}/planted\"",
    );
    fs::write(&spec, text).unwrap();
    let prepared = target.phase("prepare", 0, &[]);
    assert_eq!(prepared.code, Some(0), "{}", prepared.stderr);
    let installed = target.phase("install", 0, &[]);
    target.cleanup();
    // Root reading it would have found "root" (a script) and gone on.
    assert_ne!(installed.code, Some(0), "{}", installed.stderr);
    assert!(
        installed
            .stderr
            .contains("cannot read the installed executable"),
        "{}",
        installed.stderr
    );
}
