//! The circumstances of each side a reader judges a comparison by: the processes each
//! phase counted, hosts, load, time span and versions.

use crate::metric::Phase;
use crate::result::Side;
use std::collections::{BTreeMap, BTreeSet};

/// How many processes of the target one phase's trials found on each side.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ProcessCounts {
    /// The phase whose memory measurements counted them.
    pub phase: Phase,
    /// The distinct counts of the base side's trials, ascending.
    pub base: Vec<u32>,
    /// The distinct counts of the candidate side's trials, ascending.
    pub candidate: Vec<u32>,
}

impl ProcessCounts {
    /// Whether the count differs between the sides, or between trials of one side:
    /// a process (often a daemon) came or went, and memory totals moved with it.
    pub fn changed(&self) -> bool {
        let both = !self.base.is_empty() && !self.candidate.is_empty();
        (both && self.base != self.candidate) || self.base.len() > 1 || self.candidate.len() > 1
    }
}

/// The runtime facts shown next to a comparison, in this order, when recorded.
pub const ENVIRONMENT_FACTS: [&str; 10] = [
    "package",
    "version",
    "installed",
    "node",
    "npm",
    "python",
    "kernel",
    "machine",
    "cpu",
    "cores",
];

/// The circumstances of one side's measurements, for a reader to judge the
/// comparison by: hosts, load, time span and versions. Facts a result does not
/// record are empty.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct SideFacts {
    /// The distinct hosts of the side's trials, in name order.
    pub hosts: Vec<String>,
    /// The lowest and highest 1-minute load average at the start of a trial.
    pub load_average_1m: Option<(f64, f64)>,
    /// When the first and the last trial started, milliseconds since the Unix epoch.
    pub started_unix_ms: Option<(u64, u64)>,
    /// How many trials (of any phase) recorded when they started.
    pub timed_trials: usize,
    /// The side's [`ENVIRONMENT_FACTS`] that were recorded, in that order.
    pub environment: Vec<(String, String)>,
    /// The busiest trial start when the host's load was above its cores
    /// ([`crate::busy::busy_host`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub busy: Option<crate::busy::BusyHost>,
}

impl SideFacts {
    /// The facts of `side`.
    pub fn of(side: &Side) -> SideFacts {
        let hosts: BTreeSet<&str> = side
            .trials
            .iter()
            .filter_map(|record| record.host.as_deref())
            .collect();
        let range_of = |values: Vec<f64>| {
            let low = values.iter().copied().reduce(f64::min)?;
            let high = values.iter().copied().reduce(f64::max)?;
            Some((low, high))
        };
        let loads = side
            .trials
            .iter()
            .filter_map(|record| Some(record.load_average?[0]))
            .collect();
        let starts: Vec<u64> = side
            .trials
            .iter()
            .filter_map(|record| record.started_unix_ms)
            .collect();
        let started_unix_ms = starts
            .iter()
            .min()
            .zip(starts.iter().max())
            .map(|(&first, &last)| (first, last));
        SideFacts {
            hosts: hosts.into_iter().map(str::to_string).collect(),
            load_average_1m: range_of(loads),
            started_unix_ms,
            timed_trials: starts.len(),
            environment: ENVIRONMENT_FACTS
                .iter()
                .filter_map(|&key| Some((key.to_string(), side.runtime.get(key)?.clone())))
                .collect(),
            busy: crate::busy::busy_host(side),
        }
    }
}

/// The distinct process counts of each phase of `side`, from its trial records.
/// A result without any falls back to the size of its last process breakdown,
/// which the measure phase records.
fn process_counts_of(side: &Side) -> BTreeMap<Phase, BTreeSet<u32>> {
    let mut counts: BTreeMap<Phase, BTreeSet<u32>> = BTreeMap::new();
    for record in &side.trials {
        if let Some(count) = record.process_count {
            counts.entry(record.phase).or_default().insert(count);
        }
    }
    if counts.is_empty() && !side.processes.is_empty() {
        let count = u32::try_from(side.processes.len()).unwrap_or(u32::MAX);
        counts.entry(Phase::Measure).or_default().insert(count);
    }
    counts
}

