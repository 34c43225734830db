//! Comparing two sides metric by metric: medians, their difference and ratio, a
//! bootstrap confidence interval of the ratio, a test of each change with the
//! false-alarm rate controlled over all metrics at once, and a verdict that
//! respects what kind of number each metric is.
//!
//! The rule and the reasons for its defaults are in `docs/verdicts.md`; in short:
//!
//! # The verdict, by the metric's [`Nature`]
//! - **Exact** (disk, bundle): the same build gives the same bytes, so every change
//!   of the medians is reported with its delta. It is [`Verdict::Regressed`] or
//!   [`Verdict::Improved`] only beyond the size threshold, both
//!   [`CompareOptions::exact_bytes`] and the metric's fraction (1% unless set);
//!   below, [`Verdict::Changed`], which never fails CI. Equal medians are
//!   [`Verdict::Unchanged`].
//! - **Timing, CPU and memory**: with fewer than two samples on a side there is no
//!   spread to judge by, so the verdict is [`Verdict::SingleSample`]. Otherwise a
//!   change counts when both hold:
//!   1. *it is there*: Welch's two-sided t-test on the log values
//!      ([`significance::welch`]) rejects "no change" after Holm's
//!      adjustment over every tested metric of the comparison
//!      ([`significance::holm`]), at family level [`CompareOptions::alpha`]: the
//!      chance of any false verdict in an A/A comparison stays at or below alpha;
//!   2. *it matters*: the ratio of medians lies beyond the metric's practical
//!      threshold ([`Nature::default_threshold`], or [`CompareOptions::noise`], or
//!      the metric's own from [`CompareOptions::with_floor`]).
//!
//!   Else [`Verdict::WithinNoise`].
//!
//! When the two sides were not measured interleaved (two separate runs, or `ab
//! --sequential`: see [`Interleaving`]), the machine's drift between them looks like a
//! change to any test, so every noisy metric's threshold is widened by its
//! [`Nature::drift_allowance`].
//!
//! # What each row could have seen
//! [`MetricComparison::detectable`] is the smallest change the run could have
//! detected (80% power at the Bonferroni share of alpha), never below the threshold:
//! a "within noise" from three noisy trials and one from thirty quiet ones differ.
//!
//! # The interval
//! The ratio is `candidate median / base median`. Its confidence interval comes
//! from a percentile bootstrap: both sides' samples are resampled with
//! replacement [`CompareOptions::resamples`] times, and the ratio of the
//! resampled medians is taken each time. The generator is seeded, so the same
//! inputs always give the same interval. The interval is always widened to
//! contain the point ratio. It is shown for reading; the verdict is the test's.
//!
//! Whether a change is an improvement or a regression depends on the metric's
//! [`Direction`].
//!
//! # Processes
//! A daemon that appears in one build's measurements changes every memory total.
//! [`Comparison::process_counts`] lists, per phase, how many processes each side's
//! trials found, and [`ProcessCounts::changed`] says when they disagree.
//!
//! ```
//! use bench_core::compare::{compare, CompareOptions, Interleaving, Verdict};
//! use bench_core::{record, Metric, Sample, Side};
//!
//! let mut base = Side::new("base");
//! let mut candidate = Side::new("candidate");
//! let pairs = [(0.40, 0.61), (0.42, 0.60), (0.41, 0.62), (0.40, 0.63), (0.41, 0.60), (0.42, 0.61)];
//! for (trial, (b, c)) in pairs.into_iter().enumerate() {
//!     record(&mut base, Metric::Cold, trial as u32, Sample::Value(b));
//!     record(&mut candidate, Metric::Cold, trial as u32, Sample::Value(c));
//! }
//! // The trials ran in interleaved pairs, as `clibench ab` runs them (sides with no start
//! // times are taken as separate runs, and their drift widens the test).
//! let options = CompareOptions {
//!     interleaving: Some(Interleaving::Interleaved),
//!     ..CompareOptions::default()
//! };
//! let comparison = compare(&base, &candidate, &options);
//! assert_eq!(comparison.metrics[0].verdict, Verdict::Regressed);
//! ```

use crate::metric::{Direction, Metric, Nature, Phase};
use crate::result::{OVERRIDES_KEY, Request, Role, Side};
use crate::rng::SplitMix64;
use crate::significance;
use crate::stats::MetricStats;
use crate::units::Unit;
use std::collections::{BTreeMap, BTreeSet};

/// The default family-wise false-alarm rate of one comparison: the chance that an
/// A/A comparison shows any verdict at all.
pub const DEFAULT_ALPHA: f64 = 0.05;

/// The default byte part of the size threshold: an exact metric's change counts
/// only when it is larger than this (and than its fraction). 64 KiB is 16 blocks of
/// 4 KiB, the unit `disk` moves in, and far below what a dependency added to a
/// bundle weighs; a rebuilt lock file or a version string is below it.
pub const DEFAULT_EXACT_BYTES: f64 = 64.0 * 1024.0;

/// How two sides are compared.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CompareOptions {
    /// The practical threshold of every timing, CPU and memory metric as a fraction
    /// (0.2 = 20%), in `0..1`, overriding each nature's default; `None`: by nature
    /// ([`Nature::default_threshold`]). `--noise FRACTION` sets it.
    pub noise: Option<f64>,
    /// Thresholds set for single metrics, overriding [`noise`](Self::noise) (and the
    /// fraction of exact metrics), as fractions in `0..1`.
    pub floors: BTreeMap<Metric, f64>,
    /// The byte part of an exact metric's threshold: a change of at most this many
    /// bytes is [`Verdict::Changed`], never a regression.
    pub exact_bytes: f64,
    /// The family-wise false-alarm rate over all tested metrics, in `0..1` (0.05).
    pub alpha: f64,
    /// The confidence level of the interval shown per metric, in `0..1` (0.95).
    pub confidence: f64,
    /// How many bootstrap resamples to draw per metric.
    pub resamples: u32,
    /// The bootstrap generator's seed; each metric derives its own stream from it.
    pub seed: u64,
    /// Whether the sides' trials were interleaved, when the caller knows; `None`:
    /// told from the trials' start times ([`Interleaving::of`]).
    pub interleaving: Option<Interleaving>,
    /// The spread of one run's own offset (log scale) when the sides were not
    /// interleaved, by nature, overriding [`Nature::drift_spread`]: the machine's drift
    /// between runs, which depends on the machine. `--drift` sets it.
    #[serde(skip_serializing_if = "DriftSpread::is_default")]
    pub drift: DriftSpread,
}

/// The drift spreads a comparison of separate runs uses, one per nature; `None`:
/// the nature's default ([`Nature::drift_spread`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct DriftSpread {
    /// Wall times.
    pub timing: Option<f64>,
    /// CPU times.
    pub cpu: Option<f64>,
    /// Memory.
    pub memory: Option<f64>,
}

impl DriftSpread {
    /// Whether every nature keeps its default.
    pub fn is_default(&self) -> bool {
        *self == DriftSpread::default()
    }

    /// The spread for metrics of `nature` (0 for exact sizes, which do not drift).
    pub fn of(&self, nature: Nature) -> f64 {
        let set = match nature {
            Nature::Exact => return 0.0,
            Nature::Timing => self.timing,
            Nature::Cpu => self.cpu,
            Nature::Memory => self.memory,
        };
        set.unwrap_or_else(|| nature.drift_spread())
    }
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            noise: None,
            floors: BTreeMap::new(),
            exact_bytes: DEFAULT_EXACT_BYTES,
            alpha: DEFAULT_ALPHA,
            confidence: 0.95,
            resamples: 10_000,
            // "clibench" in ASCII.
            seed: 0x636c_6962_656e_6368,
            interleaving: None,
            drift: DriftSpread::default(),
        }
    }
}

