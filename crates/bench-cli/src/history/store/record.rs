//! One stored result: the key (target, branch, revision, testbed), the load average
//! at its start, and every trial's value of every metric.

use bench_core::{Metric, Phase, ResultFile};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};

/// The longest text kept in a key field (target, branch, revision, CPU model, kernel),
/// in characters; longer text from a result or another store is refused.
pub const MAX_KEY_CHARS: usize = 255;
/// The most trials of one metric a record holds (trials are numbered 0 to 100).
pub const MAX_TRIALS: usize = bench_core::MAX_TRIAL as usize + 1;

/// The machine a result was measured on. Series are only ever compared within one
/// testbed: a change of CPU or kernel is not a change of the target.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct Testbed {
    /// The CPU model (`/proc/cpuinfo`), `unknown` when the result does not say.
    pub cpu: String,
    /// Online CPUs; 0 when the result does not say.
    pub cores: u32,
    /// Total memory in bytes (`MemTotal`); 0 when the result does not say.
    pub memory_bytes: u64,
    /// The kernel release, `unknown` when the result does not say.
    pub kernel: String,
}

impl Testbed {
    /// The facts `prepare` records in `side.runtime` (`cpu`, `cores`, `memory_bytes`,
    /// `kernel`); missing ones are `unknown` or 0, so old results still get a testbed.
    pub fn of(result: &ResultFile) -> Testbed {
        let fact = |key: &str| result.side.runtime.get(key).map(|v| v.trim().to_owned());
        Testbed {
            cpu: fact("cpu").unwrap_or_else(|| "unknown".to_owned()),
            cores: fact("cores").and_then(|v| v.parse().ok()).unwrap_or(0),
            memory_bytes: fact("memory_bytes")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
            kernel: fact("kernel").unwrap_or_else(|| "unknown".to_owned()),
        }
    }

    /// This machine as `prepare` would record it: the testbed of what it measures next.
    pub fn of_host(facts: &bench_proc::HostFacts) -> Testbed {
        Testbed {
            cpu: facts.cpu_model.trim().to_owned(),
            cores: facts.cores,
            memory_bytes: facts.memory_bytes,
            kernel: facts.kernel_release.trim().to_owned(),
        }
    }

    /// A short stable name: the first 12 hex digits of the SHA-256 of the facts.
    pub fn fingerprint(&self) -> String {
        let mut hash = Sha256::new();
        hash.update(
            format!(
                "{}\n{}\n{}\n{}",
                self.cpu, self.cores, self.memory_bytes, self.kernel
            )
            .as_bytes(),
        );
        hex(&hash.finalize())[..12].to_owned()
    }
}

/// What one result adds to the history.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Record {
    /// The spec's name (`request.config.target`), or what `--target` said.
    pub target: String,
    /// The branch the build belongs to (`main` unless told).
    pub branch: String,
    /// The build measured: `request.sha` (a commit, or `PACKAGE@VERSION`), followed by
    /// ` [OVERRIDES]` when the run overrode spec keys other than the ones that pick the
    /// build (`source.commit`, `version`), as an `ab` side's `measure.env.KNOB=1` does:
    /// such a side is another build of the same commit, never pooled with it.
    pub revision: String,
    /// The published version measured, when the spec named one (`side.runtime.version`).
    pub version: Option<String>,
    /// Where it was measured.
    pub testbed: Testbed,
    /// The 1-minute load average when the first trial started.
    pub load_average: Option<f64>,
    /// When the first trial started, milliseconds since the Unix epoch: the series' order.
    pub started_unix_ms: Option<u64>,
    /// The invocation (`clibench run` or `ab`) that measured it
    /// (`request.invocation_id`): records of one run were measured side by side, so
    /// their ratio is free of the offset each run has. `None`: unknown (a result or a
    /// store written before runs were recorded).
    pub run: Option<String>,
    /// The phases whose timed metrics hold a duet's values (trials that shared a CPU
    /// with another build's, `ab`'s default schedule): slower than a start alone, so a
    /// series never mixes them with values measured alone ([`Record::duet_values`]).
    /// Empty: every value was measured alone. `None`: unknown (a store before layout 3),
    /// taken as alone.
    pub duet_phases: Option<BTreeSet<Phase>>,
    /// Each metric's successful samples as (trial, value in the metric's base unit).
    pub samples: BTreeMap<Metric, Vec<(u32, f64)>>,
}

/// A result or a stored row that cannot become a [`Record`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// The result names no target and none was given.
    #[error("the result names no target (request.config.target); give one with --target")]
    NoTarget,
    /// A key field is empty, too long or holds control characters.
    #[error("{field} must be 1 to {MAX_KEY_CHARS} characters without control characters")]
    BadText {
        /// Which field.
        field: &'static str,
    },
    /// A value is not finite and non-negative, or a trial is out of range or repeated.
    #[error("metric {metric}: {problem}")]
    BadSample {
        /// The metric.
        metric: String,
        /// What is wrong.
        problem: String,
    },
}