pub(super) fn process_counts(base: &Side, candidate: &Side) -> Vec<ProcessCounts> {
    let base = process_counts_of(base);
    let candidate = process_counts_of(candidate);
    let phases: BTreeSet<Phase> = base.keys().chain(candidate.keys()).copied().collect();
    let listed = |counts: &BTreeMap<Phase, BTreeSet<u32>>, phase| {
        counts
            .get(&phase)
            .map_or_else(Vec::new, |set| set.iter().copied().collect())
    };
    phases
        .into_iter()
        .map(|phase| ProcessCounts {
            phase,
            base: listed(&base, phase),
            candidate: listed(&candidate, phase),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::compare::*;
    use crate::metric::{Metric, Phase};
    use crate::result::Side;
    use crate::test_support::side;

    #[test]
    fn a_change_in_the_number_of_processes_is_flagged() {
        use crate::result::TrialRecord;
        let mut base = side("b", &[(Metric::Rss, &[100.0, 100.0])]);
        let mut candidate = side("c", &[(Metric::Rss, &[100.0, 100.0])]);
        for trial in 0..2 {
            base.trial_record_mut(Phase::Measure, trial).process_count = Some(2);
            candidate
                .trial_record_mut(Phase::Measure, trial)
                .process_count = Some(2);
        }
        let same = compare(&base, &candidate, &CompareOptions::default());
        assert_eq!(same.process_counts.len(), 1);
        assert_eq!(same.process_count_changes().count(), 0);
        // A daemon appears in the candidate's second trial.
        candidate.trial_record_mut(Phase::Measure, 1).process_count = Some(3);
        let changed = compare(&base, &candidate, &CompareOptions::default());
        let flagged: Vec<_> = changed.process_count_changes().collect();
        assert_eq!(
            flagged,
            [&ProcessCounts {
                phase: Phase::Measure,
                base: vec![2],
                candidate: vec![2, 3],
            }]
        );
        // Results without trial records compare their last process breakdowns.
        let process = |pid| crate::result::ProcessMemory {
            pid,
            ppid: None,
            name: "agent".into(),
            rss: 1,
            pss: None,
            uss: None,
            swap: None,
            cpu_seconds: None,
            threads: None,
            cmdline: None,
            role: None,
        };
        let mut old_base = Side::new("b");
        old_base.processes = vec![process(1)];
        let mut old_candidate = Side::new("c");
        old_candidate.processes = vec![process(1), process(2)];
        let old = compare(&old_base, &old_candidate, &CompareOptions::default());
        assert_eq!(old.process_count_changes().count(), 1);
        assert_eq!(TrialRecord::new(Phase::Ui, 0).process_count, None);
    }

    #[test]
    fn side_facts_gather_hosts_load_and_versions() {
        let mut side = side("b", &[(Metric::Cold, &[1.0])]);
        side.runtime.insert("node".into(), "v22.11.0".into());
        side.runtime
            .insert("home_before_install_bytes".into(), "5".into());
        side.runtime.insert("version".into(), "0.63.1".into());
        for (trial, load, host) in [(0, 0.5, "a"), (1, 2.25, "b"), (2, 1.0, "a")] {
            let record = side.trial_record_mut(Phase::Measure, trial);
            record.load_average = Some([load, 0.0, 0.0]);
            record.host = Some(host.into());
            record.started_unix_ms = Some(1000 + u64::from(trial));
        }
        let facts = SideFacts::of(&side);
        assert_eq!(facts.hosts, ["a", "b"]);
        assert_eq!(facts.load_average_1m, Some((0.5, 2.25)));
        assert_eq!(facts.started_unix_ms, Some((1000, 1002)));
        assert_eq!(facts.timed_trials, 3);
        assert_eq!(
            facts.environment,
            [
                ("version".to_string(), "0.63.1".to_string()),
                ("node".to_string(), "v22.11.0".to_string())
            ]
        );
        assert_eq!(SideFacts::of(&Side::new("x")), SideFacts::default());
    }
}
