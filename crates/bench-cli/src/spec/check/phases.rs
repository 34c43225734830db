//! `[runtime]`, `[ui]` and `[staircase]`: the phases after measure that start the
//! program again.

use super::checker::{Checker, Stage, key, keyed};
use crate::spec::model::{Runtime, Spec, Staircase, Ui};

/// `[runtime]`: its command, folder, environment and timeout.
pub(super) fn runtime(c: &mut Checker<'_>, runtime: &Runtime) {
    c.command(key(&["runtime", "command"]), &runtime.command, Stage::Trial);
    if let Some(cwd) = &runtime.cwd {
        c.template(key(&["runtime", "cwd"]), cwd, Stage::Trial);
    }
    c.env(key(&["runtime", "env"]), &runtime.env, Stage::Trial);
    c.nonzero(key(&["runtime", "timeout"]), &runtime.timeout);
}

/// `[ui]`: its command (or measure's), folder, environment and steps.
pub(super) fn ui(c: &mut Checker<'_>, spec: &Spec, ui: &Ui) {
    match &ui.command {
        Some(command) => c.command(key(&["ui", "command"]), command, Stage::Trial),
        None if spec.measure.is_none() => c.problem(
            key(&["ui"]),
            "[ui] needs a 'command' or a [measure] section to take it from",
        ),
        None => {}
    }
    if let Some(cwd) = &ui.cwd {
        c.template(key(&["ui", "cwd"]), cwd, Stage::Trial);
    }
    c.env(key(&["ui", "env"]), &ui.env, Stage::Trial);
    let mut names = Vec::new();
    for (index, step) in ui.steps.iter().enumerate() {
        if step.name.trim().is_empty() {
            c.problem(
                keyed(&["ui", "steps"], index, &["name"]),
                "a ui step needs a name",
            );
        } else if names.contains(&step.name) {
            c.problem(
                keyed(&["ui", "steps"], index, &["name"]),
                format!("ui step name '{}' is used twice", step.name),
            );
        }
        names.push(step.name.clone());
        c.regex(keyed(&["ui", "steps"], index, &["expect"]), &step.expect);
        c.nonzero(keyed(&["ui", "steps"], index, &["timeout"]), &step.timeout);
    }
}

/// `[staircase]`: its command (or measure's), folder, environment, count and session.
pub(super) fn staircase(c: &mut Checker<'_>, spec: &Spec, staircase: &Staircase) {
    match &staircase.command {
        Some(command) => c.command(key(&["staircase", "command"]), command, Stage::Trial),
        None if spec.measure.is_none() => c.problem(
            key(&["staircase"]),
            "[staircase] needs a 'command' or a [measure] section to take it from",
        ),
        None => {}
    }
    if let Some(cwd) = &staircase.cwd {
        c.template(key(&["staircase", "cwd"]), cwd, Stage::Trial);
    }
    c.env(key(&["staircase", "env"]), &staircase.env, Stage::Trial);
    if staircase.count == 0 {
        c.problem(
            key(&["staircase", "count"]),
            "'staircase.count' must be at least 1",
        );
    }
    if staircase.session && spec.model.is_none() {
        c.problem(
            key(&["staircase", "session"]),
            "[staircase] session = true needs [model]: each instance types the script's first prompt",
        );
    }
}
