//! Comparing two sides metric by metric: medians, a test of each change with the
//! false-alarm rate controlled over all metrics at once, the test's estimate of the
//! change and its confidence interval, and a verdict read from that interval that
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
//!   1. *it is there*: the test's interval excludes 1 (no change). The test is a
//!      t-test on the log values, paired trial by trial for interleaved sides
//!      ([`significance::paired`]), else Welch's ([`significance::welch`]), and the
//!      interval is its own at the level Holm's procedure over every tested metric
//!      judged this one at ([`significance::holm_levels`]), at family level
//!      [`CompareOptions::alpha`]: the chance of any false verdict in an A/A
//!      comparison stays at or below alpha;
//!   2. *it matters*: the test's estimate of the change (the centre of that
//!      interval) lies beyond the metric's practical threshold
//!      ([`Nature::default_threshold`], or [`CompareOptions::noise`], or the
//!      metric's own from [`CompareOptions::with_floor`]).
//!
//!   Else [`Verdict::WithinNoise`]. So "regressed" never stands beside an interval
//!   that holds no change, and "within noise" never beside one wholly beyond the
//!   threshold.
//! - **Slopes** over a session's turns ([`Metric::is_slope`]): by their difference in
//!   the metric's unit, its interval and a threshold in that unit
//!   ([`crate::slope_change`]); the row's [`MetricComparison::slope`] holds them and its
//!   ratios are not numbers.
//!
//! When the two sides were not measured interleaved (two separate runs, or `ab
//! --sequential`: see [`Interleaving`]), each run carries the machine's offset while
//! it ran, which more trials do not average away: Welch's test counts it as variance
//! ([`CompareOptions::drift`], by default [`Nature::drift_spread`]), and that is the
//! only place drift enters (`--drift 0` means none).
//!
//! # What each row could have seen
//! [`MetricComparison::detectable`] is the smallest change the run could have
//! detected (80% power at the Bonferroni share of alpha), never below the threshold
//! and never above [`DETECTABLE_CAP`]: a "within noise" from three noisy trials and
//! one from thirty quiet ones differ.
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
use crate::significance;
use crate::speed_probe::SpeedShift;
use crate::stats::MetricStats;
use crate::units::Unit;
use std::collections::{BTreeMap, BTreeSet};

/// The default family-wise false-alarm rate of one comparison: the chance that an
/// A/A comparison shows any verdict at all.
pub const DEFAULT_ALPHA: f64 = 0.05;

