//! `[session] pastes`: after the last turn, each size in turn is pasted into the idle
//! prompt as one bracketed paste (`ESC [200~ ... ESC [201~`, as a terminal pastes the
//! clipboard), and measured until the agent shows it took it; then the input is emptied
//! with `[session] paste_clear` before the next: the input is empty again when the
//! paste's last line is gone from the screen, or, for a paste that was folded, every line
//! it changed.
//!
//! Accepted means the paste's last line, a word on no earlier screen, is on the screen;
//! or, for an agent that folds a large paste into a placeholder (`[Pasted text #1 +6000
//! lines]`) and never shows that line, that the screen differs from the one before the
//! paste and then stayed the same for a second: the time is its last change's, not the
//! second's end. Redraws of an unchanged screen are no change, so an agent that repaints
//! while it reads and then works on the paste in silence is not taken to have shown it.
//! What the agent wrote and the family's CPU time are counted over the same time.

use super::checkpoint::{terminal_output, wait_for_quiet};
use crate::pipeline::program::TargetError;
use crate::pipeline::program::family::Family;
use crate::pipeline::program::turn::squash;
use bench_core::detail::SessionPaste;
use bench_core::{Metric, Sample, Side, record};
use bench_term::{Accepted, Terminal};
use std::time::{Duration, Instant};

/// Quiet this long after output that followed a paste means the agent is done with it.
const QUIET: Duration = Duration::from_secs(1);
/// A line of the pasted text: source code, as people paste it (72 bytes with its newline).
const LINE: &str = "    let total = items.iter().map(|item| item.price * item.count).sum();\n";

/// One paste could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum PasteError {
    /// The terminal failed or a wait ran out.
    #[error("paste {number} ({bytes} bytes, {timeout:?} turn_timeout): {waiting_for}")]
    Wait {
        /// The paste, from 1.
        number: usize,
        /// Its size.
        bytes: u64,
        /// Its time bound.
        timeout: Duration,
        /// "waiting for the agent to show the paste".
        waiting_for: &'static str,
        /// The terminal's error (its screen when it gave up).
        #[source]
        source: bench_term::TermError,
    },
    /// The clear did not take a folded paste off the screen: these of the lines the
    /// paste changed were still on it when the wait ran out.
    #[error(
        "paste {number} ({bytes} bytes, {timeout:?} turn_timeout): the paste to leave the input \
         (still shown, squashed: {})",
        stayed.join(" | ")
    )]
    Stayed {
        /// The paste, from 1.
        number: usize,
        /// Its size.
        bytes: u64,
        /// Its time bound.
        timeout: Duration,
        /// The changed lines still on the last screen, squashed of their whitespace
        /// (a boxed slice: the error stays no larger than [`PasteError::Wait`]).
        stayed: Box<[String]>,
        /// The terminal's error (its screen when it gave up).
        #[source]
        source: bench_term::TermError,
    },
    /// The family's CPU time could not be read.
    #[error(transparent)]
    Family(#[from] TargetError),
}

/// `bytes` of pasted text whose last line is `marker`: lines of [`LINE`], the last one
/// cut to fit.
pub(crate) fn text(bytes: usize, marker: &str) -> String {
    let body = bytes.saturating_sub(marker.len() + 1);
    let mut text = LINE.repeat(body / LINE.len() + 1);
    text.truncate(body);
    text.push('\n');
    text.push_str(marker);
    text
}

/// Pastes each of `sizes` in turn into the idle prompt.
pub(crate) fn measure(
    terminal: &mut Terminal,
    family: Family,
    sizes: &[u64],
    clear: &str,
    timeout: Duration,
) -> Result<Vec<SessionPaste>, PasteError> {
    let mut pastes = Vec::with_capacity(sizes.len());
    for (index, &bytes) in sizes.iter().enumerate() {
        let waited = |waiting_for: &'static str| {
            move |source| PasteError::Wait {
                number: index + 1,
                bytes,
                timeout,
                waiting_for,
                source,
            }
        };
        wait_for_quiet(terminal, QUIET).map_err(waited("the terminal to fall quiet"))?;
        let marker = terminal.fresh_word(10, 4);
        let pasted = text(usize::try_from(bytes).unwrap_or(usize::MAX), &marker);
        let deadline = Instant::now() + timeout;
        let before = terminal.screen_text();
        let cpu_before = family.cpu_seconds()?;
        let output_before = terminal.output_counts();
        let start = terminal.elapsed();
        terminal
            .paste(&pasted, timeout)
            .map_err(waited("the agent to read the paste"))?;
        let accepted = terminal
            .wait_accepted(
                &mut |s| squash(s).contains(&marker),
                &before,
                QUIET,
                deadline.saturating_duration_since(Instant::now()),
            )
            .map_err(waited("the agent to show the paste"))?;
        let cpu_after = family.cpu_seconds()?;
        let output = terminal.output_counts().since(&output_before);
        pastes.push(SessionPaste {
            bytes,
            accept_seconds: accepted.at().saturating_sub(start).as_secs_f64(),
            shown: matches!(accepted, Accepted::Shown(_)),
            cpu_seconds: (cpu_after - cpu_before).max(0.0),
            output: terminal_output(&output),
        });
        // A folded paste's last line was never on the screen: waiting for it to leave
        // passed at once, and an input the clear left full went unnoticed into the next
        // paste. What leaves instead is every line the paste changed (the placeholder).
        let changed = match accepted {
            Accepted::Shown(_) => Vec::new(),
            Accepted::Quiet(_) => changed_lines(&before, &terminal.screen_text()),
        };
        terminal
            .type_text(clear)
            .map_err(waited("emptying the input"))?;
        let left = terminal.wait_for_squashed(
            deadline.saturating_duration_since(Instant::now()),
            &mut |s| !s.contains(&marker) && !changed.iter().any(|line| s.contains(line)),
        );
        if let Err(source) = left {
            let screen = squash(&terminal.screen_text());
            let stayed: Box<[String]> = changed
                .into_iter()
                .filter(|line| screen.contains(line.as_str()))
                .collect();
            return Err(if stayed.is_empty() {
                waited("the paste to leave the input")(source)
            } else {
                PasteError::Stayed {
                    number: index + 1,
                    bytes,
                    timeout,
                    stayed,
                    source,
                }
            });
        }
    }
    Ok(pastes)
}

