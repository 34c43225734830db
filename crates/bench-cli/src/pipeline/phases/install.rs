//! The install phase (one per install index): a fresh isolated home, the artifacts
//! checked against `SHA256SUMS`, the installer with the clean environment and a
//! timeout, then the checks (version, files, install format), the spec's files, the
//! fixture workspace and the dependency inventory, in the order a person installs and
//! then checks a program.

use crate::pipeline::artifacts::{SUMS, parse_sums, sha256_file, wildcard};
use crate::pipeline::context::{ContextError, PhaseContext};
use crate::pipeline::file_error::FileError;
use crate::pipeline::isolation::command::{self, Step};
use crate::pipeline::isolation::home;
use crate::pipeline::isolation::{user_add, users};
use crate::pipeline::origin::Origin;
use crate::pipeline::out::state::{ServerRecord, State};
use crate::spec::{Placeholder, Values};
use bench_core::error_chain;
use bench_core::{Metric, Sample, Side, record};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a check command (version, git, inventory) may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(120);
/// The runtime key holding the home's size before the install, for `disk`.
pub const HOME_BEFORE_KEY: &str = "home_before_install_bytes";

/// The install phase failed (a failed install is recorded as the `install` metric's
/// error; what is returned is what kept the phase from doing even that).
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// A placeholder has no value, the user is missing, or the logs folder could not be
    /// made.
    #[error(transparent)]
    Context(#[from] ContextError),
    /// A placeholder in a check or a file has no value.
    #[error(transparent)]
    Expand(#[from] crate::spec::ExpandError),
    /// The trial user could not be made.
    #[error(transparent)]
    User(#[from] users::UserError),
    /// The state file could not be read or written.
    #[error(transparent)]
    State(#[from] crate::pipeline::out::state::StateError),
    /// The installer or a check command failed.
    #[error(transparent)]
    Exec(#[from] command::ExecError),
    /// The installer's processes could not be stopped.
    #[error(transparent)]
    Stop(#[from] command::StopError),
    /// The trial user's processes could not be stopped after the install.
    #[error("stopping the trial user's processes after install")]
    StopAfter(#[source] command::StopError),
    /// A file or folder could not be written in the home.
    #[error(transparent)]
    Home(#[from] home::HomeWriteError),
    /// A file-system call failed.
    #[error(transparent)]
    File(#[from] FileError),
    /// The inventory could not be written.
    #[error(transparent)]
    Write(#[from] bench_core::io::WriteError),
    /// The home's size could not be measured before the install.
    #[error("measuring {} before the install", home.display())]
    Disk {
        /// The home.
        home: PathBuf,
        /// Why.
        #[source]
        source: bench_proc::DiskError,
    },
    /// The loopback origin could not start.
    #[error("starting the loopback origin for the artifacts (port {port})")]
    Origin {
        /// The port asked for (0: any).
        port: u16,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A home file's content has a placeholder without a value.
    #[error("expanding the content of the home file {file}")]
    HomeFile {
        /// The file.
        file: String,
        /// Why.
        #[source]
        source: crate::spec::ExpandError,
    },
    /// `SHA256SUMS` does not parse.
    #[error("{}", path.display())]
    Sums {
        /// The file.
        path: PathBuf,
        /// The line at fault.
        #[source]
        source: crate::pipeline::artifacts::SumsError,
    },
    /// A file among the artifacts that `SHA256SUMS` does not list.
    #[error("artifact {name} is not listed in {}", sums.display())]
    Unlisted {
        /// The file.
        name: String,
        /// `SHA256SUMS`.
        sums: PathBuf,
    },
    /// An artifact changed since prepare collected it.
    #[error("artifact {name} does not match {SUMS}: expected {expected}, found {actual}")]
    Mismatch {
        /// The artifact.
        name: String,
        /// Its hash in `SHA256SUMS`.
        expected: String,
        /// Its hash now.
        actual: String,
    },
    /// The version command's output lacks `version_contains`.
    #[error(
        "the installed version does not match: expected it to contain \"{expected}\", got \"{got}\""
    )]
    Version {
        /// `version_contains`, expanded.
        expected: String,
        /// The start of what the command printed.
        got: String,
    },
    /// An artifact matches `compiled_if_artifact`, yet the executable is a script.
    #[error(
        "expected the compiled installation (an artifact matches {pattern}), but {} is a script",
        path.display()
    )]
    NotCompiled {
        /// `compiled_if_artifact`.
        pattern: String,
        /// The executable.
        path: PathBuf,
    },
    /// The installed executable is not a plain file.
    #[error("the installed executable {} is not a file", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// A file the spec lists under `files` is missing (or a dangling link).
    #[error("the install did not create {}", path.display())]
    NotCreated {
        /// The path.
        path: PathBuf,
    },
    /// The trial user cannot read a folder the installer uses.
    #[error(
        "the trial user {user} cannot read {}, which the installer uses: the run's staging folder is shared with its trial users through the run's group, so a file the build made private (umask 077?) stays unreadable",
        path.display()
    )]
    Unreadable {
        /// The user.
        user: String,
        /// The folder.
        path: PathBuf,
    },
    /// The trial user cannot read the installed executable (or it is not there).
    #[error("the trial user {user} cannot read the installed executable {}", path.display())]
    ExecutableUnreadable {
        /// The user.
        user: String,
        /// The path.
        path: PathBuf,
    },
}

/// Runs the install phase for install index `ctx.trial`.
pub fn run(ctx: &PhaseContext, side: &mut Side) -> Result<(), InstallError> {
    let fail = |side: &mut Side, error: InstallError| {
        let message = command::clip(&error_chain(&error), 500);
        record(side, Metric::Install, ctx.trial, Sample::Error(message));
    };
    // Checked before anything is created: bad artifacts never reach a home.
    let artifacts = match verify_artifacts(&ctx.artifacts_dir(), !ctx.spec.artifacts.is_empty()) {
        Ok(artifacts) => artifacts,
        Err(error) => {
            fail(side, error);
            return Ok(());
        }
    };
    let user = user_add::create(&ctx.out, ctx.install)?;
    let mut ctx = ctx.clone();
    ctx.user = Some(user.clone());
    let outcome = install(&ctx, side, &artifacts);
    // Whether the install worked or not, nothing the installer or the checks started
    // survives into the phases that measure.
    let stopped = command::stop_user(&user);
    if let Err(error) = outcome {
        fail(side, error);
    }
    stopped.map_err(InstallError::StopAfter)
}

fn install(
    ctx: &PhaseContext,
    side: &mut Side,
    artifacts: &BTreeMap<String, String>,
) -> Result<(), InstallError> {
    let user = ctx.user()?.clone();
    let spec = &ctx.spec;
    let owner = user.home_owner();
    record_home_before(ctx, side, &user)?;
    if user.dedicated {
        check_readable(ctx, &user)?;
    }

    // A target that is already installed has no installer: its home is made, checked
    // and written, but no install time is recorded.
    let elapsed = match &spec.install.command {
        Some(command) => Some(run_installer(ctx, &user, command)?),
        None => None,
    };

    let values = ctx.values();
    let trial_env = ctx.environment(&BTreeMap::new(), &values)?;
    check_installed(ctx, side, &user, artifacts, &trial_env)?;
    // Recorded only once the install is known to work: the time of a broken install
    // measures nothing a user gets.
    if let Some(elapsed) = elapsed {
        record(
            side,
            Metric::Install,
            ctx.trial,
            Sample::Value(elapsed.as_secs_f64()),
        );
    }
    write_home_files(ctx, &user, owner)?;
    if spec.workspace.create {
        create_workspace(ctx, &user, &trial_env, owner)?;
    }
    if let Some(command) = &spec.install.inventory {
        save_inventory(ctx, side, command, &values, &trial_env)?;
    }
    Ok(())
}

/// The home's size before the installer ran, which measure subtracts from the disk it
/// reports: in the run's state and, for trial 0, as a fact of the result.
fn record_home_before(
    ctx: &PhaseContext,
    side: &mut Side,
    user: &crate::pipeline::TrialUser,
) -> Result<(), InstallError> {
    let before = bench_proc::disk_usage(&user.home, &excludes(ctx)).map_err(|source| {
        InstallError::Disk {
            home: user.home.clone(),
            source,
        }
    })?;
    if ctx.trial == 0 {
        // Measure reads the number from the run's state; the result keeps it as a fact
        // the report shows.
        State::update(&ctx.out, |state| {
            state.home_before_install_bytes = Some(before);
        })?;
        side.runtime
            .insert(HOME_BEFORE_KEY.to_owned(), before.to_string());
    }
    Ok(())
}

/// Checks that the install worked: the version command's output, whether the
/// executable is compiled when the spec expects it, and the files it must have created.
fn check_installed(
    ctx: &PhaseContext,
    side: &mut Side,
    user: &crate::pipeline::TrialUser,
    artifacts: &BTreeMap<String, String>,
    trial_env: &BTreeMap<String, String>,
) -> Result<(), InstallError> {
    let spec = &ctx.spec;
    let values = ctx.values();
    if let Some(command) = &spec.install.version_command {
        let argv = ctx.expand_command(command, &values)?;
        let finished = command::run_ok(&Step {
            what: format!("version command `{}`", argv.join(" ")),
            argv,
            cwd: user.home.clone(),
            env: trial_env.clone(),
            user: Some(user),
            home: Some(user.home.clone()),
            timeout: CHECK_TIMEOUT,
            log: None,
        })?;
        let text = finished.merged().trim().to_owned();
        if let Some(expected) = &spec.install.version_contains {
            let expected = expected.expand(&values)?;
            if !text.contains(&expected) {
                return Err(InstallError::Version {
                    expected,
                    got: text.chars().take(100).collect(),
                });
            }
        }
        side.runtime
            .insert("installed".to_owned(), text.chars().take(200).collect());
    }
    if let Some(executable) = &spec.install.executable {
        let path = PathBuf::from(executable.expand(&values)?);
        let compiled = is_elf(&path, user, trial_env)?;
        let format = if compiled { "compiled" } else { "script" };
        side.runtime
            .insert("installation_format".to_owned(), format.to_owned());
        if let Some(pattern) = &spec.install.compiled_if_artifact
            && !compiled
            && artifacts.keys().any(|name| wildcard(pattern, name))
        {
            return Err(InstallError::NotCompiled {
                pattern: pattern.clone(),
                path,
            });
        }
    }
    for file in &spec.install.files {
        let path = PathBuf::from(file.expand(&values)?);
        // Links are followed: a dangling link (a venv whose python is gone) is a broken
        // install.
        if !path.exists() {
            return Err(InstallError::NotCreated { path });
        }
    }
    Ok(())
}

/// Writes the spec's `[[install.write]]` files into the home, owned by the trial user.
fn write_home_files(
    ctx: &PhaseContext,
    user: &crate::pipeline::TrialUser,
    owner: home::Owner,
) -> Result<(), InstallError> {
    let values = ctx.values();
    for file in &ctx.spec.install.write {
        let mode = file.file_mode();
        let content = file
            .content
            .expand(&values)
            .map_err(|source| InstallError::HomeFile {
                file: file.path.clone(),
                source,
            })?;
        home::write_file(
            &user.home,
            Path::new(&file.path),
            content.as_bytes(),
            mode,
            owner,
        )?;
    }
    Ok(())
}

/// Runs the installer (with the loopback origin when there are artifacts to serve) and
/// returns how long it took.
fn run_installer(
    ctx: &PhaseContext,
    user: &crate::pipeline::TrialUser,
    command: &[crate::spec::Template],
) -> Result<Duration, InstallError> {
    let spec = &ctx.spec;
    let mut values = ctx.values();
    let origin = if spec.origin.serve && !spec.artifacts.is_empty() {
        let prefix = spec.origin.path.expand(&values)?;
        let port = spec.origin.port.unwrap_or(0);
        // Closed at the install's deadline, so a connection the installer left
        // open (or trickling) cannot keep the phase alive.
        let deadline = std::time::Instant::now() + *spec.install.timeout;
        let origin = Origin::start(
            &ctx.artifacts_dir(),
            &ctx.origin_token,
            &prefix,
            port,
            Some(deadline),
        )
        .map_err(|source| InstallError::Origin { port, source })?;
        let pid = std::process::id();
        let record = ServerRecord {
            pid,
            start_ticks: crate::pipeline::out::state::start_ticks(pid),
            url: origin.url().to_owned(),
        };
        State::update(&ctx.out, |s| s.servers.push(record))?;
        values.set(Placeholder::Origin, origin.url());
        Some(origin)
    } else {
        None
    };

    let log = ctx.log_path(&format!("install-{}.log", ctx.trial))?;
    let _ = std::fs::remove_file(&log);
    let argv = ctx.expand_command(command, &values)?;
    let installed = command::run_ok(&Step {
        what: format!("installer `{}` (log {})", argv.join(" "), log.display()),
        argv,
        cwd: ctx.cwd(spec.install.cwd.as_ref(), &user.home, &values)?,
        env: ctx.environment(&spec.install.env, &values)?,
        user: Some(user),
        home: Some(user.home.clone()),
        timeout: *spec.install.timeout,
        log: Some(log.clone()),
    });
    if let Some(origin) = origin {
        let url = origin.url().to_owned();
        drop(origin);
        State::update(&ctx.out, |s| s.servers.retain(|r| r.url != url))?;
    }
    let elapsed = installed?.elapsed;
    // The installer may have left daemons; the checks start from a quiet user.
    command::stop_user(user)?;
    Ok(elapsed)
}

/// The spec's disk excludes as `&str`s.
fn excludes(ctx: &PhaseContext) -> Vec<&str> {
    ctx.spec.disk.exclude.iter().map(String::as_str).collect()
}

/// Checks every artifact against `SHA256SUMS` before anything is installed from them.
fn verify_artifacts(dir: &Path, expected: bool) -> Result<BTreeMap<String, String>, InstallError> {
    let sums_path = dir.join(SUMS);
    let text = match std::fs::read_to_string(&sums_path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound && !expected => {
            return Ok(BTreeMap::new());
        }
        Err(error) => {
            return Err(FileError::doing(format!(
                "reading {} (did prepare run?)",
                sums_path.display()
            ))(error)
            .into());
        }
    };
    let sums = parse_sums(&text).map_err(|source| InstallError::Sums {
        path: sums_path.clone(),
        source,
    })?;
    let listing = |error| FileError::doing(format!("listing {}", dir.display()))(error);
    for entry in std::fs::read_dir(dir).map_err(listing)? {
        let name = entry
            .map_err(listing)?
            .file_name()
            .to_string_lossy()
            .into_owned();
        if name != SUMS && !sums.contains_key(&name) {
            return Err(InstallError::Unlisted {
                name,
                sums: sums_path,
            });
        }
    }
    for (name, hex) in &sums {
        let actual = sha256_file(&dir.join(name))?;
        if &actual != hex {
            return Err(InstallError::Mismatch {
                name: name.clone(),
                expected: hex.clone(),
                actual,
            });
        }
    }
    Ok(sums)
}

/// A dedicated user must be able to read what the installer is pointed at (the
/// source and the artifacts under OUT/); say so plainly instead of a failed install.
fn check_readable(
    ctx: &PhaseContext,
    user: &crate::pipeline::TrialUser,
) -> Result<(), InstallError> {
    let uses = |p: Placeholder| {
        ctx.spec
            .install
            .command
            .iter()
            .flatten()
            .chain(ctx.spec.install.env.values())
            .any(|t| t.placeholders().any(|q| q == p))
    };
    let mut folders = Vec::new();
    if uses(Placeholder::Source) && ctx.spec.source.is_some() {
        folders.push(ctx.source_dir());
    }
    if uses(Placeholder::Artifacts) {
        folders.push(ctx.artifacts_dir());
    }
    for folder in folders {
        let path = folder.display().to_string();
        let finished = command::run(&Step {
            what: format!("checking that {} can read {path}", user.name),
            argv: ["test", "-r", &path, "-a", "-x", &path]
                .map(str::to_owned)
                .to_vec(),
            cwd: PathBuf::from("/"),
            env: crate::pipeline::context::base_environment(&user.name, &user.home),
            user: Some(user),
            home: Some(user.home.clone()),
            timeout: CHECK_TIMEOUT,
            log: None,
        })?;
        if !finished.status.success() {
            return Err(InstallError::Unreadable {
                user: user.name.clone(),
                path: folder,
            });
        }
    }
    Ok(())
}

/// Whether the file starts with the ELF magic, read by the trial user: root would open
/// whatever the target made that path (a symlink to /etc/shadow) and tell it the first
/// bytes. A link the trial user may follow is followed, as the program it names runs.
fn is_elf(
    path: &Path,
    user: &crate::pipeline::TrialUser,
    env: &BTreeMap<String, String>,
) -> Result<bool, InstallError> {
    const NOT_A_FILE: i32 = 3;
    let shown = path.display().to_string();
    // `test -f` first, so that a FIFO planted there is refused rather than waited on.
    let finished = command::run(&Step {
        what: format!("reading the start of the installed executable {shown}"),
        argv: [
            "sh",
            "-c",
            "test -f \"$1\" || exit 3; exec head -c 4 -- \"$1\"",
            "sh",
            &shown,
        ]
        .map(str::to_owned)
        .to_vec(),
        cwd: PathBuf::from("/"),
        env: env.clone(),
        user: Some(user),
        home: Some(user.home.clone()),
        timeout: CHECK_TIMEOUT,
        log: None,
    })?;
    match finished.status.code() {
        Some(0) => Ok(finished.stdout.as_bytes() == b"\x7fELF"),
        Some(NOT_A_FILE) => Err(InstallError::NotAFile {
            path: path.to_path_buf(),
        }),
        _ => Err(InstallError::ExecutableUnreadable {
            user: user.name.clone(),
            path: path.to_path_buf(),
        }),
    }
}

/// The fixture workspace: the spec's files in a git repository with one commit whose
/// author and committer dates are fixed, created as the trial user.
fn create_workspace(
    ctx: &PhaseContext,
    user: &crate::pipeline::TrialUser,
    env: &BTreeMap<String, String>,
    owner: home::Owner,
) -> Result<(), InstallError> {
    let workspace = &ctx.spec.workspace;
    let dir = home::create_dir(&user.home, Path::new(&workspace.path), owner)?;
    for (name, content) in &workspace.files {
        let relative = Path::new(&workspace.path).join(name);
        home::write_file(&user.home, &relative, content.as_bytes(), 0o644, owner)?;
    }
    let mut env = env.clone();
    env.insert("GIT_AUTHOR_DATE".to_owned(), workspace.date.clone());
    env.insert("GIT_COMMITTER_DATE".to_owned(), workspace.date.clone());
    for argv in workspace.git_commands() {
        command::run_ok(&Step {
            what: format!("workspace `{}`", argv.join(" ")),
            argv,
            cwd: dir.clone(),
            env: env.clone(),
            user: Some(user),
            home: Some(user.home.clone()),
            timeout: CHECK_TIMEOUT,
            log: None,
        })?;
    }
    Ok(())
}

/// Saves the dependency inventory under OUT/; a non-zero exit (npm ls reports
/// warnings that way) is noted, not fatal: the inventory is still what was installed.
fn save_inventory(
    ctx: &PhaseContext,
    side: &mut Side,
    command: &[crate::spec::Template],
    values: &Values,
    env: &BTreeMap<String, String>,
) -> Result<(), InstallError> {
    let user = ctx.user()?;
    let argv = ctx.expand_command(command, values)?;
    let name = if ctx.trial == 0 {
        ctx.spec.install.inventory_file.clone()
    } else {
        format!("install-{}-{}", ctx.trial, ctx.spec.install.inventory_file)
    };
    let path = ctx.out.join(&name);
    let finished = command::run(&Step {
        what: format!("dependency inventory `{}`", argv.join(" ")),
        argv: argv.clone(),
        cwd: user.home.clone(),
        env: env.clone(),
        user: Some(user),
        home: Some(user.home.clone()),
        timeout: CHECK_TIMEOUT,
        log: None,
    })?;
    bench_core::io::write_atomic(&path, finished.stdout.as_bytes())?;
    if !finished.status.success() {
        side.runtime.insert(
            "dependency_inventory".to_owned(),
            format!(
                "`{}` exited with {}; see {name}",
                argv.join(" "),
                finished.status
            ),
        );
    }
    Ok(())
}