/// The largest "could detect" a row states, as a fraction (1.0 = ±100%, a doubling).
/// Beyond it the number says nothing a reader can use (three noisy trials gave
/// ±199349303288%), so the row says "over ±100%" and how many trials would do.
pub const DETECTABLE_CAP: f64 = 1.0;

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

    /// A slope metric's practical threshold in its own unit: its own when set (a spec's
    /// `[compare] noise` gives slopes in their unit), else [`Metric::slope_threshold`];
    /// `None` for a metric that is not a slope. The global [`noise`](Self::noise), a
    /// fraction, is not for slopes.
    pub fn slope_threshold(&self, metric: Metric) -> Option<f64> {
        let default = metric.slope_threshold()?;
        Some(self.floors.get(&metric).copied().unwrap_or(default))
    }

    /// The practical threshold `metric` is judged against: its own when set, else for
    /// an exact metric its nature's fraction (the global noise is not for sizes), else
    /// the global [`noise`](Self::noise) or its nature's default. The same whether or
    /// not the sides were interleaved: the drift between separate runs is counted once,
    /// as variance in the test ([`drift`](Self::drift)), never as a wider threshold.
    pub fn floor(&self, metric: Metric) -> f64 {
        let nature = metric.nature();
        match (self.floors.get(&metric), self.noise) {
            (Some(&floor), _) => floor,
            (None, _) if nature == Nature::Exact => nature.default_threshold(),
            (None, Some(noise)) => noise,
            (None, None) => nature.default_threshold(),
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
    /// The practical threshold the change was judged against, as a fraction.
    pub floor: f64,
    /// The byte part of the threshold, for an exact metric.
    pub floor_bytes: Option<f64>,
    /// The base side's statistics.
    pub base: MetricStats,
    /// The candidate side's statistics.
    pub candidate: MetricStats,
    /// The change in the metric's unit: `candidate_center − base_center` for a tested
    /// metric, else `candidate median - base median`.
    pub delta: f64,
    /// For a tested metric, what the test compares of the base, in the metric's unit:
    /// the geometric mean of its values (over the pairs, for the paired test; the
    /// mean when some value is not positive). The tables show it, not the median, so
    /// that base, candidate, delta, change and interval are one test's numbers.
    pub base_center: Option<f64>,
    /// The same for the candidate.
    pub candidate_center: Option<f64>,
    /// The change as a ratio candidate / base. For a tested metric the test's own
    /// estimate ([`significance::Welch::estimate`]: the ratio of geometric means, or
    /// for pairs the geometric mean of their ratios), the centre of the interval;
    /// otherwise `candidate median / base median`, 1 when both are 0, infinite
    /// (`null` in JSON) when only the base is 0.
    pub ratio: f64,
    /// Lower end of the test's confidence interval of the ratio, at
    /// [`confidence`](Self::confidence); the ratio itself without a test.
    pub ci_low: f64,
    /// Upper end of the interval.
    pub ci_high: f64,
    /// The confidence of the interval: 1 − the level Holm's procedure judged this
    /// metric at ([`significance::holm_levels`]; 0.99 for the first of 5 tested
    /// metrics at 5%). The verdict is read from this interval: a change is there
    /// when it excludes 1. `None` without a test (sizes, a single sample).
    pub confidence: Option<f64>,
    /// The two-sided p-value of Welch's t-test on the log values
    /// ([`significance::welch`]), for a noisy metric with two samples or more a side.
    pub p_value: Option<f64>,
    /// The p-value after Holm's adjustment over every tested metric: the change is
    /// there when this is at most [`CompareOptions::alpha`].
    pub p_adjusted: Option<f64>,
    /// The smallest relative change (0.06 = ±6%) this run could have detected
    /// (80% power), never below [`floor`](Self::floor) and never above
    /// [`DETECTABLE_CAP`] (read "over ±100%"); infinite when the trials are too few
    /// for any verdict. `None` for exact metrics, where every byte shows.
    pub detectable: Option<f64>,
    /// For a slope metric ([`Metric::is_slope`]), how its difference was judged, in its
    /// unit: then [`ratio`](Self::ratio), [`ci_low`](Self::ci_low) and
    /// [`ci_high`](Self::ci_high) are NaN (`null` in JSON), [`floor`](Self::floor) is the
    /// threshold in the metric's unit and [`detectable`](Self::detectable) is `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slope: Option<crate::slope_change::SlopeChange>,
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
    /// Between separate runs, how far the host's speed moved by the trials' speed
    /// probes; `None` for interleaved sides or when a run recorded fewer than two.
    pub speed_shift: Option<SpeedShift>,
}

/// Each side's own overrides (`base`, `candidate`: as a result's `config.overrides`
/// records them, space-separated), after the leading ones both share: `ab --scenario
/// long-session --head X` records the scenario's overrides on both sides, and what tells
/// the sides apart is `X`. The shared part ends where both texts have a space or end.
pub fn own_overrides<'a>(base: &'a str, candidate: &'a str) -> (&'a str, &'a str) {
    let common = base
        .bytes()
        .zip(candidate.bytes())
        .take_while(|(b, c)| b == c)
        .count();
    // The longest shared prefix that ends at an override's end on both sides.
    let ends_here = |text: &str, at: usize| at == text.len() || text.as_bytes()[at] == b' ';
    let shared = (0..=common)
        .rev()
        .find(|&at| ends_here(base, at) && ends_here(candidate, at))
        .unwrap_or(0);
    let own = |text: &'a str| text[shared..].trim_start();
    (own(base), own(candidate))
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
    let (base, candidate) = crate::duet::shared_cpu_view(base, candidate);
    let (base, candidate) = (base.as_ref(), candidate.as_ref());
    let interleaving = options
        .interleaving
        .unwrap_or_else(|| Interleaving::of(base, candidate));
    // Between separate runs the hosts' speed probes, when both runs recorded them, say
    // how far the machine moved: that is the drift term of timing and CPU, unless
    // `--drift` set it. Memory does not move with a CPU loop's speed.
    let speed_shift = (interleaving != Interleaving::Interleaved)
        .then(|| SpeedShift::between(base, candidate))
        .flatten();
    let mut options = options.clone();
    if let Some(shift) = speed_shift {
        options.drift.timing.get_or_insert(shift.drift_spread());
        options.drift.cpu.get_or_insert(shift.drift_spread());
    }
    let options = &options;
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
                let mut row = Measured::new(metric, b, c, &values, interleaving, options);
                if metric.is_slope() {
                    let interleaved = interleaving == Interleaving::Interleaved;
                    let test = crate::slope_change::test(metric, base, candidate, interleaved);
                    row.test = test.map(|(test, _)| test);
                    row.slope_from_fits = Some(test.is_some_and(|(_, fits)| fits));
                }
                measured.push(row);
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
    let levels = significance::holm_levels(&p_values, options.alpha);
    let tested = p_values.iter().flatten().count();
    let metrics = measured
        .into_iter()
        .zip(adjusted.into_iter().zip(levels))
        .map(|(measured, (p_adjusted, level))| {
            measured.judged(p_adjusted, level, tested, interleaving, options)
        })
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
        speed_shift,
    }
}

