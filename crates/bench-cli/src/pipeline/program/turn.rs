//! A scripted turn of the measured agent, as every phase that sets it to work plays it:
//! the session phase plays each of the script's prompted turns, and the staircase phase's
//! session instances the first. [`planned`] reads the turns with a prompt from the spec's
//! compiled script ([`Planned`]: the prompt and what marks the reply on the screen), and
//! [`one_turn`] plays one ([`play`]): the prompt typed key by key, Enter, the reply watched
//! until its final text shows and the prompt echoes a key again, and the turn's times read
//! from the model endpoint's journal and put on the terminal's clock. Its failures are
//! [`TurnError`].
//!
//! Text is matched on the screen with all whitespace removed ([`squash`]: agents wrap and
//! re-render), and counted: a needle is visible when it occurs more often than before
//! Enter, so a reply that repeats an earlier one's words is not seen early.

use crate::pipeline::PhaseContext;
use crate::pipeline::program::TargetError;
use bench_model::answer;
use std::time::Duration;

mod play;

pub(crate) use play::{TurnSettings, one_turn};

/// Keys clibench types are pressed this far apart, each its own write: a fast typist
/// (50 keys a second), and no paste. TUIs without bracketed paste take keys closer than
/// about 8 ms for one (codex's composer does, from 3 keys on): at 5 ms apart, codex made
/// the Enter after a prompt a newline in its input box instead of sending the prompt. And
/// keys written at once are one read: Continue's cn inserted four DELs so read as text.
pub(crate) const PROMPT_KEY_GAP: Duration = Duration::from_millis(20);
/// How long one echo may take.
pub(crate) const ECHO_TIMEOUT: Duration = Duration::from_secs(5);
/// How many of the final text's last tokens make the "final text is visible" needle.
const LAST_TOKENS: usize = 4;

/// Why one turn could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    /// Typing failed.
    #[error("typing the prompt")]
    Type(#[source] bench_term::TermError),
    /// A wait of the turn ran out of `[session] turn_timeout` or failed.
    #[error("turn {turn} ({timeout:?} turn_timeout): {waiting_for}")]
    Wait {
        /// The turn, from 1.
        turn: u32,
        /// The turn's time bound.
        timeout: Duration,
        /// "waiting for the reply's final text".
        waiting_for: &'static str,
        /// The terminal's error (its screen when it gave up).
        #[source]
        source: bench_term::TermError,
    },
    /// The family's CPU time or memory could not be read.
    #[error(transparent)]
    Family(#[from] TargetError),
    /// The agent stopped to ask its user while the model endpoint had nothing left to
    /// send.
    #[error(
        "turn {turn}: the agent stopped to ask its user ({kind}: {question:?}) while the model \
         endpoint had nothing left to send; let it work without asking{}: \
         docs/writing-a-spec.md, \"Letting the agent work\" (`clibench run --show-screen` \
         prints the screen it stopped on)",
        approvals.map_or(String::new(), |setting| format!(" ({setting})"))
    )]
    Dialog {
        /// The turn, from 1.
        turn: u32,
        /// What kind of question ("permission prompt").
        kind: &'static str,
        /// The question, as the screen shows it.
        question: String,
        /// The agent's approval setting, when clibench knows it.
        approvals: Option<&'static str>,
    },
    /// The journal has no request for the turn.
    #[error("turn {turn}: the model endpoint received no request for it (journal: {last})")]
    NoRequest {
        /// The turn, from 1.
        turn: u32,
        /// The journal's last request, for the reader.
        last: String,
    },
}

/// A scripted turn a phase types: the session phase each, the staircase's session instances
/// the first.
#[derive(Debug, Clone)]
pub(crate) struct Planned {
    /// The script's turn index, from 0 (the journal's `Outcome::Turn::index`).
    index: usize,
    prompt: String,
    /// The final reply's first chunk, as text.
    first_chunk: String,
    /// The final text's last tokens.
    last_words: String,
    /// How often `last_words` occurs in the final text (squashed): a long reply of
    /// deterministic tokens repeats itself, and its end is shown once every occurrence is.
    last_repeats: usize,
    tool_rounds: usize,
    /// The final text's tokens: the session phase types while the longest reply streams.
    pub(crate) tokens: usize,
    /// The reply's last word, squashed: the line that holds it is where the reply ends.
    last_word: String,
    /// `[session] turn_done`, checked on the lines below the reply's end; one regex
    /// shared by every turn. A cloned `Regex` gets a search cache of its own that grows
    /// as it is used, and a clone in each of a 1,000-turn session's plans grew
    /// clibench's heap by about 20 KB a turn.
    done: Option<std::sync::Arc<regex::Regex>>,
}

/// The script's turns with a prompt, in order.
pub(crate) fn planned(ctx: &PhaseContext) -> Vec<Planned> {
    let Some(compiled) = ctx.spec.model.as_ref().and_then(|m| m.compiled.as_ref()) else {
        return Vec::new();
    };
    // Invariant: the spec check refused a `turn_done` that is not a regex.
    let done = ctx
        .spec
        .session
        .as_ref()
        .and_then(|s| s.turn_done.as_deref())
        .and_then(|pattern| regex::Regex::new(pattern).ok())
        .map(std::sync::Arc::new);
    compiled
        .turns
        .iter()
        .enumerate()
        .filter_map(|(index, turn)| {
            let prompt = turn.prompt.clone()?;
            let text = turn.reply.final_text();
            let tokens = answer::tokens_of(&text);
            let chunk = (turn.physics.chunk_tokens as usize).max(1);
            let first_chunk = tokens.iter().take(chunk).cloned().collect::<String>();
            let last_words = tokens[tokens.len().saturating_sub(LAST_TOKENS)..].concat();
            let last_repeats = occurrences(&squash(&text), &squash(&last_words)).max(1);
            Some(Planned {
                index,
                prompt,
                first_chunk,
                last_words,
                last_repeats,
                tool_rounds: turn.reply.tool_rounds(),
                tokens: tokens.len(),
                last_word: tokens.last().map(|t| squash(t)).unwrap_or_default(),
                done: done.clone(),
            })
        })
        .collect()
}

/// `text` without any whitespace: what stays of a reply however the agent wraps it.
/// Box drawing and block elements go too, as from the screen's squashed text
/// ([`bench_term::Terminal::squashed_text`]).
pub(crate) fn squash(text: &str) -> String {
    text.chars()
        .filter(|&c| !c.is_whitespace() && !('\u{2500}'..='\u{259F}').contains(&c))
        .collect()
}

fn occurrences(haystack: &str, needle: &str) -> usize {
    if needle.is_empty() {
        return 0;
    }
    haystack.matches(needle).count()
}
