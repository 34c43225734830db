//! `clibench phase prepare`: exact shallow fetch, build steps, artifacts, SHA256SUMS.

use crate::target::{INSTALLER, Target};
use sha2::{Digest, Sha256};
use std::process::Command;

#[test]
fn local_git_source_is_fetched_at_the_exact_sha_that_is_not_a_branch_tip() {
    let target = Target::new(INSTALLER);
    let first = target.first_commit();
    let later = target.add_commit();
    assert_ne!(first, later);
    target.spec(&first, "", "");
    let out = target.phase("prepare", 0, &[]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);

    let source = target.stage().join("source");
    let head = Command::new("git")
        .args(["-c", "safe.directory=*", "rev-parse", "HEAD"])
        .current_dir(&source)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&head.stdout).trim(), first);
    assert!(
        !source.join("later.txt").exists(),
        "the later commit leaked in"
    );
    let shallow = std::fs::read_to_string(source.join(".git/shallow")).unwrap();
    assert_eq!(shallow.trim(), first, "the fetch was not shallow");

    let archive = std::fs::read(target.stage().join("artifacts/tool-1.0.tar.gz")).unwrap();
    let hex: String = Sha256::digest(&archive)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let sums = std::fs::read_to_string(target.stage().join("artifacts/SHA256SUMS")).unwrap();
    assert_eq!(sums, format!("{hex}  tool-1.0.tar.gz\n"));

    let result = target.result();
    let side = &result["side"];
    assert_eq!(side["sha"], first.as_str());
    assert_eq!(side["metrics"]["bundle"][0]["value"], archive.len() as f64);
    assert_eq!(side["artifacts"]["tool-1.0.tar.gz"], archive.len() as u64);
    for key in ["kernel", "machine", "cpu", "git", "source"] {
        assert!(
            side["runtime"][key].is_string(),
            "runtime.{key} missing: {side}"
        );
    }
    assert!(
        side["runtime"]["git"]
            .as_str()
            .unwrap()
            .starts_with("git version")
    );
    assert!(target.out.join("logs/prepare.log").exists());
    // The build's scratch HOME is gone and nothing is left to clean.
    assert!(!target.out.join("build-home").exists());
    assert!(
        !target.out.join("state.json").exists()
            || target.state()["folders"] == serde_json::json!([])
    );
}

