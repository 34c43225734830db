//! The prepare phase: fetch exactly the spec's commit into a fresh folder, run the
//! build steps, collect the artifacts with `SHA256SUMS`, and record `bundle`, the
//! artifact sizes and the runtime facts (tool versions, kernel, machine, cpu).

use crate::pipeline::artifacts::{SUMS, sha256_file, wildcard};
use crate::pipeline::context::{ContextError, PhaseContext, base_environment};
use crate::pipeline::file_error::FileError;
use crate::pipeline::isolation::command::{self, Step};
use crate::pipeline::out::state::State;
use crate::spec::{BuildStep, Template, Values};
use bench_core::error_chain;
use bench_core::{Metric, Sample, Side, record};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a git command or a version command may take.
const GIT_TIMEOUT: Duration = Duration::from_secs(600);
const VERSION_TIMEOUT: Duration = Duration::from_secs(60);

/// The prepare phase failed.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// The spec lists the architectures it supports, and this machine's is not one.
    #[error("unsupported architecture {machine}: {target} supports {}", supported.join(", "))]
    Architecture {
        /// This machine's.
        machine: String,
        /// The spec's name.
        target: String,
        /// What the spec supports.
        supported: Vec<String>,
    },
    /// The host facts could not be read.
    #[error("reading the host facts")]
    Host(#[source] bench_proc::HostError),
    /// A placeholder has no value, or the logs folder could not be made.
    #[error(transparent)]
    Context(#[from] ContextError),
    /// A placeholder in a build step has no value.
    #[error(transparent)]
    Expand(#[from] crate::spec::ExpandError),
    /// The state file could not be read or written.
    #[error(transparent)]
    State(#[from] crate::pipeline::out::state::StateError),
    /// A git, build or version command failed.
    #[error(transparent)]
    Exec(#[from] command::ExecError),
    /// `git fetch` failed; the message has the repository's credentials hidden, which is
    /// why it is text and not the fetch's error.
    #[error("{0}")]
    Fetch(String),
    /// The checkout is not the commit asked for.
    #[error("the checkout resolved to {head}, not the requested commit {commit}")]
    WrongCommit {
        /// What HEAD is.
        head: String,
        /// The spec's commit.
        commit: String,
    },
    /// A local source repository does not exist.
    #[error("the source repository {} does not exist", path.display())]
    NoRepository {
        /// The path.
        path: PathBuf,
    },
    /// Some but not all of a build step's `when_exists` paths exist.
    #[error("{step}: incomplete: {present} exist(s) but {absent} do(es) not")]
    Incomplete {
        /// The step.
        step: String,
        /// The paths that exist.
        present: String,
        /// The paths that do not.
        absent: String,
    },
    /// An artifact set found another number of files than its `count`.
    #[error("expected {expected} artifact(s) matching {place}, found {}{}", found.len(), listing(found))]
    ArtifactCount {
        /// The set's `count`.
        expected: u32,
        /// `FOLDER/GLOB`.
        place: String,
        /// The files found.
        found: Vec<String>,
    },
    /// A required artifact set found nothing.
    #[error("expected at least one artifact matching {place}, found none")]
    NoArtifacts {
        /// `FOLDER/GLOB`.
        place: String,
    },
    /// Two artifacts (or an artifact and `SHA256SUMS`) have one name.
    #[error("two artifacts are named {name}: artifact names must be unique")]
    DuplicateArtifact {
        /// The name.
        name: String,
    },
    /// What the build left running could not be stopped.
    #[error("stopping what the build left running")]
    Stop(#[source] command::StopError),
    /// A file-system call failed.
    #[error(transparent)]
    File(#[from] FileError),
    /// `SHA256SUMS` could not be written.
    #[error(transparent)]
    Write(#[from] bench_core::io::WriteError),
}

/// Runs the prepare phase.
pub fn run(ctx: &PhaseContext, side: &mut Side) -> Result<(), PrepareError> {
    record_host_facts(side)?;
    let machine = side.runtime.get("machine").cloned().unwrap_or_default();
    let supported = &ctx.spec.architectures;
    if !supported.is_empty() && !supported.contains(&machine) {
        return Err(PrepareError::Architecture {
            machine,
            target: ctx.spec.name.clone(),
            supported: supported.clone(),
        });
    }
    if let Some(package) = &ctx.spec.package {
        side.runtime.insert("package".to_owned(), package.clone());
    }
    if let Some(version) = &ctx.spec.version {
        side.runtime.insert("version".to_owned(), version.clone());
    }

    let build_home = ctx.out.join("build-home");
    State::update(&ctx.out, |s| {
        if !s.folders.contains(&build_home) {
            s.folders.push(build_home.clone());
        }
    })?;
    fresh_folder(&build_home)?;
    let outcome = build(ctx, side, &build_home);
    // The build's HOME is scratch space; whatever still runs with it is stopped.
    let stopped = command::stop_home(&build_home);
    let removed = std::fs::remove_dir_all(&build_home);
    outcome?;
    stopped.map_err(PrepareError::Stop)?;
    removed.map_err(FileError::doing(format!(
        "removing {}",
        build_home.display()
    )))?;
    State::update(&ctx.out, |s| s.folders.retain(|f| f != &build_home))?;
    Ok(())
}

fn build(ctx: &PhaseContext, side: &mut Side, build_home: &Path) -> Result<(), PrepareError> {
    let log = ctx.log_path("prepare.log")?;
    let _ = std::fs::remove_file(&log);
    let user = crate::pipeline::isolation::users::name_of(rustix::process::getuid().as_raw());
    let mut env = base_environment(&user, build_home);
    env.extend(ctx.passed_environment());
    let values = ctx.values();

    let work_dir = match &ctx.spec.source {
        Some(source) => {
            let dir = ctx.source_dir();
            fetch(ctx, &source.repository, &source.commit, &dir, &env, &log)?;
            side.runtime.insert(
                "source".to_owned(),
                crate::pipeline::redact::redact(&format!(
                    "{}@{}",
                    source.repository, source.commit
                )),
            );
            dir
        }
        None => {
            let dir = ctx.build_dir();
            fresh_folder(&dir)?;
            if names_legacy_build_folder(&ctx.spec) {
                // Before the staging folder, source-less builds ran in OUT/build, which
                // clibench made; specs written then pack into `{out}/build` and collect
                // from there. Making it as that release did keeps them working (prepare
                // runs as the invoking user, who owns OUT); artifacts are still copied
                // into the staging folder for the trial users.
                let legacy = ctx.out.join(LEGACY_BUILD_FOLDER);
                fresh_folder(&legacy)?;
                append_log(
                    &log,
                    &format!(
                        "note: this spec names {{out}}/{LEGACY_BUILD_FOLDER}, where source-less \
                         builds ran before they moved to {{build}} ({}); {} was made for it, \
                         as before; write {{build}} instead\n",
                        dir.display(),
                        legacy.display()
                    ),
                )?;
            }
            dir
        }
    };

    for (index, step) in ctx.spec.build.iter().enumerate() {
        run_build_step(
            ctx, side, step, index, &work_dir, &env, &values, &log, build_home,
        )?;
    }

    for (name, command) in &ctx.spec.versions {
        let argv = ctx.expand_command(command, &values)?;
        let finished = command::run_ok(&Step {
            what: format!("version command '{name}' (`{}`)", argv.join(" ")),
            argv,
            cwd: work_dir.clone(),
            env: env.clone(),
            user: None,
            home: Some(build_home.to_path_buf()),
            timeout: VERSION_TIMEOUT,
            log: None,
        })?;
        let text = finished.merged();
        let version = text
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim();
        side.runtime
            .insert(name.clone(), version.chars().take(200).collect());
    }

    collect_artifacts(ctx, side, &values, &env, build_home, &log)
}

#[expect(
    clippy::too_many_arguments,
    reason = "one call site; a struct would only rename them"
)]
fn run_build_step(
    ctx: &PhaseContext,
    side: &mut Side,
    step: &BuildStep,
    index: usize,
    work_dir: &Path,
    env: &BTreeMap<String, String>,
    values: &Values,
    log: &Path,
    build_home: &Path,
) -> Result<(), PrepareError> {
    let argv = ctx.expand_command(&step.command, values)?;
    let name = step.name.clone().unwrap_or_else(|| argv.join(" "));
    let what = format!("build step {} '{name}'", index + 1);
    let resolve = |path: String| {
        let path = PathBuf::from(path);
        if path.is_absolute() {
            path
        } else {
            work_dir.join(path)
        }
    };
    if !step.when_exists.is_empty() {
        let mut present = Vec::new();
        let mut absent = Vec::new();
        for path in &step.when_exists {
            let path = resolve(path.expand(values)?);
            if path.exists() {
                present.push(path);
            } else {
                absent.push(path);
            }
        }
        if present.is_empty() {
            side.timings.insert(format!("build:{name}"), 0.0);
            side.runtime
                .insert(format!("build:{name}"), "skipped".to_owned());
            return Ok(());
        }
        if !absent.is_empty() {
            return Err(PrepareError::Incomplete {
                step: what,
                present: join_paths(&present),
                absent: join_paths(&absent),
            });
        }
    }
    let cwd = ctx.cwd(step.cwd.as_ref(), work_dir, values)?;
    let mut env = env.clone();
    for (key, value) in &step.env {
        env.insert(key.clone(), value.expand(values)?);
    }
    let finished = command::run_ok(&Step {
        what: format!("{what} (log {})", log.display()),
        argv,
        cwd,
        env,
        user: None,
        home: Some(build_home.to_path_buf()),
        timeout: *step.timeout,
        log: Some(log.to_path_buf()),
    })?;
    side.timings
        .insert(format!("build:{name}"), finished.elapsed.as_secs_f64());
    Ok(())
}

fn join_paths(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `repository` is a local path rather than a URL git understands.
fn is_local(repository: &str) -> bool {
    if repository.contains("://") {
        return false;
    }
    // scp-like `user@host:path` has a colon before any slash.
    match (repository.find(':'), repository.find('/')) {
        (Some(colon), Some(slash)) => colon > slash,
        (Some(_), None) => false,
        _ => true,
    }
}

/// The fetch URL: a local path (relative to the spec's folder) becomes `file://`, so
/// that git talks its wire protocol and a shallow fetch of one sha works offline.
fn fetch_url(ctx: &PhaseContext, repository: &str) -> Result<String, PrepareError> {
    if !is_local(repository) {
        return Ok(repository.to_owned());
    }
    let base = ctx
        .spec_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let path = base.join(repository);
    let path = std::path::absolute(&path).map_err(FileError::doing(format!(
        "resolving the source repository {}",
        path.display()
    )))?;
    if !path.exists() {
        return Err(PrepareError::NoRepository { path });
    }
    Ok(format!("file://{}", path.display()))
}

/// `git fetch` of `url`, which may hold credentials: its output is captured and logged
/// with them hidden, and so is any error.
fn fetch_redacted(
    config: &[&str],
    url: &str,
    commit: &str,
    dir: &Path,
    env: &BTreeMap<String, String>,
    log: &Path,
) -> Result<(), PrepareError> {
    use crate::pipeline::redact::redact;
    // The URL reaches git through its environment (readable by this user only), not its
    // command line, which every user of the machine can read in /proc.
    let argv: Vec<String> = ["git"]
        .iter()
        .chain(config)
        .chain(["fetch", "--quiet", "--depth=1", "clibench-source", commit].iter())
        .map(|s| (*s).to_owned())
        .collect();
    let mut env = env.clone();
    env.insert("GIT_CONFIG_COUNT".to_owned(), "1".to_owned());
    env.insert(
        "GIT_CONFIG_KEY_0".to_owned(),
        "remote.clibench-source.url".to_owned(),
    );
    env.insert("GIT_CONFIG_VALUE_0".to_owned(), url.to_owned());
    let finished = command::run(&Step {
        what: redact(&format!("`git fetch --quiet --depth=1 {url} {commit}`")),
        argv,
        cwd: dir.to_path_buf(),
        env: env.clone(),
        user: None,
        home: env.get("HOME").map(PathBuf::from),
        timeout: GIT_TIMEOUT,
        log: None,
    })
    .map_err(|error| PrepareError::Fetch(redact(&error_chain(&error))))?;
    let output = redact(&finished.merged());
    {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(FileError::doing(format!("opening {}", log.display())))?;
        file.write_all(output.as_bytes())
            .map_err(FileError::doing(format!("writing {}", log.display())))?;
    }
    if !finished.status.success() {
        let tail: String = output
            .trim()
            .lines()
            .rev()
            .take(10)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n");
        return Err(PrepareError::Fetch(format!(
            "{} failed ({}) (log {}): {tail}",
            redact(&format!("`git fetch --quiet --depth=1 {url} {commit}`")),
            finished.status,
            log.display()
        )));
    }
    Ok(())
}

fn fetch(
    ctx: &PhaseContext,
    repository: &str,
    commit: &str,
    dir: &Path,
    env: &BTreeMap<String, String>,
    log: &Path,
) -> Result<(), PrepareError> {
    fresh_folder(dir)?;
    let url = fetch_url(ctx, repository)?;
    let mut env = env.clone();
    env.insert("GIT_TERMINAL_PROMPT".to_owned(), "0".to_owned());
    // The local upload-pack reads these through GIT_CONFIG_PARAMETERS: a sha that is
    // not a ref tip may be asked for, and a repository owned by another user is fine.
    let config = [
        "-c",
        "uploadpack.allowAnySHA1InWant=true",
        "-c",
        "uploadpack.allowReachableSHA1InWant=true",
        "-c",
        "safe.directory=*",
        "-c",
        "advice.detachedHead=false",
    ];
    let git = |args: &[&str]| -> Result<command::Finished, PrepareError> {
        let argv: Vec<String> = ["git"]
            .iter()
            .chain(config.iter())
            .chain(args.iter())
            .map(|s| (*s).to_owned())
            .collect();
        Ok(command::run_ok(&Step {
            what: format!("`git {}` (log {})", args.join(" "), log.display()),
            argv,
            cwd: dir.to_path_buf(),
            env: env.clone(),
            user: None,
            home: env.get("HOME").map(PathBuf::from),
            timeout: GIT_TIMEOUT,
            log: Some(log.to_path_buf()),
        })?)
    };
    git(&["init", "--quiet"])?;
    fetch_redacted(&config, &url, commit, dir, &env, log)?;
    git(&["checkout", "--quiet", "--detach", "FETCH_HEAD"])?;
    let head = command::run_ok(&Step {
        what: "`git rev-parse HEAD`".to_owned(),
        argv: ["git", "-c", "safe.directory=*", "rev-parse", "HEAD"]
            .map(str::to_owned)
            .to_vec(),
        cwd: dir.to_path_buf(),
        env: env.clone(),
        user: None,
        home: None,
        timeout: GIT_TIMEOUT,
        log: None,
    })?;
    let head = head.stdout.trim();
    if !head.eq_ignore_ascii_case(commit) {
        return Err(PrepareError::WrongCommit {
            head: head.to_owned(),
            commit: commit.to_owned(),
        });
    }
    Ok(())
}

/// Empties (or creates) a folder.
/// The folder under OUT where the releases before `{build}` ran source-less builds.
const LEGACY_BUILD_FOLDER: &str = "build";

/// Whether a build step or an artifact folder of the spec names `{out}/build`.
fn names_legacy_build_folder(spec: &crate::spec::Spec) -> bool {
    let legacy = format!("{{out}}/{LEGACY_BUILD_FOLDER}");
    // `{out}/build` itself or a path in it, not `{out}/build-home` or `{out}/builds`.
    let names = |template: &Template| {
        template.raw().match_indices(&legacy).any(|(at, _)| {
            template.raw()[at + legacy.len()..]
                .chars()
                .next()
                .is_none_or(|next| !(next.is_alphanumeric() || "-_.".contains(next)))
        })
    };
    spec.build
        .iter()
        .any(|step| step.command.iter().any(names) || step.cwd.as_ref().is_some_and(names))
        || spec.artifacts.iter().any(|set| names(&set.folder))
}

fn append_log(log: &Path, text: &str) -> Result<(), FileError> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .and_then(|mut file| file.write_all(text.as_bytes()))
        .map_err(FileError::doing(format!("writing {}", log.display())))
}

fn fresh_folder(dir: &Path) -> Result<(), FileError> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)
            .map_err(FileError::doing(format!("removing {}", dir.display())))?;
    }
    std::fs::create_dir_all(dir).map_err(FileError::doing(format!("creating {}", dir.display())))
}

fn collect_artifacts(
    ctx: &PhaseContext,
    side: &mut Side,
    values: &Values,
    env: &BTreeMap<String, String>,
    build_home: &Path,
    log: &Path,
) -> Result<(), PrepareError> {
    let target = ctx.artifacts_dir();
    fresh_folder(&target)?;
    let mut collected: BTreeMap<String, u64> = BTreeMap::new();
    for (index, set) in ctx.spec.artifacts.iter().enumerate() {
        let folder = PathBuf::from(set.folder.expand(values)?);
        let mut names: Vec<String> = match std::fs::read_dir(&folder) {
            Ok(entries) => entries
                .filter_map(|e| e.ok())
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|name| wildcard(&set.glob, name))
                .collect(),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(error) => {
                return Err(
                    FileError::doing(format!("listing {}", folder.display()))(error).into(),
                );
            }
        };
        names.sort();
        let place = format!("{}/{}", folder.display(), set.glob);
        match set.count {
            Some(count) if names.len() != count as usize => {
                return Err(PrepareError::ArtifactCount {
                    expected: count,
                    place,
                    found: names,
                });
            }
            None if set.required && names.is_empty() => {
                return Err(PrepareError::NoArtifacts { place });
            }
            _ => {}
        }
        let mut files: Vec<PathBuf> = names.iter().map(|name| folder.join(name)).collect();
        if set.npm_dependencies && !files.is_empty() {
            let started = std::time::Instant::now();
            let added = npm_dependencies(&files, index, env, build_home, log)?;
            side.timings.insert(
                format!("build:npm dependencies of artifacts[{index}]"),
                started.elapsed().as_secs_f64(),
            );
            files.extend(added);
        }
        for from in files {
            let Some(name) = from.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
                continue;
            };
            if name == SUMS || collected.contains_key(&name) {
                return Err(PrepareError::DuplicateArtifact { name });
            }
            let bytes = std::fs::copy(&from, target.join(&name)).map_err(FileError::doing(
                format!("copying {} to {}", from.display(), target.display()),
            ))?;
            collected.insert(name, bytes);
        }
    }
    let mut sums = String::new();
    for name in collected.keys() {
        sums.push_str(&format!("{}  {name}\n", sha256_file(&target.join(name))?));
    }
    bench_core::io::write_atomic(&target.join(SUMS), sums.as_bytes())?;
    if !collected.is_empty() {
        let total: u64 = collected.values().sum();
        record(side, Metric::Bundle, ctx.trial, Sample::Value(total as f64));
    }
    side.artifacts = collected;
    Ok(())
}

