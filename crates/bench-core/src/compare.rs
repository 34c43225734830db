//! Comparing two sides metric by metric: medians, their ratio, a bootstrap
//! confidence interval of that ratio, and a verdict.
//!
//! # The verdict
//! The ratio is `candidate median / base median`. Its confidence interval comes
//! from a percentile bootstrap: both sides' samples are resampled with
//! replacement [`CompareOptions::resamples`] times, and the ratio of the
//! resampled medians is taken each time. The generator is seeded, so the same
//! inputs always give the same interval. A change counts only when the whole
//! interval lies beyond the noise floor on one side: above `1 + noise` or below
//! `1 - noise`. Whether that is an improvement or a regression depends on the
//! metric's [`Direction`].
//!
//! # Few trials
//! With a single sample on both sides every resample is the same, so the interval
//! degenerates to the point ratio and the verdict rests on the noise floor alone.
//! With one sample on one side only, the interval reflects the other side's spread.
//! This is deliberate: it is what the seed harness did with single trials (a 20%
//! floor on shared machines), and the report says how many trials each side had.
//! The interval is always widened to contain the point ratio.
//!
//! ```
//! use bench_core::compare::{compare, CompareOptions, Verdict};
//! use bench_core::{record, Metric, Sample, Side};
//!
//! let mut base = Side::new("base");
//! let mut candidate = Side::new("candidate");
//! for (trial, (b, c)) in [(0.40, 0.61), (0.42, 0.60), (0.41, 0.62)].into_iter().enumerate() {
//!     record(&mut base, Metric::Cold, trial as u32, Sample::Value(b));
//!     record(&mut candidate, Metric::Cold, trial as u32, Sample::Value(c));
//! }
//! let comparison = compare(&base, &candidate, &CompareOptions::default());
//! assert_eq!(comparison.metrics[0].verdict, Verdict::Regressed);
//! ```

use crate::metric::{Direction, Metric};
use crate::result::{Role, Side};
use crate::rng::SplitMix64;
use crate::stats::MetricStats;
use crate::units::Unit;

/// The default noise floor: changes within ±20% are noise. The seed harness uses
/// 20% on shared 4-vCPU sandboxes.
pub const DEFAULT_NOISE: f64 = 0.20;

/// How two sides are compared.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CompareOptions {
    /// The noise floor as a fraction (0.2 = 20%), in `0..1`.
    pub noise: f64,
    /// The confidence level of the interval, in `0..1` (0.95).
    pub confidence: f64,
    /// How many bootstrap resamples to draw per metric.
    pub resamples: u32,
    /// The bootstrap generator's seed; each metric derives its own stream from it.
    pub seed: u64,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            noise: DEFAULT_NOISE,
            confidence: 0.95,
            resamples: 10_000,
            // "clibench" in ASCII.
            seed: 0x636c_6962_656e_6368,
        }
    }
}

/// What a comparison concluded about one metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The candidate is better beyond the noise floor.
    Improved,
    /// The candidate is worse beyond the noise floor.
    Regressed,
    /// The interval reaches into the noise floor.
    WithinNoise,
}

impl Verdict {
    /// The verdict as a word for people: `improved`, `regressed`, `within noise`.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::WithinNoise => "within noise",
        }
    }

    /// The verdict as written in JSON and CSV: `improved`, `regressed`, `within_noise`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::WithinNoise => "within_noise",
        }
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
    /// The base side's statistics.
    pub base: MetricStats,
    /// The candidate side's statistics.
    pub candidate: MetricStats,
    /// `candidate median / base median`; 1 when both are 0, infinite (`null` in
    /// JSON) when only the base is 0.
    pub ratio: f64,
    /// Lower end of the confidence interval of the ratio.
    pub ci_low: f64,
    /// Upper end of the confidence interval of the ratio.
    pub ci_high: f64,
    /// The conclusion.
    pub verdict: Verdict,
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
}

impl Comparison {
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

    /// How many metrics got `verdict`.
    pub fn count(&self, verdict: Verdict) -> usize {
        self.metrics
            .iter()
            .filter(|row| row.verdict == verdict)
            .count()
    }
}

/// Compares `candidate` against `base` for every metric either side has samples of.
pub fn compare(base: &Side, candidate: &Side, options: &CompareOptions) -> Comparison {
    let mut metrics = Vec::new();
    let mut missing = Vec::new();
    for metric in Metric::ALL {
        let base_stats = MetricStats::of(base, metric);
        let candidate_stats = MetricStats::of(candidate, metric);
        match (base_stats, candidate_stats) {
            (None, None) => {}
            (Some(b), Some(c)) if b.n() > 0 && c.n() > 0 => {
                metrics.push(compare_metric(
                    metric,
                    b,
                    c,
                    &base.values(metric),
                    &candidate.values(metric),
                    options,
                ));
            }
            (b, c) => missing.push(MissingMetric {
                metric,
                base: b,
                candidate: c,
            }),
        }
    }
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
    }
}