#[test]
fn failing_build_step_reports_its_log_tail() {
    let target = Target::new(INSTALLER);
    let commit = target.first_commit();
    target.spec(&commit, "", "");
    let spec = std::fs::read_to_string(target.dir.path().join("spec.toml")).unwrap();
    let spec = spec.replace(
        "command = [\"sh\", \"build.sh\"]",
        "command = [\"sh\", \"-c\", \"echo compiling widgets; echo 'error: widget 7 is broken' >&2; exit 3\"]",
    );
    std::fs::write(target.dir.path().join("spec.toml"), spec).unwrap();
    let out = target.phase("prepare", 0, &[]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(out.stderr.contains("build step 1 'pack'"), "{}", out.stderr);
    assert!(out.stderr.contains("exit status: 3"), "{}", out.stderr);
    assert!(
        out.stderr.contains("error: widget 7 is broken"),
        "{}",
        out.stderr
    );
    let error = target.result()["side"]["error"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(error.contains("error: widget 7 is broken"), "{error}");
}

#[test]
fn wrong_artifact_count_is_an_error_naming_the_pattern() {
    let target = Target::new(INSTALLER);
    let commit = target.first_commit();
    target.spec(&commit, "", "");
    let spec = std::fs::read_to_string(target.dir.path().join("spec.toml")).unwrap();
    std::fs::write(
        target.dir.path().join("spec.toml"),
        spec.replace("count = 1", "count = 4"),
    )
    .unwrap();
    let out = target.phase("prepare", 0, &[]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr.contains("expected 4 artifact(s) matching")
            && out
                .stderr
                .contains("dist/tool-*.tar.gz, found 1: tool-1.0.tar.gz"),
        "{}",
        out.stderr
    );
}

#[test]
fn unsupported_architecture_is_refused_before_fetching() {
    let target = Target::new(INSTALLER);
    let commit = target.first_commit();
    target.spec(&commit, "", "");
    let spec = std::fs::read_to_string(target.dir.path().join("spec.toml")).unwrap();
    std::fs::write(
        target.dir.path().join("spec.toml"),
        spec.replace(
            "version = \"1.0\"\n",
            "version = \"1.0\"\narchitectures = [\"vax\"]\n",
        ),
    )
    .unwrap();
    let out = target.phase("prepare", 0, &[]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    let machine = target.result()["side"]["runtime"]["machine"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        out.stderr.contains(&format!(
            "unsupported architecture {machine}: tool supports vax"
        )),
        "{}",
        out.stderr
    );
    assert!(!target.stage().join("source").exists());
}

#[test]
fn a_commit_that_does_not_exist_is_an_error() {
    let target = Target::new(INSTALLER);
    target.spec(&"0".repeat(40), "", "");
    let out = target.phase("prepare", 0, &[]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr.contains("`git fetch --quiet --depth=1"),
        "{}",
        out.stderr
    );
}

/// A source-less spec as the release before `{build}` read it: its build packs into
/// `{out}/build` (which clibench made then) and its artifacts are collected from there.
const LEGACY_BUILD_SPEC: &str = r#"
name = "legacy"

[[build]]
name = "pack"
command = ["sh", "-c", "echo packed > \"$1/legacy-1.0.tgz\"", "sh", "{out}/build"]

[[artifacts]]
folder = "{out}/build"
glob = "legacy-*.tgz"
count = 1

[measure]
command = ["true"]
"#;

#[test]
fn a_spec_of_the_last_release_that_packs_into_out_build_still_prepares() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("spec.toml"), LEGACY_BUILD_SPEC).unwrap();
    let out = crate::run(
        crate::clibench()
            .args([
                "phase",
                "prepare",
                "--spec",
                "spec.toml",
                "--out",
                "out",
                "--trial",
                "0",
            ])
            .current_dir(dir.path()),
    );
    // Cleaned up before any assertion can fail: a run of single phases keeps its
    // staging folder and group until `clibench cleanup`.
    let cleaned = crate::run(
        crate::clibench()
            .args(["cleanup", "--out", "out"])
            .current_dir(dir.path()),
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(cleaned.code, Some(0), "{}", cleaned.stderr);
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/result.json")).unwrap())
            .unwrap();
    assert_eq!(result["side"]["artifacts"]["legacy-1.0.tgz"], 7, "{result}");
    let log = std::fs::read_to_string(dir.path().join("out/logs/prepare.log")).unwrap();
    assert!(
        log.contains(
            "names {out}/build, where source-less builds ran before they moved to {build}"
        ),
        "{log}"
    );
}

#[test]
fn a_log_a_failed_build_cites_in_its_scratch_home_is_kept_in_out_logs() {
    let target = Target::new(INSTALLER);
    let commit = target.first_commit();
    target.spec(&commit, "", "");
    let spec = std::fs::read_to_string(target.dir.path().join("spec.toml")).unwrap();
    let spec = spec.replace(
        "command = [\"sh\", \"build.sh\"]",
        "command = [\"sh\", \"-c\", \"mkdir -p $HOME/.npm/_logs && echo 'verbose: 404' > \
         $HOME/.npm/_logs/t-debug-0.log && echo \\\"npm error A complete log of this run can \
         be found in: $HOME/.npm/_logs/t-debug-0.log\\\" >&2; exit 1\"]",
    );
    std::fs::write(target.dir.path().join("spec.toml"), spec).unwrap();
    let out = target.phase("prepare", 0, &[]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    let kept = target.out.join("logs/cited-t-debug-0.log");
    assert!(!target.out.join("build-home").exists());
    assert_eq!(
        std::fs::read_to_string(&kept).unwrap_or_default(),
        "verbose: 404\n",
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("logs/cited-t-debug-0.log"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("build-home/.npm"), "{}", out.stderr);
}

/// A stand-in for npm: `install` lays out the tree a wrapper with a platform optional
/// dependency (installed under an alias) and a nested dependency leaves, `pack` writes
/// a tarball per spec whose size says which it is. It logs its arguments.
const FAKE_NPM: &str = r#"#!/bin/sh
echo "$@" >> "$HOME/../npm-calls.txt"
case "$1" in
install)
  tree=$3
  mkdir -p "$tree/node_modules/wrap/node_modules/helper" "$tree/node_modules/@v/wrap-linux-x64" "$tree/node_modules/.bin"
  echo '{"dependencies":{"wrap":"file:../wrap-1.0.tgz"}}' > "$tree/package.json"
  echo '{"name":"wrap","version":"1.0"}' > "$tree/node_modules/wrap/package.json"
  echo '{"name":"@v/wrap","version":"1.0-linux-x64"}' > "$tree/node_modules/@v/wrap-linux-x64/package.json"
  echo '{"name":"helper","version":"2.0"}' > "$tree/node_modules/wrap/node_modules/helper/package.json"
  ;;
pack)
  dest=$3
  shift 3
  for spec; do
    case "$spec" in
      @v/wrap@1.0-linux-x64) head -c 5000 /dev/zero > "$dest/v-wrap-1.0-linux-x64.tgz" ;;
      helper@2.0) head -c 300 /dev/zero > "$dest/helper-2.0.tgz" ;;
      *) echo "unexpected $spec" >&2; exit 9 ;;
    esac
  done
  ;;
esac
"#;

#[test]
fn npm_dependencies_counts_the_platform_package_an_install_downloads() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("npm"), FAKE_NPM).unwrap();
    // The build puts the stand-in first on the build's PATH ({home}/.local/bin) and packs
    // a 20-byte wrapper, as `npm pack` of a wrapper package does.
    let spec = r#"
name = "wrapped"

[[build]]
name = "pack"
command = ["sh", "-c", "mkdir -p $HOME/.local/bin && cp \"$1\" $HOME/.local/bin/npm && chmod +x $HOME/.local/bin/npm && head -c 20 /dev/zero > wrap-1.0.tgz", "sh", "{spec_dir}/npm"]

[[artifacts]]
folder = "{build}"
glob = "wrap-*.tgz"
count = 1
npm_dependencies = true

[measure]
command = ["true"]
"#;
    let spec = spec.replace("{spec_dir}", &dir.path().display().to_string());
    std::fs::write(dir.path().join("spec.toml"), spec).unwrap();
    let out = crate::run(
        crate::clibench()
            .args([
                "phase",
                "prepare",
                "--spec",
                "spec.toml",
                "--out",
                "out",
                "--trial",
                "0",
            ])
            .current_dir(dir.path()),
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/result.json")).unwrap())
            .unwrap();
    let side = &result["side"];
    assert_eq!(
        side["artifacts"],
        serde_json::json!({"wrap-1.0.tgz": 20, "v-wrap-1.0-linux-x64.tgz": 5000, "helper-2.0.tgz": 300}),
        "{result}"
    );
    assert_eq!(side["metrics"]["bundle"][0]["value"], 5320.0, "{result}");
    let calls = std::fs::read_to_string(dir.path().join("out/npm-calls.txt")).unwrap();
    assert!(calls.contains("--ignore-scripts"), "{calls}");
    assert!(
        calls.ends_with("@v/wrap@1.0-linux-x64 helper@2.0\n"),
        "{calls}"
    );
}