/// How long npm may take to install a set's tarballs, or to pack what it added.
const NPM_TIMEOUT: Duration = Duration::from_secs(900);

/// Has npm install `tarballs` into a scratch folder of the build's home, and packs the
/// registry tarball of every package that install added (the platform's optional
/// dependencies among them): the files a user's `npm install` of the release downloads
/// besides the tarballs themselves. Returns the packed files.
///
/// npm decides what this machine gets (os, cpu, libc), as it does for a user; install
/// scripts are not run, so what a postinstall script downloads is not counted.
fn npm_dependencies(
    tarballs: &[PathBuf],
    index: usize,
    env: &BTreeMap<String, String>,
    build_home: &Path,
    log: &Path,
) -> Result<Vec<PathBuf>, PrepareError> {
    let scratch = build_home.join(format!("npm-dependencies-{index}"));
    let tree = scratch.join("tree");
    let packed = scratch.join("packed");
    fresh_folder(&tree)?;
    fresh_folder(&packed)?;
    let step = |what: &str, argv: Vec<String>| Step {
        what: format!("artifacts[{index}]: {what} (log {})", log.display()),
        argv,
        cwd: scratch.clone(),
        env: env.clone(),
        user: None,
        home: Some(build_home.to_path_buf()),
        timeout: NPM_TIMEOUT,
        log: Some(log.to_path_buf()),
    };
    let mut install: Vec<String> = [
        "npm",
        "install",
        "--prefix",
        &tree.display().to_string(),
        "--no-audit",
        "--no-fund",
        "--ignore-scripts",
    ]
    .map(str::to_owned)
    .to_vec();
    install.extend(tarballs.iter().map(|t| t.display().to_string()));
    command::run_ok(&step("npm install of the tarballs", install))?;

    let manifest = read_text(&tree.join("package.json"))?;
    let own = top_level_dependencies(&manifest);
    let mut specs = std::collections::BTreeSet::new();
    installed_packages(&tree.join("node_modules"), &own, &mut specs)?;
    if specs.is_empty() {
        return Ok(Vec::new());
    }
    let mut pack: Vec<String> = [
        "npm",
        "pack",
        "--pack-destination",
        &packed.display().to_string(),
    ]
    .map(str::to_owned)
    .to_vec();
    pack.extend(specs);
    command::run_ok(&step("npm pack of the packages npm installed", pack))?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(&packed)
        .map_err(FileError::doing(format!("listing {}", packed.display())))?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .collect();
    files.sort();
    Ok(files)
}

