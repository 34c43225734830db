//! Whether two sides of one metric differ: Welch's t-test on log values, Student's
//! paired t-test of interleaved trials, and the smallest change a set of trials could
//! have detected. Holm's adjustment over all metrics of a comparison is [`holm`](super::holm)'s.
//!
//! # The test
//! Whether two sides differ is judged by Welch's two-sample t-test on the logs of
//! the values, two-sided, with the Welch–Satterthwaite degrees of freedom
//! ([`welch`]). Timing and memory are ratio-scale: a regression multiplies them, and
//! their spread grows with their size, so the logs make a change an additive shift
//! and the two sides' spreads alike; their skew (a start-up time has a long right
//! tail) mostly goes. Welch's test does not assume equal variances, and its p-value
//! is continuous at any sample size: five trials a side against five can give any
//! p-value, where the exact rank-sum test can give no less than 2/252 = 0.008,
//! which Holm over a few metrics never lets pass. Values that are not all positive
//! (a count that can be 0) are tested as they are.
//!
//! # Interleaved trials are pairs
//! `ab` runs base and head trial k next to each other (ABBA order), so whatever the
//! machine did to one it mostly did to the other: a load that makes both 20% slower
//! for a minute is, to Welch's test, spread it must see through, and it hides a 10%
//! change. [`paired`] tests the per-pair log ratios instead (Student's paired t-test,
//! n − 1 degrees of freedom): the common part cancels. `compare` uses it when the sides
//! were interleaved and every trial of one side has its partner in the other.
//!
//! # What a run could have seen
//! [`Welch::detectable_change`] is the relative change the test would detect with
//! 80% power at the level it is given, from the metric's standard error and degrees
//! of freedom. It is what "could detect ±6%" means; see `docs/verdicts.md`.
//!
//! ```
//! use bench_core::stats::{holm, welch};
//!
//! let base = [1.00, 1.02, 0.99, 1.01, 1.00];
//! let slower = [1.10, 1.12, 1.09, 1.11, 1.13];
//! let p = welch(&base, &slower).unwrap().p_value;
//! assert!(p < 0.001);
//! // One clear change among three metrics keeps its significance.
//! let adjusted = holm(&[Some(p), Some(0.4), Some(0.9)]);
//! assert!(adjusted[0].unwrap() < 0.05);
//! ```

use super::distributions::{t_quantile, t_two_sided};
use super::summary::mean_and_variance;

/// The power [`Welch::detectable_change`] is computed for.
pub const POWER: f64 = 0.80;

/// A t-test of one metric's two sides: Welch's ([`welch`]) or the paired test of
/// interleaved trials ([`paired`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    /// Whether the test was made on the logs of the values (all of them positive).
    pub log_scale: bool,
    /// The candidate's mean minus the base's, on the tested scale.
    pub difference: f64,
    /// The standard error of [`difference`](Self::difference).
    pub standard_error: f64,
    /// The degrees of freedom: Welch–Satterthwaite's, or pairs − 1.
    pub df: f64,
    /// The two-sided p-value of "no change".
    pub p_value: f64,
    /// The base side's mean on the tested scale, which turns a difference of raw
    /// values into a fraction.
    pub base_mean: f64,
    /// What the standard error is made of, per trial: the base's and the candidate's
    /// sample variances on the tested scale (for the paired test, the per-pair
    /// variance and 0), which shrink as trials are added.
    pub per_trial_variance: [f64; 2],
    /// The part of the variance of the difference that no number of trials shrinks:
    /// the drift between two separate runs (0 for interleaved sides).
    pub known_variance: f64,
}

/// Welch's test of `candidate` against `base`, on log values when every value is
/// positive; `None` when a side has fewer than two finite values. Equal sides
/// without spread have p = 1; different ones without spread p = 0.
pub fn welch(base: &[f64], candidate: &[f64]) -> Option<Welch> {
    welch_between_runs(base, candidate, 0.0)
}

/// Student's paired t-test of `candidate[i]` against `base[i]` (the same trial of two
/// interleaved sides), on log values when every value is positive: the mean of the
/// per-pair differences over its standard error, n − 1 degrees of freedom. `None` with
/// fewer than two pairs with finite values or sides of different lengths.
pub fn paired(base: &[f64], candidate: &[f64]) -> Option<Welch> {
    paired_on(base, candidate, true)
}

