//! The built-in demo agent: its files and spec are embedded in the binary, so `clibench run`
//! with no spec benchmarks it anywhere, offline.
//!
//! [`materialise`] writes the agent's source tree into a fresh local git repository with fixed
//! author and committer identities and dates, so the commit sha depends only on the files, and
//! writes the spec next to it with that repository and sha as its source. The pipeline then
//! treats it like any other target: prepare fetches the commit, builds and packs, install
//! downloads from the served origin, and so on.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The demo's spec, with `@DEMO_SOURCE@` and `@DEMO_COMMIT@` standing for the materialised
/// repository and its commit.
pub(crate) const SPEC: &str = include_str!("../../../examples/demo-agent/demo.toml");

/// Marker in [`SPEC`] replaced by the path of the materialised source repository.
const SOURCE_MARKER: &str = "@DEMO_SOURCE@";
/// Marker in [`SPEC`] replaced by the sha of its single commit.
const COMMIT_MARKER: &str = "@DEMO_COMMIT@";

/// The agent's source tree: path inside the repository, contents, mode.
const FILES: &[(&str, &str, u32)] = &[
    (
        "README.md",
        include_str!("../../../examples/demo-agent/source/README.md"),
        0o644,
    ),
    (
        "VERSION",
        include_str!("../../../examples/demo-agent/source/VERSION"),
        0o644,
    ),
    (
        "build.py",
        include_str!("../../../examples/demo-agent/source/build.py"),
        0o755,
    ),
    (
        "demo_agent.py",
        include_str!("../../../examples/demo-agent/source/demo_agent.py"),
        0o755,
    ),
    (
        "install.sh",
        include_str!("../../../examples/demo-agent/source/install.sh"),
        0o755,
    ),
    // The agent's REPL kernel is bench-term's reference kernel, shipped inside its release.
    ("kernel.py", bench_term::kernel::REFERENCE_KERNEL, 0o644),
];

/// Fixed identity and dates of the demo's commit: the same files always give the same sha.
const COMMIT_DATE: &str = "2000-01-01T00:00:00Z";

