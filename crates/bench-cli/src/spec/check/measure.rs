//! `[measure]`: the measured start's command, its ready keys, sizes, quit keys and
//! background sessions.

use super::checker::{Checker, Ready, Stage, key, keyed};
use crate::spec::model::{Measure, Spec};
use crate::spec::template::Placeholder;

/// `[measure]`, and its ready mode and guard when they are valid.
pub(super) fn measure(c: &mut Checker<'_>, spec: &Spec, measure: &Measure) -> Option<Ready> {
    c.command(key(&["measure", "command"]), &measure.command, Stage::Trial);
    if let Some(cwd) = &measure.cwd {
        c.template(key(&["measure", "cwd"]), cwd, Stage::Trial);
    }
    c.env(key(&["measure", "env"]), &measure.env, Stage::Trial);
    let mode = ready_mode(c, &measure.ready_key, measure);
    // A program that is ready when it exits has no session to drive or to stack.
    if matches!(mode, Some(bench_term::ReadyMode::Exit))
        && (spec.ui.is_some() || spec.staircase.is_some())
    {
        c.problem(
            key(&["measure", "ready"]),
            "ready = \"exit\" times a program that exits; [ui] and [staircase] need one \
             that stays running",
        );
    }
    let guard = ready_guard(c, measure);
    if let Err(error) = bench_term::parse_keys(&measure.quit) {
        c.problem(
            key(&["measure", "quit"]),
            format!("'measure.quit': {error}"),
        );
    }
    c.nonzero(key(&["measure", "ready_quiet"]), &measure.ready_quiet);
    c.nonzero(key(&["measure", "ready_timeout"]), &measure.ready_timeout);
    c.nonzero(
        key(&["measure", "command_timeout"]),
        &measure.command_timeout,
    );
    if measure.cols == 0 || measure.rows == 0 {
        c.problem(
            key(&["measure", "cols"]),
            "'measure.cols' and 'measure.rows' must be at least 1",
        );
    }
    sessions(c, measure);
    mode.map(|mode| (mode, guard))
}

/// The guard of the screen at ready: the patterns it must and must not show.
fn ready_guard(c: &mut Checker<'_>, measure: &Measure) -> bench_term::ReadyGuard {
    let require = measure
        .ready_require
        .as_ref()
        .and_then(|pattern| c.ready_regex(key(&["measure", "ready_require"]), pattern));
    let reject = measure
        .ready_reject
        .iter()
        .enumerate()
        .filter_map(|(index, pattern)| {
            c.ready_regex(keyed(&["measure", "ready_reject"], index, &[]), pattern)
        })
        .collect();
    bench_term::ReadyGuard {
        require,
        reject,
        allow_dialog: measure.ready_allow_dialog,
        expected: Vec::new(),
    }
}

/// `list_sessions` and `stop_session`, which come as a pair.
fn sessions(c: &mut Checker<'_>, measure: &Measure) {
    match (&measure.list_sessions, &measure.stop_session) {
        (Some(list), Some(stop)) => {
            c.command(key(&["measure", "list_sessions"]), list, Stage::Trial);
            c.command(key(&["measure", "stop_session"]), stop, Stage::StopSession);
            if !stop
                .iter()
                .any(|a| a.placeholders().any(|p| p == Placeholder::Id))
            {
                c.problem(
                    key(&["measure", "stop_session"]),
                    "'measure.stop_session' must pass the session with {id}",
                );
            }
        }
        (Some(_), None) => c.problem(
            key(&["measure", "list_sessions"]),
            "'measure.list_sessions' needs 'measure.stop_session'",
        ),
        (None, Some(_)) => c.problem(
            key(&["measure", "stop_session"]),
            "'measure.stop_session' needs 'measure.list_sessions'",
        ),
        (None, None) => {}
    }
}

/// `measure.ready` as a mode: `"pattern"` and `"stable"` take the keys beside them
/// (`ready_pattern`, `ready_quiet`); any other value is read by the one grammar the
/// `--ready` flag uses (bench-term's `ReadyMode` parser: `probe`, `pattern:REGEX`,
/// `first-frame`, `stable:DURATION`, and whatever it learns), so a spec accepts every form
/// the flag does.
fn ready_mode(
    c: &mut Checker<'_>,
    ready: &str,
    measure: &Measure,
) -> Option<bench_term::ReadyMode> {
    let pattern_key = || key(&["measure", "ready_pattern"]);
    match (ready, &measure.ready_pattern) {
        ("pattern", Some(pattern)) => c
            .ready_regex(pattern_key(), pattern)
            .map(bench_term::ReadyMode::Pattern),
        ("pattern", None) => {
            c.problem(
                key(&["measure", "ready"]),
                "ready = \"pattern\" needs 'measure.ready_pattern' (or write ready = \"pattern:REGEX\")",
            );
            None
        }
        (_, Some(_)) => {
            c.problem(
                pattern_key(),
                "'measure.ready_pattern' is only used with ready = \"pattern\"",
            );
            None
        }
        ("stable", None) => Some(bench_term::ReadyMode::Stable(measure.ready_quiet.0)),
        (text, None) => match text.parse::<bench_term::ReadyMode>() {
            Ok(mode) => Some(mode),
            Err(error) => {
                c.problem(
                    key(&["measure", "ready"]),
                    format!(
                        "invalid value '{text}' for key 'measure.ready': {error}; or \"pattern\" \
                         with ready_pattern, \"stable\" with ready_quiet"
                    ),
                );
                None
            }
        },
    }
}