impl Record {
    /// The record of `result`, attributed to `branch`; `target` overrides the spec name.
    pub fn of(
        result: &ResultFile,
        target: Option<&str>,
        branch: &str,
    ) -> Result<Record, RecordError> {
        let target = target
            .map(str::to_owned)
            .or_else(|| result.request.config.get("target").cloned())
            .ok_or(RecordError::NoTarget)?;
        let first = result
            .side
            .trials
            .iter()
            .filter(|trial| trial.started_unix_ms.is_some())
            .min_by_key(|trial| trial.started_unix_ms);
        // A duet's timed metrics keep the trials that shared a CPU with the other
        // build's, as `compare` does: they pair trial by trial with the other side's
        // record of the run, and the trials that ran alone (slower or faster by the
        // machine of their moment) are not mixed in.
        let kept = bench_core::compare::duet::shared_only(&result.side);
        let samples = kept
            .metrics
            .iter()
            .map(|(metric, observations)| {
                let mut values: Vec<(u32, f64)> = observations
                    .iter()
                    .filter_map(|o| o.value.map(|value| (o.trial, value)))
                    .collect();
                values.sort_by_key(|&(trial, _)| trial);
                (*metric, values)
            })
            .filter(|(_, values)| !values.is_empty())
            .collect();
        let record = Record {
            target,
            branch: branch.to_owned(),
            revision: revision_of(&result.request),
            version: result.side.runtime.get("version").cloned(),
            testbed: Testbed::of(result),
            load_average: first.and_then(|t| t.load_average).map(|load| load[0]),
            started_unix_ms: first.and_then(|t| t.started_unix_ms),
            run: result.request.invocation_id.clone(),
            duet_phases: Some(bench_core::compare::duet::shared_phases(&result.side)),
            samples,
        };
        record.validate()?;
        Ok(record)
    }

    /// Whether this record's values of `metric` are a duet's: a metric a duet pairs, of a
    /// phase whose trials shared a CPU.
    pub fn duet_values(&self, metric: Metric) -> bool {
        bench_core::compare::duet::paired(metric)
            && self
                .duet_phases
                .as_ref()
                .is_some_and(|phases| phases.contains(&metric.phase()))
    }

    /// Checks the limits a store relies on; rows read from another store pass here too.
    pub fn validate(&self) -> Result<(), RecordError> {
        let texts = [
            ("target", Some(&self.target)),
            ("branch", Some(&self.branch)),
            ("revision", Some(&self.revision)),
            ("version", self.version.as_ref()),
            ("run", self.run.as_ref()),
            ("testbed cpu", Some(&self.testbed.cpu)),
            ("testbed kernel", Some(&self.testbed.kernel)),
        ];
        for (field, text) in texts {
            if let Some(text) = text
                && (text.is_empty()
                    || text.chars().count() > MAX_KEY_CHARS
                    || text.chars().any(char::is_control))
            {
                return Err(RecordError::BadText { field });
            }
        }
        if let Some(load) = self.load_average
            && (!load.is_finite() || load < 0.0)
        {
            return Err(RecordError::BadSample {
                metric: "load_average".into(),
                problem: format!("{load} is not finite and non-negative"),
            });
        }
        for (metric, values) in &self.samples {
            let bad = |problem: String| RecordError::BadSample {
                metric: metric.to_string(),
                problem,
            };
            if values.len() > MAX_TRIALS {
                return Err(bad(format!(
                    "{} samples, at most {MAX_TRIALS}",
                    values.len()
                )));
            }
            let mut previous = None;
            for &(trial, value) in values {
                if trial as usize >= MAX_TRIALS || previous.is_some_and(|p| p >= trial) {
                    return Err(bad(format!("trial {trial} out of order or range")));
                }
                // What a result file may hold, so that a store from elsewhere cannot
                // bring in the extremes a result file is refused for.
                if let Some(problem) = metric.unit().unmeasurable(value) {
                    return Err(bad(problem));
                }
                previous = Some(trial);
            }
        }
        Ok(())
    }

