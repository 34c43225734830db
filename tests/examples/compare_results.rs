//! `examples/compare_results.rs`: compares the shipped example results.

use crate::example;

#[test]
fn compares_the_shipped_results() {
    let output = example("compare_results").output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    // The shipped candidate regresses the bundle (256 KiB, 1.4%), so the example exits 1.
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    insta::assert_snapshot!(stdout);
}

#[test]
fn reversed_files_turn_the_verdicts_around() {
    let results = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/results");
    let output = example("compare_results")
        .arg(results.join("candidate.json"))
        .arg(results.join("base.json"))
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    // Two separate runs of five trials: the changes turn around; memory's is beyond
    // the runs' drift and regresses, cold's is within it, and its row says how
    // large a change these runs could have detected (docs/verdicts.md).
    assert!(
        stdout.contains(
            "| `cold` | 583 ms | 413 ms | -170 ms (-29.2%) | -68.3% to +58.0% | within noise |"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("| `rss` | 92.0 MiB | 131.5 MiB | +39.5 MiB (+43.0%)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("| `rss` | 92.0 MiB | 131.5 MiB | +39.5 MiB (+43.0%) | +32.5% to +54.2% | **regressed** |"),
        "{stdout}"
    );
    assert!(
        stdout.contains("| within noise | over ±100% | 5 / 5 |"),
        "{stdout}"
    );
    assert!(
        stdout.contains("| `bundle` | 18.2 MiB | 18.0 MiB | -256.0 KiB (-1.4%) | exact | improved"),
        "{stdout}"
    );
}

#[test]
fn a_broken_file_is_named() {
    let folder = tempfile::tempdir().unwrap();
    let broken = folder.path().join("broken.json");
    std::fs::write(&broken, "{\"schema_version\": 1").unwrap();
    let output = example("compare_results")
        .arg(&broken)
        .arg(&broken)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.starts_with(&format!("error: invalid result file {}", broken.display())),
        "{stderr}"
    );
}