/// Why the demo could not be written.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// A previous demo is in the way; it is never overwritten.
    #[error("{} already exists; refusing to overwrite a previous demo", path.display())]
    Exists {
        /// The folder that exists.
        path: PathBuf,
    },
    /// Writing a file or folder failed.
    #[error("failed to {action} {}", path.display())]
    Io {
        /// What was being done ("write", "create").
        action: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The source folder's path is not UTF-8, which a TOML spec cannot hold.
    #[error("{} is not a UTF-8 path, which a TOML spec cannot hold", path.display())]
    NotUtf8 {
        /// The path.
        path: PathBuf,
    },
    /// git could not be started.
    #[error("failed to run git {args}")]
    GitStart {
        /// The git arguments.
        args: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// git ran and failed.
    #[error("git {args} failed in {} ({status}): {stderr}", repo.display())]
    Git {
        /// The git arguments.
        args: String,
        /// The repository.
        repo: PathBuf,
        /// How git exited.
        status: std::process::ExitStatus,
        /// What git said on stderr.
        stderr: String,
    },
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> DemoError {
    let path = path.to_path_buf();
    move |source| DemoError::Io {
        action,
        path,
        source,
    }
}

/// Where [`materialise`] put the demo.
#[derive(Debug, Clone)]
pub struct Materialised {
    /// The git repository holding the agent's source tree.
    pub source: PathBuf,
    /// The sha of its one commit.
    pub sha: String,
    /// The spec, with its source pointing at `source` and `sha`.
    pub spec: PathBuf,
}

/// Writes the demo agent's source as a git repository under `dir/source`, its spec as
/// `dir/demo.toml`. `dir` must not hold a previous demo.
pub fn materialise(dir: &Path) -> Result<Materialised, DemoError> {
    let source = dir.join("source");
    if source.exists() {
        return Err(DemoError::Exists { path: source });
    }
    fs::create_dir_all(&source).map_err(io_error("create", &source))?;
    // Trial users read the source (the installer runs as them), so it is world-readable.
    for folder in [dir, source.as_path()] {
        fs::set_permissions(folder, fs::Permissions::from_mode(0o755))
            .map_err(io_error("make readable", folder))?;
    }
    for (name, contents, mode) in FILES {
        let path = source.join(name);
        fs::write(&path, contents).map_err(io_error("write", &path))?;
        fs::set_permissions(&path, fs::Permissions::from_mode(*mode))
            .map_err(io_error("set the mode of", &path))?;
    }
    git(&source, &["init", "--quiet", "--initial-branch=main"])?;
    git(&source, &["add", "--all"])?;
    git(
        &source,
        &[
            "-c",
            "user.name=clibench demo",
            "-c",
            "user.email=demo@clibench.invalid",
            "-c",
            "commit.gpgsign=false",
            "commit",
            "--quiet",
            "--no-verify",
            "-m",
            "demo-agent source",
        ],
    )?;
    let sha = git(&source, &["rev-parse", "HEAD"])?.trim().to_owned();
    let source = source
        .canonicalize()
        .map_err(io_error("resolve", &source))?;
    if source.to_str().is_none() {
        return Err(DemoError::NotUtf8 { path: source });
    }
    let text = spec_text(&source, &sha);
    let spec = dir.join("demo.toml");
    fs::write(&spec, text).map_err(io_error("write", &spec))?;
    Ok(Materialised { source, sha, spec })
}

/// The model script of the demo at work: the spec's inline `[model.script]`, which keeps the
/// demo's text a whole spec (a script file would have to sit beside every copy of it).
pub fn at_work_script() -> bench_model::Script {
    let spec = crate::spec::parse(
        &spec_text(Path::new("/demo/source"), &"0".repeat(40)),
        "demo",
    )
    // Invariant: the embedded demo spec parses (`the_demo_spec_parses_and_...` holds it).
    .expect("the embedded demo spec parses");
    match spec.model.map(|model| model.script) {
        Some(crate::spec::ScriptSource::Inline(script)) => script,
        // Invariant: the embedded demo spec has an inline script (a test holds it).
        _ => unreachable!("the demo spec's [model] has its script inline"),
    }
}

/// The demo spec with its source set to `source` at `sha`.
///
/// The path is written as a TOML basic string with quotes, backslashes and
/// control characters escaped, so any folder name reads back as itself and
/// never breaks a line (a non-UTF-8 path is written lossily; [`materialise`]
/// refuses those first).
pub(crate) fn spec_text(source: &Path, sha: &str) -> String {
    let path = toml_string(&source.to_string_lossy());
    let quoted_marker = format!("\"{SOURCE_MARKER}\"");
    // The marker inside quotes is the value; elsewhere (the header comment)
    // it stands for the path too, escaped the same way so it stays one line.
    SPEC.replace(&quoted_marker, &path)
        .replace(SOURCE_MARKER, &path)
        .replace(COMMIT_MARKER, sha)
}

/// `text` as a TOML basic string: in double quotes, with `"`, `\` and every
/// control character escaped.
fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Runs git in `repo` with a fixed, config-free environment, returning its stdout.
fn git(repo: &Path, args: &[&str]) -> Result<String, DemoError> {
    let output = Command::new("git")
        .args(args)
        .current_dir(repo)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", repo)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_DATE", COMMIT_DATE)
        .env("GIT_COMMITTER_DATE", COMMIT_DATE)
        .env("LANG", "C")
        .stdin(Stdio::null())
        .output()
        .map_err(|source| DemoError::GitStart {
            args: args.join(" "),
            source,
        })?;
    if !output.status.success() {
        return Err(DemoError::Git {
            args: args.join(" "),
            repo: repo.to_path_buf(),
            status: output.status,
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_path_with_quotes_backslashes_and_newlines_reads_back() {
        let source = Path::new("/tmp/a \"quoted\" \\ back\\slash\nnew line 'single'\u{7f}/source");
        let text = spec_text(source, &"0".repeat(40));
        assert!(
            !text.contains("\nnew line"),
            "the path's newline was not escaped:\n{text}"
        );
        let spec: toml::Value = toml::from_str(&text).unwrap();
        assert_eq!(
            spec["source"]["repository"].as_str(),
            source.to_str(),
            "{text}"
        );
    }

    #[test]
    fn same_files_give_the_same_commit() {
        let first = tempfile::tempdir().unwrap();
        let second = tempfile::tempdir().unwrap();
        let a = materialise(first.path()).unwrap();
        let b = materialise(second.path()).unwrap();
        assert_eq!(a.sha, b.sha);
        assert_eq!(a.sha.len(), 40);
        let spec = fs::read_to_string(&a.spec).unwrap();
        assert!(spec.contains(&a.sha), "{spec}");
        assert!(spec.contains(&a.source.display().to_string()), "{spec}");
        assert!(
            !spec.contains("@DEMO_"),
            "a marker was left in the spec:\n{spec}"
        );
    }

    #[test]
    fn refuses_to_overwrite_a_previous_demo() {
        let dir = tempfile::tempdir().unwrap();
        materialise(dir.path()).unwrap();
        let error = materialise(dir.path()).unwrap_err().to_string();
        assert!(error.contains("already exists"), "{error}");
    }

    #[test]
    fn the_source_tree_builds_its_release_artifact() {
        let dir = tempfile::tempdir().unwrap();
        let demo = materialise(dir.path()).unwrap();
        let status = Command::new("python3")
            .arg("build.py")
            .current_dir(&demo.source)
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        let version = SPEC_VERSION.trim();
        assert!(
            demo.source
                .join(format!("dist/demo-agent-{version}.tar.gz"))
                .is_file()
        );
    }

    #[test]
    fn the_demo_spec_parses_and_measures_every_phase() {
        let text = spec_text(Path::new("/tmp/demo/source"), &"0".repeat(40));
        let spec = crate::spec::parse(&text, "demo.toml").unwrap();
        assert_eq!(spec.version.as_deref(), Some(SPEC_VERSION.trim()));
        let source = spec.source.unwrap();
        assert_eq!(source.repository, "/tmp/demo/source");
        assert_eq!(source.commit, "0".repeat(40));
        let measure = spec.measure.unwrap();
        assert!(measure.list_sessions.is_some() && measure.stop_session.is_some());
        assert!(spec.runtime.is_some());
        assert!(!spec.ui.unwrap().steps.is_empty());
        assert!(spec.staircase.is_some());
    }

    /// The demo at work types three prompts: a short answer, an `ls` tool call and a long
    /// reply to type into, in about 1.5 s of model time so that `clibench run` stays fast.
    #[test]
    fn the_model_script_has_three_prompted_turns_within_the_time_budget() {
        use bench_model::script::Reply;
        let script = at_work_script();
        assert_eq!(script.turns.len(), 3);
        assert!(
            script.turns.iter().all(|turn| turn.prompt.is_some()),
            "every turn needs the prompt the session phase types"
        );
        assert_eq!(script.turns[1].shell.as_deref(), Some("ls"));
        let compiled = script.compile().unwrap();
        let mut model_seconds = 0.0;
        let mut longest_stream_seconds = 0.0_f64;
        for turn in &compiled.turns {
            let physics = &turn.physics;
            let stream = |tokens: f64| {
                physics.first_token.as_secs_f64() + tokens / physics.tokens_per_second
            };
            let seconds = match &turn.reply {
                Reply::Text(text) => stream(text.split_whitespace().count() as f64),
                Reply::Tokens(tokens) => stream(f64::from(*tokens)),
                // The call's arguments are a handful of pieces; the answer after the
                // results is the script's `then` text.
                Reply::Tools { then, .. } => {
                    let then_words = match then.as_ref() {
                        Reply::Text(text) => text.split_whitespace().count(),
                        other => panic!("the tool turn should end in a text, not {other:?}"),
                    };
                    stream(8.0) + stream(then_words as f64)
                }
            };
            longest_stream_seconds = longest_stream_seconds.max(seconds);
            model_seconds += seconds;
        }
        assert!(model_seconds <= 1.5, "{model_seconds} s of model time");
        // typing_keys keys at a person's pace need a stream that lasts.
        assert!(
            longest_stream_seconds >= 0.8,
            "{longest_stream_seconds} s of the longest reply"
        );
    }

    /// The agents' shared script (examples/agents/scripts/at-work.toml): three prompted
    /// turns, each kept by its `when` for its own prompt only, one of them an `ls`.
    #[test]
    fn the_agents_script_keeps_each_turn_for_its_own_prompt() {
        let text = include_str!("../../../examples/agents/scripts/at-work.toml");
        let script = bench_model::Script::from_toml(text, "at-work.toml")
            .unwrap_or_else(|error| panic!("{error}"));
        let compiled = script.compile().unwrap();
        let prompts: Vec<&str> = script
            .turns
            .iter()
            .map(|turn| turn.prompt.as_deref().expect("every turn has a prompt"))
            .collect();
        assert_eq!(prompts.len(), 3);
        for (index, turn) in compiled.turns.iter().enumerate() {
            let when = turn.when.as_ref().expect("every turn has a when");
            for (other, prompt) in prompts.iter().enumerate() {
                assert_eq!(
                    when.is_match(prompt),
                    index == other,
                    "turn {index}'s when {when} against prompt {other} {prompt:?}"
                );
            }
        }
        assert!(
            script
                .turns
                .iter()
                .any(|turn| turn.shell.as_deref() == Some("ls"))
        );
    }

    const SPEC_VERSION: &str = include_str!("../../../examples/demo-agent/source/VERSION");
}