    /// The SHA-256 of what was measured (everything but the branch), hex: adding the
    /// same result again, or importing a store that holds it, is a no-op. The branch is
    /// left out because it is what the user says about a build, not a measurement; the
    /// duet phases because they are read from the same result as the samples (and a
    /// store before layout 3 does not know them), so the same result keeps its hash.
    pub fn content_hash(&self) -> String {
        #[derive(serde::Serialize)]
        struct Measured<'a> {
            target: &'a str,
            revision: &'a str,
            version: Option<&'a str>,
            testbed: &'a Testbed,
            load_average: Option<f64>,
            started_unix_ms: Option<u64>,
            // Left out when unknown, so a record stored before runs were recorded keeps
            // the hash it had.
            #[serde(skip_serializing_if = "Option::is_none")]
            run: Option<&'a str>,
            samples: &'a BTreeMap<Metric, Vec<(u32, f64)>>,
        }
        let measured = Measured {
            target: &self.target,
            revision: &self.revision,
            version: self.version.as_deref(),
            testbed: &self.testbed,
            load_average: self.load_average,
            started_unix_ms: self.started_unix_ms,
            run: self.run.as_deref(),
            samples: &self.samples,
        };
        // Invariant: every map key is a string or a unit enum, and validate() keeps
        // every number finite, so serialization cannot fail; an empty string would
        // only make two records share a hash, never lose one silently here.
        let text = serde_json::to_string(&measured).unwrap_or_default();
        hex(&Sha256::digest(text.as_bytes()))
    }

    /// The label of the build: a commit's first 12 hex digits, or the whole revision
    /// when it is something else (a version, a tag), at most 20 characters; then its
    /// overrides, at most 60 characters.
    pub fn label(&self) -> String {
        let (build, variant) = match self.revision.split_once(" [") {
            Some((build, variant)) => (build, Some(variant.trim_end_matches(']'))),
            None => (self.revision.as_str(), None),
        };
        let commit = build.len() == 40 && build.chars().all(|c| c.is_ascii_hexdigit());
        let keep = if commit { 12 } else { 20 };
        let mut label: String = build.chars().take(keep).collect();
        if let Some(variant) = variant {
            let mut shown: String = variant.chars().take(60).collect();
            if shown.len() < variant.len() {
                shown.push('…');
            }
            label.push_str(&format!(" [{shown}]"));
        }
        label
    }
}

/// Overrides that do not make another build: `source.commit` and `version` pick the
/// build, which `request.sha` already names; `measure.memory_trials` is how `ab`'s tight
/// schedule measures (which trials read memory), set on both sides alike.
const NOT_A_VARIANT: [&str; 3] = ["source.commit=", "version=", "measure.memory_trials="];