fn read_text(path: &Path) -> Result<String, FileError> {
    std::fs::read_to_string(path).map_err(FileError::doing(format!("reading {}", path.display())))
}

/// The names a `package.json` lists under `dependencies`: in the scratch tree, the
/// tarballs npm was asked to install, whose own files are already artifacts.
pub fn top_level_dependencies(manifest: &str) -> Vec<String> {
    serde_json::from_str::<serde_json::Value>(manifest)
        .ok()
        .and_then(|v| v.get("dependencies")?.as_object().cloned())
        .map(|deps| deps.keys().cloned().collect())
        .unwrap_or_default()
}

/// `NAME@VERSION` from an installed package's `package.json`: its real name and
/// version, which is what the registry knows it by, even when it was installed under
/// an alias (`@openai/codex-linux-x64` is `npm:@openai/codex@0.171.0-linux-x64`).
pub fn package_spec(manifest: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(manifest).ok()?;
    let name = value.get("name")?.as_str()?;
    let version = value.get("version")?.as_str()?;
    Some(format!("{name}@{version}"))
}

/// Walks `node_modules` (scoped folders and nested `node_modules` too) and adds every
/// installed package's `NAME@VERSION`, leaving out the top-level folders in `skip`.
/// Links (a `file:` dependency) are not downloads and are not followed.
fn installed_packages(
    node_modules: &Path,
    skip: &[String],
    specs: &mut std::collections::BTreeSet<String>,
) -> Result<(), FileError> {
    let mut packages = Vec::new();
    let entries = match std::fs::read_dir(node_modules) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => {
            return Err(FileError::doing(format!(
                "listing {}",
                node_modules.display()
            ))(error));
        }
    };
    for entry in entries.filter_map(|e| e.ok()) {
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if name.starts_with('.') || !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        if name.starts_with('@') {
            let scope = entry.path();
            let inner = std::fs::read_dir(&scope)
                .map_err(FileError::doing(format!("listing {}", scope.display())))?;
            for package in inner.filter_map(|e| e.ok()) {
                if !package.file_type().is_ok_and(|t| t.is_dir()) {
                    continue;
                }
                if let Ok(leaf) = package.file_name().into_string() {
                    packages.push((format!("{name}/{leaf}"), package.path()));
                }
            }
        } else {
            packages.push((name, entry.path()));
        }
    }
    for (name, dir) in packages {
        if !skip.contains(&name)
            && let Ok(manifest) = std::fs::read_to_string(dir.join("package.json"))
        {
            specs.extend(package_spec(&manifest));
        }
        installed_packages(&dir.join("node_modules"), &[], specs)?;
    }
    Ok(())
}

