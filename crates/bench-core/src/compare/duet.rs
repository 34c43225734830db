//! What a comparison of duet pairs tests: the trials that shared a CPU, alone.
//!
//! `ab --schedule duet` runs both sides' trials at the same moment, confined to one CPU,
//! so both wait in the same run queue for whatever else the machine does: on a loaded
//! 2-core VM the pairs' log-ratio spread of `cold` fell from 0.22 (back to back) to 0.05
//! (docs/verdicts.md). A measure trial pairs its starts that way; a runtime, ui or
//! session trial pairs whole. The first trials (the memory trials, and trial 0) still
//! run alone, without the other side, and are slower or faster by the machine of their
//! moment: mixed into the pairs they would widen the test several times over, and a
//! trial alone and a trial sharing a CPU are not the same measurement. So for each phase
//! whose trials shared a CPU on both sides, that phase's timed metrics keep those trials
//! only.

use crate::metric::{Metric, Phase};
use crate::result::{Side, TrialRecord};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

/// The metrics a measure start records; the measure phase's memory comes from trials
/// whose starts ran alone, and stays.
const START_METRICS: [Metric; 6] = [
    Metric::Cold,
    Metric::Warm,
    Metric::ColdCpu,
    Metric::WarmCpu,
    Metric::ColdUnqueued,
    Metric::WarmUnqueued,
];

/// The phases whose trials a duet pairs.
const PAIRED_PHASES: [Phase; 4] = [Phase::Measure, Phase::Runtime, Phase::Ui, Phase::Session];

/// The trials of `phase` on `side` that shared a CPU with the other side's: a measure
/// trial whose starts all did, or a runtime, ui or session trial that did whole.
pub fn shared_cpu_trials(side: &Side, phase: Phase) -> BTreeSet<u32> {
    side.trials
        .iter()
        .filter(|record| record.phase == phase && shared(record))
        .map(|record| record.trial)
        .collect()
}

/// The phases of `side` whose trials shared a CPU with another build's: the phases
/// whose timed metrics [`shared_only`] cuts to those trials, so that their values are a
/// duet's, not a start alone's.
pub fn shared_phases(side: &Side) -> BTreeSet<Phase> {
    per_phase(|phase| shared_cpu_trials(side, phase))
        .into_keys()
        .collect()
}

/// Whether a trial ran with the other side's on one CPU.
fn shared(record: &TrialRecord) -> bool {
    if record.phase == Phase::Measure {
        !record.starts.is_empty() && record.starts.iter().all(|start| start.shared_cpu.is_some())
    } else {
        record.shared_cpu.is_some()
    }
}

/// Whether a metric's samples are what a duet pairs: a measure start's, or a time of a
/// runtime, ui or session trial. Memory is left whole: sharing a CPU changes how long
/// things take, not what a family holds.
pub fn paired(metric: Metric) -> bool {
    match metric.phase() {
        Phase::Measure => START_METRICS.contains(&metric),
        phase => PAIRED_PHASES.contains(&phase) && metric.unit() != crate::units::Unit::Bytes,
    }
}

/// Both sides with each paired phase's metrics cut to the trials that shared a CPU on
/// both, for the phases that have any; else both as they are.
pub fn shared_cpu_view<'a>(base: &'a Side, candidate: &'a Side) -> (Cow<'a, Side>, Cow<'a, Side>) {
    let shared = per_phase(|phase| {
        shared_cpu_trials(base, phase)
            .intersection(&shared_cpu_trials(candidate, phase))
            .copied()
            .collect()
    });
    if shared.is_empty() {
        return (Cow::Borrowed(base), Cow::Borrowed(candidate));
    }
    (
        Cow::Owned(paired_samples_of(base, &shared)),
        Cow::Owned(paired_samples_of(candidate, &shared)),
    )
}

/// For each paired metric of a phase whose trials shared a CPU on both sides, the base
/// side's values from the trials of that phase that ran alone (the memory trials and
/// trial 0): what the program does when it starts alone, which the pairs, slower by
/// their shared CPU, cannot say. A comparison shows the program's own numbers from them
/// (docs/verdicts.md, "The program's own numbers").
pub fn alone_base_values(base: &Side, candidate: &Side) -> BTreeMap<Metric, Vec<f64>> {
    let shared = per_phase(|phase| {
        shared_cpu_trials(base, phase)
            .intersection(&shared_cpu_trials(candidate, phase))
            .copied()
            .collect()
    });
    base.metrics
        .iter()
        .filter(|(metric, _)| paired(**metric))
        .filter_map(|(metric, samples)| {
            let shared = shared.get(&metric.phase())?;
            let mut alone: Vec<(u32, f64)> = samples
                .iter()
                .filter(|sample| !shared.contains(&sample.trial))
                .filter_map(|sample| Some((sample.trial, sample.value?)))
                .collect();
            alone.sort_by_key(|&(trial, _)| trial);
            let values: Vec<f64> = alone.into_iter().map(|(_, value)| value).collect();
            (!values.is_empty()).then_some((*metric, values))
        })
        .collect()
}

