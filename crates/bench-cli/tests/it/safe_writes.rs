//! Files clibench writes are created exclusively under unguessable names and renamed
//! into place, only in folders that are the user's own and closed to others, or sticky
//! like /tmp (issue 18.7).

use crate::is_root;
use crate::{clibench, example_result, run};
use std::fs;
use std::os::unix::fs::PermissionsExt;

#[test]
fn links_planted_at_the_temporary_and_final_names_are_never_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    fs::write(&victim, "precious").unwrap();
    let out = dir.path().join("exports");
    fs::create_dir(&out).unwrap();
    // What a local user plants ahead of `compare --export-markdown`: the old
    // predictable temporary names for the next pids, and the destination itself.
    let comment = out.join("comment.md");
    std::os::unix::fs::symlink(&victim, &comment).unwrap();
    let next = std::process::id();
    for pid in next..next + 200 {
        let _ = std::os::unix::fs::symlink(&victim, out.join(format!(".comment.md.{pid}.tmp")));
    }
    let compared = run(clibench()
        .arg("compare")
        .arg(example_result("base"))
        .arg(example_result("candidate"))
        .arg("--export-markdown")
        .arg(&comment));
    assert_eq!(compared.code, Some(0), "{}", compared.stderr);
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
    assert!(
        fs::symlink_metadata(&comment)
            .unwrap()
            .file_type()
            .is_file()
    );
    assert!(fs::read_to_string(&comment).unwrap().contains("candidate"));
}

#[test]
fn a_folder_every_user_can_write_into_is_refused_for_merge_and_exports() {
    let dir = tempfile::tempdir().unwrap();
    let open = dir.path().join("open");
    fs::create_dir(&open).unwrap();
    fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
    let merged = run(clibench()
        .arg("merge")
        .arg(example_result("candidate"))
        .arg("--out")
        .arg(&open));
    assert_ne!(merged.code, Some(0), "{}", merged.stderr);
    assert!(
        merged
            .stderr
            .contains("every user can write into it (mode 777)"),
        "{}",
        merged.stderr
    );
    assert_eq!(fs::read_dir(&open).unwrap().count(), 0);
    let exported = run(clibench()
        .arg("compare")
        .arg(example_result("base"))
        .arg(example_result("candidate"))
        .arg("--export-markdown")
        .arg(open.join("comment.md")));
    assert_ne!(exported.code, Some(0), "{}", exported.stderr);
    assert!(
        exported.stderr.contains("refusing to write into"),
        "{}",
        exported.stderr
    );
}

#[test]
fn merge_into_another_users_open_folder_is_refused_with_the_reason() {
    if !is_root() {
        bench_core::skip_test!("chown needs root");
    }
    let dir = tempfile::tempdir().unwrap();
    let theirs = dir.path().join("theirs");
    fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
    fs::set_permissions(&theirs, fs::Permissions::from_mode(0o777)).unwrap();
    let merged = run(clibench()
        .arg("merge")
        .arg(example_result("candidate"))
        .arg("--out")
        .arg(&theirs));
    assert_ne!(merged.code, Some(0), "{}", merged.stderr);
    assert!(
        merged
            .stderr
            .contains("it belongs to uid 65534, not to the user running clibench (uid 0)"),
        "{}",
        merged.stderr
    );
    assert_eq!(fs::read_dir(&theirs).unwrap().count(), 0);
    // Sticky like /tmp: allowed, and the result is root's own file.
    fs::set_permissions(&theirs, fs::Permissions::from_mode(0o1777)).unwrap();
    let merged = run(clibench()
        .arg("merge")
        .arg(example_result("candidate"))
        .arg("--out")
        .arg(&theirs));
    assert_eq!(merged.code, Some(0), "{}", merged.stderr);
}
