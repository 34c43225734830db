//! How two sides are compared: the practical thresholds (the global noise, each metric's
//! own floor, the byte part of a size's), the family's false-alarm rate, and the drift
//! allowed between separate runs.

use super::Interleaving;
use crate::metric::{Metric, Nature};
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
    /// bytes is [`Verdict::Changed`](crate::compare::Verdict::Changed), never a regression.
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
    /// The metrics the comparison gates on (`ab`'s watched metrics): Holm's family at
    /// [`alpha`](Self::alpha) is these alone, so that forty other tested metrics cannot
    /// make a large change of one of them undecidable. Every other tested metric is judged
    /// as without gating, by Holm over all tested metrics (gated ones included), which is
    /// stricter. `None`: one family of every tested metric.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gated: Option<BTreeSet<Metric>>,
}

/// The drift spreads a comparison of separate runs uses, one per nature; `None`:
/// the nature's default ([`Nature::drift_spread`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct DriftSpread {
    /// Wall times.
    pub timing: Option<f64>,
    /// CPU times.
    pub cpu: Option<f64>,
    /// RSS, PSS and the other memory metrics.
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
            gated: None,
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
