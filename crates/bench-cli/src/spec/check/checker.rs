//! What every section's checks use: a problem with its key path, where a template is
//! used, and the checks of commands, templates, environments, durations, regexes and
//! paths.

use crate::spec::model::Spec;
use crate::spec::template::{Placeholder, Template};
use crate::spec::words::{KeyPath, Segment, key_name};
use std::collections::BTreeMap;
use std::path::Path;

/// The ready keys of `[measure]` as bench-term reads them: the mode and the guard of the
/// screen at ready, each regex compiled once.
pub(in crate::spec) type Ready = (bench_term::ReadyMode, bench_term::ReadyGuard);

/// A problem of the spec: the key it is at and what is wrong.
pub(in crate::spec) struct Problem {
    pub(in crate::spec) path: KeyPath,
    pub(in crate::spec) message: String,
}

pub(super) fn key(parts: &[&str]) -> KeyPath {
    parts
        .iter()
        .map(|p| Segment::Key((*p).to_owned()))
        .collect()
}

pub(super) fn keyed(base: &[&str], index: usize, rest: &[&str]) -> KeyPath {
    let mut path = key(base);
    path.push(Segment::Index(index));
    path.extend(key(rest));
    path
}

/// Where a template is used decides which placeholders have a value there.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Stage {
    /// Source, builds, artifacts, versions: no trial user yet.
    Prepare,
    /// The installer: the trial user and the origin.
    Install,
    /// Install checks, measure, runtime, ui, staircase: the trial user.
    Trial,
    /// `[measure] stop_session`: the trial user and the session id.
    StopSession,
    /// `[origin] path`.
    OriginPath,
}

pub(super) struct Checker<'a> {
    spec: &'a Spec,
    pub(super) problems: Vec<Problem>,
}

