//! Comparing two sides metric by metric: medians, a test of each change with the
//! false-alarm rate controlled over all metrics at once, the test's estimate of the
//! change and its confidence interval, and a verdict read from that interval that
//! respects what kind of number each metric is.
//!
//! The rule and the reasons for its defaults are in `docs/verdicts.md`; in short:
//!
//! # The verdict, by the metric's [`Nature`](crate::Nature)
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
//!      ([`stats::paired`](crate::stats::paired)), else Welch's ([`stats::welch`](crate::stats::welch)), and the
//!      interval is its own at the level Holm's procedure over every tested metric
//!      judged this one at ([`stats::holm_levels`](crate::stats::holm_levels)), at family level
//!      [`CompareOptions::alpha`]: the chance of any false verdict in an A/A
//!      comparison stays at or below alpha;
//!   2. *it matters*: the test's estimate of the change (the centre of that
//!      interval) lies beyond the metric's practical threshold
//!      ([`Nature::default_threshold`](crate::Nature::default_threshold), or [`CompareOptions::noise`], or the
//!      metric's own from [`CompareOptions::with_floor`]).
//!
//!   Else [`Verdict::WithinNoise`]. So "regressed" never stands beside an interval
//!   that holds no change, and "within noise" never beside one wholly beyond the
//!   threshold.
//! - **Slopes** over a session's turns ([`Metric::is_slope`](crate::Metric::is_slope)): by their difference in
//!   the metric's unit, its interval and a threshold in that unit
//!   ([`SlopeChange`](crate::stats::SlopeChange)); the row's [`MetricComparison::slope`] holds them and its
//!   ratios are not numbers.
//!
//! When the two sides were not measured interleaved (two separate runs, or `ab
//! --sequential`: see [`Interleaving`]), each run carries the machine's offset while
//! it ran, which more trials do not average away: Welch's test counts it as variance
//! ([`CompareOptions::drift`], by default [`Nature::drift_spread`](crate::Nature::drift_spread)), and that is the
//! only place drift enters (`--drift 0` means none).
//!
//! # What each row could have seen
//! [`MetricComparison::detectable`] is the smallest change the run could have
//! detected (80% power at the Bonferroni share of alpha), never below the threshold
//! and never above [`DETECTABLE_CAP`]: a "within noise" from three noisy trials and
//! one from thirty quiet ones differ.
//!
//! Whether a change is an improvement or a regression depends on the metric's
//! [`Direction`](crate::Direction).
//!
//! # Processes
//! A daemon that appears in one build's measurements changes every memory total.
//! [`Comparison::process_counts`] lists, per phase, how many processes each side's
//! trials found, and [`ProcessCounts::changed`] says when they disagree.
//!
//! # What a comparison reads besides the samples
//! - [`duet`]: which trials of a duet shared a CPU, the ones the timed metrics compare.
//! - [`speed_probe`]: the host's speed before each trial, the drift between two runs.
//! - [`thresholds`]: the practical thresholds a spec set, carried in the result files.
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

mod compute;
pub mod duet;
mod facts;
mod interleaving;
mod measured;
mod options;
mod rows;
pub mod speed_probe;
mod summary;
#[cfg(test)]
mod tests;
pub mod thresholds;
mod verdict;

pub use compute::compare;
pub use facts::{ENVIRONMENT_FACTS, ProcessCounts, SideFacts};
pub use interleaving::Interleaving;
pub use options::{
    CompareOptions, DEFAULT_ALPHA, DEFAULT_EXACT_BYTES, DETECTABLE_CAP, DriftSpread,
};
pub use rows::{
    AloneScale, FailedSample, MetricComparison, MissingMetric, TrialsForTarget, failed_samples,
};
pub use summary::{Comparison, VerdictCounts, own_overrides};
pub use verdict::{Change, Threshold, Verdict, judge, verdict};
