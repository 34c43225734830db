//! The agent's background sessions, listed and stopped through its own commands (the
//! spec's `list_sessions` and `stop_session`), run as the trial user.

use crate::pipeline::PhaseContext;
use crate::pipeline::isolation::command::{self, Step};
use crate::pipeline::out::state::TrialUser;
use crate::pipeline::program::TargetError;
use crate::pipeline::program::terminal::resolve_program;
use crate::spec::{self, Placeholder, Template};
use bench_core::error_chain;

/// The ids of the agent's background sessions, from its list command (such as
/// `prime-agent list --json`); empty when the spec has no list command.
pub(crate) fn list_sessions(
    ctx: &PhaseContext,
    measure: &spec::Measure,
    user: &TrialUser,
) -> Result<Vec<String>, TargetError> {
    let Some(command) = &measure.list_sessions else {
        return Ok(Vec::new());
    };
    let finished = run_target_command(ctx, measure, user, command, &ctx.values(), "list sessions")?;
    parse_session_ids(
        &finished.stdout,
        &measure.sessions_field,
        &measure.session_id_field,
    )
}

/// The session ids in a list command's JSON output: `{"<sessions_field>": [{"<id_field>":
/// "..."}]}`; sessions without an id (or with an empty one) are skipped: there is nothing
/// to pass to the stop command, and the agent's own list is what they are judged by.
pub(crate) fn parse_session_ids(
    output: &str,
    sessions_field: &str,
    id_field: &str,
) -> Result<Vec<String>, TargetError> {
    let listing: serde_json::Value =
        serde_json::from_str(output.trim()).map_err(|source| TargetError::SessionsNotJson {
            tail: command::tail(output),
            source,
        })?;
    let sessions = listing
        .get(sessions_field)
        .and_then(serde_json::Value::as_array)
        .ok_or_else(|| TargetError::NoSessions {
            field: sessions_field.to_owned(),
            listing: listing.to_string(),
        })?;
    Ok(sessions
        .iter()
        .filter_map(|session| session.get(id_field))
        .filter_map(|id| match id {
            serde_json::Value::String(id) if !id.is_empty() => Some(id.clone()),
            serde_json::Value::Number(id) => Some(id.to_string()),
            _ => None,
        })
        .collect())
}

/// Stops the agent's background sessions through its own commands, so the agent
/// ends them as it would for a person (killing them could leave its state files
/// claiming they run): every listed session is stopped; a stop that fails is forgiven only
/// when the session is gone from the list afterwards (it ended by itself meanwhile).
pub(crate) fn stop_agents(
    ctx: &PhaseContext,
    measure: &spec::Measure,
    user: &TrialUser,
) -> Result<(), TargetError> {
    let ids = list_sessions(ctx, measure, user)?;
    stop_sessions(ctx, measure, user, &ids)
}

/// Stops the given background sessions (see [`stop_agents`]).
pub(crate) fn stop_sessions(
    ctx: &PhaseContext,
    measure: &spec::Measure,
    user: &TrialUser,
    ids: &[String],
) -> Result<(), TargetError> {
    let Some(stop) = &measure.stop_session else {
        return Ok(());
    };
    for id in ids {
        let values = ctx.values().with(Placeholder::Id, id.clone());
        let what = format!("stop session {id}");
        let finished = run_target_command(ctx, measure, user, stop, &values, &what);
        let failure = match finished {
            Ok(done) if done.status.success() => continue,
            Ok(done) => format!(
                "{what} failed ({}): {}",
                done.status,
                command::tail(&done.merged())
            ),
            Err(error) => error_chain(&error),
        };
        if list_sessions(ctx, measure, user)?.contains(id) {
            return Err(TargetError::SessionLeft(failure));
        }
    }
    Ok(())
}

/// Runs one of the target's own commands (list, stop) as the trial user and captures it.
fn run_target_command(
    ctx: &PhaseContext,
    measure: &spec::Measure,
    user: &TrialUser,
    command: &[Template],
    values: &spec::Values,
    what: &str,
) -> Result<command::Finished, TargetError> {
    let argv = ctx.expand_command(command, values)?;
    let env = ctx.environment(&measure.env, values)?;
    let mut argv = argv;
    if let Some(program) = argv.first_mut() {
        *program = resolve_program(program, &env);
    }
    let step = Step {
        what: what.to_owned(),
        argv,
        cwd: ctx.cwd(measure.cwd.as_ref(), &ctx.default_target_cwd()?, values)?,
        env,
        user: Some(user),
        home: Some(user.home.clone()),
        timeout: measure.command_timeout.0,
        log: None,
    };
    Ok(command::run(&step)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_follow_the_list_commands_format() {
        let output = r#"{"sessions":[{"activeSessionId":"a1"},{"activeSessionId":""},{"other":1},{"activeSessionId":7}]}"#;
        assert_eq!(
            parse_session_ids(output, "sessions", "activeSessionId").unwrap(),
            ["a1", "7"]
        );
    }

    #[test]
    fn a_session_list_that_is_not_json_is_an_error_quoting_it() {
        let error = parse_session_ids("Error: no daemon", "sessions", "activeSessionId")
            .unwrap_err()
            .to_string();
        assert!(error.contains("Error: no daemon"), "{error}");
    }

    #[test]
    fn a_session_list_without_the_array_names_the_field() {
        let error = parse_session_ids(r#"{"items":[]}"#, "sessions", "activeSessionId")
            .unwrap_err()
            .to_string();
        assert!(error.contains("`sessions`"), "{error}");
    }
}