fn listing(names: &[String]) -> String {
    if names.is_empty() {
        String::new()
    } else {
        format!(": {}", names.join(", "))
    }
}

/// Kernel release, machine, cpu model, cores and memory, from bench-proc's host facts.
fn record_host_facts(side: &mut Side) -> Result<(), PrepareError> {
    let facts = bench_proc::HostFacts::read().map_err(PrepareError::Host)?;
    for (key, value) in [
        ("kernel", facts.kernel_release),
        ("machine", facts.arch),
        ("cpu", facts.cpu_model),
        ("cores", facts.cores.to_string()),
        ("memory_bytes", facts.memory_bytes.to_string()),
    ] {
        side.runtime.insert(key.to_owned(), value);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_aliased_platform_package_is_named_by_its_real_name() {
        let manifest =
            r#"{"name": "@openai/codex", "version": "0.171.0-linux-x64", "os": ["linux"]}"#;
        assert_eq!(
            package_spec(manifest).as_deref(),
            Some("@openai/codex@0.171.0-linux-x64")
        );
        assert_eq!(package_spec(r#"{"name": "x"}"#), None);
        assert_eq!(package_spec("not json"), None);
    }

    #[test]
    fn the_tarballs_asked_for_are_the_top_level_dependencies() {
        let manifest = r#"{"dependencies": {"@openai/codex": "file:../a.tgz", "b": "^1"}}"#;
        assert_eq!(top_level_dependencies(manifest), ["@openai/codex", "b"]);
        assert!(top_level_dependencies("{}").is_empty());
    }

    #[test]
    fn wildcards_match_file_names() {
        assert!(wildcard("*.tgz", "a-1.0.tgz"));
        assert!(wildcard(
            "prime-agent-*-linux-x64.tar.gz",
            "prime-agent-0.0.0-linux-x64.tar.gz"
        ));
        assert!(!wildcard("*.tgz", "a.tar.gz"));
        assert!(wildcard("a?c", "abc"));
        assert!(!wildcard("a?c", "ac"));
    }

    #[test]
    fn local_paths_and_urls_are_told_apart() {
        assert!(is_local("/srv/repo"));
        assert!(is_local("../repo"));
        assert!(is_local("./a:b/c"));
        assert!(!is_local("https://github.com/a/b.git"));
        assert!(!is_local("git@github.com:a/b.git"));
        assert!(!is_local("file:///srv/repo"));
    }
}
