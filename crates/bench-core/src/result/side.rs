//! One side's measurements: every metric's observations, the trial records, the
//! processes and the details the report draws.

use super::{
    MAX_CMDLINE_CHARS, MAX_ERROR_CHARS, MAX_NAME_CHARS, MAX_PROCESSES, Observation, ProcessMemory,
    TrialRecord, truncate_chars,
};
use crate::detail::{MemorySeries, Screen, SessionRun, StaircaseRun};
use crate::metric::{Metric, Phase};
use std::collections::BTreeMap;

/// Everything measured about one build.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Side {
    /// The commit (or build identifier) measured.
    pub sha: String,
    /// Every metric's samples, at most one per trial.
    #[serde(default, deserialize_with = "metrics_by_name")]
    #[cfg_attr(feature = "schema", schemars(schema_with = "metrics_schema"))]
    pub metrics: BTreeMap<Metric, Vec<Observation>>,
    /// The per-process memory breakdown of the last memory measurement, at most 128 entries.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(length(max = 128)))]
    pub processes: Vec<ProcessMemory>,
    /// Facts about the run: tool versions, kernel, CPU, artifact and installation formats.
    #[serde(default)]
    pub runtime: BTreeMap<String, String>,
    /// Release artifacts: file name -> size in bytes.
    #[serde(default)]
    pub artifacts: BTreeMap<String, u64>,
    /// Named durations in seconds: phase wall times, `ui:<step>` times.
    #[serde(default)]
    pub timings: BTreeMap<String, f64>,
    /// Why the last phase failed as a whole, at most 4,000 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(length(max = 4000)))]
    pub error: Option<String>,
    /// The circumstances of each trial, at most one record per phase and trial.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(length(max = 707)))]
    pub trials: Vec<TrialRecord>,
    /// Steps that were not run, `<phase>:<trial>` -> why (at most 4,000 characters each):
    /// "same failure as measure trial 0", "install trial 0 failed". A skipped trial has
    /// no samples; absent when nothing was skipped (files written before this field).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub skipped: BTreeMap<String, String>,
    /// The process family's memory over time during each measured start and UI
    /// session, at most 400 series (optional; drawn by the HTML report).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(length(max = 400)))]
    pub memory_series: Vec<MemorySeries>,
    /// The terminal's screen when the program became ready, at most 16 (optional).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(length(max = 16)))]
    pub screens: Vec<Screen>,
    /// Each trial's staircase steps (optional; the metrics `instance_*` and
    /// `reclaimed_rss` summarize them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(length(max = 101)))]
    pub staircases: Vec<StaircaseRun>,
    /// Each trial's agent session, turn by turn (optional; the session phase's metrics
    /// summarize them: medians over the turns, the growth slope, the idle share).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(length(max = 101)))]
    pub sessions: Vec<SessionRun>,
}

impl Side {
    /// An empty side for `sha`.
    pub fn new(sha: impl Into<String>) -> Side {
        Side {
            sha: sha.into(),
            ..Side::default()
        }
    }

    /// Sets the side's error, cut to [`MAX_ERROR_CHARS`] characters.
    pub fn set_error(&mut self, error: impl Into<String>) {
        self.error = Some(truncate_chars(error.into(), MAX_ERROR_CHARS));
    }

    /// Records that `trial` of `phase` was not run and why (cut to [`MAX_ERROR_CHARS`]
    /// characters).
    pub fn set_skipped(&mut self, phase: crate::Phase, trial: u32, reason: impl Into<String>) {
        self.skipped.insert(
            format!("{phase}:{trial}"),
            truncate_chars(reason.into(), MAX_ERROR_CHARS),
        );
    }

    /// Keeps the [`MAX_PROCESSES`] processes with the most RSS (ties by pid), with
    /// names cut to [`MAX_NAME_CHARS`] characters, so the side stays valid.
    pub fn set_processes(&mut self, mut processes: Vec<ProcessMemory>) {
        processes.sort_by(|a, b| b.rss.cmp(&a.rss).then(a.pid.cmp(&b.pid)));
        processes.truncate(MAX_PROCESSES);
        for process in &mut processes {
            process.name = truncate_chars(std::mem::take(&mut process.name), MAX_NAME_CHARS);
            process.cmdline = process
                .cmdline
                .take()
                .map(|line| truncate_chars(line, MAX_CMDLINE_CHARS));
        }
        self.processes = processes;
    }

    /// The record of `trial` of `phase`, created empty when there is none yet, so
    /// each phase adds the facts it knows (a retried trial overwrites its own).
    pub fn trial_record_mut(&mut self, phase: Phase, trial: u32) -> &mut TrialRecord {
        let index = match self
            .trials
            .iter()
            .position(|record| record.phase == phase && record.trial == trial)
        {
            Some(index) => index,
            None => {
                self.trials.push(TrialRecord::new(phase, trial));
                self.trials.len() - 1
            }
        };
        &mut self.trials[index]
    }

    /// The values of `metric` (errored samples left out), in trial order.
    pub fn values(&self, metric: Metric) -> Vec<f64> {
        let mut samples: Vec<&Observation> =
            self.metrics.get(&metric).into_iter().flatten().collect();
        samples.sort_by_key(|sample| sample.trial);
        samples.iter().filter_map(|sample| sample.value).collect()
    }
}

/// Reads the `metrics` map with string keys first, so that the JSON path of an
/// error inside it names the metric (`side.metrics.cold[1].value`): paths through
/// enum-typed keys are not tracked.
fn metrics_by_name<'de, D>(deserializer: D) -> Result<BTreeMap<Metric, Vec<Observation>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let by_name: BTreeMap<String, Vec<Observation>> =
        serde::Deserialize::deserialize(deserializer)?;
    by_name
        .into_iter()
        .map(|(name, samples)| {
            let metric = name.parse::<Metric>().map_err(serde::de::Error::custom)?;
            Ok((metric, samples))
        })
        .collect()
}

/// The schema of the `metrics` map: keys are metric names, values lists of observations.
#[cfg(feature = "schema")]
fn metrics_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let metric = generator.subschema_for::<Metric>();
    let observations = generator.subschema_for::<Vec<Observation>>();
    schemars::json_schema!({
        "type": "object",
        "propertyNames": metric,
        "additionalProperties": observations,
    })
}
