//! Merging result files of the same target and build, measured in several places (the
//! shards of `--shard K/N` on CI runners or Kubernetes pods): what `clibench merge` does.
//!
//! Results merge only when they describe the same thing: the same sha, target, role and
//! overrides, and (when both recorded them) the same release artifacts byte for byte.
//! Trials are renumbered per phase in the order of the files, so shard 2's trial 1 cannot
//! collide with shard 1's; every trial keeps its record, host included, and
//! `hosts` lists the machines so a report can say when they differ.

use bench_core::{LoadError, Metric, Phase, ResultFile, Side};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Loads what `clibench merge` is given: result files, or run folders holding
/// `result.json`.
pub fn load_inputs(inputs: &[PathBuf]) -> Result<Vec<ResultFile>, LoadError> {
    let path = |input: &Path| {
        if input.is_dir() {
            input.join("result.json")
        } else {
            input.to_path_buf()
        }
    };
    inputs
        .iter()
        .map(|input| ResultFile::load(&path(input)))
        .collect()
}

/// Why result files cannot be merged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    /// Nothing to merge.
    #[error("no result files to merge")]
    Empty,
    /// Two results of different builds, targets or settings.
    #[error(
        "result {index} is not the same build as result 0: {what} differs ({first:?} vs {other:?}); \
         only results of the same target, build and overrides can be merged"
    )]
    Different {
        /// 0-based position of the result that differs.
        index: usize,
        /// What differs (`sha`, `target`, `artifact demo.tar.gz`).
        what: String,
        /// Result 0's value.
        first: String,
        /// The other's value.
        other: String,
    },
    /// More trials than a result file holds.
    #[error(
        "the merged {phase} phase would have {count} trials, more than the {max} a result holds"
    )]
    TooManyTrials {
        /// The phase.
        phase: Phase,
        /// Its trial count after merging.
        count: usize,
        /// The limit.
        max: u32,
    },
}

/// The request keys that must agree for results to merge.
const SAME_CONFIG: [&str; 2] = ["target", "overrides"];

/// Merges `results` into one: the first's request, every trial of every result
/// renumbered per phase, the union of runtime facts and timings (the first result's value
/// wins where they disagree), the first's process breakdown.
pub fn merge(results: &[ResultFile]) -> Result<ResultFile, MergeError> {
    let Some(first) = results.first() else {
        return Err(MergeError::Empty);
    };
    for (index, other) in results.iter().enumerate().skip(1) {
        check_same(first, other, index)?;
    }
    // (result index, phase, old trial) -> new trial, numbered in the order of the files.
    let mut renumber: BTreeMap<(usize, Phase, u32), u32> = BTreeMap::new();
    for phase in Phase::ALL {
        let mut next = 0u32;
        for (index, result) in results.iter().enumerate() {
            for trial in trials_of(&result.side, phase) {
                renumber.insert((index, phase, trial), next);
                next += 1;
            }
        }
        if next > bench_core::MAX_TRIAL + 1 {
            return Err(MergeError::TooManyTrials {
                phase,
                count: next as usize,
                max: bench_core::MAX_TRIAL + 1,
            });
        }
    }
    let mut merged = ResultFile::new(first.request.clone());
    // Shards measured in separate invocations share no offset: the merged result was not
    // measured side by side with anything, so it keeps no invocation of its own.
    if results
        .iter()
        .any(|result| result.request.invocation_id != first.request.invocation_id)
    {
        merged.request.invocation_id = None;
    }
    let side = &mut merged.side;
    side.sha = first.side.sha.clone();
    side.processes = first.side.processes.clone();
    side.error = results.iter().find_map(|result| result.side.error.clone());
    for (index, result) in results.iter().enumerate() {
        let new = |phase: Phase, trial: u32| renumber[&(index, phase, trial)];
        for (&metric, samples) in &result.side.metrics {
            let into = side.metrics.entry(metric).or_default();
            for sample in samples {
                let mut sample = sample.clone();
                sample.trial = new(metric.phase(), sample.trial);
                into.push(sample);
            }
        }
        for record in &result.side.trials {
            let mut record = record.clone();
            record.trial = new(record.phase, record.trial);
            side.trials.push(record);
        }
        for (key, value) in &result.side.runtime {
            side.runtime
                .entry(key.clone())
                .or_insert_with(|| value.clone());
        }
        for (key, value) in &result.side.artifacts {
            side.artifacts.entry(key.clone()).or_insert(*value);
        }
        for (key, value) in &result.side.timings {
            side.timings.entry(key.clone()).or_insert(*value);
        }
    }
    for samples in side.metrics.values_mut() {
        samples.sort_by_key(|sample| sample.trial);
    }
    side.trials
        .sort_by_key(|record| (record.phase, record.trial));
    merged
        .request
        .config
        .insert("merged_from".to_owned(), results.len().to_string());
    Ok(merged)
}

