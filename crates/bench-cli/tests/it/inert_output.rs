//! Text from a target or a file never drives clibench's terminal (issue 18.3): what
//! clibench prints holds no C0 control but newline and tab, no DEL, no C1 and no
//! bidirectional override, whatever an installer printed or a result file holds.

use crate::target::Target;
use crate::{Run, clibench, example_result, run};

/// An OSC title, a screen clear and an OSC 52 clipboard write, as a hostile target
/// prints them.
const HOSTILE: &str = "\x1b]0;OWNED\x07\x1b[2J\x1b]52;c;aWQgPiAvdG1wL293bmVk\x07";

/// Whether `text` holds a character that could drive a terminal.
fn active(text: &str) -> Option<char> {
    text.chars().find(|&c| bench_core::text::is_active(c))
}

fn assert_inert(what: &str, out: &Run) {
    for (stream, text) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        if let Some(c) = active(text) {
            panic!("{what}: {stream} holds {c:?}:\n{text:?}");
        }
    }
}

#[test]
fn an_installers_escape_sequences_never_reach_the_terminal() {
    let installer = format!(
        "#!/bin/sh\nprintf '{}'\necho\nexit 1\n",
        HOSTILE.replace('\x1b', "\\033").replace('\x07', "\\007")
    );
    let target = Target::new(&installer);
    let commit = target.first_commit();
    let spec = target.spec(&commit, "", "");
    let out = run(clibench()
        .arg("run")
        .arg(&spec)
        .arg("--out")
        .arg(&target.out)
        .args(["--trials", "1", "--phases", "prepare,install"])
        .current_dir(target.dir.path()));
    assert_ne!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stderr.contains("output ends with"), "{}", out.stderr);
    assert!(out.stderr.contains("\\x1b]52;c;"), "{}", out.stderr);
    assert_inert("clibench run", &out);
    // The phase alone, as `clibench phase` prints its error.
    let target = Target::new(&installer);
    target.spec(&commit, "", "");
    let prepared = target.phase("prepare", 0, &[]);
    assert_eq!(prepared.code, Some(0), "{}", prepared.stderr);
    let phase = target.phase("install", 0, &[]);
    assert_ne!(phase.code, Some(0), "{}", phase.stderr);
    assert!(phase.stderr.contains("\\x1b[2J"), "{}", phase.stderr);
    assert_inert("clibench phase install", &phase);
}

/// The example candidate with `HOSTILE` and a right-to-left override in a trial's error
/// and in its sha.
fn crafted(dir: &std::path::Path) -> std::path::PathBuf {
    let text = std::fs::read_to_string(example_result("candidate")).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let hostile = format!("{HOSTILE} \u{202e}txt.exe \u{9b}31m");
    let text = serde_json::to_string_pretty(&json).unwrap();
    let text = text.replace(
        "timed out after 30 s waiting for the ready pattern",
        serde_json::to_string(&hostile).unwrap().trim_matches('"'),
    );
    json = serde_json::from_str(&text).unwrap();
    let text = serde_json::to_string_pretty(&json)
        .unwrap()
        .replace("d07e9a3c51f8", "d07e\\u001b[2J");
    let path = dir.join("crafted.json");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_crafted_result_file_prints_inert_in_report_compare_and_merge() {
    let dir = tempfile::tempdir().unwrap();
    let crafted = crafted(dir.path());
    let table = run(clibench().arg("report").arg(&crafted));
    assert_eq!(table.code, Some(0), "{}", table.stderr);
    assert!(table.stderr.contains("\\x1b]52;c;"), "{}", table.stderr);
    assert!(table.stderr.contains("\\u{202e}"), "{}", table.stderr);
    assert_inert("report", &table);
    for format in ["markdown", "json", "csv", "html"] {
        let out = run(clibench()
            .arg("report")
            .arg(&crafted)
            .args(["--format", format]));
        assert_eq!(out.code, Some(0), "{format}: {}", out.stderr);
        assert_inert(&format!("report --format {format}"), &out);
    }
    // JSON stays JSON, with the same strings.
    let json = run(clibench()
        .arg("report")
        .arg(&crafted)
        .args(["--format", "json"]));
    let value: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert!(value.to_string().contains("\\u001b]52"), "{value}");

    let base = example_result("base");
    let compare = run(clibench().arg("compare").arg(&base).arg(&crafted));
    assert_eq!(compare.code, Some(0), "{}", compare.stderr);
    assert!(compare.stderr.contains("\\x1b[2J"), "{}", compare.stderr);
    assert_inert("compare", &compare);
    for format in ["markdown", "json", "csv", "html"] {
        let out = run(clibench()
            .arg("compare")
            .arg(&base)
            .arg(&crafted)
            .args(["--format", format]));
        assert_eq!(out.code, Some(0), "{format}: {}", out.stderr);
        assert_inert(&format!("compare --format {format}"), &out);
    }

    let merged = run(clibench()
        .arg("merge")
        .arg(&crafted)
        .arg("--out")
        .arg(dir.path().join("merged")));
    assert_eq!(merged.code, Some(0), "{}", merged.stderr);
    assert_inert("merge", &merged);
}