/// `side` with each paired phase's metrics cut to its own trials that shared a CPU, for
/// the phases that have any; else `side` as it is. What the history keeps of one side of
/// a duet: the shared trials, which another build's record of the same run pairs trial
/// by trial, and never the trials that ran alone beside them, so one metric of one run
/// is one kind of measurement.
pub fn shared_only(side: &Side) -> Cow<'_, Side> {
    let shared = per_phase(|phase| shared_cpu_trials(side, phase));
    if shared.is_empty() {
        return Cow::Borrowed(side);
    }
    Cow::Owned(paired_samples_of(side, &shared))
}

/// The trials `trials` names for each paired phase, the phases with none left out.
fn per_phase(trials: impl Fn(Phase) -> BTreeSet<u32>) -> BTreeMap<Phase, BTreeSet<u32>> {
    PAIRED_PHASES
        .into_iter()
        .map(|phase| (phase, trials(phase)))
        .filter(|(_, trials)| !trials.is_empty())
        .collect()
}

/// A copy of `side` whose paired metrics keep the samples of the trials `shared` names
/// for their phase (all of them in a phase it does not name).
fn paired_samples_of(side: &Side, shared: &BTreeMap<Phase, BTreeSet<u32>>) -> Side {
    let mut side = side.clone();
    for (metric, samples) in side.metrics.iter_mut() {
        if paired(*metric) {
            let kept = shared.get(&metric.phase());
            samples.retain(|sample| kept.is_none_or(|trials| trials.contains(&sample.trial)));
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
    fn the_base_values_alone_are_its_trials_that_did_not_share_a_cpu() {
        let (base, head) = (side("b", 3), side("h", 4));
        let alone = alone_base_values(&base, &head);
        // Trials 4 and 5 shared a CPU on both sides; base's trial 3 did not on head's.
        assert_eq!(alone[&Metric::Cold], vec![0.1, 1.1, 2.1, 3.1]);
        assert!(!alone.contains_key(&Metric::Rss), "memory is not a duet's");
        let lone = side_alone();
        assert!(alone_base_values(&lone, &lone).is_empty());
    }

    #[test]
    fn shared_only_keeps_the_shared_starts_and_all_memory() {
        let side = side("b", 4);
        let shared = shared_only(&side);
        let trials: Vec<u32> = shared.metrics[&Metric::Cold]
            .iter()
            .map(|s| s.trial)
            .collect();
        assert_eq!(trials, vec![4, 5]);
        assert_eq!(shared.metrics[&Metric::Rss].len(), 6);
        let alone = side_alone();
        assert!(matches!(shared_only(&alone), Cow::Borrowed(_)));
    }

    /// A side whose starts all ran alone (not a duet).
    fn side_alone() -> Side {
        side("a", 99)
    }

    /// A side whose runtime trials from `shared_from` on ran as a duet.
    fn runtime_side(sha: &str, shared_from: u32) -> Side {
        let mut side = Side::new(sha);
        for trial in 0..5 {
            record(&mut side, Metric::KernelExec, trial, Sample::Value(0.01));
            record(&mut side, Metric::KernelRss, trial, Sample::Value(1e6));
            side.trial_record_mut(Phase::Runtime, trial).shared_cpu =
                (trial >= shared_from).then_some(0);
        }
        side
    }

    #[test]
    fn a_runtime_duet_keeps_its_shared_trials_times_and_all_its_memory() {
        let (base, head) = (runtime_side("b", 1), runtime_side("h", 2));
        let (base, head) = shared_cpu_view(&base, &head);
        let trials = |side: &Side, metric| -> Vec<u32> {
            side.metrics[&metric].iter().map(|s| s.trial).collect()
        };
        assert_eq!(trials(&base, Metric::KernelExec), vec![2, 3, 4]);
        assert_eq!(trials(&head, Metric::KernelExec), vec![2, 3, 4]);
        assert_eq!(trials(&base, Metric::KernelRss).len(), 5);
        let lone = runtime_side("b", 1);
        let shared = shared_only(&lone);
        assert_eq!(
            shared.metrics[&Metric::KernelExec]
                .iter()
                .map(|s| s.trial)
                .collect::<Vec<_>>(),
            vec![1, 2, 3, 4]
        );
        assert_eq!(shared.metrics[&Metric::KernelRss].len(), 5);
    }

    #[test]
    fn a_measure_duet_leaves_the_runtime_trials_that_ran_alone_whole() {
        let mut base = side("b", 3);
        let mut head = side("h", 3);
        for side in [&mut base, &mut head] {
            for trial in 0..4 {
                record(side, Metric::KernelExec, trial, Sample::Value(0.01));
            }
        }
        let (base, _) = shared_cpu_view(&base, &head);
        assert_eq!(base.metrics[&Metric::KernelExec].len(), 4);
        assert_eq!(base.metrics[&Metric::Cold].len(), 3);
    }

    #[test]
    fn sides_without_shared_starts_are_left_as_they_are() {
        let (base, head) = (side("b", 3), side("h", 99));
        let (base, head) = shared_cpu_view(&base, &head);
        assert!(matches!(base, Cow::Borrowed(_)) && matches!(head, Cow::Borrowed(_)));
    }
}
