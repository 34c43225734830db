//! `[session]`: what it needs from the rest of the spec, and its limits.

use super::checker::{Checker, Ready, Stage, key};
use crate::spec::model::{Session, Spec};

/// What `[session]` needs (`[model]`, a `[measure]` that stays running), and its
/// command, folder, environment and timeouts.
pub(super) fn session(c: &mut Checker<'_>, spec: &Spec, session: &Session, ready: Option<&Ready>) {
    if spec.model.is_none() {
        c.problem(
            key(&["session"]),
            "[session] needs [model]: the turns are the model's script",
        );
    }
    if spec.measure.is_none() {
        c.problem(
            key(&["session"]),
            "[session] needs [measure] (the ready mode, size and quit keys)",
        );
    } else if matches!(ready.map(|r| &r.0), Some(bench_term::ReadyMode::Exit)) {
        c.problem(
            key(&["measure", "ready"]),
            "ready = \"exit\" times a program that exits; [session] needs one that stays running",
        );
    }
    if let Some(command) = &session.command {
        c.command(key(&["session", "command"]), command, Stage::Trial);
    }
    if let Some(cwd) = &session.cwd {
        c.template(key(&["session", "cwd"]), cwd, Stage::Trial);
    }
    c.env(key(&["session", "env"]), &session.env, Stage::Trial);
    c.nonzero(key(&["session", "idle"]), &session.idle);
    c.nonzero(key(&["session", "turn_timeout"]), &session.turn_timeout);
}

/// The limits of `[session]`'s counts and sizes, and its patterns.
pub(super) fn limits(c: &mut Checker<'_>, session: &Session) {
    if session.typing_turn == Some(0) {
        c.problem(
            key(&["session", "typing_turn"]),
            "'session.typing_turn' counts the turns from 1",
        );
    }
    if session.typing_keys > 100 {
        c.problem(
            key(&["session", "typing_keys"]),
            "'session.typing_keys' is at most 100",
        );
    }
    if let Some(pattern) = &session.turn_done {
        c.regex(key(&["session", "turn_done"]), pattern);
    }
    if session
        .turns
        .is_some_and(|turns| turns == 0 || turns as usize > bench_core::detail::MAX_TURNS)
    {
        c.problem(
            key(&["session", "turns"]),
            "'session.turns' is from 1 to 1000",
        );
    }
    if session.pastes.len() > bench_core::detail::MAX_PASTES
        || session
            .pastes
            .iter()
            .any(|&bytes| bytes == 0 || bytes > bench_core::detail::MAX_PASTE_BYTES)
    {
        c.problem(
            key(&["session", "pastes"]),
            "'session.pastes' is at most 10 sizes, each from 1 to 4194304 bytes",
        );
    }
    if !session.pastes.is_empty() && session.paste_clear.is_empty() {
        c.problem(
            key(&["session", "paste_clear"]),
            "'session.paste_clear' must name the keys that empty the input after a paste",
        );
    }
    if session.checkpoint_keys == 0
        || session.checkpoint_keys as usize > bench_core::detail::MAX_CHECKPOINT_KEYS
    {
        c.problem(
            key(&["session", "checkpoint_keys"]),
            "'session.checkpoint_keys' is from 1 to 20",
        );
    }
}