/// A changed line shorter than this, squashed, is no trace of a paste: a counter or a
/// clock that ticked meanwhile, or a letter that turns up anywhere on a screen.
const MIN_TRACE_CHARS: usize = 8;

/// The lines of `after` that `before` does not show, squashed, at least
/// [`MIN_TRACE_CHARS`] long: what a paste folded into a placeholder put on the screen.
/// A line whose text only moved is no change, nor is one that `before` shows anywhere,
/// as part of a longer line: the wait for the traces to leave searches the whole
/// squashed screen, where such a line is found again once the input is empty (codex
/// drops its footer's "? for shortcuts" while its input holds a paste, and the rest of
/// the footer is then a changed line that never leaves).
fn changed_lines(before: &str, after: &str) -> Vec<String> {
    let shown = squash(before);
    after
        .lines()
        .map(squash)
        .filter(|line| line.chars().count() >= MIN_TRACE_CHARS && !shown.contains(line.as_str()))
        .collect()
}

/// Keeps the pastes in `pastes` and records the largest one's metrics (the last of the
/// largest), or why there are none.
pub(crate) fn record_metrics(
    side: &mut Side,
    trial: u32,
    kept: &mut Vec<SessionPaste>,
    measured: Result<Vec<SessionPaste>, String>,
) {
    let samples: [(Metric, Sample); 3] = match measured {
        Ok(pastes) => {
            *kept = pastes;
            match kept.iter().max_by_key(|p| p.bytes) {
                Some(largest) => [
                    (Metric::PasteAccept, Sample::Value(largest.accept_seconds)),
                    (Metric::PasteCpu, Sample::Value(largest.cpu_seconds)),
                    (
                        Metric::PasteOutput,
                        Sample::Value(largest.output.bytes as f64),
                    ),
                ],
                None => return,
            }
        }
        Err(why) => [
            (Metric::PasteAccept, Sample::Error(why.clone())),
            (Metric::PasteCpu, Sample::Error(why.clone())),
            (Metric::PasteOutput, Sample::Error(why)),
        ],
    };
    for (metric, sample) in samples {
        record(side, metric, trial, sample);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::detail::TerminalOutput;

    #[test]
    fn pasted_text_has_the_size_asked_for_and_ends_with_its_marker() {
        for bytes in [1, 20, 72, 10 * 1024, 500 * 1024] {
            let pasted = text(bytes, "zqxwvkjh");
            assert_eq!(pasted.len(), bytes.max(9), "{bytes}");
            assert!(pasted.ends_with("\nzqxwvkjh"));
            // Only the last line holds the marker.
            assert_eq!(squash(&pasted).matches("zqxwvkjh").count(), 1);
        }
    }

    #[test]
    fn a_folded_paste_leaves_when_every_line_it_changed_has() {
        let before = "history\n\n> \n-- ready 12:00:01";
        let folded = "history\n\n> [Pasted text #1 +711 lines]\n-- ready 12:00:02";
        assert_eq!(
            changed_lines(before, folded),
            [">[Pastedtext#1+711lines]", "--ready12:00:02"]
        );
        // (A clock that ticked is a changed line too; it leaves with the next tick.)
        // A line that only moved is no change; nor is a short or blank one.
        assert!(changed_lines("abcdefgh\nb", "b\n\n  abcd efgh  \n7").is_empty());
    }

    #[test]
    fn a_line_the_empty_input_shows_within_a_longer_one_is_no_trace() {
        // codex 0.171.0 (checked by hand in tmux): the footer loses its left half while
        // the input holds a paste, and gets it back when Ctrl-C empties the input.
        let before = "› Ask Codex to do anything\n\n  \
            ← for agents · ? for shortcuts      ⚠ 2 warnings · f2 to view";
        let folded = "› [Pasted Content 10240 chars]\n\n  \
                                            ⚠ 2 warnings · f2 to view";
        assert_eq!(
            changed_lines(before, folded),
            ["›[PastedContent10240chars]"]
        );
    }

    fn paste(bytes: u64, accept_seconds: f64) -> SessionPaste {
        SessionPaste {
            bytes,
            accept_seconds,
            shown: true,
            cpu_seconds: 0.1,
            output: TerminalOutput::default(),
        }
    }

    #[test]
    fn the_metrics_are_the_largest_pastes() {
        let mut side = Side::new("a");
        let mut kept = Vec::new();
        let pastes = vec![paste(10, 0.1), paste(500, 0.7), paste(100, 0.3)];
        record_metrics(&mut side, 0, &mut kept, Ok(pastes));
        assert_eq!(kept.len(), 3);
        assert_eq!(side.metrics[&Metric::PasteAccept][0].value, Some(0.7));
        record_metrics(&mut side, 1, &mut kept, Err("turn 2 failed".into()));
        assert_eq!(
            side.metrics[&Metric::PasteCpu][1].error.as_deref(),
            Some("turn 2 failed")
        );
    }
}
