//! A checkpoint of a long session: the idle prompt measured between two turns. First an
//! idle window (the family's CPU share, the bytes the agent writes meanwhile), then a short
//! word typed key by key at a person's pace (each key's echo awaited) and erased, then the
//! family's memory. Never while a reply streams: the turn before it is over.

use crate::pipeline::program::family::Family;
use crate::pipeline::program::turn::{ECHO_TIMEOUT, PROMPT_KEY_GAP, TurnError, squash};
use bench_core::detail::{MAX_CHECKPOINT_KEYS, SessionCheckpoint};
use bench_term::{Key, Terminal};
use std::time::{Duration, Instant};

/// Keys of the checkpoint's word are typed this far apart (after each echo): a person's
/// pace, and time for a TUI's redraw of one key to finish before the next.
const KEY_GAP: Duration = Duration::from_millis(60);
/// Letters typed before the measured ones and not measured: one letter alone is on any
/// screen already, three in a row that were on none when the word was picked are not.
const LEAD: usize = 3;
/// How long to wait for quiet. An agent with a spinner is never quiet: after this the
/// checkpoint goes on, its spinner's bytes measured by the idle window.
const QUIET_LIMIT: Duration = Duration::from_secs(4);

/// What a checkpoint does.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan {
    /// Letters typed (and erased); at most [`MAX_CHECKPOINT_KEYS`].
    pub(crate) keys: usize,
    /// The idle window before typing.
    pub(crate) idle: Duration,
    /// How long nothing must arrive for the terminal to be quiet (`[session]
    /// checkpoint_quiet`).
    pub(crate) quiet: Duration,
}

/// The checkpoint after `turn`.
pub(crate) fn measure(
    terminal: &mut Terminal,
    family: Family,
    turn: u32,
    plan: Plan,
    timeout: Duration,
) -> Result<SessionCheckpoint, TurnError> {
    let waited = |waiting_for: &'static str| {
        move |source| TurnError::Wait {
            turn,
            timeout,
            waiting_for,
            source,
        }
    };
    wait_for_quiet(terminal, plan.quiet).map_err(waited("the terminal to fall quiet"))?;
    let cpu_before = family.cpu_seconds()?;
    let output_before = terminal.output_counts();
    let from = terminal.elapsed();
    terminal
        .settle(plan.idle)
        .map_err(waited("the checkpoint's idle window"))?;
    let cpu_after = family.cpu_seconds()?;
    let idle_output = terminal.output_counts().since(&output_before);
    let wall = (terminal.elapsed() - from).as_secs_f64();
    let idle_cpu_share = (wall > 0.0).then(|| ((cpu_after - cpu_before) / wall).max(0.0));
    let idle_rate = (wall > 0.0).then(|| idle_output.bytes as f64 / wall);

    let keys = plan.keys.clamp(1, MAX_CHECKPOINT_KEYS);
    let word = terminal.fresh_word(LEAD + keys, LEAD);
    let origin = terminal.spawned_at();
    let typing_before = terminal.output_counts();
    let typing_from = terminal.elapsed();
    terminal
        .type_paced(&word[..LEAD], PROMPT_KEY_GAP, &mut |_| {})
        .map_err(TurnError::Type)?;
    let lead = squash(&word[..LEAD]);
    terminal
        .wait_for_squashed(ECHO_TIMEOUT, &mut |s| s.contains(&lead))
        .map_err(waited("the echo of the checkpoint's first letters"))?;
    terminal.settle(KEY_GAP).map_err(TurnError::Type)?;
    let mut echoes = Vec::with_capacity(keys);
    for typed in LEAD..LEAD + keys {
        let next = Instant::now() + KEY_GAP;
        let sent = origin.elapsed().as_secs_f64();
        terminal
            .type_text(&word[typed..=typed])
            .map_err(TurnError::Type)?;
        let shown = squash(&word[..=typed]);
        let echoed = terminal
            .wait_for_squashed(ECHO_TIMEOUT, &mut |s| s.contains(&shown))
            .map_err(waited("the echo of a key typed at a checkpoint"))?;
        echoes.push((echoed.as_secs_f64() - sent).max(0.0));
        terminal
            .settle(next.saturating_duration_since(Instant::now()))
            .map_err(TurnError::Type)?;
    }
    terminal
        .press_keys(
            &vec![Key::Backspace; LEAD + keys],
            PROMPT_KEY_GAP,
            &mut |_| {},
        )
        .map_err(TurnError::Type)?;
    terminal
        .wait_for_squashed(ECHO_TIMEOUT, &mut |s| !s.contains(&word))
        .map_err(waited("the checkpoint's word to be erased"))?;
    // The word is gone at the first Backspace's echo: the others' (and the erase's last
    // redraw, perhaps in several writes) are read before counting.
    wait_for_quiet(terminal, plan.quiet).map_err(waited("the terminal to fall quiet"))?;
    let typing = terminal.output_counts().since(&typing_before);
    let typing_seconds = (terminal.elapsed() - typing_from).as_secs_f64();
    let snapshot = family.snapshot()?;
    Ok(SessionCheckpoint {
        turn,
        key_echo_seconds: echoes,
        bytes_per_key: bytes_per_key(typing.bytes, typing_seconds, idle_rate, 2 * (LEAD + keys)),
        rss_bytes: snapshot.total_rss_bytes(),
        pss_bytes: snapshot.total_pss_bytes(),
        idle_cpu_share,
        idle_bytes_per_second: idle_rate,
    })
}

/// Reads until nothing arrived for `quiet`, or [`QUIET_LIMIT`] passed (a spinner).
pub(super) fn wait_for_quiet(
    terminal: &mut Terminal,
    quiet: Duration,
) -> Result<(), bench_term::TermError> {
    match terminal.settle_quiet(quiet, QUIET_LIMIT) {
        Err(bench_term::TermError::Timeout { .. }) => Ok(()),
        other => other,
    }
}

/// Bytes written per key while typing, less what the agent writes anyway at that pace
/// (a spinner's frames are not the keys' cost).
fn bytes_per_key(bytes: u64, seconds: f64, idle_rate: Option<f64>, keys: usize) -> f64 {
    let background = idle_rate.unwrap_or(0.0) * seconds.max(0.0);
    ((bytes as f64 - background) / keys.max(1) as f64).max(0.0)
}

pub(crate) use crate::pipeline::program::terminal::terminal_output;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_agent_writes_anyway_is_not_the_keys_cost() {
        // 10 keys wrote 5000 bytes in 2 s while a spinner writes 500 bytes a second.
        assert_eq!(bytes_per_key(5000, 2.0, Some(500.0), 10), 400.0);
        assert_eq!(bytes_per_key(5000, 2.0, None, 10), 500.0);
        // A spinner busier than the keys leaves them costing nothing, not less.
        assert_eq!(bytes_per_key(100, 2.0, Some(500.0), 10), 0.0);
    }
}
