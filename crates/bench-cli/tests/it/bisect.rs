//! `clibench bisect` on a local git repository of the demo agent whose commit 3 of 5
//! makes every start 1.5 s slower; a second bisect over the same range with the same
//! history store measures nothing.

use crate::pipeline_run::demo;
use crate::{clibench, run};
use std::path::Path;
use std::process::Command;

pub(crate) fn git(repository: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(repository)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Commits `steps` more commits to the demo's `source` repository: commit `slow` makes
/// every start `delay_ms` slower, every other one adds a line to the README.
pub(crate) fn commit_steps(source: &Path, steps: u32, slow: u32, delay_ms: u32) {
    let agent = source.join("demo_agent.py");
    for step in 1..=steps {
        if step == slow {
            // The knob's default, not the environment: the slowdown lives in the code.
            let text = std::fs::read_to_string(&agent).unwrap();
            let from = r#"os.environ.get("DEMO_AGENT_STARTUP_DELAY_MS", "").strip() or "0""#;
            assert_eq!(text.matches(from).count(), 1);
            std::fs::write(
                &agent,
                text.replace(from, &from.replace(r#""0""#, &format!("\"{delay_ms}\""))),
            )
            .unwrap();
        } else {
            let readme = source.join("README.md");
            let mut text = std::fs::read_to_string(&readme).unwrap();
            text.push_str(&format!("\nnote {step}\n"));
            std::fs::write(&readme, text).unwrap();
        }
        git(source, &["commit", "-q", "-am", &format!("step {step}")]);
    }
}

#[test]
fn bisect_names_the_commit_that_made_starts_slower() {
    let (dir, spec) = demo();
    let source = spec.parent().unwrap().join("source");
    commit_steps(&source, 5, 3, 1500);
    let slow = git(&source, &["rev-parse", "HEAD~2"]);
    let store = dir.path().join("history.sqlite");
    let bisect = |out: &str| {
        run(clibench()
            .arg("bisect")
            .arg(&spec)
            .args(["--good", "HEAD~5", "--bad", "HEAD", "--metric", "cold"])
            .args(["--trials", "2", "--max-trials", "4"])
            .arg("--repository")
            .arg(&source)
            .arg("--out")
            .arg(dir.path().join(out))
            .arg("--history")
            .arg(&store))
    };
    let out = bisect("bisect");
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    let named = format!("first bad commit: {} (#3)", slow.trim());
    assert!(out.stdout.starts_with(&named), "{}", out.stdout);
    // Every measured side is in the history: two per ab run.
    let runs = out.stderr.matches("clibench bisect: measuring ").count();
    assert!(runs > 0, "{}", out.stderr);
    let stored = run(clibench()
        .args(["history", "show", "cold", "--rows", "0", "--store"])
        .arg(&store));
    assert_eq!(stored.code, Some(0), "{}", stored.stderr);
    assert!(
        stored.stdout.contains(&format!("{} point(s)", 2 * runs)),
        "{}",
        stored.stdout
    );
    // The same range again with the same store: every build is known, none measured.
    let again = bisect("again");
    assert_eq!(again.code, Some(0), "{}\n{}", again.stdout, again.stderr);
    assert!(again.stdout.starts_with(&named), "{}", again.stdout);
    assert_eq!(
        again.stderr.matches("clibench bisect: measuring ").count(),
        0,
        "{}",
        again.stderr
    );
    assert!(
        again.stdout.contains("0 build(s) measured in 0 run(s)"),
        "{}",
        again.stdout
    );
    assert!(!dir.path().join("again").exists());
}

#[test]
fn bisect_between_a_slow_good_end_and_a_fast_bad_end_names_no_build() {
    // The planted regression's ends swapped: the slow commit is given as good, a later
    // commit that undoes it as bad. The bad end is better: nothing regressed.
    let (dir, spec) = demo();
    let source = spec.parent().unwrap().join("source");
    commit_steps(&source, 3, 3, 1500);
    git(&source, &["revert", "--no-edit", "HEAD"]);
    let out = run(clibench()
        .arg("bisect")
        .arg(&spec)
        .args(["--good", "HEAD~1", "--bad", "HEAD", "--metric", "cold"])
        .args(["--trials", "2", "--max-trials", "4"])
        .arg("--repository")
        .arg(&source)
        .arg("--out")
        .arg(dir.path().join("bisect"))
        .arg("--history")
        .arg(dir.path().join("history.sqlite")));
    assert_eq!(out.code, Some(1), "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.starts_with("the bad end is better: cold -"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("first bad"), "{}", out.stdout);
}