/// The line `clibench merge` tells when the merged trials ran on more than one host.
pub fn hosts_warning(side: &Side) -> Option<String> {
    let hosts = hosts(side);
    (hosts.len() > 1).then(|| {
        format!(
            "clibench merge: the trials ran on {} different hosts ({}); their numbers mix machines",
            hosts.len(),
            hosts.into_iter().collect::<Vec<_>>().join(", ")
        )
    })
}

/// The distinct hosts the trials of `side` ran on, sorted.
pub(crate) fn hosts(side: &Side) -> BTreeSet<String> {
    side.trials
        .iter()
        .filter_map(|record| record.host.clone())
        .collect()
}

/// A Markdown line for a report when the trials of `side` ran on more than one host:
/// their numbers then mix machines.
pub fn hosts_note(side: &Side) -> Option<String> {
    let hosts = hosts(side);
    (hosts.len() > 1).then(|| {
        let names: Vec<String> = hosts
            .iter()
            .map(|host| bench_core::export::markdown::code(host))
            .collect();
        format!(
            "**Heterogeneous hosts**: the trials ran on {} machines ({}); their numbers mix machines.\n",
            hosts.len(),
            names.join(", ")
        )
    })
}

/// The trial numbers `side` holds for `phase`, from its samples and its trial records.
fn trials_of(side: &Side, phase: Phase) -> BTreeSet<u32> {
    let from_metrics = side
        .metrics
        .iter()
        .filter(|(metric, _)| Metric::phase(**metric) == phase)
        .flat_map(|(_, samples)| samples.iter().map(|sample| sample.trial));
    let from_records = side
        .trials
        .iter()
        .filter(|record| record.phase == phase)
        .map(|record| record.trial);
    from_metrics.chain(from_records).collect()
}

