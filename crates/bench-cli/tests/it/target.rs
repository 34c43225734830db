//! A small target for the prepare and install tests: a local git repository with a
//! build script that packs a release archive and an installer that fetches it from
//! the origin, plus a guard that cleans up users and homes whatever happens.

use crate::{Run, clibench, run};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The fixed commit date, so the fixture's shas never change.
const DATE: &str = "2000-01-01T00:00:00Z";

/// A temporary folder with the target's repository; removed, with its users, on drop.
pub struct Target {
    /// The folder (traversable by trial users).
    pub dir: tempfile::TempDir,
    /// The output folder of the run.
    pub out: PathBuf,
    /// The repository.
    pub repo: PathBuf,
}

impl Drop for Target {
    fn drop(&mut self) {
        if self.out.exists() {
            let _ = clibench()
                .arg("cleanup")
                .arg("--out")
                .arg(&self.out)
                .output();
        }
    }
}

fn git(repo: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args([
            "-c",
            "user.name=Fixture",
            "-c",
            "user.email=fixture@example.invalid",
        ])
        .args(args)
        .current_dir(repo)
        .env("GIT_AUTHOR_DATE", DATE)
        .env("GIT_COMMITTER_DATE", DATE)
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// The default installer: records its environment, downloads and unpacks the archive.
pub const INSTALLER: &str = r#"#!/bin/sh
set -e
env > "$HOME/installer-env.txt"
mkdir -p "$HOME/.local/bin"
curl -fsS "$TOOL_BASE_URL/tool-1.0.tar.gz" | tar xz -C "$HOME/.local/bin"
echo installed
"#;

impl Target {
    /// A repository whose first commit has `installer` as install.sh, and a second
    /// commit on top (so the first is not a branch tip).
    pub fn new(installer: &str) -> Target {
        let dir = tempfile::tempdir().unwrap();
        // Trial users (as root) must reach the source's install.sh under OUT/.
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir(&repo).unwrap();
        std::fs::write(repo.join("tool"), "#!/bin/sh\necho \"tool 1.0\"\n").unwrap();
        std::fs::set_permissions(
            repo.join("tool"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        std::fs::write(
            repo.join("build.sh"),
            "set -e\nmkdir -p dist\ntar czf dist/tool-1.0.tar.gz tool\necho built\n",
        )
        .unwrap();
        std::fs::write(repo.join("install.sh"), installer).unwrap();
        git(&repo, &["init", "--quiet", "--initial-branch=main"]);
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "--quiet", "-m", "first"]);
        let out = dir.path().join("out");
        Target { dir, out, repo }
    }

    /// The sha of the first commit.
    pub fn first_commit(&self) -> String {
        git(&self.repo, &["rev-list", "--max-parents=0", "HEAD"])
    }

    /// Adds a commit on top of the first one.
    pub fn add_commit(&self) -> String {
        std::fs::write(self.repo.join("later.txt"), "later\n").unwrap();
        git(&self.repo, &["add", "later.txt"]);
        git(&self.repo, &["commit", "--quiet", "-m", "later"]);
        git(&self.repo, &["rev-parse", "HEAD"])
    }

    /// Writes spec.toml: the standard target with `extra` appended to `[install]`
    /// and `tail` appended to the file.
    pub fn spec(&self, commit: &str, install_extra: &str, tail: &str) -> PathBuf {
        let text = format!(
            r#"name = "tool"
version = "1.0"

[source]
repository = "repo"
commit = "{commit}"

[versions]
git = ["git", "--version"]

[[build]]
name = "pack"
command = ["sh", "build.sh"]
timeout = "30s"

[[artifacts]]
folder = "{{source}}/dist"
glob = "tool-*.tar.gz"
count = 1

[origin]
path = "/releases/v{{version}}/"

[install]
command = ["sh", "{{source}}/install.sh"]
timeout = "30s"
env = {{ TOOL_BASE_URL = "{{origin}}/releases/v{{version}}" }}
version_command = ["tool"]
version_contains = "tool {{version}}"
files = ["{{home}}/.local/bin/tool"]
executable = "{{home}}/.local/bin/tool"
{install_extra}

[[install.write]]
path = ".tool/settings.json"
content = '{{"onboardingShown": true}}'
{tail}"#
        );
        let path = self.dir.path().join("spec.toml");
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Runs `clibench phase NAME --trial N` with the spec, plus extra environment.
    pub fn phase(&self, name: &str, trial: u32, env: &[(&str, &str)]) -> Run {
        let mut command = clibench();
        command
            .args([
                "phase",
                name,
                "--spec",
                "spec.toml",
                "--out",
                "out",
                "--trial",
            ])
            .arg(trial.to_string())
            .current_dir(self.dir.path());
        for (key, value) in env {
            command.env(key, value);
        }
        run(&mut command)
    }

    /// The result file as JSON.
    pub fn result(&self) -> serde_json::Value {
        let text = std::fs::read_to_string(self.out.join("result.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    /// The state file as JSON.
    pub fn state(&self) -> serde_json::Value {
        let text = std::fs::read_to_string(self.out.join("state.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    /// The run's staging folder (source, build, artifacts), from the state file.
    pub fn stage(&self) -> PathBuf {
        PathBuf::from(self.state()["stage"].as_str().unwrap())
    }

    /// Install 0's uid, from /etc/passwd (the state file records no uid).
    pub fn uid(&self) -> u32 {
        let name = self.state()["users"][0]["name"]
            .as_str()
            .unwrap()
            .to_owned();
        uid_of(&name).unwrap()
    }

    /// Install 0's home, from the state file.
    pub fn home(&self) -> PathBuf {
        PathBuf::from(self.state()["users"][0]["home"].as_str().unwrap())
    }

    /// Runs the hidden cleanup command and checks it worked.
    pub fn cleanup(&self) {
        let out = run(clibench().arg("cleanup").arg("--out").arg(&self.out));
        assert_eq!(out.code, Some(0), "{}", out.stderr);
    }
}

/// Pids of live (non-zombie) processes whose environment holds `HOME=home` or that
/// belong to `uid` (when given): what a trial may have left behind.
pub fn leftovers(home: &Path, uid: Option<u32>) -> Vec<u32> {
    let wanted = format!("HOME={}", home.display()).into_bytes();
    let own = std::process::id();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == own {
            continue;
        }
        let status = std::fs::read_to_string(entry.path().join("status")).unwrap_or_default();
        if status
            .lines()
            .any(|l| l.starts_with("State:") && l.contains("Z"))
        {
            continue;
        }
        let owned = uid.is_some_and(|uid| {
            status
                .lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|u| u.parse::<u32>().ok())
                == Some(uid)
        });
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        if owned || environ.split(|b| *b == 0).any(|e| e == wanted) {
            found.push(pid);
        }
    }
    found
}

pub use crate::is_root;

/// The uid of a user, from /etc/passwd.
pub fn uid_of(name: &str) -> Option<u32> {
    std::fs::read_to_string("/etc/passwd")
        .unwrap()
        .lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|f| f[0] == name)
        .and_then(|f| f.get(2)?.parse().ok())
}

/// Whether a user exists.
pub fn user_exists(name: &str) -> bool {
    std::fs::read_to_string("/etc/passwd")
        .unwrap()
        .lines()
        .any(|l| l.split(':').next() == Some(name))
}
