//! The published versions bisect searches: those between a good and a bad version, as
//! the registry lists them (`npm view PACKAGE versions --json`), in semver order.
//!
//! Pre-releases are left out unless an end is one (a bisection between two releases
//! asks which release moved). Listing is behind [`Lister`], so the search is tested
//! with a fake registry; [`Npm`] asks the real one with a time limit.

use std::cmp::Ordering;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long `npm view` may take before it is stopped.
pub const NPM_TIMEOUT: Duration = Duration::from_secs(120);
/// The most output of `npm view` read (a package with thousands of versions lists
/// about 100 KiB).
const MOST_OUTPUT_BYTES: u64 = 16 << 20;

/// The versions could not be listed, or the ends are not a range of them.
#[derive(Debug, thiserror::Error)]
pub enum VersionsError {
    /// npm is not on PATH.
    #[error("`{program}` was not found: bisecting published versions lists them with `npm view`; install npm or put it on PATH", program = program.display())]
    NpmMissing {
        /// The program looked for.
        program: PathBuf,
    },
    /// npm could not be started or read.
    #[error("failed to run `{program} view`", program = program.display())]
    Spawn {
        /// The program.
        program: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// npm said no (an unknown package, no network).
    #[error("`npm view {package} versions` failed ({status}): {stderr}")]
    Failed {
        /// The package.
        package: String,
        /// How it exited.
        status: String,
        /// The end of what it printed on stderr.
        stderr: String,
    },
    /// npm did not answer in time.
    #[error("`npm view {package} versions` did not answer within {seconds} s", seconds = NPM_TIMEOUT.as_secs())]
    TimedOut {
        /// The package.
        package: String,
    },
    /// npm's answer is not a JSON list of version strings.
    #[error("`npm view {package} versions --json` printed something other than a list of versions")]
    Unreadable {
        /// The package.
        package: String,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// An end is not a published version of the package.
    #[error("{version} is not a published version of {package} (npm view {package} versions)")]
    NotPublished {
        /// The package.
        package: String,
        /// The end.
        version: String,
    },
    /// The good end is not an earlier version than the bad end.
    #[error("--good {good} is not an earlier version than --bad {bad}")]
    NotBefore {
        /// The good end.
        good: String,
        /// The bad end.
        bad: String,
    },
}

/// Lists a package's published versions.
pub trait Lister {
    /// Every published version of `package`, as the registry lists them.
    fn versions(&self, package: &str) -> Result<Vec<String>, VersionsError>;
}

/// The registry through `npm view PACKAGE versions --json`.
#[derive(Debug, Clone)]
pub struct Npm {
    /// The npm program (`npm`, looked up on PATH).
    pub program: PathBuf,
}

impl Default for Npm {
    fn default() -> Npm {
        Npm {
            program: PathBuf::from("npm"),
        }
    }
}

impl Lister for Npm {
    fn versions(&self, package: &str) -> Result<Vec<String>, VersionsError> {
        let spawn = |source: std::io::Error| {
            if source.kind() == std::io::ErrorKind::NotFound {
                VersionsError::NpmMissing {
                    program: self.program.clone(),
                }
            } else {
                VersionsError::Spawn {
                    program: self.program.clone(),
                    source,
                }
            }
        };
        use std::os::unix::process::CommandExt;
        // Its own process group, so that a timeout stops npm and whatever it started.
        let mut child = Command::new(&self.program)
            .args(["view", "--json", "--", package, "versions"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(spawn)?;
        let reader = |pipe: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut text = Vec::new();
                if let Some(pipe) = pipe {
                    // A read error ends the text; the exit status says what went wrong.
                    let _ = pipe.take(MOST_OUTPUT_BYTES).read_to_end(&mut text);
                }
                text
            })
        };
        let stdout = reader(
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let stderr = reader(
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().map_err(spawn)? {
                break status;
            }
            if started.elapsed() >= NPM_TIMEOUT {
                // The group is npm's own (process_group(0) above): its id is the child's.
                let group = rustix::process::Pid::from_raw(child.id() as i32);
                if let Some(group) = group {
                    let _ =
                        rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
                }
                let _ = child.wait();
                return Err(VersionsError::TimedOut {
                    package: package.to_owned(),
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let stdout = stdout.join().unwrap_or_default();
        let stderr = stderr.join().unwrap_or_default();
        if !status.success() {
            let stderr = String::from_utf8_lossy(&stderr);
            let tail: String = stderr.trim().chars().rev().take(400).collect();
            return Err(VersionsError::Failed {
                package: package.to_owned(),
                status: status.to_string(),
                stderr: tail.chars().rev().collect(),
            });
        }
        parse_listing(package, &stdout)
    }
}

/// `npm view --json` prints a list, or a lone string for a package with one version.
fn parse_listing(package: &str, json: &[u8]) -> Result<Vec<String>, VersionsError> {
    let unreadable = |source| VersionsError::Unreadable {
        package: package.to_owned(),
        source,
    };
    let listing: serde_json::Value = serde_json::from_slice(json).map_err(unreadable)?;
    if let serde_json::Value::String(version) = listing {
        return Ok(vec![version]);
    }
    serde_json::from_value(listing).map_err(unreadable)
}

/// The versions from `good` to `bad`, both included, oldest first: the published ones
/// that parse as semver, in semver order, without pre-releases unless an end is one.
pub fn between(
    lister: &impl Lister,
    package: &str,
    good: &str,
    bad: &str,
) -> Result<Vec<String>, VersionsError> {
    let listed = lister.versions(package)?;
    let published = |version: &str| -> Result<Version, VersionsError> {
        listed
            .iter()
            .find(|v| v.as_str() == version)
            .and_then(|v| Version::parse(v))
            .ok_or_else(|| VersionsError::NotPublished {
                package: package.to_owned(),
                version: version.to_owned(),
            })
    };
    let (low, high) = (published(good)?, published(bad)?);
    if low.cmp(&high) != Ordering::Less {
        return Err(VersionsError::NotBefore {
            good: good.to_owned(),
            bad: bad.to_owned(),
        });
    }
    let with_pre = !low.pre.is_empty() || !high.pre.is_empty();
    let mut range: Vec<(Version, &String)> = listed
        .iter()
        .filter_map(|text| Version::parse(text).map(|v| (v, text)))
        .filter(|(v, _)| *v >= low && *v <= high)
        .filter(|(v, _)| with_pre || v.pre.is_empty())
        .collect();
    range.sort_by(|a, b| a.0.cmp(&b.0));
    range.dedup_by(|a, b| a.0 == b.0);
    Ok(range.into_iter().map(|(_, text)| text.clone()).collect())
}

/// A semver version (build metadata, which does not order, dropped).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Version {
    core: [u64; 3],
    pre: Vec<String>,
}

impl Version {
    fn parse(text: &str) -> Option<Version> {
        let text = text.split('+').next()?;
        let (core, pre) = match text.split_once('-') {
            Some((core, pre)) => (core, pre.split('.').map(str::to_owned).collect()),
            None => (text, Vec::new()),
        };
        let mut parts = core.split('.').map(|part| part.parse::<u64>().ok());
        let core = [parts.next()??, parts.next()??, parts.next()??];
        if parts.next().is_some() {
            return None;
        }
        Some(Version { core, pre })
    }
}

impl Ord for Version {
    /// Semver's precedence: the numbers, then a pre-release before its release, then
    /// the pre-release identifiers (numeric ones numerically, before alphanumeric ones).
    fn cmp(&self, other: &Version) -> Ordering {
        self.core
            .cmp(&other.core)
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => {
                    let identifier =
                        |a: &String, b: &String| match (a.parse::<u64>(), b.parse::<u64>()) {
                            (Ok(a), Ok(b)) => a.cmp(&b),
                            (Ok(_), Err(_)) => Ordering::Less,
                            (Err(_), Ok(_)) => Ordering::Greater,
                            (Err(_), Err(_)) => a.cmp(b),
                        };
                    self.pre
                        .iter()
                        .zip(&other.pre)
                        .map(|(a, b)| identifier(a, b))
                        .find(|order| order.is_ne())
                        .unwrap_or_else(|| self.pre.len().cmp(&other.pre.len()))
                }
            })
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Version) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    struct Listed(&'static [&'static str]);

    impl Lister for Listed {
        fn versions(&self, _: &str) -> Result<Vec<String>, VersionsError> {
            Ok(self.0.iter().map(|v| (*v).to_owned()).collect())
        }
    }

    const PI: Listed = Listed(&[
        "0.62.0",
        "0.63.0",
        "0.63.1",
        "0.63.2",
        "0.64.0-beta.1",
        "0.64.0",
        "0.67.6",
        "0.67.68",
        "0.68.1",
        "0.73.0",
        "0.73.1",
        "0.74.0",
    ]);

    #[test]
    fn the_range_runs_from_good_to_bad_in_semver_order_without_pre_releases() {
        let range = between(&PI, "pi", "0.63.1", "0.73.1").unwrap();
        assert_eq!(
            range,
            [
                "0.63.1", "0.63.2", "0.64.0", "0.67.6", "0.67.68", "0.68.1", "0.73.0", "0.73.1"
            ]
        );
    }

    #[test]
    fn a_pre_release_end_keeps_the_pre_releases() {
        let range = between(&PI, "pi", "0.64.0-beta.1", "0.67.6").unwrap();
        assert_eq!(range, ["0.64.0-beta.1", "0.64.0", "0.67.6"]);
        assert!(Version::parse("1.0.0-alpha").unwrap() < Version::parse("1.0.0-alpha.1").unwrap());
        assert!(Version::parse("1.0.0-2").unwrap() < Version::parse("1.0.0-rc").unwrap());
    }

    #[test]
    fn an_unpublished_end_and_ends_in_the_wrong_order_are_refused() {
        let error = between(&PI, "pi", "0.63.9", "0.73.1").unwrap_err();
        assert_eq!(
            error.to_string(),
            "0.63.9 is not a published version of pi (npm view pi versions)"
        );
        assert!(matches!(
            between(&PI, "pi", "0.73.1", "0.63.1"),
            Err(VersionsError::NotBefore { .. })
        ));
        assert!(matches!(
            between(&PI, "pi", "0.73.1", "0.73.1"),
            Err(VersionsError::NotBefore { .. })
        ));
    }

    fn fake_npm(dir: &std::path::Path, script: &str) -> Npm {
        let program = dir.join("npm");
        std::fs::write(&program, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        Npm { program }
    }

    #[test]
    fn npm_view_is_asked_for_the_package_and_read_as_json() {
        let dir = tempfile::tempdir().unwrap();
        let npm = fake_npm(
            dir.path(),
            r#"[ "$*" = "view --json -- @scope/pkg versions" ] || { echo "unexpected: $*" >&2; exit 3; }
echo '["1.0.0", "1.1.0",'
echo ' "2.0.0"]'"#,
        );
        assert_eq!(
            npm.versions("@scope/pkg").unwrap(),
            ["1.0.0", "1.1.0", "2.0.0"]
        );
        let one = fake_npm(dir.path(), r#"echo '"1.0.0"'"#);
        assert_eq!(one.versions("p").unwrap(), ["1.0.0"]);
    }

    #[test]
    fn npm_missing_failing_or_printing_nonsense_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let missing = Npm {
            program: dir.path().join("no-npm-here"),
        };
        let error = missing.versions("p").unwrap_err();
        assert!(matches!(error, VersionsError::NpmMissing { .. }), "{error}");
        assert!(error.to_string().contains("install npm"), "{error}");
        let failing = fake_npm(
            dir.path(),
            "echo 'npm ERR! 404 Not Found: nope' >&2; exit 1",
        );
        let error = failing.versions("nope").unwrap_err();
        assert!(
            matches!(&error, VersionsError::Failed { stderr, .. } if stderr.contains("404")),
            "{error}"
        );
        let nonsense = fake_npm(dir.path(), "echo '<html>'");
        assert!(matches!(
            nonsense.versions("p"),
            Err(VersionsError::Unreadable { .. })
        ));
    }
}
