//! What a comparison of duet pairs tests: the starts that shared a CPU, alone.
//!
//! `ab --schedule duet` starts both sides' programs at the same moment, confined to one
//! CPU, so both wait in the same run queue for whatever else the machine does: on a
//! loaded 2-core VM the pairs' log-ratio spread of `cold` fell from 0.22 (back to back)
//! to 0.05 (docs/verdicts.md). Its first trials (the memory trials, and trial 0) still
//! start alone, without the other side, and are slower or faster by the machine of
//! their moment: mixed into the pairs they would widen the test several times over, and
//! a start alone and a start sharing a CPU are not the same measurement. So when both
//! sides hold starts that shared a CPU, the start metrics keep those trials only.

use crate::metric::{Metric, Phase};
use crate::result::Side;
use std::borrow::Cow;
use std::collections::BTreeSet;

/// The metrics a measure start records.
const START_METRICS: [Metric; 4] = [Metric::Cold, Metric::Warm, Metric::ColdCpu, Metric::WarmCpu];

/// The measure trials of `side` whose starts all shared a CPU with the other side's.
pub fn shared_cpu_trials(side: &Side) -> BTreeSet<u32> {
    side.trials
        .iter()
        .filter(|record| record.phase == Phase::Measure && !record.starts.is_empty())
        .filter(|record| record.starts.iter().all(|start| start.shared_cpu.is_some()))
        .map(|record| record.trial)
        .collect()
}

/// Both sides with their start metrics cut to the trials whose starts shared a CPU on
/// both, when there are any; else both as they are.
pub fn shared_cpu_view<'a>(base: &'a Side, candidate: &'a Side) -> (Cow<'a, Side>, Cow<'a, Side>) {
    let shared: BTreeSet<u32> = shared_cpu_trials(base)
        .intersection(&shared_cpu_trials(candidate))
        .copied()
        .collect();
    if shared.is_empty() {
        return (Cow::Borrowed(base), Cow::Borrowed(candidate));
    }
    let keep = |trial: u32| shared.contains(&trial);
    (
        Cow::Owned(start_samples_of(base, keep)),
        Cow::Owned(start_samples_of(candidate, keep)),
    )
}

/// `side` without the start metrics' samples of starts that shared a CPU: what a start
/// costs alone, for a series of results (the history) in which a duet's slower starts
/// would read as a regression of the build.
pub fn alone_starts(side: &Side) -> Cow<'_, Side> {
    let shared = shared_cpu_trials(side);
    if shared.is_empty() {
        return Cow::Borrowed(side);
    }
    Cow::Owned(start_samples_of(side, |trial| !shared.contains(&trial)))
}

/// A copy of `side` whose start metrics keep the samples of the trials `keep` accepts.
fn start_samples_of(side: &Side, keep: impl Fn(u32) -> bool) -> Side {
    let mut side = side.clone();
    for metric in START_METRICS {
        if let Some(samples) = side.metrics.get_mut(&metric) {
            samples.retain(|sample| keep(sample.trial));
        }
    }
    side
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Sample, StartRecord, record};

    fn side(sha: &str, shared_from: u32) -> Side {
        let mut side = Side::new(sha);
        for trial in 0..6 {
            record(
                &mut side,
                Metric::Cold,
                trial,
                Sample::Value(0.1 + f64::from(trial)),
            );
            record(&mut side, Metric::Rss, trial, Sample::Value(1e6));
            for session in ["cold", "warm"] {
                side.trial_record_mut(Phase::Measure, trial)
                    .push_start(StartRecord {
                        session: session.to_owned(),
                        spawned_unix_us: 1,
                        shared_cpu: (trial >= shared_from).then_some(1),
                    });
            }
        }
        side
    }

    #[test]
    fn start_metrics_keep_the_trials_that_shared_a_cpu_on_both_sides() {
        let (base, head) = (side("b", 3), side("h", 4));
        let (base, head) = shared_cpu_view(&base, &head);
        let trials = |side: &Side, metric| -> Vec<u32> {
            side.metrics[&metric].iter().map(|s| s.trial).collect()
        };
        assert_eq!(trials(&base, Metric::Cold), vec![4, 5]);
        assert_eq!(trials(&head, Metric::Cold), vec![4, 5]);
        // Memory comes from the trials that started alone, and stays.
        assert_eq!(trials(&base, Metric::Rss).len(), 6);
    }

    #[test]
    fn alone_starts_drop_the_shared_ones_and_keep_memory() {
        let side = side("b", 4);
        let alone = alone_starts(&side);
        let trials: Vec<u32> = alone.metrics[&Metric::Cold]
            .iter()
            .map(|s| s.trial)
            .collect();
        assert_eq!(trials, vec![0, 1, 2, 3]);
        assert_eq!(alone.metrics[&Metric::Rss].len(), 6);
    }

    #[test]
    fn sides_without_shared_starts_are_left_as_they_are() {
        let (base, head) = (side("b", 3), side("h", 99));
        let (base, head) = shared_cpu_view(&base, &head);
        assert!(matches!(base, Cow::Borrowed(_)) && matches!(head, Cow::Borrowed(_)));
    }
}