/// [`paired`] on the values as they are, never their logs: for slopes, whose
/// difference is what matters and whose values may be 0 or negative
/// ([`SlopeChange`](super::SlopeChange)).
pub fn paired_difference(base: &[f64], candidate: &[f64]) -> Option<Welch> {
    paired_on(base, candidate, false)
}

fn paired_on(base: &[f64], candidate: &[f64], logs_allowed: bool) -> Option<Welch> {
    if base.len() != candidate.len() {
        return None;
    }
    let pairs: Vec<(f64, f64)> = base
        .iter()
        .zip(candidate)
        .map(|(&b, &c)| (b, c))
        .filter(|(b, c)| b.is_finite() && c.is_finite())
        .collect();
    if pairs.len() < 2 {
        return None;
    }
    let log_scale = logs_allowed && pairs.iter().all(|&(b, c)| b > 0.0 && c > 0.0);
    let scale = |v: f64| if log_scale { v.ln() } else { v };
    let differences: Vec<f64> = pairs.iter().map(|&(b, c)| scale(c) - scale(b)).collect();
    let bases: Vec<f64> = pairs.iter().map(|&(b, _)| scale(b)).collect();
    let n = differences.len() as f64;
    let (difference, variance) = mean_and_variance(&differences);
    let (base_mean, _) = mean_and_variance(&bases);
    let standard_error = (variance / n).sqrt();
    let df = n - 1.0;
    let p_value = two_sided_p(difference, standard_error, df);
    Some(Welch {
        log_scale,
        difference,
        standard_error,
        df,
        p_value,
        base_mean,
        per_trial_variance: [variance, 0.0],
        known_variance: 0.0,
    })
}

/// The two-sided p-value of "no change" for `difference` with `standard_error` at `df`
/// degrees of freedom; without spread the sides are equal (1) or certainly differ (0).
fn two_sided_p(difference: f64, standard_error: f64, df: f64) -> f64 {
    if standard_error > 0.0 {
        t_two_sided(difference / standard_error, df)
    } else if difference == 0.0 {
        1.0
    } else {
        0.0
    }
}

/// [`welch`] for sides measured in two separate runs, each with its own offset of
/// standard deviation `drift_spread` (relative, the log scale's): the difference
/// of the two offsets adds `2 · drift_spread²` to the variance of the difference,
/// a component taken as known (it adds nothing to the degrees of freedom's
/// denominator). On raw values the spread is scaled by the base's mean.
pub fn welch_between_runs(base: &[f64], candidate: &[f64], drift_spread: f64) -> Option<Welch> {
    welch_on(base, candidate, drift_spread, true)
}

/// [`welch`] on the values as they are, never their logs (see [`paired_difference`]).
pub fn welch_difference(base: &[f64], candidate: &[f64]) -> Option<Welch> {
    welch_on(base, candidate, 0.0, false)
}

/// One estimate with its standard error and degrees of freedom: a fitted slope of one
/// trial (points − 2 degrees of freedom).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The estimate itself, in the unit of what was fitted.
    pub value: f64,
    /// Its standard error, in the same unit.
    pub standard_error: f64,
    /// Its degrees of freedom.
    pub df: f64,
}

/// The test of `candidate − base` for two independent estimates, each with its own
/// error (two fitted slopes of one trial a side): the errors add in quadrature and the
/// degrees of freedom are Welch–Satterthwaite's. `None` when an estimate is not finite
/// or has no degrees of freedom.
pub fn estimates_difference(base: Estimate, candidate: Estimate) -> Option<Welch> {
    let usable = |e: &Estimate| {
        e.value.is_finite()
            && e.standard_error.is_finite()
            && e.standard_error >= 0.0
            && e.df >= 1.0
    };
    if !usable(&base) || !usable(&candidate) {
        return None;
    }
    let (v1, v2) = (
        base.standard_error.powi(2),
        candidate.standard_error.powi(2),
    );
    let difference = candidate.value - base.value;
    let standard_error = (v1 + v2).sqrt();
    let sampled = v1 * v1 / base.df + v2 * v2 / candidate.df;
    let df = if sampled > 0.0 {
        (v1 + v2).powi(2) / sampled
    } else {
        base.df + candidate.df
    };
    Some(Welch {
        log_scale: false,
        difference,
        standard_error,
        df,
        p_value: two_sided_p(difference, standard_error, df),
        base_mean: base.value,
        // One estimate a side: the errors are what they are, more trials are another test.
        per_trial_variance: [v1, v2],
        known_variance: 0.0,
    })
}

