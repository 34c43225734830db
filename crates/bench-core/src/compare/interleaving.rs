//! Whether the sides' trials were measured interleaved, told from their start times.

use crate::metric::Phase;
use crate::result::Side;
use std::collections::BTreeMap;

/// Whether the two sides' trials were measured interleaved, which keeps a change
/// of the machine's load or temperature off one side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Interleaving {
    /// Every phase with trials on both sides ran its trials at overlapping times
    /// (`clibench ab`).
    Interleaved,
    /// Some phase ran all of one side's trials before the other's (two `run`s, or
    /// `ab --sequential`).
    Separate,
    /// The results do not record when their trials started (older files); treated
    /// as separate.
    Unknown,
}

impl Interleaving {
    /// Tells from the trial records: for each phase where both sides timed at least
    /// two trials, whether the spans of their start times overlap.
    pub fn of(base: &Side, candidate: &Side) -> Interleaving {
        let spans = |side: &Side| {
            let mut spans: BTreeMap<Phase, (u64, u64, usize)> = BTreeMap::new();
            for record in &side.trials {
                if let Some(started) = record.started_unix_ms {
                    let span = spans.entry(record.phase).or_insert((started, started, 0));
                    *span = (span.0.min(started), span.1.max(started), span.2 + 1);
                }
            }
            spans
        };
        let (base, candidate) = (spans(base), spans(candidate));
        let mut compared = false;
        for (phase, &(base_first, base_last, base_count)) in &base {
            let Some(&(first, last, count)) = candidate.get(phase) else {
                continue;
            };
            if base_count < 2 || count < 2 {
                continue;
            }
            compared = true;
            if base_last < first || last < base_first {
                return Interleaving::Separate;
            }
        }
        if compared {
            Interleaving::Interleaved
        } else {
            Interleaving::Unknown
        }
    }

    /// `interleaved`, `separate` or `unknown`.
    pub fn name(self) -> &'static str {
        match self {
            Interleaving::Interleaved => "interleaved",
            Interleaving::Separate => "separate",
            Interleaving::Unknown => "unknown",
        }
    }
}
