//! The top-level keys, `[source]`, `[[build]]`, `[[artifacts]]` and `[origin]`: what
//! prepares and serves the target before any trial.

use super::checker::{Checker, Stage, key, keyed};
use crate::spec::model::Spec;
use crate::spec::words::{Segment, is_full_sha};

/// `spec_version`, `name`, `[source]`, `env`, `pass_env` and `[versions]`.
pub(super) fn top_level(c: &mut Checker<'_>, spec: &Spec) {
    if let Some(message) = spec
        .spec_version
        .and_then(crate::spec::version::unknown_version)
    {
        c.problem(key(&["spec_version"]), message);
    }
    if spec.name.trim().is_empty() {
        c.problem(key(&["name"]), "'name' must not be empty");
    }
    if let Some(source) = &spec.source {
        let commit = &source.commit;
        if commit.starts_with("@DEMO_") {
            // The demo's template, edited: `clibench run` fills in only the shipped one.
            c.problem(
                key(&["source", "commit"]),
                format!(
                    "'source.commit' is the built-in demo's placeholder \"{commit}\", which \
                     clibench fills in only for the demo as shipped: `clibench run` (no spec) or \
                     `clibench run examples/demo-agent/demo.toml` runs it; for a copy of your \
                     own, write a repository and a full 40-character commit sha"
                ),
            );
        } else if !is_full_sha(commit) {
            c.problem(
                key(&["source", "commit"]),
                format!(
                    "'source.commit' must be a full 40-character commit sha (got \"{commit}\")"
                ),
            );
        }
        if source.repository.trim().is_empty() {
            c.problem(
                key(&["source", "repository"]),
                "'source.repository' must not be empty",
            );
        }
    }
    c.env(key(&["env"]), &spec.env, Stage::Trial);
    for (index, name) in spec.pass_env.iter().enumerate() {
        if name.is_empty() || name.contains('=') || name.contains('\0') {
            c.problem(
                keyed(&["pass_env"], index, &[]),
                format!("invalid variable name '{name}' in 'pass_env'"),
            );
        }
    }
    for (name, command) in &spec.versions {
        c.command(key(&["versions", name]), command, Stage::Prepare);
    }
}

/// `[[build]]`: each step's command, folder, timeout, environment and `when_exists`.
pub(super) fn build(c: &mut Checker<'_>, spec: &Spec) {
    for (index, step) in spec.build.iter().enumerate() {
        let at = |rest: &[&str]| keyed(&["build"], index, rest);
        c.command(at(&["command"]), &step.command, Stage::Prepare);
        if let Some(cwd) = &step.cwd {
            c.template(at(&["cwd"]), cwd, Stage::Prepare);
        }
        c.nonzero(at(&["timeout"]), &step.timeout);
        c.env(at(&["env"]), &step.env, Stage::Prepare);
        for (item, path) in step.when_exists.iter().enumerate() {
            c.template(
                keyed(&["build"], index, &["when_exists"])
                    .into_iter()
                    .chain([Segment::Index(item)])
                    .collect(),
                path,
                Stage::Prepare,
            );
        }
    }
}

/// `[[artifacts]]` and `[origin]`: what is served to the installer, and where.
pub(super) fn served(c: &mut Checker<'_>, spec: &Spec) {
    for (index, set) in spec.artifacts.iter().enumerate() {
        c.template(
            keyed(&["artifacts"], index, &["folder"]),
            &set.folder,
            Stage::Prepare,
        );
        c.file_pattern(keyed(&["artifacts"], index, &["glob"]), &set.glob);
    }
    c.template(
        key(&["origin", "path"]),
        &spec.origin.path,
        Stage::OriginPath,
    );
    if spec.origin.port == Some(0) {
        c.problem(
            key(&["origin", "port"]),
            "'origin.port' must be a port number (leave it out for an ephemeral port)",
        );
    }
    if !spec.origin.path.raw().starts_with('/') {
        c.problem(
            key(&["origin", "path"]),
            "'origin.path' must start with '/'",
        );
    }
}