fn welch_on(
    base: &[f64],
    candidate: &[f64],
    drift_spread: f64,
    logs_allowed: bool,
) -> Option<Welch> {
    let finite =
        |values: &[f64]| -> Vec<f64> { values.iter().copied().filter(|v| v.is_finite()).collect() };
    let (base, candidate) = (finite(base), finite(candidate));
    if base.len() < 2 || candidate.len() < 2 {
        return None;
    }
    let log_scale = logs_allowed && base.iter().chain(&candidate).all(|&v| v > 0.0);
    let scaled = |values: Vec<f64>| -> Vec<f64> {
        if log_scale {
            values.into_iter().map(f64::ln).collect()
        } else {
            values
        }
    };
    let (base, candidate) = (scaled(base), scaled(candidate));
    let (base_mean, base_variance) = mean_and_variance(&base);
    let (candidate_mean, candidate_variance) = mean_and_variance(&candidate);
    let (n1, n2) = (base.len() as f64, candidate.len() as f64);
    let (v1, v2) = (base_variance / n1, candidate_variance / n2);
    let drift = if log_scale {
        drift_spread
    } else {
        drift_spread * base_mean.abs()
    };
    let between = 2.0 * drift * drift;
    let difference = candidate_mean - base_mean;
    let standard_error = (v1 + v2 + between).sqrt();
    let (df, p_value) = if standard_error > 0.0 {
        let df = satterthwaite(v1, n1, v2, n2, between);
        (df, two_sided_p(difference, standard_error, df))
    } else {
        (n1 + n2 - 2.0, two_sided_p(difference, 0.0, n1 + n2 - 2.0))
    };
    Some(Welch {
        log_scale,
        difference,
        standard_error,
        df,
        p_value,
        base_mean,
        per_trial_variance: [base_variance, candidate_variance],
        known_variance: between,
    })
}

impl Welch {
    /// The smallest relative change (0.06 = ±6%) this test would find with
    /// [`POWER`] at two-sided level `alpha`, for the spread and counts it saw:
    /// `(t(1 − alpha/2) + t(POWER)) · standard error` on the log scale, as a
    /// ratio. Infinite when the raw values' base mean is 0 (no fraction of 0).
    pub fn detectable_change(&self, alpha: f64) -> f64 {
        self.as_fraction(
            (t_quantile(1.0 - alpha / 2.0, self.df) + t_quantile(POWER, self.df))
                * self.standard_error,
        )
    }

    /// How many trials a side (pairs, for the paired test) would make
    /// [`detectable_change`](Self::detectable_change) at `alpha` at most `target`,
    /// if the spread stayed what this test saw: the smallest such count up to
    /// `most`, `None` when even `most` would not (and always when the drift
    /// between separate runs alone exceeds the target, as more trials do not shrink
    /// it). What a person asks before choosing `--trials`.
    pub fn trials_for(&self, target: f64, alpha: f64, most: u32) -> Option<u32> {
        let detectable_at = |trials: u32| {
            let n = f64::from(trials);
            let [base, candidate] = self.per_trial_variance.map(|variance| variance / n);
            let variance = base + candidate + self.known_variance;
            // For the paired test (one variance, the other 0) this is n − 1.
            let df = satterthwaite(base, n, candidate, n, self.known_variance);
            self.as_fraction(
                (t_quantile(1.0 - alpha / 2.0, df) + t_quantile(POWER, df)) * variance.sqrt(),
            )
        };
        if most < 2 || detectable_at(most) > target {
            return None;
        }
        // The detectable change shrinks as trials are added: bisect for the first
        // count that reaches the target.
        let (mut low, mut high) = (1, most);
        while high - low > 1 {
            let middle = low + (high - low) / 2;
            if detectable_at(middle) <= target {
                high = middle;
            } else {
                low = middle;
            }
        }
        Some(high)
    }