/// One metric's numbers before the family's adjustment gives its verdict.
struct Measured {
    metric: Metric,
    base: MetricStats,
    candidate: MetricStats,
    /// `candidate median - base median`.
    delta: f64,
    /// `candidate median / base median`.
    ratio: f64,
    /// The test, for a noisy metric with two samples or more a side, or a slope's.
    test: Option<significance::Welch>,
    /// For a slope metric, whether its test's error came from the two fits.
    slope_from_fits: Option<bool>,
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
            test,
            slope_from_fits: None,
        }
    }

    fn judged(
        self,
        p_adjusted: Option<f64>,
        level: Option<f64>,
        tested: usize,
        interleaving: Interleaving,
        options: &CompareOptions,
    ) -> MetricComparison {
        let metric = self.metric;
        if let Some(threshold) = options.slope_threshold(metric) {
            return self.judged_slope(p_adjusted, level, tested, threshold, options);
        }
        let nature = metric.nature();
        let direction = metric.direction();
        let floor = options.floor(metric);
        let exact = nature == Nature::Exact;
        // The row shows the test's estimate and its interval at the level Holm's
        // procedure judged the metric at, and the verdict is read from exactly these
        // numbers, so the two can never disagree (docs/verdicts.md, "One verdict").
        let judged_test = self.test.zip(level);
        let (ratio, ci_low, ci_high) = match judged_test {
            Some((test, level)) => {
                let (low, high) = test.interval(level);
                (test.estimate(), low, high)
            }
            None => (self.ratio, self.ratio, self.ratio),
        };
        let centers = judged_test.map(|(test, _)| test.centers());
        let delta = centers.map_or(self.delta, |(base, candidate)| candidate - base);
        let change = Change {
            delta,
            ratio,
            samples: self.base.n().min(self.candidate.n()),
            significant: judged_test.is_some() && (ci_low > 1.0 || ci_high < 1.0),
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
            if statistical.is_finite() {
                statistical.clamp(floor.min(DETECTABLE_CAP), DETECTABLE_CAP)
            } else {
                statistical
            }
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
            delta,
            base_center: centers.map(|(base, _)| base),
            candidate_center: centers.map(|(_, candidate)| candidate),
            ratio,
            ci_low,
            ci_high,
            confidence: level
                .filter(|_| judged_test.is_some())
                .map(|level| 1.0 - level),
            p_value: self.test.map(|test| test.p_value),
            p_adjusted,
            detectable,
            slope: None,
            trials_for_target,
        }
    }

    /// [`Measured::judged`] for a slope: the difference, its interval and threshold in
    /// the metric's unit ([`crate::slope_change`]).
    fn judged_slope(
        self,
        p_adjusted: Option<f64>,
        level: Option<f64>,
        tested: usize,
        threshold: f64,
        options: &CompareOptions,
    ) -> MetricComparison {
        let metric = self.metric;
        let judged_test = self.test.zip(level);
        let centers = self.test.map(|test| test.centers());
        let delta = centers.map_or(self.delta, |(base, candidate)| candidate - base);
        let interval = judged_test.map(|(test, level)| test.difference_interval(level));
        let (low, high) = interval.unwrap_or((delta, delta));
        let detectable = self.test.map_or(f64::INFINITY, |test| {
            test.detectable_difference(options.alpha / tested.max(1) as f64)
        });
        MetricComparison {
            metric,
            unit: metric.unit(),
            direction: metric.direction(),
            nature: metric.nature(),
            floor: threshold,
            floor_bytes: None,
            verdict: crate::slope_change::judge(delta, interval, threshold, metric.direction()),
            base: self.base,
            candidate: self.candidate,
            delta,
            base_center: centers.map(|(base, _)| base),
            candidate_center: centers.map(|(_, candidate)| candidate),
            ratio: f64::NAN,
            ci_low: f64::NAN,
            ci_high: f64::NAN,
            confidence: level
                .filter(|_| judged_test.is_some())
                .map(|level| 1.0 - level),
            p_value: self.test.map(|test| test.p_value),
            p_adjusted,
            detectable: None,
            slope: Some(crate::slope_change::SlopeChange {
                threshold,
                low,
                high,
                detectable,
                from_fits: self.slope_from_fits.unwrap_or(false),
            }),
            trials_for_target: None,
        }
    }
}