impl CompareOptions {
    /// These options with `metric`'s threshold set to `fraction` (0.05 = 5%),
    /// whatever the metric's nature. This is how a spec's or the command line's
    /// per-metric thresholds reach the comparison.
    pub fn with_floor(mut self, metric: Metric, fraction: f64) -> CompareOptions {
        self.floors.insert(metric, fraction);
        self
    }

    /// The practical threshold `metric` is judged against when its sides were
    /// interleaved: its own when set, else for an exact metric its nature's
    /// fraction (the global noise is not for sizes), else the global
    /// [`noise`](Self::noise) or its nature's default.
    pub fn floor(&self, metric: Metric) -> f64 {
        let nature = metric.nature();
        match (self.floors.get(&metric), self.noise) {
            (Some(&floor), _) => floor,
            (None, _) if nature == Nature::Exact => nature.default_threshold(),
            (None, Some(noise)) => noise,
            (None, None) => nature.default_threshold(),
        }
    }

    /// The threshold under `interleaving`: [`floor`](Self::floor), widened by the
    /// nature's drift allowance unless the sides were interleaved.
    pub fn threshold(&self, metric: Metric, interleaving: Interleaving) -> f64 {
        let floor = self.floor(metric);
        if interleaving == Interleaving::Interleaved {
            floor
        } else {
            floor + metric.nature().drift_allowance()
        }
    }
}

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

/// What a comparison concluded about one metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The candidate is worse: the change is there and beyond the threshold.
    Regressed,
    /// The candidate is better: the change is there and beyond the threshold.
    Improved,
    /// An exact size changed by no more than its threshold: reported, never failing.
    Changed,
    /// No change was shown, or it is smaller than the threshold.
    WithinNoise,
    /// A noisy metric with fewer than two samples on a side: no spread to judge by.
    SingleSample,
    /// An exact metric with equal medians.
    Unchanged,
}

impl Verdict {
    /// Every verdict, changes first.
    pub const ALL: [Verdict; 6] = [
        Verdict::Regressed,
        Verdict::Improved,
        Verdict::Changed,
        Verdict::WithinNoise,
        Verdict::SingleSample,
        Verdict::Unchanged,
    ];

    /// The verdict as words for people: `regressed`, `within noise`, `1 sample, no verdict`.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::Changed => "changed",
            Verdict::WithinNoise => "within noise",
            Verdict::SingleSample => "1 sample, no verdict",
            Verdict::Unchanged => "unchanged",
        }
    }

    /// The verdict as written in JSON and CSV: `regressed`, `within_noise`, `single_sample`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::Changed => "changed",
            Verdict::WithinNoise => "within_noise",
            Verdict::SingleSample => "single_sample",
            Verdict::Unchanged => "unchanged",
        }
    }

    /// Whether the verdict says the metric changed beyond its threshold (improved
    /// or regressed).
    pub fn is_change(self) -> bool {
        matches!(self, Verdict::Improved | Verdict::Regressed)
    }

    /// Whether a reader should see the row among the changes: improved, regressed
    /// or an exact size that changed below its threshold.
    pub fn is_reported(self) -> bool {
        self.is_change() || self == Verdict::Changed
    }
}

/// One metric measured on both sides.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MetricComparison {
    /// The metric.
    pub metric: Metric,
    /// Its unit.
    pub unit: Unit,
    /// Which way it improves.
    pub direction: Direction,
    /// What kind of number it is, which decided the verdict.
    pub nature: Nature,
    /// The practical threshold the change was judged against, as a fraction,
    /// including the drift allowance when the sides were not interleaved.
    pub floor: f64,
    /// The byte part of the threshold, for an exact metric.
    pub floor_bytes: Option<f64>,
    /// The base side's statistics.
    pub base: MetricStats,
    /// The candidate side's statistics.
    pub candidate: MetricStats,
    /// `candidate median - base median`, in the metric's unit.
    pub delta: f64,
    /// `candidate median / base median`; 1 when both are 0, infinite (`null` in
    /// JSON) when only the base is 0.
    pub ratio: f64,
    /// Lower end of the confidence interval of the ratio.
    pub ci_low: f64,
    /// Upper end of the confidence interval of the ratio.
    pub ci_high: f64,
    /// The two-sided p-value of Welch's t-test on the log values
    /// ([`significance::welch`]), for a noisy metric with two samples or more a side.
    pub p_value: Option<f64>,
    /// The p-value after Holm's adjustment over every tested metric: the change is
    /// there when this is at most [`CompareOptions::alpha`].
    pub p_adjusted: Option<f64>,
    /// The smallest relative change (0.06 = ±6%) this run could have detected
    /// (80% power), never below [`floor`](Self::floor); infinite when the trials
    /// are too few for any verdict. `None` for exact metrics, where every byte shows.
    pub detectable: Option<f64>,
    /// When this interleaved run could not detect twice the threshold (the change
    /// `ab --trials auto` waits for unless told otherwise), how many trials a side the
    /// same spread would need to; `None` when it could, for an exact metric or one
    /// without a test, and between separate runs (where the drift between the runs,
    /// not the trials, limits what can be detected).
    pub trials_for_target: Option<TrialsForTarget>,
    /// The conclusion.
    pub verdict: Verdict,
}

/// The trials a side a metric's spread needs to detect a target change
/// ([`significance::Welch::trials_for`]).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct TrialsForTarget {
    /// The target, as a fraction (0.06 = ±6%).
    pub change: f64,
    /// The trials a side (pairs when paired); `None` when more than a result holds
    /// ([`crate::result::MAX_TRIAL`] + 1) would be needed.
    pub trials: Option<u32>,
}

impl MetricComparison {
    /// The relative change `ratio - 1` (0.35 = 35% larger).
    pub fn change(&self) -> f64 {
        self.ratio - 1.0
    }
}

/// A metric with samples on at most one side, or with no successful sample on one side.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MissingMetric {
    /// The metric.
    pub metric: Metric,
    /// The base side's statistics, when it has samples.
    pub base: Option<MetricStats>,
    /// The candidate side's statistics, when it has samples.
    pub candidate: Option<MetricStats>,
}

impl MissingMetric {
    /// The sides without a successful sample.
    pub fn missing_on(&self) -> Vec<Role> {
        let lacks = |stats: &Option<MetricStats>| stats.as_ref().is_none_or(|s| s.n() == 0);
        let mut roles = Vec::new();
        if lacks(&self.base) {
            roles.push(Role::Base);
        }
        if lacks(&self.candidate) {
            roles.push(Role::Candidate);
        }
        roles
    }
}

/// A failed sample, for listing.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FailedSample {
    /// The metric.
    pub metric: Metric,
    /// The trial.
    pub trial: u32,
    /// Why it failed.
    pub error: String,
}

/// The failed samples of `side`, in metric then trial order.
pub fn failed_samples(side: &Side) -> Vec<FailedSample> {
    let mut failed = Vec::new();
    for (&metric, samples) in &side.metrics {
        let mut errored: Vec<_> = samples
            .iter()
            .filter_map(|sample| Some((sample.trial, sample.error.as_ref()?)))
            .collect();
        errored.sort_by_key(|&(trial, _)| trial);
        for (trial, error) in errored {
            failed.push(FailedSample {
                metric,
                trial,
                error: error.clone(),
            });
        }
    }
    failed
}

