//! From a dialect's pieces to the frames the endpoint writes, each with the time it is
//! due (from the start of the response): framing before the first token goes out at
//! once, tokens in chunks of `chunk_tokens` at the physics' times, framing after the
//! last token with the last chunk. Pure, so the schedule is tested without a socket.

use crate::dialect::Piece;
use crate::physics::{Physics, Rng};
use std::time::Duration;

/// Bytes written as one unit at a time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// What is written.
    pub bytes: Vec<u8>,
    /// When, from the start of the response.
    pub due: Duration,
    /// Tokens in it.
    pub tokens: u32,
}

/// The frames of a streamed answer. `cut_after` keeps only the frames up to that
/// many tokens (a cut fault: the closing events are never sent).
pub fn frames(
    pieces: Vec<Piece>,
    physics: &Physics,
    rng: &mut Rng,
    cut_after: Option<u32>,
) -> Vec<Frame> {
    let mut preamble = Vec::new();
    let mut groups: Vec<(Vec<u8>, u32)> = Vec::new();
    let mut current: (Vec<u8>, u32) = (Vec::new(), 0);
    let mut seen_tokens = false;
    for piece in pieces {
        if piece.tokens == 0 && !seen_tokens {
            preamble.extend(piece.bytes);
            continue;
        }
        seen_tokens |= piece.tokens > 0;
        current.0.extend(piece.bytes);
        current.1 += piece.tokens;
        if current.1 >= physics.chunk_tokens {
            groups.push(std::mem::take(&mut current));
        }
    }
    if !current.0.is_empty() {
        match groups.last_mut() {
            // Trailing framing (message_stop, [DONE]) goes out with the last tokens.
            Some(last) if current.1 == 0 => last.0.extend(current.0),
            _ => groups.push(current),
        }
    }
    let tokens: Vec<u32> = groups.iter().map(|(_, tokens)| *tokens).collect();
    let due = physics.schedule(&tokens, rng);
    let mut out = Vec::with_capacity(groups.len() + 1);
    if !preamble.is_empty() {
        out.push(Frame {
            bytes: preamble,
            due: Duration::ZERO,
            tokens: 0,
        });
    }
    let mut sent = 0u32;
    for ((bytes, tokens), due) in groups.into_iter().zip(due) {
        if let Some(limit) = cut_after
            && sent >= limit
        {
            break;
        }
        sent += tokens;
        out.push(Frame { bytes, due, tokens });
    }
    out
}

/// When a reply that is not streamed is sent: when its last chunk would have been.
pub fn whole_due(tokens: u64, physics: &Physics, rng: &mut Rng) -> Duration {
    let chunk = u64::from(physics.chunk_tokens);
    let mut groups = vec![physics.chunk_tokens; tokens.div_ceil(chunk).max(1) as usize];
    if let Some(last) = groups.last_mut() {
        let rest = tokens % chunk;
        if rest != 0 {
            *last = rest as u32;
        }
    }
    physics
        .schedule(&groups, rng)
        .last()
        .copied()
        .unwrap_or(physics.first_token.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::duration::Duration as SpecDuration;

    fn piece(text: &str, tokens: u32) -> Piece {
        Piece {
            bytes: text.as_bytes().to_vec(),
            tokens,
        }
    }

    fn physics(chunk_tokens: u32) -> Physics {
        Physics {
            first_token: SpecDuration::from_millis(100),
            tokens_per_second: 10.0,
            chunk_tokens,
            ..Physics::default()
        }
    }

    #[test]
    fn framing_goes_first_tokens_in_chunks_and_the_end_with_the_last() {
        let pieces = vec![
            piece("<start>", 0),
            piece("a", 1),
            piece("b", 1),
            piece("c", 1),
            piece("<end>", 0),
        ];
        let frames = frames(pieces, &physics(2), &mut Rng::new(0), None);
        let shown: Vec<(String, u128, u32)> = frames
            .iter()
            .map(|f| {
                (
                    String::from_utf8(f.bytes.clone()).unwrap(),
                    f.due.as_millis(),
                    f.tokens,
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                ("<start>".to_owned(), 0, 0),
                ("ab".to_owned(), 100, 2),
                ("c<end>".to_owned(), 200, 1)
            ]
        );
    }

    #[test]
    fn a_cut_keeps_the_frames_up_to_its_tokens_and_never_the_end() {
        let pieces = vec![
            piece("<s>", 0),
            piece("a", 1),
            piece("b", 1),
            piece("c", 1),
            piece("<e>", 0),
        ];
        let frames = frames(pieces, &physics(1), &mut Rng::new(0), Some(2));
        let text: String = frames
            .iter()
            .map(|f| String::from_utf8(f.bytes.clone()).unwrap())
            .collect();
        assert_eq!(text, "<s>ab");
    }

    #[test]
    fn a_whole_reply_is_due_when_its_last_chunk_would_be() {
        // 5 tokens in chunks of 2: at 100ms, +200ms, +100ms (the last chunk has one token).
        assert_eq!(
            whole_due(5, &physics(2), &mut Rng::new(0)),
            Duration::from_millis(400)
        );
        assert_eq!(
            whole_due(0, &physics(2), &mut Rng::new(0)),
            Duration::from_millis(100)
        );
    }
}