fn check_same(first: &ResultFile, other: &ResultFile, index: usize) -> Result<(), MergeError> {
    let differ = |what: &str, a: &str, b: &str| {
        if a == b {
            Ok(())
        } else {
            Err(MergeError::Different {
                index,
                what: what.to_owned(),
                first: a.to_owned(),
                other: b.to_owned(),
            })
        }
    };
    differ("sha", &first.request.sha, &other.request.sha)?;
    differ("role", first.request.role.name(), other.request.role.name())?;
    for key in SAME_CONFIG {
        let value =
            |result: &ResultFile| result.request.config.get(key).cloned().unwrap_or_default();
        differ(key, &value(first), &value(other))?;
    }
    // The same build gives the same bytes: an artifact of another size is another build.
    for (name, size) in &first.side.artifacts {
        if let Some(other_size) = other.side.artifacts.get(name) {
            differ(
                &format!("artifact {name} (bytes)"),
                &size.to_string(),
                &other_size.to_string(),
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::{Request, Role, Sample, record};

    fn result(sha: &str, host: &str, cold: &[(u32, f64)]) -> ResultFile {
        let mut result = ResultFile::new(Request::new(sha, Role::Candidate));
        result
            .request
            .config
            .insert("target".into(), "demo-agent".into());
        for &(trial, value) in cold {
            record(&mut result.side, Metric::Cold, trial, Sample::Value(value));
            let record = result.side.trial_record_mut(Phase::Measure, trial);
            record.host = Some(host.to_owned());
        }
        record(&mut result.side, Metric::Install, 0, Sample::Value(3.0));
        result.side.artifacts.insert("demo.tar.gz".into(), 1000);
        result
    }

    #[test]
    fn shards_of_separate_invocations_merge_without_an_invocation() {
        let mut one = result("abc", "host-a", &[(0, 0.3)]);
        let mut two = result("abc", "host-b", &[(0, 0.4)]);
        one.request.invocation_id = Some("1111".into());
        two.request.invocation_id = Some("2222".into());
        assert_eq!(
            merge(&[one.clone(), two]).unwrap().request.invocation_id,
            None
        );
        let same = one.clone();
        assert_eq!(
            merge(&[one, same])
                .unwrap()
                .request
                .invocation_id
                .as_deref(),
            Some("1111")
        );
    }

    #[test]
    fn shards_merge_with_renumbered_trials_and_every_host() {
        let a = result("abc", "runner-1", &[(0, 0.40), (2, 0.42)]);
        let b = result("abc", "runner-2", &[(1, 0.41), (3, 0.43)]);
        let merged = merge(&[a, b]).unwrap();
        let cold = &merged.side.metrics[&Metric::Cold];
        let trials: Vec<(u32, f64)> = cold.iter().map(|s| (s.trial, s.value.unwrap())).collect();
        assert_eq!(trials, [(0, 0.40), (1, 0.42), (2, 0.41), (3, 0.43)]);
        // Each shard installed once: two installs.
        assert_eq!(merged.side.values(Metric::Install), [3.0, 3.0]);
        let hosts: Vec<String> = hosts(&merged.side).into_iter().collect();
        assert_eq!(hosts, ["runner-1", "runner-2"]);
        assert_eq!(
            hosts_note(&merged.side).unwrap(),
            "**Heterogeneous hosts**: the trials ran on 2 machines (`runner-1`, `runner-2`); \
             their numbers mix machines.\n"
        );
        assert_eq!(merged.side.trials.len(), 4);
        assert_eq!(merged.request.config["merged_from"], "2");
        merged.validate().unwrap();
    }

    #[test]
    fn results_of_different_builds_are_refused() {
        let a = result("abc", "h", &[(0, 0.4)]);
        let b = result("def", "h", &[(0, 0.4)]);
        let error = merge(&[a.clone(), b]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "result 1 is not the same build as result 0: sha differs (\"abc\" vs \"def\"); \
             only results of the same target, build and overrides can be merged"
        );
        let mut c = a.clone();
        c.side.artifacts.insert("demo.tar.gz".into(), 1001);
        let error = merge(&[a.clone(), c]).unwrap_err();
        assert!(
            error.to_string().contains("artifact demo.tar.gz"),
            "{error}"
        );
        let mut d = a.clone();
        d.request
            .config
            .insert("overrides".into(), "version=2".into());
        let error = merge(&[a, d]).unwrap_err();
        assert!(error.to_string().contains("overrides differs"), "{error}");
    }

    #[test]
    fn nothing_to_merge_is_an_error() {
        assert_eq!(merge(&[]).unwrap_err(), MergeError::Empty);
    }

    #[test]
    fn too_many_trials_are_refused() {
        let trials: Vec<(u32, f64)> = (0..60).map(|trial| (trial, 0.4)).collect();
        let a = result("abc", "h", &trials);
        let error = merge(&[a.clone(), a]).unwrap_err();
        assert!(matches!(
            error,
            MergeError::TooManyTrials { count: 120, .. }
        ));
    }
}