/// Two sides compared metric by metric.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Comparison {
    /// The base side's sha.
    pub base_sha: String,
    /// The candidate side's sha.
    pub candidate_sha: String,
    /// How the comparison was made.
    pub options: CompareOptions,
    /// Metrics with successful samples on both sides, in metric order.
    pub metrics: Vec<MetricComparison>,
    /// Metrics without successful samples on one or both sides, in metric order.
    pub missing: Vec<MissingMetric>,
    /// The base side's own error, when its last phase failed.
    pub base_error: Option<String>,
    /// The candidate side's own error, when its last phase failed.
    pub candidate_error: Option<String>,
    /// Failed samples of the base side.
    pub base_failures: Vec<FailedSample>,
    /// Failed samples of the candidate side.
    pub candidate_failures: Vec<FailedSample>,
    /// How many processes each side's trials found, per phase that counted them.
    pub process_counts: Vec<ProcessCounts>,
    /// Where and under what load the base side was measured, and with what versions.
    pub base_facts: SideFacts,
    /// The same for the candidate side.
    pub candidate_facts: SideFacts,
    /// Whether the trials were interleaved, which decided the drift allowance.
    pub interleaving: Interleaving,
    /// How many metrics were tested, the family Holm's adjustment is over.
    pub tested: usize,
    /// The overrides the base side ran with (`clibench ab --base`, `run --set`), as its
    /// result file's request records them. A [`Side`] does not hold them: whoever loaded
    /// the result files sets them, and the titles name the sides by them when both built
    /// the same commit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_overrides: Option<String>,
    /// The same for the candidate side.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidate_overrides: Option<String>,
}

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

fn process_counts(base: &Side, candidate: &Side) -> Vec<ProcessCounts> {
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

impl Comparison {
    /// The comparison with each side's overrides taken from its result file's request
    /// (`config.overrides`, which `clibench run --set` and `ab` record).
    pub fn with_overrides_of(mut self, base: &Request, candidate: &Request) -> Comparison {
        let overrides = |request: &Request| request.config.get(OVERRIDES_KEY).cloned();
        self.base_overrides = overrides(base);
        self.candidate_overrides = overrides(candidate);
        self
    }

    /// The metrics whose verdict is [`Verdict::Regressed`].
    pub fn regressions(&self) -> impl Iterator<Item = &MetricComparison> {
        self.metrics
            .iter()
            .filter(|row| row.verdict == Verdict::Regressed)
    }

    /// Whether any metric regressed.
    pub fn has_regression(&self) -> bool {
        self.regressions().next().is_some()
    }

    /// The phases whose process counts changed; see [`ProcessCounts::changed`].
    pub fn process_count_changes(&self) -> impl Iterator<Item = &ProcessCounts> {
        self.process_counts.iter().filter(|counts| counts.changed())
    }

    /// How many metrics got each verdict, and how many are missing on a side: what
    /// every renderer's headline says.
    pub fn verdict_counts(&self) -> VerdictCounts {
        let mut counts = VerdictCounts {
            missing: self.missing.len(),
            ..VerdictCounts::default()
        };
        for row in &self.metrics {
            *counts.slot(row.verdict) += 1;
        }
        counts
    }
}

/// How many metrics of a [`Comparison`] got each verdict; see
/// [`Comparison::verdict_counts`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VerdictCounts {
    /// Metrics that got [`Verdict::Regressed`].
    pub regressed: usize,
    /// Metrics that got [`Verdict::Improved`].
    pub improved: usize,
    /// Metrics that got [`Verdict::WithinNoise`].
    pub within_noise: usize,
    /// Metrics that got [`Verdict::Changed`].
    pub changed: usize,
    /// Metrics that got [`Verdict::SingleSample`].
    pub single_sample: usize,
    /// Metrics that got [`Verdict::Unchanged`].
    pub unchanged: usize,
    /// Metrics without a successful sample on one side or both, which got no verdict.
    pub missing: usize,
}

impl VerdictCounts {
    /// How many metrics got `verdict`.
    pub fn of(&self, verdict: Verdict) -> usize {
        match verdict {
            Verdict::Regressed => self.regressed,
            Verdict::Improved => self.improved,
            Verdict::WithinNoise => self.within_noise,
            Verdict::Changed => self.changed,
            Verdict::SingleSample => self.single_sample,
            Verdict::Unchanged => self.unchanged,
        }
    }

    fn slot(&mut self, verdict: Verdict) -> &mut usize {
        match verdict {
            Verdict::Regressed => &mut self.regressed,
            Verdict::Improved => &mut self.improved,
            Verdict::WithinNoise => &mut self.within_noise,
            Verdict::Changed => &mut self.changed,
            Verdict::SingleSample => &mut self.single_sample,
            Verdict::Unchanged => &mut self.unchanged,
        }
    }
}

/// Compares `candidate` against `base` for every metric either side has samples of.
pub fn compare(base: &Side, candidate: &Side, options: &CompareOptions) -> Comparison {
    let interleaving = options
        .interleaving
        .unwrap_or_else(|| Interleaving::of(base, candidate));
    let mut measured = Vec::new();
    let mut missing = Vec::new();
    for metric in Metric::ALL {
        let base_stats = MetricStats::of(base, metric);
        let candidate_stats = MetricStats::of(candidate, metric);
        match (base_stats, candidate_stats) {
            (None, None) => {}
            (Some(b), Some(c)) if b.n() > 0 && c.n() > 0 => {
                let pairs = (interleaving == Interleaving::Interleaved)
                    .then(|| trial_pairs(base, candidate, metric))
                    .flatten();
                let values = SideValues {
                    base: base.values(metric),
                    candidate: candidate.values(metric),
                    pairs,
                };
                measured.push(Measured::new(metric, b, c, &values, interleaving, options));
            }
            (b, c) => missing.push(MissingMetric {
                metric,
                base: b,
                candidate: c,
            }),
        }
    }
    let p_values: Vec<Option<f64>> = measured
        .iter()
        .map(|m| m.test.map(|test| test.p_value))
        .collect();
    let adjusted = significance::holm(&p_values);
    let tested = p_values.iter().flatten().count();
    let metrics = measured
        .into_iter()
        .zip(adjusted)
        .map(|(measured, p_adjusted)| measured.judged(p_adjusted, tested, interleaving, options))
        .collect();
    Comparison {
        base_sha: base.sha.clone(),
        candidate_sha: candidate.sha.clone(),
        options: options.clone(),
        metrics,
        missing,
        base_error: base.error.clone(),
        candidate_error: candidate.error.clone(),
        base_failures: failed_samples(base),
        candidate_failures: failed_samples(candidate),
        process_counts: process_counts(base, candidate),
        base_facts: SideFacts::of(base),
        candidate_facts: SideFacts::of(candidate),
        interleaving,
        tested,
        base_overrides: None,
        candidate_overrides: None,
    }
}

/// One metric's numbers before the family's adjustment gives its verdict.
struct Measured {
    metric: Metric,
    base: MetricStats,
    candidate: MetricStats,
    delta: f64,
    ratio: f64,
    ci_low: f64,
    ci_high: f64,
    /// The test, for a noisy metric with two samples or more a side.
    test: Option<significance::Welch>,
}

