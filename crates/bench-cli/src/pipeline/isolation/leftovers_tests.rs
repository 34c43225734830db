//! Unit tests of [`super`]: the SysV IPC and mountinfo parsers, the shared-folder walk and what a trial uid leaves behind.

use super::*;
use crate::pipeline::isolation::mounts::parse_mountinfo;

/// The shared folders the walk finds below `base`, on its device.
fn shared_below(base: &Path) -> BTreeSet<String> {
    let fd = rustix::fs::open(base, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
    let device = rustix::fs::fstat(&fd).unwrap().st_dev;
    let mut found = BTreeSet::new();
    find_shared(&fd, base, device, 0, &mut found);
    found
}

#[test]
fn sysvipc_tables_are_read_by_their_header() {
    let shm = "       key      shmid perms                  size  cpid  lpid nattch   uid   gid  cuid  cgid      atime      dtime      ctime                   rss                  swap\n\
               1234 5 600 4096 10 0 0 1001 1001 1002 1002 0 0 0 0 0\n";
    assert_eq!(
        parse_sysvipc(IpcKind::Shm, shm),
        [IpcObject {
            kind: IpcKind::Shm,
            id: 5,
            uid: 1001,
            cuid: 1002
        }]
    );
    let sem = "       key      semid perms      nsems   uid   gid  cuid  cgid      otime      ctime\n\
               0 7 600 1 1003 1003 1003 1003 0 0\n";
    assert_eq!(parse_sysvipc(IpcKind::Sem, sem)[0].id, 7);
    assert_eq!(parse_sysvipc(IpcKind::Msg, ""), []);
    assert_eq!(parse_sysvipc(IpcKind::Msg, "garbage\n1 2 3\n"), []);
}

/// Issue 24: what the install phase spends finding a free uid, before (a walk of
/// /tmp, /var/tmp and /dev/shm) and after (the check without files, the ledger
/// holding the rest). Not a test: `cargo test -p bench-cli --lib -- --ignored
/// --nocapture free_uid_cost`, with many files in /tmp.
#[test]
#[ignore = "a benchmark"]
fn free_uid_cost() {
    let runs = 5;
    let time = |f: &dyn Fn()| {
        let mut times: Vec<f64> = (0..runs)
            .map(|_| {
                let started = std::time::Instant::now();
                f();
                started.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        times.sort_by(f64::total_cmp);
        times[runs / 2]
    };
    let walk = time(&|| {
        owners_in(&["/tmp", "/var/tmp", "/dev/shm"]);
    });
    let cheap = time(&|| {
        busy_uids_without_files(&[], Path::new("/home"));
    });
    let discovery = time(&|| {
        shared_folders();
    });
    // What each removal adds, after the stop, since issue 30: every process's descriptors.
    let held = time(&|| {
        super::setid::strip_held_files_of(4_000_126, Path::new("/proc"));
    });
    eprintln!(
        "median of {runs}: walk of the 3 folders {walk:.1} ms, check without files {cheap:.1} ms, \
         shared-folder discovery (per sweep) {discovery:.1} ms, held-descriptor scan (per removal) {held:.1} ms"
    );
}

#[test]
fn mountinfo_lines_give_point_type_and_read_only() {
    let text = "22 1 0:21 / /proc rw,nosuid - proc proc rw\n\
                28 1 252:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n\
                40 28 0:35 / /mnt/my\\040disk rw master:2 - xfs /dev/sdb rw\n\
                41 28 0:36 / /snap/x ro,nodev - squashfs /dev/loop0 ro\n\
                42 28 0:37 / /home/u/remote rw - fuse.sshfs u@h: rw\n\
                43 28 0:38 / /srv rw - nfs4 h:/srv rw\n";
    let mounts = parse_mountinfo(text);
    let points: Vec<&str> = mounts.iter().map(|m| m.point.as_str()).collect();
    assert_eq!(
        points,
        [
            "/proc",
            "/",
            "/mnt/my disk",
            "/snap/x",
            "/home/u/remote",
            "/srv"
        ]
    );
    let local: Vec<&str> = mounts
        .iter()
        .filter(|m| m.is_local_writable())
        .map(|m| m.point.as_str())
        .collect();
    assert_eq!(local, ["/", "/mnt/my disk"]);
    let ids: Vec<(u64, bool)> = mounts.iter().map(|m| (m.id, m.nosuid)).collect();
    assert_eq!(
        ids,
        [
            (22, true),
            (28, false),
            (40, false),
            (41, false),
            (42, false),
            (43, false)
        ]
    );
}

#[test]
fn a_world_writable_folder_anywhere_on_a_local_mount_is_shared() {
    // /var/tmp is on the root file system, never its own mount here; a folder made
    // 0777 deep under a 0755 one stands for /var/lib/php/sessions.
    let base = tempfile::tempdir_in("/var/tmp").unwrap();
    let deep = base.path().join("a/b/c/sessions");
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::set_permissions(
        base.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::fs::set_permissions(&deep, std::os::unix::fs::PermissionsExt::from_mode(0o1733)).unwrap();
    assert_eq!(
        shared_below(base.path()),
        BTreeSet::from([deep.to_string_lossy().into_owned()])
    );
    assert!(quick_shared_folders().contains("/tmp"));
}

#[test]
fn a_folder_an_acl_opens_for_writing_is_shared() {
    if !Path::new("/usr/bin/setfacl").is_file() && !Path::new("/bin/setfacl").is_file() {
        bench_core::skip_test!("needs setfacl (Debian package acl; .ci/run installs it)");
    }
    let base = tempfile::tempdir_in("/var/tmp").unwrap();
    let folder = |name: &str, acl: &str| {
        let path = base.path().join("a").join(name);
        std::fs::create_dir_all(&path).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o770))
            .unwrap();
        let status = std::process::Command::new("setfacl")
            .args(["-m", acl])
            .arg(&path)
            .status()
            .unwrap();
        assert!(status.success(), "setfacl -m {acl} {}", path.display());
        path.to_string_lossy().into_owned()
    };
    let user = folder("user", "u:65534:rwx");
    let group = folder("group", "g:65534:rwx");
    folder("read-only", "u:65534:rx");
    folder("masked", "u:65534:rwx,m::rx");
    std::fs::set_permissions(
        base.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    assert_eq!(
        shared_below(base.path()),
        BTreeSet::from([group, user.clone()])
    );
    assert!(shared_dir(Path::new(&user)));
}

#[test]
fn setuid_and_setgid_files_of_the_uid_go_first_and_nothing_else() {
    if !rustix::process::geteuid().is_root() {
        eprintln!(
            "SKIPPED setuid_and_setgid_files_of_the_uid_go_first_and_nothing_else: needs root"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let uid = 4_000_124;
    for (name, mode, owner) in [
        ("suid", 0o4755, uid),
        ("sgid", 0o2755, uid),
        ("plain", 0o755, uid),
        ("roots", 0o4755, 0),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, "x").unwrap();
        std::os::unix::fs::chown(&path, Some(owner), Some(owner)).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(mode))
            .unwrap();
    }
    let left = remove_setid_files_of(uid, &[dir.path().to_str().unwrap()]);
    assert!(left.is_empty(), "{left:?}");
    let remaining: BTreeSet<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(remaining, BTreeSet::from(["plain".into(), "roots".into()]));
}

#[test]
fn a_descriptor_held_on_a_removed_setuid_file_no_longer_gives_the_uid() {
    if !rustix::process::geteuid().is_root() {
        bench_core::skip_test!("needs root to own files as another uid");
    }
    let uid = 4_000_125;
    // Both ways cleanup unlinks a file of the uid: before the stop, and after it.
    type Removal = fn(u32, &str);
    let removals: [(&str, Removal); 2] = [
        ("remove_setid_files_of", |uid, folder| {
            assert_eq!(remove_setid_files_of(uid, &[folder]), Vec::<String>::new());
        }),
        ("remove_owned_by", |uid, folder| {
            assert_eq!(remove_owned_by(uid, &[folder]).left, Vec::<String>::new());
        }),
    ];
    for (removal, remove) in removals {
        let dir = tempfile::tempdir().unwrap();
        // A local user opened it before cleanup (O_RDONLY is enough to execute it
        // later through /proc/self/fd/N).
        let (path, held) = super::setid::held_setid_file(dir.path(), uid, 0o4755);
        remove(uid, dir.path().to_str().unwrap());
        assert!(!path.exists(), "{removal} left {}", path.display());
        let stat = rustix::fs::fstat(&held).unwrap();
        assert_eq!(stat.st_nlink, 0, "{removal}");
        assert_eq!(
            stat.st_mode & 0o7777,
            0o755,
            "{removal}: the held descriptor still executes as uid {uid}"
        );
    }
}

#[test]
fn only_the_uids_entries_are_removed_and_symlinks_are_not_followed() {
    if !rustix::process::geteuid().is_root() {
        bench_core::skip_test!("needs root to own files as another uid");
    }
    let dir = tempfile::tempdir().unwrap();
    let uid = 4_000_123;
    let theirs = dir.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::write(theirs.join("file"), "x").unwrap();
    std::os::unix::fs::symlink("/etc", theirs.join("link")).unwrap();
    std::fs::write(dir.path().join("keep"), "root's").unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("precious"), "x").unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("rootlink")).unwrap();
    for path in [&theirs, &theirs.join("file")] {
        std::os::unix::fs::chown(path, Some(uid), Some(uid)).unwrap();
    }
    std::os::unix::fs::lchown(theirs.join("link"), Some(uid), Some(uid)).unwrap();
    let folder = dir.path().to_str().unwrap();
    assert!(owners_in(&[folder]).contains(&uid));
    let removed = remove_owned_by(uid, &[folder]);
    assert_eq!(removed.entries, 3, "{removed:?}");
    assert!(!theirs.exists());
    assert!(dir.path().join("keep").exists());
    assert!(outside.path().join("precious").exists());
    assert!(Path::new("/etc/passwd").exists());
}