    /// The change the test estimates, as a ratio candidate / base: the ratio of the
    /// sides' geometric means on logs (for pairs, the geometric mean of the pairs'
    /// ratios), else the difference of the means over the base's mean. It is the
    /// centre of [`interval`](Self::interval) on the tested scale.
    pub fn estimate(&self) -> f64 {
        self.as_ratio(self.difference)
    }

    /// What the test compares, in the values' unit: the base's and the candidate's
    /// geometric means on logs (for pairs, over the pairs), else their means. Their
    /// ratio is [`estimate`](Self::estimate) (on raw values, when the base's mean is
    /// positive).
    pub fn centers(&self) -> (f64, f64) {
        if self.log_scale {
            (
                self.base_mean.exp(),
                (self.base_mean + self.difference).exp(),
            )
        } else {
            (self.base_mean, self.base_mean + self.difference)
        }
    }

    /// The test's own two-sided confidence interval of the change at `level` (0.05:
    /// a 95% interval), as ratios candidate / base: `difference ± t(1 − level/2; df)
    /// · standard error` on the tested scale. It excludes 1 (no change) exactly when
    /// the p-value is below `level`, so a verdict read from it cannot contradict it.
    pub fn interval(&self, level: f64) -> (f64, f64) {
        let half = t_quantile(1.0 - level / 2.0, self.df) * self.standard_error;
        // A zero standard error makes the interval the point, whatever the quantile.
        let half = if half.is_nan() { 0.0 } else { half };
        (
            self.as_ratio(self.difference - half),
            self.as_ratio(self.difference + half),
        )
    }

    /// The test's own two-sided confidence interval of the difference candidate − base
    /// on the tested scale at `level`: `difference ± t(1 − level/2; df) · standard
    /// error`. For a test on raw values (a slope's) this is in the values' unit, and it
    /// excludes 0 exactly when the p-value is below `level`.
    pub fn difference_interval(&self, level: f64) -> (f64, f64) {
        let half = t_quantile(1.0 - level / 2.0, self.df) * self.standard_error;
        let half = if half.is_nan() { 0.0 } else { half };
        (self.difference - half, self.difference + half)
    }

    /// The smallest difference on the tested scale this test would find with [`POWER`]
    /// at two-sided level `alpha`: for a test on raw values, in the values' unit.
    pub fn detectable_difference(&self, alpha: f64) -> f64 {
        (t_quantile(1.0 - alpha / 2.0, self.df) + t_quantile(POWER, self.df)) * self.standard_error
    }

    /// A shift on the tested scale as a ratio, monotone in the shift: `exp` on logs,
    /// `1 + shift / |base mean|` on raw values (±infinity when that mean is 0).
    fn as_ratio(&self, shift: f64) -> f64 {
        if self.log_scale {
            shift.exp()
        } else if self.base_mean != 0.0 {
            1.0 + shift / self.base_mean.abs()
        } else if shift == 0.0 {
            1.0
        } else {
            f64::INFINITY.copysign(shift)
        }
    }

    /// A shift on the tested scale as a relative change: a ratio on logs, a fraction
    /// of the base's mean on raw values (infinite when that mean is 0).
    fn as_fraction(&self, shift: f64) -> f64 {
        if self.log_scale {
            shift.exp_m1()
        } else if self.base_mean != 0.0 {
            shift / self.base_mean.abs()
        } else {
            f64::INFINITY
        }
    }
}

/// Welch–Satterthwaite's degrees of freedom of a difference whose variance is
/// `v1 + v2 + known`, `v1` and `v2` the variances of two means of `n1` and `n2` values:
/// the known part adds nothing to the denominator, so with nothing sampled the degrees
/// are many (the normal's quantiles).
fn satterthwaite(v1: f64, n1: f64, v2: f64, n2: f64, known: f64) -> f64 {
    let sampled = v1 * v1 / (n1 - 1.0) + v2 * v2 / (n2 - 1.0);
    if sampled > 0.0 {
        (v1 + v2 + known).powi(2) / sampled
    } else {
        1e9
    }
}

#[cfg(test)]
#[path = "t_test_tests.rs"]
mod tests;