/// A result's build: `request.sha`, with the overrides that made it another build of
/// that commit (`ab --head measure.env.KNOB=1`) in brackets. Without them, both sides
/// of such an `ab` would be stored as one build, and the history would pool the two.
fn revision_of(request: &bench_core::Request) -> String {
    let variant: Vec<&str> = request
        .config
        .get(bench_core::OVERRIDES_KEY)
        .map(|overrides| {
            overrides
                .split_whitespace()
                .filter(|item| !NOT_A_VARIANT.iter().any(|key| item.starts_with(key)))
                .collect()
        })
        .unwrap_or_default();
    if variant.is_empty() {
        return request.sha.clone();
    }
    // Control characters are kept out of the key (validate refuses them), and a long
    // list is named by its digest so that the key stays within MAX_KEY_CHARS.
    let variant: String = variant
        .join(" ")
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    let revision = format!("{} [{variant}]", request.sha);
    if revision.chars().count() <= MAX_KEY_CHARS {
        return revision;
    }
    let digest = hex(&Sha256::digest(variant.as_bytes()));
    format!("{} [overrides {}]", request.sha, &digest[..12])
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use bench_core::{Observation, Phase, Request, Role};

    /// A result of `target` at `sha` with `cold` values, on a fixed testbed.
    pub(crate) fn result(target: &str, sha: &str, started: u64, cold: &[f64]) -> ResultFile {
        let mut result = ResultFile::new(Request::new(sha, Role::Candidate));
        result.request.config.insert("target".into(), target.into());
        for (key, value) in [
            ("cpu", "Test CPU @ 3.0GHz"),
            ("cores", "2"),
            ("memory_bytes", "25769803776"),
            ("kernel", "6.1.0-test"),
        ] {
            result.side.runtime.insert(key.into(), value.into());
        }
        result.side.metrics.insert(
            Metric::Cold,
            cold.iter()
                .enumerate()
                .map(|(i, &v)| Observation::value(i as u32, v))
                .collect(),
        );
        let trial = result.side.trial_record_mut(Phase::Measure, 0);
        trial.started_unix_ms = Some(started);
        trial.load_average = Some([0.5, 0.4, 0.3]);
        result
    }

    #[test]
    fn a_record_keeps_every_trial_and_the_host_facts() {
        let record =
            Record::of(&result("demo", "abc", 1000, &[0.3, 0.1, 0.2]), None, "main").unwrap();
        assert_eq!(record.target, "demo");
        assert_eq!(
            record.samples[&Metric::Cold],
            [(0, 0.3), (1, 0.1), (2, 0.2)]
        );
        assert_eq!(record.testbed.cores, 2);
        assert_eq!(record.load_average, Some(0.5));
        assert_eq!(record.started_unix_ms, Some(1000));
    }

    /// The result of one side of a duet: trial 0 started alone, the others each shared a
    /// CPU with the other build's start.
    pub(crate) fn duet_result(target: &str, sha: &str, started: u64, cold: &[f64]) -> ResultFile {
        let mut duet = result(target, sha, started, cold);
        for trial in 0..cold.len() as u32 {
            duet.side
                .trial_record_mut(Phase::Measure, trial)
                .push_start(bench_core::StartRecord {
                    session: "cold".into(),
                    spawned_unix_us: 1,
                    shared_cpu: (trial > 0).then_some(0),
                });
        }
        duet
    }

    #[test]
    fn a_duet_record_keeps_only_the_starts_that_shared_a_cpu() {
        let record = Record::of(
            &duet_result("demo", "abc", 1000, &[0.3, 0.1, 0.2]),
            None,
            "main",
        )
        .unwrap();
        // Trial 0 ran alone: not mixed with the shared ones.
        assert_eq!(record.samples[&Metric::Cold], [(1, 0.1), (2, 0.2)]);
        // And its values are a duet's; a run's are not.
        assert!(record.duet_values(Metric::Cold));
        assert_eq!(record.duet_phases, Some(BTreeSet::from([Phase::Measure])));
        let alone = Record::of(&result("demo", "abc", 1000, &[0.3]), None, "main").unwrap();
        assert!(!alone.duet_values(Metric::Cold));
        assert_eq!(alone.duet_phases, Some(BTreeSet::new()));
    }

    #[test]
    fn the_content_hash_ignores_the_branch_but_not_a_value() {
        let base = result("demo", "abc", 1000, &[0.3, 0.1]);
        let main = Record::of(&base, None, "main").unwrap();
        let other = Record::of(&base, None, "feature").unwrap();
        assert_eq!(main.content_hash(), other.content_hash());
        let changed = Record::of(&result("demo", "abc", 1000, &[0.3, 0.11]), None, "main").unwrap();
        assert_ne!(main.content_hash(), changed.content_hash());
    }

    #[test]
    fn a_record_keeps_its_run_and_an_unknown_run_keeps_the_hash_it_had() {
        let mut paired = result("demo", "abc", 1000, &[0.3]);
        let unknown = Record::of(&paired, None, "main").unwrap();
        assert_eq!(unknown.run, None);
        // The hash a record without a run had before runs were recorded (the SHA-256 of
        // the same JSON without a run field, computed apart).
        assert_eq!(
            unknown.content_hash(),
            "62154a7d80a3e59a1b3eac937a31d6acd0ce322354feb025639999f0567d4930"
        );
        paired.request.invocation_id = Some("0123456789abcdef".into());
        let known = Record::of(&paired, None, "main").unwrap();
        assert_eq!(known.run.as_deref(), Some("0123456789abcdef"));
        assert_ne!(known.content_hash(), unknown.content_hash());
    }

    #[test]
    fn an_override_of_a_spec_key_makes_another_build_of_the_same_commit() {
        let mut knob = result("demo", "abc", 1000, &[0.3]);
        knob.request.config.insert(
            bench_core::OVERRIDES_KEY.into(),
            "source.commit=abc measure.env.DELAY_MS=30 measure.memory_trials=3".into(),
        );
        let record = Record::of(&knob, None, "main").unwrap();
        assert_eq!(record.revision, "abc [measure.env.DELAY_MS=30]");
        assert_eq!(record.label(), "abc [measure.env.DELAY_MS=30]");
        // The overrides that pick the build are what request.sha already says.
        knob.request
            .config
            .insert(bench_core::OVERRIDES_KEY.into(), "version=0.63.1".into());
        assert_eq!(Record::of(&knob, None, "main").unwrap().revision, "abc");
        // A long list is named by its digest, within the key's limit.
        let long = format!("measure.env.X={}", "y".repeat(300));
        knob.request
            .config
            .insert(bench_core::OVERRIDES_KEY.into(), long);
        let revision = Record::of(&knob, None, "main").unwrap().revision;
        assert!(revision.starts_with("abc [overrides "), "{revision}");
        assert!(revision.chars().count() <= MAX_KEY_CHARS);
    }

    #[test]
    fn a_result_without_a_target_needs_one_given() {
        let mut unnamed = result("demo", "abc", 1000, &[0.3]);
        unnamed.request.config.clear();
        assert_eq!(
            Record::of(&unnamed, None, "main"),
            Err(RecordError::NoTarget)
        );
        assert!(Record::of(&unnamed, Some("given"), "main").is_ok());
    }

    #[test]
    fn a_branch_with_a_control_character_is_refused() {
        let error = Record::of(&result("demo", "abc", 1, &[0.3]), None, "main\u{1b}[2J");
        assert_eq!(error, Err(RecordError::BadText { field: "branch" }));
    }
}
