//! Streaming physics: when each chunk of an answer is due, and faults on demand.
//!
//! An answer is a preamble (sent with the headers, at 0), then chunks of
//! `chunk_tokens` tokens: the first at `first_token`, each next one
//! `chunk_tokens / tokens_per_second` later, that interval stretched or shrunk by up to
//! `jitter` (a fraction) with a [`Rng`] from the recorded seed. A reply that is not
//! streamed is sent whole when its last chunk would have been.

use bench_core::duration::Duration;
use serde::Deserialize;

/// How fast answers stream.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Physics {
    /// Time from the request to the first token (default 200ms).
    pub first_token: Duration,
    /// Tokens per second after the first (default 100).
    pub tokens_per_second: f64,
    /// Tokens per chunk (default 2).
    pub chunk_tokens: u32,
    /// Each interval between chunks varies by up to this fraction, 0 to 1 (default 0).
    pub jitter: f64,
    /// The seed of the jitter; when absent the endpoint picks one and records it in the
    /// journal, so a run can be replayed.
    pub seed: Option<u64>,
}

impl Default for Physics {
    fn default() -> Self {
        Physics {
            first_token: Duration::from_millis(200),
            tokens_per_second: 100.0,
            chunk_tokens: 2,
            jitter: 0.0,
            seed: None,
        }
    }
}

/// A turn's changes to the script's physics: each field given replaces the script's.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhysicsOverride {
    /// See [`Physics::first_token`].
    pub first_token: Option<Duration>,
    /// See [`Physics::tokens_per_second`].
    pub tokens_per_second: Option<f64>,
    /// See [`Physics::chunk_tokens`].
    pub chunk_tokens: Option<u32>,
    /// See [`Physics::jitter`].
    pub jitter: Option<f64>,
}

impl Physics {
    /// This physics with a turn's changes.
    pub fn patched(&self, patch: &PhysicsOverride) -> Physics {
        Physics {
            first_token: patch.first_token.unwrap_or(self.first_token),
            tokens_per_second: patch.tokens_per_second.unwrap_or(self.tokens_per_second),
            chunk_tokens: patch.chunk_tokens.unwrap_or(self.chunk_tokens),
            jitter: patch.jitter.unwrap_or(self.jitter),
            seed: self.seed,
        }
    }

    /// The field that is out of range and why.
    pub(super) fn check(&self) -> Result<(), (&'static str, String)> {
        if !(self.tokens_per_second.is_finite() && self.tokens_per_second > 0.0) {
            return Err(("tokens_per_second", "must be more than 0".to_owned()));
        }
        if self.tokens_per_second > 1e6 {
            return Err(("tokens_per_second", "must be at most 1000000".to_owned()));
        }
        if self.chunk_tokens == 0 {
            return Err(("chunk_tokens", "must be at least 1".to_owned()));
        }
        if !(0.0..=1.0).contains(&self.jitter) {
            return Err(("jitter", "must be between 0 and 1".to_owned()));
        }
        Ok(())
    }

    /// When each chunk is due, from the start of the response, given the tokens in
    /// each: the first at `first_token`, each next one its tokens' worth of time later
    /// (`tokens / tokens_per_second`), stretched by the jitter `rng` supplies.
    pub fn schedule(&self, chunk_tokens: &[u32], rng: &mut Rng) -> Vec<std::time::Duration> {
        let mut at = self.first_token.0.as_secs_f64();
        let mut due = Vec::with_capacity(chunk_tokens.len());
        for (index, tokens) in chunk_tokens.iter().enumerate() {
            if index > 0 {
                let stretch = 1.0 + self.jitter * (2.0 * rng.next_f64() - 1.0);
                at += f64::from(*tokens) / self.tokens_per_second * stretch;
            }
            due.push(std::time::Duration::from_secs_f64(at));
        }
        due
    }
}

/// What a fault does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// 429 with `Retry-After`, in the dialect's error shape.
    RateLimit,
    /// 500, in the dialect's error shape.
    ServerError,
    /// The stream stops mid-way and the connection closes without the closing events.
    Cut,
}

impl FaultKind {
    /// The name written in scripts and the journal.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::RateLimit => "rate_limit",
            FaultKind::ServerError => "server_error",
            FaultKind::Cut => "cut",
        }
    }
}

/// Which requests a fault hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultTarget {
    /// The request with this number (from 1).
    Request(u64),
    /// The requests that would play this turn (from 0).
    Turn(usize),
}

/// A checked fault.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    /// Which requests it hits.
    pub target: FaultTarget,
    /// What it does.
    pub kind: FaultKind,
    /// The `Retry-After` of a rate limit.
    pub retry_after: std::time::Duration,
    /// Tokens sent before a cut (`None`: half the reply).
    pub after_tokens: Option<u32>,
    /// How many requests it hits.
    pub times: u32,
}

/// The deterministic generator of the jitter: the same seed gives the same schedule on
/// every machine.
pub type Rng = bench_core::rng::SplitMix64;

/// A seed from the clock and the process id, for a script without one (then recorded).
pub fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos() as u64);
    Rng::new(nanos ^ u64::from(std::process::id()).rotate_left(32)).next_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_numbers() {
        let mut a = Rng::new(42);
        let mut b = Rng::new(42);
        let first: Vec<u64> = (0..5).map(|_| a.next_u64()).collect();
        assert_eq!(first, (0..5).map(|_| b.next_u64()).collect::<Vec<_>>());
        assert_ne!(
            first,
            (0..5).map(|_| Rng::new(43).next_u64()).collect::<Vec<_>>()
        );
        for _ in 0..1000 {
            let x = a.next_f64();
            assert!((0.0..1.0).contains(&x));
        }
    }

    #[test]
    fn chunks_follow_first_token_and_rate() {
        let physics = Physics {
            first_token: Duration::from_millis(100),
            tokens_per_second: 10.0,
            chunk_tokens: 2,
            ..Physics::default()
        };
        let due = physics.schedule(&[2, 2, 2], &mut Rng::new(1));
        let millis: Vec<u128> = due.iter().map(|d| d.as_millis()).collect();
        assert_eq!(millis, [100, 300, 500]);
    }

    #[test]
    fn jitter_varies_intervals_within_its_bound_and_is_replayable() {
        let physics = Physics {
            first_token: Duration::from_millis(0),
            tokens_per_second: 100.0,
            chunk_tokens: 1,
            jitter: 0.5,
            ..Physics::default()
        };
        let due = physics.schedule(&[1; 200], &mut Rng::new(9));
        assert_eq!(due, physics.schedule(&[1; 200], &mut Rng::new(9)));
        let intervals: Vec<f64> = due
            .windows(2)
            .map(|w| (w[1] - w[0]).as_secs_f64())
            .collect();
        assert!(
            intervals
                .iter()
                .all(|i| (0.005 - 1e-9..=0.015 + 1e-9).contains(i))
        );
        assert!(
            intervals.iter().any(|i| (i - 0.01).abs() > 0.001),
            "no jitter at all"
        );
    }
}