fn compare_metric(
    metric: Metric,
    base: MetricStats,
    candidate: MetricStats,
    base_values: &[f64],
    candidate_values: &[f64],
    options: &CompareOptions,
) -> MetricComparison {
    // `compare` only gets here with samples on both sides, so both medians exist.
    let ratio = match (base.median(), candidate.median()) {
        (Some(base_median), Some(candidate_median)) => ratio_of(base_median, candidate_median),
        _ => f64::NAN,
    };
    // Each metric gets its own stream, so adding a metric never changes another's interval.
    let seed = options.seed ^ (metric as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let (low, high) = bootstrap_ratio_interval(
        base_values,
        candidate_values,
        options.resamples,
        options.confidence,
        seed,
    );
    let (ci_low, ci_high) = (low.min(ratio), high.max(ratio));
    let direction = metric.direction();
    MetricComparison {
        metric,
        unit: metric.unit(),
        direction,
        base,
        candidate,
        ratio,
        ci_low,
        ci_high,
        verdict: verdict(ci_low, ci_high, options.noise, direction),
    }
}

/// The verdict for an interval `[low, high]` of `candidate / base` under a noise floor.
pub fn verdict(low: f64, high: f64, noise: f64, direction: Direction) -> Verdict {
    let larger = low > 1.0 + noise;
    let smaller = high < 1.0 - noise;
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

    fn side(sha: &str, metrics: &[(Metric, &[f64])]) -> Side {
        let mut side = Side::new(sha);
        for &(metric, values) in metrics {
            for (trial, &value) in values.iter().enumerate() {
                record(&mut side, metric, trial as u32, Sample::Value(value));
            }
        }
        side
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
                (Metric::Warm, &[0.22, 0.21, 0.23, 0.22, 0.22]),
            ],
        );
        let comparison = compare(&base, &candidate, &CompareOptions::default());
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
        assert_eq!(comparison.count(Verdict::Improved), 1);
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
    fn single_samples_degenerate_to_the_point_ratio() {
        let base = side("b", &[(Metric::Install, &[10.0])]);
        let candidate = side("c", &[(Metric::Install, &[13.0])]);
        let row = &compare(&base, &candidate, &CompareOptions::default()).metrics[0];
        assert_eq!((row.ci_low, row.ratio, row.ci_high), (1.3, 1.3, 1.3));
        assert_eq!(row.verdict, Verdict::Regressed);
        let tolerant = CompareOptions {
            noise: 0.5,
            ..CompareOptions::default()
        };
        let row = &compare(&base, &candidate, &tolerant).metrics[0];
        assert_eq!(row.verdict, Verdict::WithinNoise);
    }

    #[test]
    fn direction_decides_the_word() {
        assert_eq!(
            verdict(1.5, 1.7, 0.2, Direction::LowerIsBetter),
            Verdict::Regressed
        );
        assert_eq!(
            verdict(1.5, 1.7, 0.2, Direction::HigherIsBetter),
            Verdict::Improved
        );
        assert_eq!(
            verdict(0.5, 0.7, 0.2, Direction::LowerIsBetter),
            Verdict::Improved
        );
        assert_eq!(
            verdict(0.5, 0.7, 0.2, Direction::HigherIsBetter),
            Verdict::Regressed
        );
        assert_eq!(
            verdict(0.5, 1.0, 0.2, Direction::LowerIsBetter),
            Verdict::WithinNoise
        );
        // Exactly on the floor is not beyond it.
        assert_eq!(
            verdict(1.2, 1.3, 0.2, Direction::LowerIsBetter),
            Verdict::WithinNoise
        );
        let base = side("b", &[(Metric::ReclaimedRss, &[100.0, 101.0, 99.0])]);
        let candidate = side("c", &[(Metric::ReclaimedRss, &[50.0, 51.0, 49.0])]);
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
        let base = side("b", &[(Metric::ReclaimedRss, &[0.0, 0.0])]);
        let same = compare(&base, &base, &CompareOptions::default());
        assert_eq!(same.metrics[0].ratio, 1.0);
        assert_eq!(same.metrics[0].verdict, Verdict::WithinNoise);
        let candidate = side("c", &[(Metric::ReclaimedRss, &[10.0, 12.0])]);
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