/// The metric's values of interleaved sides as pairs of the same trial (base, candidate),
/// in trial order; `None` unless every trial of either side has exactly one value and the
/// other side that trial too (then the paired test applies; otherwise Welch's).
fn trial_pairs(base: &Side, candidate: &Side, metric: Metric) -> Option<(Vec<f64>, Vec<f64>)> {
    let by_trial = |side: &Side| -> Option<BTreeMap<u32, f64>> {
        let mut values = BTreeMap::new();
        for sample in side.metrics.get(&metric).into_iter().flatten() {
            if let Some(value) = sample.value
                && values.insert(sample.trial, value).is_some()
            {
                return None;
            }
        }
        Some(values)
    };
    let (base, candidate) = (by_trial(base)?, by_trial(candidate)?);
    if base.len() < 2 || !base.keys().eq(candidate.keys()) {
        return None;
    }
    Some((
        base.values().copied().collect(),
        candidate.values().copied().collect(),
    ))
}

/// One metric's values on both sides, and as trial pairs when the test may pair them.
struct SideValues {
    base: Vec<f64>,
    candidate: Vec<f64>,
    pairs: Option<(Vec<f64>, Vec<f64>)>,
}

impl Measured {
    fn new(
        metric: Metric,
        base: MetricStats,
        candidate: MetricStats,
        values: &SideValues,
        interleaving: Interleaving,
        options: &CompareOptions,
    ) -> Measured {
        // `compare` only gets here with samples on both sides, so both medians exist.
        let (ratio, delta) = match (base.median(), candidate.median()) {
            (Some(base_median), Some(candidate_median)) => (
                ratio_of(base_median, candidate_median),
                candidate_median - base_median,
            ),
            _ => (f64::NAN, f64::NAN),
        };
        // Each metric gets its own stream, so adding a metric never changes another's interval.
        let seed = options.seed ^ (metric as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let (low, high) = bootstrap_ratio_interval(
            &values.base,
            &values.candidate,
            options.resamples,
            options.confidence,
            seed,
        );
        let noisy = metric.nature() != Nature::Exact && base.n().min(candidate.n()) >= 2;
        // Separate runs each carry their own offset, which no count of trials
        // averages away: the test counts it as variance.
        let drift = if interleaving == Interleaving::Interleaved {
            0.0
        } else {
            options.drift.of(metric.nature())
        };
        let test = noisy
            .then(|| match &values.pairs {
                Some((base_pairs, candidate_pairs)) => {
                    significance::paired(base_pairs, candidate_pairs)
                }
                None => significance::welch_between_runs(&values.base, &values.candidate, drift),
            })
            .flatten();
        Measured {
            metric,
            base,
            candidate,
            delta,
            ratio,
            ci_low: low.min(ratio),
            ci_high: high.max(ratio),
            test,
        }
    }

    fn judged(
        self,
        p_adjusted: Option<f64>,
        tested: usize,
        interleaving: Interleaving,
        options: &CompareOptions,
    ) -> MetricComparison {
        let metric = self.metric;
        let nature = metric.nature();
        let direction = metric.direction();
        let floor = options.threshold(metric, interleaving);
        let exact = nature == Nature::Exact;
        let change = Change {
            delta: self.delta,
            ratio: self.ratio,
            samples: self.base.n().min(self.candidate.n()),
            significant: p_adjusted.is_some_and(|p| p <= options.alpha),
        };
        let threshold = Threshold {
            fraction: floor,
            bytes: options.exact_bytes,
        };
        let detectable = (!exact).then(|| {
            // Bonferroni's share of alpha: what the first step of Holm's procedure
            // asks of the most significant metric, so a bound for all of them.
            let level = options.alpha / tested.max(1) as f64;
            let statistical = self
                .test
                .map_or(f64::INFINITY, |test| test.detectable_change(level));
            statistical.max(floor)
        });
        let target = 2.0 * floor;
        // Between separate runs the drift, which more trials do not shrink, sets what
        // can be detected: the answer there is `ab`, not a count.
        let trials_for_target = self
            .test
            .filter(|_| interleaving == Interleaving::Interleaved)
            .filter(|_| detectable.is_some_and(|d| d.is_finite() && d > target))
            .map(|test| TrialsForTarget {
                change: target,
                trials: test.trials_for(
                    target,
                    options.alpha / tested.max(1) as f64,
                    crate::result::MAX_TRIAL + 1,
                ),
            });
        MetricComparison {
            metric,
            unit: metric.unit(),
            direction,
            nature,
            floor,
            floor_bytes: exact.then_some(options.exact_bytes),
            verdict: judge(change, nature, threshold, direction),
            base: self.base,
            candidate: self.candidate,
            delta: self.delta,
            ratio: self.ratio,
            ci_low: self.ci_low,
            ci_high: self.ci_high,
            p_value: self.test.map(|test| test.p_value),
            p_adjusted,
            detectable,
            trials_for_target,
        }
    }
}

/// What is known about one metric's change, for [`judge`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    /// `candidate median - base median`, in the metric's unit.
    pub delta: f64,
    /// `candidate median / base median`.
    pub ratio: f64,
    /// The fewer of the two sides' successful samples.
    pub samples: usize,
    /// Whether the family-adjusted test found a change.
    pub significant: bool,
}

/// A practical threshold: a fraction for every metric, and bytes for exact ones.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Threshold {
    /// The relative change that matters (0.03 = 3%).
    pub fraction: f64,
    /// The absolute change that matters for an exact size, in bytes.
    pub bytes: f64,
}

/// The verdict on `change` of a metric of `nature` under `threshold`; the rules
/// are in the [module documentation](self).
pub fn judge(
    change: Change,
    nature: Nature,
    threshold: Threshold,
    direction: Direction,
) -> Verdict {
    match nature {
        Nature::Exact if change.delta == 0.0 => Verdict::Unchanged,
        Nature::Exact => {
            // The sizes are the same on every trial, so the point ratio is the change.
            match verdict(change.ratio, threshold.fraction, direction) {
                beyond if beyond.is_change() && change.delta.abs() > threshold.bytes => beyond,
                _ => Verdict::Changed,
            }
        }
        _ if change.samples < 2 => Verdict::SingleSample,
        _ if !change.significant => Verdict::WithinNoise,
        _ => verdict(change.ratio, threshold.fraction, direction),
    }
}

/// The verdict for a `ratio` of `candidate / base` beyond the threshold `fraction`,
/// or [`Verdict::WithinNoise`] when it is not beyond it.
pub fn verdict(ratio: f64, fraction: f64, direction: Direction) -> Verdict {
    let larger = ratio > 1.0 + fraction;
    let smaller = ratio < 1.0 - fraction;
    match (direction, larger, smaller) {
        (Direction::LowerIsBetter, true, _) | (Direction::HigherIsBetter, _, true) => {
            Verdict::Regressed
        }
        (Direction::LowerIsBetter, _, true) | (Direction::HigherIsBetter, true, _) => {
            Verdict::Improved
        }
        _ => Verdict::WithinNoise,
    }
}

/// `candidate / base`, with 0/0 = 1 (no change) and x/0 = infinity.
fn ratio_of(base: f64, candidate: f64) -> f64 {
    if base == 0.0 {
        if candidate == 0.0 { 1.0 } else { f64::INFINITY }
    } else {
        candidate / base
    }
}

/// The median of a non-empty slice, reordering it: the tests' reference for the
/// counting resampler.
#[cfg(test)]
fn median(values: &mut [f64]) -> f64 {
    let n = values.len();
    let (_, &mut upper, _) = values.select_nth_unstable_by(n / 2, f64::total_cmp);
    if n % 2 == 1 {
        upper
    } else {
        // The lower middle is the largest of the part below the upper middle.
        let lower = values[..n / 2]
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        (lower + upper) / 2.0
    }
}