impl<'a> Checker<'a> {
    /// A checker of `spec` that has found nothing yet.
    pub(super) fn new(spec: &'a Spec) -> Checker<'a> {
        Checker {
            spec,
            problems: Vec::new(),
        }
    }

    pub(super) fn problem(&mut self, path: KeyPath, message: impl Into<String>) {
        self.problems.push(Problem {
            path,
            message: message.into(),
        });
    }

    pub(super) fn template(&mut self, path: KeyPath, template: &Template, stage: Stage) {
        for placeholder in template.placeholders() {
            let name = key_name(&path);
            let allowed = match placeholder {
                Placeholder::Out | Placeholder::Artifacts => stage != Stage::OriginPath,
                Placeholder::Version => true,
                Placeholder::Source | Placeholder::Build => stage != Stage::OriginPath,
                Placeholder::Home | Placeholder::User => {
                    !matches!(stage, Stage::Prepare | Stage::OriginPath)
                }
                Placeholder::Workspace => !matches!(stage, Stage::Prepare | Stage::OriginPath),
                Placeholder::Origin => {
                    stage == Stage::Install
                        || (self.spec.origin.port.is_some() && stage != Stage::OriginPath)
                }
                Placeholder::Id => stage == Stage::StopSession,
                Placeholder::ModelUrl => !matches!(stage, Stage::Prepare | Stage::OriginPath),
            };
            if !allowed {
                let where_ = match placeholder {
                    Placeholder::Origin => {
                        "it is only set while the installer runs ([install] command, cwd and env), unless [origin] port is fixed"
                    }
                    Placeholder::Id => "it is only set in [measure] stop_session",
                    Placeholder::ModelUrl => {
                        "the endpoint belongs to the trials, not to preparing the target"
                    }
                    Placeholder::Home | Placeholder::User | Placeholder::Workspace => {
                        "there is no trial user while the target is prepared"
                    }
                    _ => "it has no value there",
                };
                self.problem(
                    path.clone(),
                    format!("placeholder {placeholder} cannot be used in '{name}': {where_}"),
                );
                continue;
            }
            let missing = match placeholder {
                Placeholder::Source if self.spec.source.is_none() => {
                    Some("the spec has no [source]")
                }
                Placeholder::Build if self.spec.source.is_some() => {
                    Some("the spec has a [source]: builds run in {source}")
                }
                Placeholder::Version if self.spec.version.is_none() => {
                    Some("the spec has no top-level 'version'")
                }
                Placeholder::Workspace if !self.spec.workspace.create => {
                    Some("[workspace] create is false")
                }
                Placeholder::ModelUrl if self.spec.model.is_none() => {
                    Some("the spec has no [model]")
                }
                Placeholder::Origin if !self.serves() => {
                    Some("nothing is served: there are no [[artifacts]] or [origin] serve is false")
                }
                _ => None,
            };
            if let Some(why) = missing {
                self.problem(
                    path.clone(),
                    format!("placeholder {placeholder} in '{name}' has no value: {why}"),
                );
            }
        }
    }

    fn serves(&self) -> bool {
        self.spec.origin.serve && !self.spec.artifacts.is_empty()
    }

    pub(super) fn command(&mut self, path: KeyPath, command: &[Template], stage: Stage) {
        if command.is_empty() {
            self.problem(
                path.clone(),
                format!("'{}' must name a program", key_name(&path)),
            );
        }
        for (index, argument) in command.iter().enumerate() {
            let mut item = path.clone();
            item.push(Segment::Index(index));
            self.template(item, argument, stage);
        }
    }

    pub(super) fn env(&mut self, path: KeyPath, env: &BTreeMap<String, Template>, stage: Stage) {
        for (name, value) in env {
            let mut item = path.clone();
            item.push(Segment::Key(name.clone()));
            if name.is_empty() || name.contains('=') || name.contains('\0') {
                self.problem(item.clone(), format!("invalid variable name '{name}'"));
            }
            self.template(item, value, stage);
        }
    }

    pub(super) fn nonzero(&mut self, path: KeyPath, duration: &bench_core::duration::Duration) {
        if duration.is_zero() {
            self.problem(
                path.clone(),
                format!("'{}' must be longer than zero", key_name(&path)),
            );
        }
    }

    /// Compiles `pattern`, or records why it does not compile.
    pub(super) fn regex(&mut self, path: KeyPath, pattern: &str) -> Option<regex::Regex> {
        self.compile(path, regex::Regex::new(pattern))
    }

    /// Compiles a pattern that reads the screen at ready ([`bench_term::ready_regex`]:
    /// multi-line), or records why it does not compile.
    pub(super) fn ready_regex(&mut self, path: KeyPath, pattern: &str) -> Option<regex::Regex> {
        self.compile(path, bench_term::ready_regex(pattern))
    }

    fn compile(
        &mut self,
        path: KeyPath,
        compiled: Result<regex::Regex, regex::Error>,
    ) -> Option<regex::Regex> {
        match compiled {
            Ok(regex) => Some(regex),
            Err(error) => {
                let first = error.to_string();
                let last = first.lines().last().unwrap_or("").trim();
                let first = last.strip_prefix("error: ").unwrap_or(last).to_owned();
                self.problem(
                    path.clone(),
                    format!("invalid regex in '{}': {first}", key_name(&path)),
                );
                None
            }
        }
    }

    pub(super) fn relative(&mut self, path: KeyPath, value: &str) {
        let candidate = Path::new(value);
        let escapes = candidate
            .components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)));
        if value.is_empty() || escapes {
            self.problem(
                path.clone(),
                format!(
                    "'{}' must be a relative path inside the home without '..' (got \"{value}\")",
                    key_name(&path)
                ),
            );
        }
    }

    pub(super) fn file_pattern(&mut self, path: KeyPath, pattern: &str) {
        if pattern.is_empty() || pattern.contains('/') {
            self.problem(
                path.clone(),
                format!(
                    "'{}' must be a file-name pattern without '/' (got \"{pattern}\")",
                    key_name(&path)
                ),
            );
        }
    }
}
