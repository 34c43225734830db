//! What every phase gets: the spec, the output folder, the trial, the trial user and
//! home, the clean environment, and the placeholders' values.

use crate::pipeline::out::state::{State, TrialUser};

use crate::spec::{ExpandError, Placeholder, Spec, Template, Values};
use bench_core::Phase;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A JSON file a phase keeps in `OUT/logs` (the memory breakdown, the keystroke
/// latencies, the staircase's report) could not be written.
#[derive(Debug, thiserror::Error)]
pub enum LogFileError {
    /// The logs folder could not be made.
    #[error(transparent)]
    Folder(#[from] ContextError),
    /// The value could not be turned into JSON.
    #[error("serializing {name}")]
    Serialize {
        /// The file's name in `OUT/logs`.
        name: String,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// The file could not be written.
    #[error("writing {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: bench_core::io::WriteError,
    },
}

/// A phase's context could not be built, or lacks what the phase asked of it.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    /// The output folder's absolute path could not be found.
    #[error("resolving the output folder {}", out.display())]
    Out {
        /// The folder as given.
        out: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A later phase ran before the install whose home its trial uses made its user.
    #[error(
        "install {install} has not run in {out}: run `clibench phase prepare --spec {spec} --out {out}` \
         and `clibench phase install --spec {spec} --out {out} --trial {install}` first",
        out = out.display(),
        spec = spec.display()
    )]
    NoInstall {
        /// The output folder.
        out: PathBuf,
        /// The spec file, as the phase was given it.
        spec: PathBuf,
        /// The install (0 when none has run).
        install: u32,
    },
    /// The phase needs the trial user, which this phase has not got.
    #[error("no trial user in this phase (install 0 must run first)")]
    NoUser,
    /// The logs folder could not be created.
    #[error("creating {}", path.display())]
    Logs {
        /// The folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// No port or token could be picked for the model endpoint.
    #[error("picking the model endpoint's port and token")]
    ModelAddress(#[source] std::io::Error),
    /// No random token could be made for the origin.
    #[error("reading random bytes for the origin's path prefix")]
    OriginToken(#[source] std::io::Error),
    /// A placeholder in a command or a working folder has no value.
    #[error(transparent)]
    Expand(#[from] ExpandError),
    /// A placeholder in an environment variable has no value.
    #[error("expanding environment variable {name}")]
    Env {
        /// The variable.
        name: String,
        /// Why.
        #[source]
        source: ExpandError,
    },
    /// The state file could not be read or written.
    #[error(transparent)]
    State(#[from] crate::pipeline::out::state::StateError),
    /// The trial user is not there or not clibench's.
    #[error(transparent)]
    User(#[from] crate::pipeline::isolation::users::UserError),
    /// The staging folder could not be made.
    #[error(transparent)]
    Staging(#[from] crate::pipeline::isolation::staging::StagingError),
}

/// Everything a phase needs, built by `clibench phase` before the phase runs.
#[derive(Debug, Clone)]
pub(crate) struct PhaseContext {
    /// The phase being run.
    pub phase: Phase,
    /// The parsed spec.
    pub spec: Spec,
    /// The spec file (relative `source.repository` paths are relative to its folder).
    pub spec_path: PathBuf,
    /// The output folder (absolute).
    pub out: PathBuf,
    /// The trial number.
    pub trial: u32,
    /// The install index whose user this phase uses: the trial for install, 0 after it.
    pub install: u32,
    /// The trial user: `None` during prepare, and during install until it is created.
    pub user: Option<TrialUser>,
    /// The run's staging folder: the source, the build folder and the artifacts, where the
    /// trial users can read them whatever folder OUT/ is in (see `pipeline/staging.rs`).
    pub stage: PathBuf,
    /// The origin's secret path prefix for this run (see `pipeline/origin.rs`).
    pub origin_token: String,
    /// The model endpoint's port and token for this run, with `[model]` (see
    /// `pipeline/program/model.rs`).
    pub model: Option<crate::pipeline::out::state::ModelAddress>,
}

impl PhaseContext {
    /// Builds the context of `phase` for `trial`. For measure, runtime, ui, session and
    /// staircase the user is an earlier install's user from the state file (the phases
    /// measure what that install put in its home): install 0's with one install, and with
    /// several, trial k's is install k mod their number ([`State::install_for_trial`]);
    /// install creates its own user, so its context starts without one.
    pub fn new(
        phase: Phase,
        spec: Spec,
        spec_path: &Path,
        out: &Path,
        trial: u32,
    ) -> Result<PhaseContext, ContextError> {
        let out = std::path::absolute(out).map_err(|source| ContextError::Out {
            out: out.to_path_buf(),
            source,
        })?;
        let (install, user) = match phase {
            Phase::Prepare => (0, None),
            Phase::Install => (trial, None),
            _ => {
                let state = State::load(&out)?;
                let install = state.install_for_trial(trial);
                let plan = state
                    .user(install)
                    .cloned()
                    .ok_or_else(|| ContextError::NoInstall {
                        out: out.clone(),
                        spec: spec_path.to_path_buf(),
                        install,
                    })?;
                let user = crate::pipeline::isolation::users::resolve(&state, &plan)?;
                (install, Some(user))
            }
        };
        let stage = crate::pipeline::isolation::staging::ensure(&out)?;
        let fresh = bench_core::io::random_hex(16).map_err(ContextError::OriginToken)?;
        let origin_token = State::update(&out, |state| {
            state.origin_token.get_or_insert(fresh).clone()
        })?;
        let model = match &spec.model {
            None => None,
            Some(_) => {
                let fresh = crate::pipeline::out::state::ModelAddress::fresh()
                    .map_err(ContextError::ModelAddress)?;
                Some(State::update(&out, |state| {
                    state.model.get_or_insert(fresh).clone()
                })?)
            }
        };
        Ok(PhaseContext {
            model,
            phase,
            spec,
            spec_path: spec_path.to_path_buf(),
            out,
            trial,
            install,
            user,
            stage,
            origin_token,
        })
    }

    /// The trial user, or an error saying that install has not created it.
    pub fn user(&self) -> Result<&TrialUser, ContextError> {
        self.user.as_ref().ok_or(ContextError::NoUser)
    }

    /// The checked-out source: `{source}` = STAGE/source.
    pub fn source_dir(&self) -> PathBuf {
        self.stage.join("source")
    }

    /// Where builds run without a source: STAGE/build.
    pub fn build_dir(&self) -> PathBuf {
        self.stage.join("build")
    }

    /// The collected artifacts and `SHA256SUMS`: `{artifacts}` = STAGE/artifacts.
    pub fn artifacts_dir(&self) -> PathBuf {
        self.stage.join("artifacts")
    }

    /// Logs and transcripts: OUT/logs.
    pub fn logs_dir(&self) -> PathBuf {
        self.out.join("logs")
    }

    /// A log file under OUT/logs (the folder is created).
    pub fn log_path(&self, name: &str) -> Result<PathBuf, ContextError> {
        let dir = self.logs_dir();
        std::fs::create_dir_all(&dir).map_err(|source| ContextError::Logs {
            path: dir.clone(),
            source,
        })?;
        Ok(dir.join(name))
    }

    /// Writes `value` as JSON to `OUT/logs/NAME` (whole or not at all).
    pub(crate) fn write_log_json(
        &self,
        name: &str,
        value: &impl serde::Serialize,
    ) -> Result<(), LogFileError> {
        let path = self.log_path(name)?;
        let json =
            serde_json::to_string_pretty(value).map_err(|source| LogFileError::Serialize {
                name: name.to_owned(),
                source,
            })?;
        bench_core::io::write_atomic(&path, json.as_bytes())
            .map_err(|source| LogFileError::Write { path, source })
    }

    /// The fixture workspace of a home: `{workspace}`.
    pub fn workspace_of(&self, home: &Path) -> PathBuf {
        home.join(&self.spec.workspace.path)
    }

    /// The placeholders' values known in this phase: `{out}`, `{source}`,
    /// `{artifacts}`, `{version}`, and with a user `{home}`, `{user}`, `{workspace}`.
    /// `{origin}` and `{id}` are added by the code that knows them.
    pub fn values(&self) -> Values {
        let mut values = Values::default();
        values
            .set(Placeholder::Out, self.out.display().to_string())
            .set(
                Placeholder::Artifacts,
                self.artifacts_dir().display().to_string(),
            );
        if self.spec.source.is_some() {
            values.set(Placeholder::Source, self.source_dir().display().to_string());
        } else {
            values.set(Placeholder::Build, self.build_dir().display().to_string());
        }
        if let Some(version) = &self.spec.version {
            values.set(Placeholder::Version, version.clone());
        }
        if let Some(url) = self.fixed_origin() {
            values.set(Placeholder::Origin, url);
        }
        if let Some(url) = self.model_url() {
            values.set(Placeholder::ModelUrl, url);
        }
        if let Some(user) = &self.user {
            values
                .set(Placeholder::Home, user.home.display().to_string())
                .set(Placeholder::User, user.name.clone());
            if self.spec.workspace.create {
                values.set(
                    Placeholder::Workspace,
                    self.workspace_of(&user.home).display().to_string(),
                );
            }
        }
        values
    }

    /// `{model_url}`: the run's model endpoint, `http://127.0.0.1:PORT/m/TOKEN` (the bare
    /// root with `[model] token = false`).
    pub fn model_url(&self) -> Option<String> {
        let (model, address) = (self.spec.model.as_ref()?, self.model.as_ref()?);
        let socket = std::net::SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, address.port));
        Some(bench_model::server::base_url(
            socket,
            model.token.then_some(address.token.as_str()),
        ))
    }

    /// The origin's URL when its port is fixed by the spec (and it serves anything), with
    /// the run's secret path prefix: `http://127.0.0.1:PORT/TOKEN`.
    pub fn fixed_origin(&self) -> Option<String> {
        let origin = &self.spec.origin;
        let port = origin.port?;
        (origin.serve && !self.spec.artifacts.is_empty())
            .then(|| format!("http://127.0.0.1:{port}/{}", self.origin_token))
    }

    /// Expands every argument of a command.
    pub fn expand_command(
        &self,
        command: &[Template],
        values: &Values,
    ) -> Result<Vec<String>, ContextError> {
        command
            .iter()
            .map(|argument| Ok(argument.expand(values)?))
            .collect()
    }

    /// The clean environment of the trial user: [`base_environment`] (HOME, USER, LOGNAME,
    /// SHELL, PATH, TERM, COLORTERM, LANG, npm and uv cache variables), then the spec's
    /// `pass_env` variables, its top-level `[env]`, then `extra` (a section's `env`),
    /// later entries winning. Nothing else of clibench's own environment is passed on.
    pub fn environment(
        &self,
        extra: &BTreeMap<String, Template>,
        values: &Values,
    ) -> Result<BTreeMap<String, String>, ContextError> {
        let user = self.user()?;
        let mut env = base_environment(&user.name, &user.home);
        env.extend(self.passed_environment());
        for (name, value) in self.spec.env.iter().chain(extra) {
            let value = value.expand(values).map_err(|source| ContextError::Env {
                name: name.clone(),
                source,
            })?;
            env.insert(name.clone(), value);
        }
        Ok(env)
    }

    /// The spec's `pass_env` variables that are set in clibench's own environment.
    pub fn passed_environment(&self) -> BTreeMap<String, String> {
        self.spec
            .pass_env
            .iter()
            .filter_map(|name| {
                let value = std::env::var_os(name)?;
                Some((name.clone(), value.to_string_lossy().into_owned()))
            })
            .collect()
    }

    /// The working folder of a section: its `cwd` expanded, relative paths resolved
    /// against `default`.
    pub fn cwd(
        &self,
        cwd: Option<&Template>,
        default: &Path,
        values: &Values,
    ) -> Result<PathBuf, ContextError> {
        match cwd {
            None => Ok(default.to_path_buf()),
            Some(cwd) => {
                let expanded = PathBuf::from(cwd.expand(values)?);
                Ok(if expanded.is_absolute() {
                    expanded
                } else {
                    default.join(expanded)
                })
            }
        }
    }

    /// The folder a target's interactive commands start in: the workspace when there is
    /// one, else the home.
    pub fn default_target_cwd(&self) -> Result<PathBuf, ContextError> {
        let user = self.user()?;
        Ok(if self.spec.workspace.create {
            self.workspace_of(&user.home)
        } else {
            user.home.clone()
        })
    }
}

/// What a login shell of `user` would have, and no more (so nothing of clibench's own
/// environment, such as a token, reaches a target): the only variables a target sees
/// unless the spec adds some.
pub(crate) fn base_environment(user: &str, home: &Path) -> BTreeMap<String, String> {
    let home = home.display().to_string();
    [
        ("HOME", home.clone()),
        ("USER", user.to_owned()),
        ("LOGNAME", user.to_owned()),
        ("SHELL", "/bin/bash".to_owned()),
        (
            "PATH",
            format!("{home}/.local/bin:/usr/local/bin:/usr/bin:/bin"),
        ),
        ("TERM", "xterm-256color".to_owned()),
        ("COLORTERM", "truecolor".to_owned()),
        ("LANG", "C.UTF-8".to_owned()),
        ("NPM_CONFIG_PREFIX", format!("{home}/.local")),
        ("NPM_CONFIG_CACHE", format!("{home}/.npm")),
        ("UV_CACHE_DIR", format!("{home}/.cache/uv")),
        ("UV_LINK_MODE", "copy".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_environment_is_a_login_shells_list() {
        let env = base_environment("bob", Path::new("/home/bob"));
        let names: Vec<&str> = env.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "COLORTERM",
                "HOME",
                "LANG",
                "LOGNAME",
                "NPM_CONFIG_CACHE",
                "NPM_CONFIG_PREFIX",
                "PATH",
                "SHELL",
                "TERM",
                "USER",
                "UV_CACHE_DIR",
                "UV_LINK_MODE"
            ]
        );
        assert_eq!(
            env["PATH"],
            "/home/bob/.local/bin:/usr/local/bin:/usr/bin:/bin"
        );
    }
}