/// A percentile bootstrap interval of the ratio of medians at `confidence`.
/// Both slices must be non-empty.
pub fn bootstrap_ratio_interval(
    base: &[f64],
    candidate: &[f64],
    resamples: u32,
    confidence: f64,
    seed: u64,
) -> (f64, f64) {
    let mut rng = SplitMix64::new(seed);
    let mut base_draw = Resampler::new(base);
    let mut candidate_draw = Resampler::new(candidate);
    let mut ratios: Vec<f64> = (0..resamples.max(1))
        .map(|_| {
            let base_median = base_draw.median(&mut rng);
            ratio_of(base_median, candidate_draw.median(&mut rng))
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let tail = (1.0 - confidence.clamp(0.0, 1.0)) / 2.0;
    let last = (ratios.len() - 1) as f64;
    let low = ratios[(tail * last).floor() as usize];
    let high = ratios[((1.0 - tail) * last).ceil() as usize];
    (low, high)
}

/// Draws resamples (with replacement) of a fixed sample and returns their medians.
///
/// Rather than copying the drawn values and selecting the middle, it counts how
/// often each sample was drawn and walks the counts in value order: the same
/// median as sorting the resample, without moving any values.
struct Resampler<'a> {
    values: &'a [f64],
    /// Indices into `values`, in ascending order of value.
    by_value: Vec<usize>,
    /// How often each index was drawn in the current resample.
    counts: Vec<u32>,
}

impl<'a> Resampler<'a> {
    fn new(values: &'a [f64]) -> Resampler<'a> {
        let mut by_value: Vec<usize> = (0..values.len()).collect();
        by_value.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
        Resampler {
            values,
            by_value,
            counts: vec![0; values.len()],
        }
    }

    /// The median of a fresh resample of `values.len()` draws.
    fn median(&mut self, rng: &mut SplitMix64) -> f64 {
        let n = self.values.len();
        self.counts.fill(0);
        for _ in 0..n {
            self.counts[rng.below(n)] += 1;
        }
        // The values at ranks (n - 1) / 2 and n / 2 of the sorted resample; they are
        // the same rank when n is odd.
        let (low_rank, high_rank) = ((n - 1) / 2, n / 2);
        let mut low = None;
        let mut seen = 0;
        for &index in &self.by_value {
            seen += self.counts[index] as usize;
            if low.is_none() && seen > low_rank {
                low = Some(self.values[index]);
            }
            if seen > high_rank {
                let high = self.values[index];
                return (low.unwrap_or(high) + high) / 2.0;
            }
        }
        unreachable!("the counts add up to n, so rank n / 2 is always reached")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::side;
    use crate::trial::{Sample, record};

    #[test]
    fn resampled_medians_match_sorting_the_resample() {
        let values = [0.5, 3.0, 1.0, 2.0, 2.0, 9.0];
        for n in 1..=values.len() {
            let values = &values[..n];
            let mut resampler = Resampler::new(values);
            let mut counted = SplitMix64::new(n as u64);
            let mut copied = SplitMix64::new(n as u64);
            for _ in 0..200 {
                let mut draw: Vec<f64> = (0..n).map(|_| values[copied.below(n)]).collect();
                assert_eq!(resampler.median(&mut counted), median(&mut draw));
            }
        }
    }

    /// The default options for sides known to be interleaved, as `ab` measures them.
    fn interleaved() -> CompareOptions {
        CompareOptions {
            interleaving: Some(Interleaving::Interleaved),
            ..CompareOptions::default()
        }
    }

    #[test]
    fn five_interleaved_trials_a_side_call_a_doubling_among_many_metrics() {
        // The regression of the rank-sum rule: with 5 a side its p could not pass
        // Holm over 9 metrics. Cold doubles here, eight other metrics stay.
        let noisy = [1.00, 1.12, 0.93, 1.05, 0.97];
        let metrics: Vec<Metric> = Metric::ALL
            .into_iter()
            .filter(|m| m.nature() != Nature::Exact)
            .take(9)
            .collect();
        assert!(metrics.contains(&Metric::Cold));
        let build = |sha: &str, cold_scale: f64| {
            let mut built = Side::new(sha);
            for &metric in &metrics {
                for (trial, value) in noisy.iter().enumerate() {
                    let rotated = noisy[(trial + sha.len()) % 5];
                    let value = if metric == Metric::Cold {
                        cold_scale * value
                    } else {
                        rotated
                    };
                    record(&mut built, metric, trial as u32, Sample::Value(value));
                }
            }
            built
        };
        let comparison = compare(&build("b", 1.0), &build("cc", 2.0), &interleaved());
        assert_eq!(comparison.tested, 9);
        let verdicts: Vec<(Metric, Verdict)> = comparison
            .metrics
            .iter()
            .filter(|row| row.verdict.is_change())
            .map(|row| (row.metric, row.verdict))
            .collect();
        assert_eq!(verdicts, [(Metric::Cold, Verdict::Regressed)]);
    }

    #[test]
    fn separate_runs_count_their_drift_as_variance() {
        // One run 25% slower on every trial than the other, with little spread
        // inside each: interleaved, that is a change; between two runs it is what
        // runs on a shared machine drift apart (docs/verdicts.md), so no verdict.
        let base: Vec<f64> = (0..10).map(|i| 1.0 + 0.01 * f64::from(i % 5)).collect();
        let slower: Vec<f64> = base.iter().map(|v| v * 1.25).collect();
        let (b, c) = (
            side("b", &[(Metric::Cold, &base)]),
            side("c", &[(Metric::Cold, &slower)]),
        );
        assert_eq!(
            compare(&b, &c, &interleaved()).metrics[0].verdict,
            Verdict::Regressed
        );
        let separate = CompareOptions {
            interleaving: Some(Interleaving::Separate),
            ..CompareOptions::default()
        };
        let row = &compare(&b, &c, &separate).metrics[0];
        assert_eq!(row.verdict, Verdict::WithinNoise, "{row:?}");
        // The drift is in what it could detect: far more than +25%.
        assert!(row.detectable.unwrap() > 0.5, "{row:?}");
        // A change far beyond the drift still shows between runs.
        let tripled: Vec<f64> = base.iter().map(|v| v * 3.0).collect();
        let row = &compare(&b, &side("c", &[(Metric::Cold, &tripled)]), &separate).metrics[0];
        assert_eq!(row.verdict, Verdict::Regressed, "{row:?}");
    }

    #[test]
    fn clear_changes_get_verdicts_and_noise_does_not() {
        let base = side(
            "b",
            &[
                (Metric::Cold, &[0.40, 0.41, 0.42, 0.40, 0.43]),
                (Metric::Rss, &[100.0, 102.0, 101.0, 99.0, 100.0]),
                (Metric::Warm, &[0.20, 0.22, 0.21, 0.20, 0.21]),
            ],
        );
        let candidate = side(
            "c",
            &[
                (Metric::Cold, &[0.60, 0.62, 0.61, 0.63, 0.60]),
                (Metric::Rss, &[60.0, 61.0, 59.0, 62.0, 60.0]),
                (Metric::Warm, &[0.21, 0.20, 0.22, 0.21, 0.20]),
            ],
        );
        let comparison = compare(&base, &candidate, &interleaved());
        let verdicts: Vec<_> = comparison
            .metrics
            .iter()
            .map(|row| (row.metric, row.verdict))
            .collect();
        assert_eq!(
            verdicts,
            [
                (Metric::Cold, Verdict::Regressed),
                (Metric::Warm, Verdict::WithinNoise),
                (Metric::Rss, Verdict::Improved),
            ]
        );
        let cold = &comparison.metrics[0];
        assert!((cold.ratio - 0.61 / 0.41).abs() < 1e-12);
        assert!(cold.ci_low <= cold.ratio && cold.ratio <= cold.ci_high);
        assert!(cold.ci_low > 1.2);
        assert!(comparison.has_regression());
        assert_eq!(comparison.verdict_counts().of(Verdict::Improved), 1);
    }

    #[test]
    fn verdict_counts_count_each_verdict_and_the_missing_metrics() {
        let base = side(
            "b",
            &[
                (Metric::Cold, &[0.40, 0.41, 0.42, 0.40, 0.43]),
                (Metric::Warm, &[0.20, 0.22, 0.21, 0.20, 0.21]),
                (Metric::Rss, &[100.0, 102.0, 101.0, 99.0, 100.0]),
                (Metric::Pss, &[90.0, 91.0, 92.0, 90.0, 91.0]),
                (Metric::Install, &[12.0]),
                (Metric::Disk, &[1000.0]),
                (Metric::Bundle, &[500.0]),
                (Metric::Keystroke, &[0.01, 0.011]),
            ],
        );
        let candidate = side(
            "c",
            &[
                (Metric::Cold, &[0.60, 0.62, 0.61, 0.63, 0.60]),
                (Metric::Warm, &[0.30, 0.31, 0.32, 0.30, 0.31]),
                (Metric::Rss, &[60.0, 61.0, 59.0, 62.0, 60.0]),
                (Metric::Pss, &[91.0, 90.0, 92.0, 91.0, 90.0]),
                (Metric::Install, &[12.5]),
                (Metric::Disk, &[1000.0]),
                (Metric::Bundle, &[600.0]),
            ],
        );
        let comparison = compare(&base, &candidate, &interleaved());
        let counts = comparison.verdict_counts();
        assert_eq!(comparison.tested, 4, "cold, warm, rss, pss");
        // bundle grew by 100 bytes: reported as changed, not a regression.
        assert_eq!(
            counts,
            VerdictCounts {
                regressed: 2,
                improved: 1,
                changed: 1,
                within_noise: 1,
                single_sample: 1,
                unchanged: 1,
                missing: 1,
            }
        );
        // `of` agrees with the rows it summarizes, for every verdict.
        for verdict in Verdict::ALL {
            let rows = comparison
                .metrics
                .iter()
                .filter(|row| row.verdict == verdict)
                .count();
            assert_eq!(counts.of(verdict), rows, "{verdict:?}");
        }
    }

    #[test]
    fn a_wide_interval_reaching_into_the_floor_is_noise() {
        // The medians differ by 40%, but the spread makes the interval reach below 1.2.
        let base = side("b", &[(Metric::Cold, &[1.0, 0.5, 1.5, 0.6, 1.4])]);
        let candidate = side("c", &[(Metric::Cold, &[1.4, 0.7, 2.1, 0.8, 2.0])]);
        let row = &compare(&base, &candidate, &CompareOptions::default()).metrics[0];
        assert!((row.ratio - 1.4).abs() < 1e-12);
        assert!(row.ci_low < 1.2, "{row:?}");
        assert_eq!(row.verdict, Verdict::WithinNoise);
    }

    #[test]
    fn single_samples_give_no_verdict_on_noisy_metrics() {
        // The issue's case: install +61.8% from one sample per side under a load spike.
        let base = side("b", &[(Metric::Install, &[12.4])]);
        let candidate = side("c", &[(Metric::Install, &[20.07])]);
        let row = &compare(&base, &candidate, &CompareOptions::default()).metrics[0];
        assert_eq!(
            (row.ci_low, row.ratio, row.ci_high),
            (row.ratio, row.ratio, row.ratio)
        );
        assert_eq!(row.verdict, Verdict::SingleSample);
        assert_eq!(row.verdict.word(), "1 sample, no verdict");
        // One side with many samples still lacks the other side's spread.
        let many = side("c", &[(Metric::Install, &[20.0, 20.1, 19.9])]);
        let row = &compare(&base, &many, &CompareOptions::default()).metrics[0];
        assert_eq!(row.verdict, Verdict::SingleSample);
        // Memory is noisy too.
        let base = side("b", &[(Metric::Rss, &[100.0])]);
        let candidate = side("c", &[(Metric::Rss, &[300.0])]);
        let row = &compare(&base, &candidate, &CompareOptions::default()).metrics[0];
        assert_eq!(row.verdict, Verdict::SingleSample);
    }

    #[test]
    fn an_exact_metric_reports_every_byte_but_only_a_real_change_regresses() {
        let base = side("b", &[(Metric::Disk, &[134_217_728.0])]);
        let candidate = side("c", &[(Metric::Disk, &[134_217_729.0])]);
        let row = &compare(&base, &candidate, &CompareOptions::default()).metrics[0];
        assert_eq!(row.delta, 1.0);
        assert_eq!(
            (row.floor, row.floor_bytes),
            (0.01, Some(DEFAULT_EXACT_BYTES))
        );
        assert_eq!(row.verdict, Verdict::Changed);
        assert_eq!(row.detectable, None);
        // 1 MiB on 128 MiB is beyond the bytes but not the 1%.
        let mib = side("c", &[(Metric::Disk, &[134_217_728.0 + 1048576.0])]);
        let row = &compare(&base, &mib, &CompareOptions::default()).metrics[0];
        assert_eq!(row.verdict, Verdict::Changed);
        let two_mib = side("c", &[(Metric::Disk, &[134_217_728.0 + 2.0 * 1048576.0])]);
        let comparison = compare(&base, &two_mib, &CompareOptions::default());
        assert_eq!(comparison.metrics[0].verdict, Verdict::Regressed);
        assert!(comparison.has_regression());
        let smaller = side("c", &[(Metric::Disk, &[134_217_728.0 - 2.0 * 1048576.0])]);
        let row = &compare(&base, &smaller, &CompareOptions::default()).metrics[0];
        assert_eq!(row.verdict, Verdict::Improved);
        let row = &compare(&base, &base, &CompareOptions::default()).metrics[0];
        assert_eq!(row.verdict, Verdict::Unchanged);
        // The issue's case: 4 bytes of bundle no longer fail CI.
        let bundle = side("b", &[(Metric::Bundle, &[80_000.0])]);
        let four = side("c", &[(Metric::Bundle, &[80_004.0])]);
        let comparison = compare(&bundle, &four, &CompareOptions::default());
        assert_eq!(comparison.metrics[0].verdict, Verdict::Changed);
        assert!(!comparison.has_regression());
        // A byte threshold of 0 leaves only the fraction.
        let options = CompareOptions {
            exact_bytes: 0.0,
            ..CompareOptions::default()
        };
        let tenth = side("c", &[(Metric::Bundle, &[88_000.0])]);
        assert_eq!(
            compare(&bundle, &tenth, &options).metrics[0].verdict,
            Verdict::Regressed
        );
    }

    #[test]
    fn the_global_floor_does_not_hide_an_exact_change_but_its_own_floor_does() {
        // The issue's case: bundle +18.8% behind a ±20% floor.
        let base = side("b", &[(Metric::Bundle, &[100.0 * 1024.0 * 1024.0])]);
        let candidate = side("c", &[(Metric::Bundle, &[118.8 * 1024.0 * 1024.0])]);
        let global = CompareOptions {
            noise: Some(0.5),
            ..CompareOptions::default()
        };
        let row = &compare(&base, &candidate, &global).metrics[0];
        assert_eq!(row.verdict, Verdict::Regressed);
        let own = global.with_floor(Metric::Bundle, 0.25);
        let row = &compare(&base, &candidate, &own).metrics[0];
        assert_eq!((row.floor, row.verdict), (0.25, Verdict::Changed));
    }

    #[test]
    fn cpu_time_is_judged_at_its_own_resolution() {
        // The issue's case, now in nanoseconds: ui_cpu 20 ms -> 30 ms is a real change.
        let base = side(
            "b",
            &[(
                Metric::UiCpu,
                &[0.0201, 0.0199, 0.0204, 0.0202, 0.0198, 0.0200],
            )],
        );
        let candidate = side(
            "c",
            &[(
                Metric::UiCpu,
                &[0.0301, 0.0299, 0.0304, 0.0302, 0.0298, 0.0300],
            )],
        );
        let row = &compare(&base, &candidate, &CompareOptions::default()).metrics[0];
        assert!((row.ratio - 1.5).abs() < 0.01, "{row:?}");
        assert_eq!(row.verdict, Verdict::Regressed);
        assert!(row.ratio.is_finite());
    }

    #[test]
    fn a_change_the_test_cannot_confirm_is_within_noise() {
        // The medians differ by 25%, but the samples overlap too much to say so.
        let base = side("b", &[(Metric::Cold, &[1.0, 0.9, 1.1, 0.95, 1.05])]);
        let candidate = side("c", &[(Metric::Cold, &[1.25, 0.9, 1.5, 1.0, 1.4])]);
        let row = &compare(&base, &candidate, &CompareOptions::default()).metrics[0];
        assert!(row.ratio > 1.2, "{row:?}");
        assert!(row.p_adjusted.unwrap() > 0.05, "{row:?}");
        assert_eq!(row.verdict, Verdict::WithinNoise);
    }

    #[test]
    fn a_sure_change_below_the_threshold_is_within_noise() {
        // +1% on every trial, with almost no spread: the test is sure, it does not matter.
        let base: Vec<f64> = (0..10).map(|i| 1.0 + 0.0001 * f64::from(i)).collect();
        let candidate: Vec<f64> = base.iter().map(|v| v * 1.01).collect();
        let options = CompareOptions {
            interleaving: Some(Interleaving::Interleaved),
            ..CompareOptions::default()
        };
        let row = &compare(
            &side("b", &[(Metric::Cold, &base)]),
            &side("c", &[(Metric::Cold, &candidate)]),
            &options,
        )
        .metrics[0];
        assert!(row.p_adjusted.unwrap() < 0.001, "{row:?}");
        assert_eq!((row.floor, row.verdict), (0.03, Verdict::WithinNoise));
        // +5% is beyond it.
        let slower: Vec<f64> = base.iter().map(|v| v * 1.05).collect();
        let row = &compare(
            &side("b", &[(Metric::Cold, &base)]),
            &side("c", &[(Metric::Cold, &slower)]),
            &options,
        )
        .metrics[0];
        assert_eq!(row.verdict, Verdict::Regressed);
    }

    #[test]
    fn the_issues_pi_case_is_a_regression() {
        // pi 0.63.1 vs 0.73.1, 10 interleaved trials a side: cold about +20% with
        // a 10% spread, once called "within noise" by the ±20% floor.
        let base = [1.00, 1.12, 0.95, 1.05, 0.98, 1.10, 1.02, 0.93, 1.07, 1.01];
        let candidate: Vec<f64> =
            [1.22, 1.30, 1.15, 1.27, 1.18, 1.35, 1.20, 1.12, 1.25, 1.19].to_vec();
        let options = CompareOptions {
            interleaving: Some(Interleaving::Interleaved),
            ..CompareOptions::default()
        };
        let row = &compare(
            &side("b", &[(Metric::Cold, &base)]),
            &side("c", &[(Metric::Cold, &candidate)]),
            &options,
        )
        .metrics[0];
        assert!((row.change() - 0.19).abs() < 0.02, "{row:?}");
        assert_eq!(row.verdict, Verdict::Regressed);
    }

    #[test]
    fn separate_runs_are_told_from_interleaved_ones_and_widen_the_threshold() {
        let timed = |sha: &str, values: &[f64], starts: &[u64]| {
            let mut side = side(sha, &[(Metric::Cold, values)]);
            for (trial, &start) in starts.iter().enumerate() {
                side.trial_record_mut(Phase::Measure, trial as u32)
                    .started_unix_ms = Some(start);
            }
            side
        };
        let base_values = [1.00, 1.01, 0.99, 1.00, 1.02, 0.98, 1.01, 1.00];
        let slower: Vec<f64> = base_values.iter().map(|v| v * 1.08).collect();
        // ABBA: the spans overlap.
        let base = timed("b", &base_values, &[0, 30, 40, 70, 80, 110, 120, 150]);
        let head = timed("c", &slower, &[10, 20, 50, 60, 90, 100, 130, 140]);
        assert_eq!(Interleaving::of(&base, &head), Interleaving::Interleaved);
        let comparison = compare(&base, &head, &CompareOptions::default());
        assert_eq!(comparison.interleaving, Interleaving::Interleaved);
        assert_eq!(comparison.metrics[0].verdict, Verdict::Regressed);
        // Two runs, one after the other: +8% is within what runs drift apart.
        let later = timed("c", &slower, &[200, 210, 220, 230, 240, 250, 260, 270]);
        assert_eq!(Interleaving::of(&base, &later), Interleaving::Separate);
        let comparison = compare(&base, &later, &CompareOptions::default());
        assert_eq!(comparison.metrics[0].floor, 0.03 + 0.10);
        assert_eq!(comparison.metrics[0].verdict, Verdict::WithinNoise);
        // Without start times nothing is known, which is treated as separate.
        let bare = side("c", &[(Metric::Cold, &slower)]);
        assert_eq!(Interleaving::of(&base, &bare), Interleaving::Unknown);
        assert_eq!(
            CompareOptions::default().threshold(Metric::Rss, Interleaving::Unknown),
            0.02 + 0.03
        );
    }

    #[test]
    fn each_row_says_what_it_could_have_detected() {
        let options = CompareOptions {
            interleaving: Some(Interleaving::Interleaved),
            ..CompareOptions::default()
        };
        let noisy = |n: usize, spread: f64| -> Vec<f64> {
            (0..n)
                .map(|i| 1.0 + spread * ((i * 7 % n) as f64 / n as f64 - 0.5))
                .collect()
        };
        let detect = |base: Vec<f64>, candidate: Vec<f64>| {
            compare(
                &side("b", &[(Metric::Warm, &base)]),
                &side("c", &[(Metric::Warm, &candidate)]),
                &options,
            )
            .metrics[0]
                .detectable
                .unwrap()
        };
        // The candidate's trials in reverse order: their pairs with the base differ, as
        // interleaved trials of a noisy metric do.
        let reversed = |values: Vec<f64>| values.into_iter().rev().collect::<Vec<f64>>();
        // Three trials a side can decide only a large change: with pair differences of
        // a 6.7% standard deviation, (qt(0.975, 2) + qt(0.8, 2)) · 0.067 / √3 is about
        // +22%, several times what ten such pairs could see.
        let three = detect(noisy(3, 0.1), reversed(noisy(3, 0.1)));
        assert!(three.is_finite() && three > 0.09, "{three}");
        assert!(
            three > 2.5 * detect(noisy(10, 0.1), reversed(noisy(10, 0.1))),
            "{three}"
        );
        // One trial a side: no spread, nothing could have been detected.
        assert_eq!(
            compare(
                &side("b", &[(Metric::Warm, &[1.0])]),
                &side("c", &[(Metric::Warm, &[1.0])]),
                &options,
            )
            .metrics[0]
                .detectable,
            Some(f64::INFINITY)
        );
        let ten = detect(noisy(10, 0.2), reversed(noisy(10, 0.2)));
        let thirty = detect(noisy(30, 0.2), reversed(noisy(30, 0.2)));
        assert!(ten.is_finite() && ten > 0.05, "{ten}");
        assert!(thirty < ten, "{thirty} {ten}");
        // Never below the threshold, which no change under it passes.
        assert_eq!(detect(noisy(30, 0.001), noisy(30, 0.001)), 0.03);
    }

    #[test]
    fn a_a_comparisons_of_many_metrics_stay_at_the_family_rate() {
        // 25 noisy metrics, 10 trials a side, both sides from one distribution with
        // a heavy right tail: at most alpha of the comparisons may show any verdict.
        let metrics: Vec<Metric> = Metric::ALL
            .into_iter()
            .filter(|m| m.nature() != Nature::Exact)
            .take(25)
            .collect();
        let mut rng = SplitMix64::new(2026);
        let mut uniform = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let options = CompareOptions {
            interleaving: Some(Interleaving::Interleaved),
            resamples: 50,
            // No practical threshold: the test alone must hold the rate.
            noise: Some(0.0),
            ..CompareOptions::default()
        };
        let repetitions = 300;
        let mut any_verdict = 0;
        for _ in 0..repetitions {
            let mut draw = |sha: &str| {
                let mut side = Side::new(sha);
                for &metric in &metrics {
                    for trial in 0..10 {
                        let value = 1.0 - 0.05 * (1.0 - uniform()).ln();
                        record(&mut side, metric, trial, Sample::Value(value));
                    }
                }
                side
            };
            let (base, candidate) = (draw("b"), draw("c"));
            let comparison = compare(&base, &candidate, &options);
            assert_eq!(comparison.tested, 25);
            if comparison.metrics.iter().any(|row| row.verdict.is_change()) {
                any_verdict += 1;
            }
        }
        // Nominal 15 of 300 (binomial sd ~3.8); uncorrected 5% tests would give ~217.
        assert!(any_verdict <= 24, "{any_verdict} of {repetitions}");
    }

    #[test]
    fn a_per_metric_floor_overrides_the_global_one() {
        let base = side(
            "b",
            &[
                (Metric::Cold, &[1.00, 1.01, 0.99, 1.00, 1.00, 1.02]),
                (Metric::Warm, &[1.00, 1.01, 0.99, 1.00, 1.00, 1.02]),
            ],
        );
        let candidate = side(
            "c",
            &[
                (Metric::Cold, &[1.10, 1.11, 1.09, 1.10, 1.10, 1.12]),
                (Metric::Warm, &[1.10, 1.11, 1.09, 1.10, 1.10, 1.12]),
            ],
        );
        let options = CompareOptions {
            noise: Some(0.2),
            interleaving: Some(Interleaving::Interleaved),
            ..CompareOptions::default()
        }
        .with_floor(Metric::Cold, 0.05);
        assert_eq!(options.floor(Metric::Warm), 0.2);
        assert_eq!(options.floor(Metric::Disk), 0.01);
        assert_eq!(CompareOptions::default().floor(Metric::Warm), 0.03);
        assert_eq!(CompareOptions::default().floor(Metric::Pss), 0.02);
        let comparison = compare(&base, &candidate, &options);
        let verdicts: Vec<_> = comparison.metrics.iter().map(|r| r.verdict).collect();
        assert_eq!(verdicts, [Verdict::Regressed, Verdict::WithinNoise]);
        assert_eq!(comparison.metrics[0].floor, 0.05);
    }

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

    #[test]
    fn direction_decides_the_word() {
        let lower = Direction::LowerIsBetter;
        let higher = Direction::HigherIsBetter;
        assert_eq!(verdict(1.5, 0.2, lower), Verdict::Regressed);
        assert_eq!(verdict(1.5, 0.2, higher), Verdict::Improved);
        assert_eq!(verdict(0.5, 0.2, lower), Verdict::Improved);
        assert_eq!(verdict(0.5, 0.2, higher), Verdict::Regressed);
        assert_eq!(verdict(1.1, 0.2, lower), Verdict::WithinNoise);
        // Exactly on the floor is not beyond it.
        assert_eq!(verdict(1.2, 0.2, lower), Verdict::WithinNoise);
        let base = side(
            "b",
            &[(Metric::ReclaimedRss, &[100.0, 101.0, 99.0, 100.0, 102.0])],
        );
        let candidate = side(
            "c",
            &[(Metric::ReclaimedRss, &[50.0, 51.0, 49.0, 50.0, 52.0])],
        );
        let row = &compare(&base, &candidate, &CompareOptions::default()).metrics[0];
        assert_eq!(row.verdict, Verdict::Regressed);
    }

    #[test]
    fn the_interval_is_deterministic_and_seed_dependent() {
        let base = [1.0, 1.2, 0.9, 1.1, 1.3, 0.95];
        let candidate = [1.1, 1.0, 1.4, 1.2, 0.9, 1.25];
        let first = bootstrap_ratio_interval(&base, &candidate, 2000, 0.95, 1);
        assert_eq!(
            first,
            bootstrap_ratio_interval(&base, &candidate, 2000, 0.95, 1)
        );
        assert_ne!(
            first,
            bootstrap_ratio_interval(&base, &candidate, 2000, 0.95, 2)
        );
        assert!(first.0 < first.1);
        let narrow = bootstrap_ratio_interval(&base, &candidate, 2000, 0.5, 1);
        assert!(narrow.0 >= first.0 && narrow.1 <= first.1);
    }

    #[test]
    fn zero_medians() {
        let base = side("b", &[(Metric::ReclaimedRss, &[0.0; 6])]);
        let same = compare(&base, &base, &CompareOptions::default());
        assert_eq!(same.metrics[0].ratio, 1.0);
        assert_eq!(same.metrics[0].verdict, Verdict::WithinNoise);
        let candidate = side(
            "c",
            &[(Metric::ReclaimedRss, &[10.0, 12.0, 11.0, 10.0, 12.0, 11.0])],
        );
        let grew = compare(&base, &candidate, &CompareOptions::default());
        assert_eq!(grew.metrics[0].ratio, f64::INFINITY);
        assert_eq!(grew.metrics[0].verdict, Verdict::Improved);
    }

    #[test]
    fn metrics_missing_on_a_side_are_listed() {
        let mut base = side("b", &[(Metric::Cold, &[1.0]), (Metric::UiSteps, &[2.0])]);
        let mut candidate = side("c", &[(Metric::Cold, &[1.0]), (Metric::Keystroke, &[0.01])]);
        record(&mut base, Metric::Pss, 0, Sample::Value(5.0));
        record(
            &mut candidate,
            Metric::Pss,
            0,
            Sample::Error("unreadable".into()),
        );
        let comparison = compare(&base, &candidate, &CompareOptions::default());
        assert_eq!(comparison.metrics.len(), 1);
        let missing: Vec<_> = comparison
            .missing
            .iter()
            .map(|m| (m.metric, m.missing_on()))
            .collect();
        assert_eq!(
            missing,
            [
                (Metric::Pss, vec![Role::Candidate]),
                (Metric::UiSteps, vec![Role::Candidate]),
                (Metric::Keystroke, vec![Role::Base]),
            ]
        );
        assert_eq!(comparison.candidate_failures[0].error, "unreadable");
    }

    #[test]
    fn median_handles_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&mut [7.0]), 7.0);
    }
}
