//! `[model]`: its script read, patched and compiled, and checked against what
//! `[session]` and `[staircase]` will type.

use super::checker::{Problem, key};
use crate::spec::model::Spec;
use crate::spec::words::KeyPath;
use std::path::Path;

/// Reads `[model] script` (a file relative to the spec's folder, or inline), patches its
/// physics with `[model] physics`, checks it, and for `[session]` checks that its turns
/// have prompts. The problem's key and message, or the compiled script.
pub(in crate::spec) fn model_script(
    spec: &Spec,
    spec_file: &str,
) -> Result<Option<bench_model::Compiled>, Problem> {
    let Some(model) = &spec.model else {
        return Ok(None);
    };
    let problem = |path: KeyPath, message: String| Problem { path, message };
    let mut script = match &model.script {
        crate::spec::model::ScriptSource::Inline(script) => script.clone(),
        crate::spec::model::ScriptSource::File(file) => {
            let folder = Path::new(spec_file).parent().unwrap_or(Path::new(""));
            let path = folder.join(file);
            bench_model::Script::load(&path).map_err(|error| {
                problem(
                    key(&["model", "script"]),
                    format!("'model.script': {}", bench_core::error_chain(&error)),
                )
            })?
        }
    };
    if let Some(patch) = &model.physics {
        script.physics = script.physics.patched(patch);
    }

    let compiled = script.compile().map_err(|error| {
        let path = if model.physics.is_some() && error.to_string().starts_with("physics.") {
            key(&["model", "physics"])
        } else {
            key(&["model", "script"])
        };
        problem(path, format!("'model.script': {error}"))
    })?;
    let compiled = match spec.session.as_ref().and_then(|s| s.turns) {
        Some(turns) => crate::spec::long_session::unroll(&compiled, turns as usize),
        None => compiled,
    };
    let prompts = compiled.turns.iter().filter(|t| t.prompt.is_some()).count();
    if prompts == 0 && spec.staircase.as_ref().is_some_and(|s| s.session) {
        return Err(problem(
            key(&["staircase", "session"]),
            "'model.script': no turn has a `prompt` (turns[N].prompt: what a person types), \
             so [staircase] session = true has nothing to type"
                .to_owned(),
        ));
    }
    if let Some(session) = &spec.session {
        if prompts == 0 {
            return Err(problem(
                key(&["model", "script"]),
                "'model.script': no turn has a `prompt` (turns[N].prompt: what a person types), \
                 so [session] has nothing to type"
                    .to_owned(),
            ));
        }
        if let Some(turn) = session.typing_turn
            && turn as usize > prompts
        {
            return Err(problem(
                key(&["session", "typing_turn"]),
                format!(
                    "'session.typing_turn' = {turn}, but the script has {prompts} turn(s) with a prompt"
                ),
            ));
        }
    }
    Ok(Some(compiled))
}
