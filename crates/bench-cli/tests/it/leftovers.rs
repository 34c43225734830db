//! Nothing of a run survives it (issue 18's promise), even when nobody runs
//! `clibench cleanup`: a run of single phases whose OUT/ is removed (what a test's
//! temporary folder does, or an operator after a `kill -9`) leaves a staging folder in
//! /var/tmp, a `clibench-RUNID` group and its trial users that no state file names any
//! more; the next run's start removes them, and leaves alone those of a run whose OUT/
//! still holds its state.

use crate::target::is_root;
use std::path::{Path, PathBuf};

/// A source-less spec whose prepare makes the staging folder (its build folder).
const SPEC: &str = r#"
name = "leftovers"

[[build]]
name = "pack"
command = ["sh", "-c", "echo packed > \"$1/leftovers-1.0.tgz\"", "sh", "{build}"]

[[artifacts]]
folder = "{build}"
glob = "leftovers-*.tgz"
count = 1

[install]
command = ["true"]

[measure]
command = ["true"]
"#;

/// A prepared run: its folder, run id, staging folder and group.
struct Prepared {
    dir: tempfile::TempDir,
    run_id: String,
    stage: PathBuf,
    group: String,
}

impl Prepared {
    fn out(&self) -> PathBuf {
        self.dir.path().join("out")
    }
}

/// Runs `phase PHASE` of the spec in `dir`.
fn phase(dir: &Path, phase: &str) {
    let out = crate::run(
        crate::clibench()
            .args(["phase", phase, "--spec", "spec.toml", "--out", "out"])
            .args(["--trial", "0"])
            .current_dir(dir),
    );
    assert_eq!(out.code, Some(0), "{phase}: {}", out.stderr);
}

fn prepare() -> Prepared {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("spec.toml"), SPEC).unwrap();
    phase(dir.path(), "prepare");
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/state.json")).unwrap())
            .unwrap();
    let run_id = state["run_id"].as_str().unwrap().to_owned();
    let stage = PathBuf::from(state["stage"].as_str().unwrap());
    let group = state["group"].as_str().unwrap().to_owned();
    assert!(stage.is_dir(), "{}", stage.display());
    assert!(group_exists(&group), "{group}");
    Prepared {
        dir,
        run_id,
        stage,
        group,
    }
}

fn group_exists(name: &str) -> bool {
    std::fs::read_to_string("/etc/group")
        .unwrap()
        .lines()
        .any(|line| line.split(':').next() == Some(name))
}

fn user_exists(name: &str) -> bool {
    std::fs::read_to_string("/etc/passwd")
        .unwrap()
        .lines()
        .any(|line| line.split(':').next() == Some(name))
}

/// What of run `run_id` is in /var/tmp, /tmp, /etc/group and /etc/passwd.
fn traces_of(run_id: &str) -> Vec<String> {
    let prefix = format!("clibench-{run_id}");
    let mut found = Vec::new();
    for base in ["/var/tmp", "/tmp"] {
        for entry in std::fs::read_dir(base).unwrap().flatten() {
            if entry.file_name().to_string_lossy().starts_with(&prefix) {
                found.push(entry.path().display().to_string());
            }
        }
    }
    if group_exists(&prefix) {
        found.push(format!("group {prefix}"));
    }
    let user = format!("{prefix}-0");
    if user_exists(&user) {
        found.push(format!("user {user}"));
    }
    found
}

fn cleanup(out: &Path) {
    let done = crate::run(crate::clibench().arg("cleanup").arg("--out").arg(out));
    assert_eq!(done.code, Some(0), "{}", done.stderr);
}

#[test]
fn a_run_whose_out_folder_is_gone_leaves_nothing_after_the_next_run_starts() {
    if !is_root() {
        bench_core::skip_test!(
            "needs root: only root runs make a group and record their staging folder"
        );
    }
    let abandoned = prepare();
    // Its trial user has the run's group as its primary group: the group can only go
    // after the user.
    phase(abandoned.dir.path(), "install");
    let kept = prepare();
    phase(kept.dir.path(), "install");
    let (abandoned_id, abandoned_stage) = (abandoned.run_id.clone(), abandoned.stage.clone());
    let abandoned_user = format!("clibench-{abandoned_id}-0");
    assert!(user_exists(&abandoned_user), "{abandoned_user}");
    // As a test that ends without `clibench cleanup` does: its OUT/ goes, the state
    // file that named the folder, the group and the user with it.
    drop(abandoned);
    assert!(abandoned_stage.is_dir(), "{}", abandoned_stage.display());

    let next = prepare();
    let left = traces_of(&abandoned_id);
    // The live run's folder and group are another run's to remove.
    let kept_alive = kept.stage.is_dir()
        && group_exists(&kept.group)
        && user_exists(&format!("clibench-{}-0", kept.run_id));
    cleanup(&next.out());
    cleanup(&kept.out());
    assert_eq!(left, Vec::<String>::new(), "the abandoned run left these");
    assert!(
        kept_alive,
        "the next run removed a live run's staging folder, group or user"
    );
    for run in [&next, &kept] {
        assert_eq!(
            traces_of(&run.run_id),
            Vec::<String>::new(),
            "cleanup left these"
        );
    }
}