/// What is known about one metric's change, for [`judge`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    /// The change in the metric's unit.
    pub delta: f64,
    /// The change as a ratio candidate / base: the test's estimate for a tested
    /// metric, the ratio of medians otherwise.
    pub ratio: f64,
    /// The fewer of the two sides' successful samples.
    pub samples: usize,
    /// Whether the family-adjusted test found a change: its interval excludes 1.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::side;
    use crate::trial::{Sample, record};

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
    fn a_scenario_both_sides_ran_is_left_out_of_their_own_overrides() {
        let scenario = "model.script={ turns = [{ text = \"a b\" }] } session.turns=100";
        let base = scenario.to_string();
        let head = format!("{scenario} measure.env.LEAK=1");
        assert_eq!(own_overrides(&base, &head), ("", "measure.env.LEAK=1"));
        // Shared text that ends inside an override is not shared.
        assert_eq!(
            own_overrides("session.turns=10", "session.turns=100"),
            ("session.turns=10", "session.turns=100")
        );
        assert_eq!(own_overrides("a=1 b=2", "a=1 b=3"), ("b=2", "b=3"));
        assert_eq!(own_overrides("", "a=1"), ("", "a=1"));
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
        // The test's estimate: the geometric mean of the five pairs' ratios.
        let pairs = [
            (0.40, 0.60),
            (0.41, 0.62),
            (0.42, 0.61),
            (0.40, 0.63),
            (0.43, 0.60),
        ];
        let mean_log: f64 = pairs
            .iter()
            .map(|(b, c): &(f64, f64)| (c / b).ln())
            .sum::<f64>()
            / 5.0;
        assert!((cold.ratio - mean_log.exp()).abs() < 1e-12, "{cold:?}");
        assert!(cold.ci_low <= cold.ratio && cold.ratio <= cold.ci_high);
        assert!(cold.ci_low > 1.2);
        // Holm judged cold first or second of three: its interval is at 1 − 0.05/3 or
        // 1 − 0.05/2, not at a fixed 95%.
        let confidence = cold.confidence.unwrap();
        assert!(
            [1.0 - 0.05 / 3.0, 1.0 - 0.05 / 2.0]
                .iter()
                .any(|c| (c - confidence).abs() < 1e-12),
            "{cold:?}"
        );
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

    /// Whether `row`'s verdict and the interval printed beside it contradict each
    /// other: "within noise" beside an interval wholly beyond the threshold, or a
    /// verdict of change beside an interval that holds no change (or points the
    /// other way).
    fn contradiction(row: &MetricComparison) -> Option<String> {
        let (low, high, floor) = (row.ci_low, row.ci_high, row.floor);
        let worse_up = row.direction == Direction::LowerIsBetter;
        let clear = low > 1.0 + floor || high < 1.0 - floor;
        let wrong = match row.verdict {
            Verdict::WithinNoise => clear,
            Verdict::Regressed if worse_up => low <= 1.0,
            Verdict::Regressed => high >= 1.0,
            Verdict::Improved if worse_up => high >= 1.0,
            Verdict::Improved => low <= 1.0,
            _ => false,
        };
        let outside = !(low <= row.ratio && row.ratio <= high);
        (wrong || outside).then(|| {
            format!(
                "{} {:+.1}% ({:+.1}% .. {:+.1}%) {}",
                row.metric,
                row.change() * 100.0,
                (low - 1.0) * 100.0,
                (high - 1.0) * 100.0,
                row.verdict.word()
            )
        })
    }

    #[test]
    fn the_readme_example_does_not_call_an_interval_clear_of_its_threshold_noise() {
        // The README's `compare examples/results/base.json examples/results/candidate.json`
        // printed cold +42.5%, interval +34.1% .. +48.4%, "within noise": a bootstrap
        // interval of medians beside a verdict from another statistic.
        let load = |name: &str| {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../examples/results")
                .join(name);
            crate::result::ResultFile::load(&path).unwrap().side
        };
        let (base, candidate) = (load("base.json"), load("candidate.json"));
        for options in [
            CompareOptions::default(),
            CompareOptions {
                drift: DriftSpread {
                    timing: Some(0.0),
                    cpu: Some(0.0),
                    memory: Some(0.0),
                },
                ..CompareOptions::default()
            },
        ] {
            let comparison = compare(&base, &candidate, &options);
            let wrong: Vec<String> = comparison
                .metrics
                .iter()
                .filter_map(contradiction)
                .collect();
            assert_eq!(wrong, Vec::<String>::new(), "{options:?}");
        }
    }

    #[test]
    fn the_verdict_and_the_interval_beside_it_never_contradict() {
        // Many synthetic comparisons: 2 to 10 trials a side, interleaved or separate
        // runs, spreads from quiet to a loaded machine, changes from none to tripling,
        // three metrics judged together (so Holm gives them different levels). Today's
        // ab printed warm +265.9% "within noise" beside +228.2% .. +362.2% from three
        // interleaved trials of a 300 ms startup delay.
        let mut rng = crate::rng::SplitMix64::new(31);
        let mut uniform = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let mut normal = move || {
            // Box–Muller from two uniforms in (0, 1].
            let (u, v) = (1.0 - uniform(), uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        };
        let metrics = [Metric::Cold, Metric::Warm, Metric::Rss];
        let mut checked = 0;
        let mut verdicts = BTreeSet::new();
        for case in 0..600 {
            let trials = [2, 3, 3, 5, 10][case % 5];
            let spread = [0.005, 0.05, 0.2, 0.5][case / 5 % 4];
            let change = [1.0, 1.04, 1.3, 3.0][case / 20 % 4];
            let interleaving = [Interleaving::Interleaved, Interleaving::Separate][case / 80 % 2];
            let (mut base, mut head) = (Side::new("b"), Side::new("h"));
            for &metric in &metrics {
                let factor = if metric == Metric::Warm { 1.0 } else { change };
                for trial in 0..trials {
                    // A load both sides of a pair share, and each start's own noise.
                    let shared = (spread * normal()).exp();
                    let b = shared * (spread * normal()).exp();
                    let h = factor * shared * (spread * normal()).exp();
                    record(&mut base, metric, trial, Sample::Value(b));
                    record(&mut head, metric, trial, Sample::Value(h));
                }
            }
            let options = CompareOptions {
                interleaving: Some(interleaving),
                ..CompareOptions::default()
            };
            for row in &compare(&base, &head, &options).metrics {
                assert_eq!(contradiction(row), None, "case {case}: {row:?}");
                verdicts.insert(row.verdict);
                checked += 1;
            }
        }
        assert_eq!(checked, 1800);
        // The cases reach every verdict the rule can give a noisy metric.
        assert!(
            [Verdict::Regressed, Verdict::Improved, Verdict::WithinNoise]
                .iter()
                .all(|v| verdicts.contains(v)),
            "{verdicts:?}"
        );
    }

    #[test]
    fn three_noisy_trials_say_over_a_doubling_and_how_many_would_do() {
        // The issue's ±199349303288% (git_status, three interleaved trials).
        let base = [0.010, 0.060, 0.012];
        let head = [0.050, 0.011, 0.070];
        let comparison = compare(
            &side("b", &[(Metric::Cold, &base)]),
            &side("c", &[(Metric::Cold, &head)]),
            &interleaved(),
        );
        let row = &comparison.metrics[0];
        assert_eq!(row.detectable, Some(DETECTABLE_CAP), "{row:?}");
        let needed = row.trials_for_target.unwrap();
        assert_eq!(needed.change, 0.06);
        // The same spread needs far more pairs than a result holds for ±6%.
        assert_eq!(needed.trials, None, "{row:?}");
    }

    #[test]
    fn a_wide_interval_reaching_into_the_floor_is_noise() {
        // The medians differ by 40%, but the spread makes the interval reach below 1.2.
        let base = side("b", &[(Metric::Cold, &[1.0, 0.5, 1.5, 0.6, 1.4])]);
        let candidate = side("c", &[(Metric::Cold, &[1.4, 0.7, 2.1, 0.8, 2.0])]);
        let row = &compare(&base, &candidate, &CompareOptions::default()).metrics[0];
        assert_eq!(row.candidate.median(), Some(1.4));
        assert!(row.ratio > 1.3, "{row:?}");
        assert!(row.ci_low < 1.0, "{row:?}");
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
        assert!(row.ratio > 1.15, "{row:?}");
        assert!(row.ci_low < 1.0, "{row:?}");
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
    fn separate_runs_are_told_from_interleaved_ones_and_count_their_drift_once() {
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
        assert_eq!(comparison.metrics[0].verdict, Verdict::WithinNoise);
        // The drift is counted once, as variance: the threshold stays the metric's own,
        // and `--drift 0` leaves a plain Welch test that sees the +8%.
        assert_eq!(comparison.metrics[0].floor, 0.03);
        let no_drift = CompareOptions {
            drift: DriftSpread {
                timing: Some(0.0),
                ..DriftSpread::default()
            },
            ..CompareOptions::default()
        };
        let row = &compare(&base, &later, &no_drift).metrics[0];
        assert_eq!(
            (row.floor, row.verdict),
            (0.03, Verdict::Regressed),
            "{row:?}"
        );
        // Without start times nothing is known, which is treated as separate.
        let bare = side("c", &[(Metric::Cold, &slower)]);
        assert_eq!(Interleaving::of(&base, &bare), Interleaving::Unknown);
    }

    #[test]
    fn separate_runs_take_their_drift_from_the_hosts_speed_probes() {
        // Two runs, one after the other, cold +8% with little spread inside each.
        let run = |sha: &str, scale: f64, start: u64, probe: f64| {
            let values: Vec<f64> = (0..8)
                .map(|i| scale * (1.0 + 0.01 * f64::from(i % 4)))
                .collect();
            let mut side = side(sha, &[(Metric::Cold, &values)]);
            for trial in 0..8u32 {
                let record = side.trial_record_mut(Phase::Measure, trial);
                record.started_unix_ms = Some(start + u64::from(trial));
                record.speed_probe_seconds = Some(probe * (1.0 + 0.002 * f64::from(trial % 2)));
            }
            side
        };
        let base = run("b", 1.0, 0, 0.002);
        // The host ran at the same speed: the +8% is the build's, and it shows.
        let steady = compare(
            &base,
            &run("c", 1.08, 100, 0.002),
            &CompareOptions::default(),
        );
        let shift = steady.speed_shift.unwrap();
        assert!(shift.log_ratio.abs() < 1e-12, "{shift:?}");
        assert_eq!(steady.metrics[0].verdict, Verdict::Regressed, "{steady:?}");
        // The host was 8% slower by its probes: the +8% is within that drift.
        let slower = compare(
            &base,
            &run("c", 1.08, 100, 0.00216),
            &CompareOptions::default(),
        );
        assert!((slower.speed_shift.unwrap().change() - 0.08).abs() < 0.001);
        assert_eq!(
            slower.metrics[0].verdict,
            Verdict::WithinNoise,
            "{slower:?}"
        );
        // `--drift` wins over the probes.
        let told = CompareOptions {
            drift: DriftSpread {
                timing: Some(0.0),
                ..DriftSpread::default()
            },
            ..CompareOptions::default()
        };
        let row = &compare(&base, &run("c", 1.08, 100, 0.00216), &told).metrics[0];
        assert_eq!(row.verdict, Verdict::Regressed);
        // Interleaved sides need no probes: the pairs share the host's moves.
        let mut interleaved_head = run("c", 1.08, 0, 0.00216);
        for record in &mut interleaved_head.trials {
            record.started_unix_ms = record.started_unix_ms.map(|at| at + 1);
        }
        let paired = compare(&base, &interleaved_head, &CompareOptions::default());
        assert_eq!(paired.interleaving, Interleaving::Interleaved);
        assert_eq!(paired.speed_shift, None);
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
        let mut rng = crate::rng::SplitMix64::new(2026);
        let mut uniform = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let options = CompareOptions {
            interleaving: Some(Interleaving::Interleaved),
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
}
