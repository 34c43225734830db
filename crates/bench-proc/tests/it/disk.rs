//! `disk_usage` agrees with `du --apparent-size --exclude`.

use bench_proc::{DEFAULT_EXCLUDES, disk_usage};
use std::fs;
use std::path::Path;
use std::process::Command;

fn du(path: &Path, excludes: &[&str]) -> u64 {
    let mut command = Command::new("du");
    command.args(["--apparent-size", "--summarize", "--block-size=1"]);
    for pattern in excludes {
        command.arg(format!("--exclude={pattern}"));
    }
    let output = command.arg(path).output().unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn agrees_with_du_on_a_home_directory() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("benchmark1");
    for sub in [
        ".local/bin",
        ".local/lib/agent",
        ".cache/uv",
        ".npm/_cacache",
        "sessions/1",
        "workspace/src",
        "notes",
    ] {
        fs::create_dir_all(home.join(sub)).unwrap();
    }
    fs::write(home.join(".local/lib/agent/cli.js"), vec![b'x'; 123_457]).unwrap();
    fs::hard_link(
        home.join(".local/lib/agent/cli.js"),
        home.join(".local/bin/agent"),
    )
    .unwrap();
    fs::write(home.join(".cache/uv/wheel"), vec![0; 99_999]).unwrap();
    fs::write(home.join(".npm/_cacache/index"), vec![0; 4_321]).unwrap();
    fs::write(home.join("sessions/1/log.jsonl"), vec![0; 777]).unwrap();
    fs::write(home.join("workspace/src/main.rs"), vec![0; 50]).unwrap();
    fs::write(home.join("install.log"), vec![0; 1_000]).unwrap();
    fs::write(home.join("notes/todo.log.txt"), vec![0; 12]).unwrap();
    fs::write(home.join(".bashrc"), vec![0; 3_771]).unwrap();
    std::os::unix::fs::symlink("/usr/lib", home.join(".local/lib/system")).unwrap();
    std::os::unix::fs::symlink(".local/bin/agent", home.join("agent-link")).unwrap();

    assert_eq!(
        disk_usage(&home, DEFAULT_EXCLUDES).unwrap(),
        du(&home, DEFAULT_EXCLUDES)
    );
    assert_eq!(disk_usage(&home, &[]).unwrap(), du(&home, &[]));
    assert!(
        disk_usage(&home, &[]).unwrap() > disk_usage(&home, DEFAULT_EXCLUDES).unwrap() + 99_999
    );
}
