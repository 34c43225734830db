//! The commits bisect searches: the first-parent history from a good commit to a bad one.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The range could not be listed.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// git could not be started.
    #[error("failed to run git in {repository}", repository = repository.display())]
    Spawn {
        /// The repository.
        repository: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// git said no (an unknown ref, not a repository).
    #[error("git {what} in {repository} failed: {stderr}", repository = repository.display())]
    Failed {
        /// What was asked.
        what: String,
        /// The repository.
        repository: PathBuf,
        /// What git printed on stderr, trimmed.
        stderr: String,
    },
    /// The good commit is not an ancestor of the bad one on its first-parent line.
    #[error("{good} is not on the first-parent history of {bad}")]
    NotAncestor {
        /// The good ref.
        good: String,
        /// The bad ref.
        bad: String,
    },
}

fn git(repository: &Path, args: &[&str]) -> Result<String, GitError> {
    let output = Command::new("git")
        .arg("-C")
        .arg(repository)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|source| GitError::Spawn {
            repository: repository.to_path_buf(),
            source,
        })?;
    if !output.status.success() {
        return Err(GitError::Failed {
            what: args.join(" "),
            repository: repository.to_path_buf(),
            stderr: String::from_utf8_lossy(&output.stderr)
                .trim()
                .chars()
                .take(500)
                .collect(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The full shas from `good` to `bad` along `bad`'s first parents, oldest first,
/// both ends included.
pub fn first_parent_range(
    repository: &Path,
    good: &str,
    bad: &str,
) -> Result<Vec<String>, GitError> {
    let resolve = |reference: &str| {
        git(
            repository,
            &[
                "rev-parse",
                "--verify",
                "--end-of-options",
                &format!("{reference}^{{commit}}"),
            ],
        )
        .map(|sha| sha.trim().to_owned())
    };
    let (good_sha, bad_sha) = (resolve(good)?, resolve(bad)?);
    let listed = git(
        repository,
        &[
            "rev-list",
            "--first-parent",
            "--reverse",
            &format!("{good_sha}..{bad_sha}"),
        ],
    )?;
    let after: Vec<String> = listed.lines().map(str::to_owned).collect();
    // On the first-parent line, the commit after good has good as its first parent.
    let first = after.first().ok_or_else(|| GitError::NotAncestor {
        good: good.to_owned(),
        bad: bad.to_owned(),
    })?;
    let parent = git(
        repository,
        &["rev-parse", "--verify", &format!("{first}^1")],
    )?;
    if parent.trim() != good_sha {
        return Err(GitError::NotAncestor {
            good: good.to_owned(),
            bad: bad.to_owned(),
        });
    }
    let mut range = vec![good_sha];
    range.extend(after);
    Ok(range)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(repository: &Path, message: &str) {
        std::fs::write(repository.join("file"), message).unwrap();
        for args in [
            vec!["add", "file"],
            vec![
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-q",
                "-m",
                message,
            ],
        ] {
            assert!(
                Command::new("git")
                    .arg("-C")
                    .arg(repository)
                    .args(&args)
                    .status()
                    .unwrap()
                    .success()
            );
        }
    }

    #[test]
    fn the_range_runs_from_good_to_bad_on_the_first_parent_line() {
        let dir = tempfile::tempdir().unwrap();
        let repository = dir.path();
        assert!(
            Command::new("git")
                .args(["init", "-q"])
                .arg(repository)
                .status()
                .unwrap()
                .success()
        );
        for message in ["one", "two", "three", "four"] {
            commit(repository, message);
        }
        let range = first_parent_range(repository, "HEAD~3", "HEAD").unwrap();
        assert_eq!(range.len(), 4);
        assert_eq!(
            range[3],
            git(repository, &["rev-parse", "HEAD"]).unwrap().trim()
        );
        assert!(matches!(
            first_parent_range(repository, "HEAD", "HEAD~2"),
            Err(GitError::NotAncestor { .. })
        ));
        assert!(matches!(
            first_parent_range(repository, "nope", "HEAD"),
            Err(GitError::Failed { .. })
        ));
    }
}
