//! Significance over many metrics at once: Welch's t-test of one metric on log
//! values, Holm's step-down adjustment over all metrics of a comparison, and the
//! smallest change a set of trials could have detected.
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
//! # The family
//! A comparison asks the same question of about 25 metrics; at 5% each, most A/A
//! comparisons would find something. [`holm`] adjusts the p-values so that the
//! chance of *any* false verdict among them stays at the family's level (Holm 1979:
//! uniformly more powerful than Bonferroni, valid under any dependence between
//! metrics, which matters because cold and warm, rss and pss move together).
//!
//! # What a run could have seen
//! [`Welch::detectable_change`] is the relative change the test would detect with
//! 80% power at the level it is given, from the metric's standard error and degrees
//! of freedom. It is what "could detect ±6%" means; see `docs/verdicts.md`.
//!
//! ```
//! use bench_core::significance::{holm, welch};
//!
//! let base = [1.00, 1.02, 0.99, 1.01, 1.00];
//! let slower = [1.10, 1.12, 1.09, 1.11, 1.13];
//! let p = welch(&base, &slower).unwrap().p_value;
//! assert!(p < 0.001);
//! // One clear change among three metrics keeps its significance.
//! let adjusted = holm(&[Some(p), Some(0.4), Some(0.9)]);
//! assert!(adjusted[0].unwrap() < 0.05);
//! ```

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
/// ([`crate::slope_change`]).
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
    /// The value.
    pub value: f64,
    /// Its standard error.
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

/// The mean and the sample variance (n − 1) of at least two values.
fn mean_and_variance(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, variance)
}

/// P(|T| ≥ |t|) for Student's T with `df` degrees of freedom (any positive real):
/// the regularized incomplete beta function `I_{df/(df+t²)}(df/2, 1/2)`.
pub fn t_two_sided(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t.is_infinite() {
        return 0.0;
    }
    incomplete_beta(df / (df + t * t), df / 2.0, 0.5).clamp(0.0, 1.0)
}

/// The `p` quantile of Student's T with `df` degrees of freedom, for `p` in
/// `(0, 1)`: the `t` with P(T ≤ t) = p, by bisection of [`t_two_sided`] (60
/// halvings of a bracket found by doubling: far below any printed digit).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.5 {
        return 0.0;
    }
    if p < 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    // P(T > t) = t_two_sided(t) / 2 for t > 0, falling in t.
    let tail = 1.0 - p;
    let upper_tail = |t: f64| t_two_sided(t, df) / 2.0;
    let mut high = 1.0;
    while upper_tail(high) > tail && high < 1e12 {
        high *= 2.0;
    }
    let mut low = 0.0;
    for _ in 0..60 {
        let middle = (low + high) / 2.0;
        if upper_tail(middle) > tail {
            low = middle;
        } else {
            high = middle;
        }
    }
    (low + high) / 2.0
}

/// The regularized incomplete beta function `I_x(a, b)` for `x` in `[0, 1]` and
/// positive `a`, `b`: its continued fraction (evaluated by Lentz's method), on the
/// side of `x` where it converges fast, the other side by `I_x(a, b) = 1 − I_{1−x}(b, a)`.
fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (-x).ln_1p()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(x, a, b) / a
    } else {
        1.0 - front * beta_fraction(1.0 - x, b, a) / b
    }
}

/// The continued fraction of the incomplete beta function,
/// `1 / (1 + d₁ / (1 + d₂ / (1 + ...)))` with `d₂ₘ₊₁ = −(a+m)(a+b+m)x / ((a+2m)(a+2m+1))`
/// and `d₂ₘ = m(b−m)x / ((a+2m−1)(a+2m))`, by the modified Lentz method.
fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let guard = |value: f64| if value.abs() < TINY { TINY } else { value };
    let mut c = 1.0;
    let mut d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0));
    let mut fraction = d;
    for m in 1..=500 {
        let m = f64::from(m);
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 / guard(1.0 + even * d);
        c = guard(1.0 + even / c);
        fraction *= d * c;
        let odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 / guard(1.0 + odd * d);
        c = guard(1.0 + odd / c);
        let step = d * c;
        fraction *= step;
        if (step - 1.0).abs() < 1e-15 {
            break;
        }
    }
    fraction
}

/// ln Γ(x) for x > 0, by the Lanczos approximation (g = 7, nine terms; relative
/// error near 1e-15), with the reflection formula below 1/2.
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const TERMS: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = TERMS[0];
    for (i, &term) in TERMS.iter().enumerate().skip(1) {
        sum += term / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The tests made (index, p-value), smallest p-value first: the order Holm's procedure
/// steps through.
fn ascending(p_values: &[Option<f64>]) -> Vec<(usize, f64)> {
    let mut tested: Vec<(usize, f64)> = p_values
        .iter()
        .enumerate()
        .filter_map(|(index, p)| Some((index, (*p)?)))
        .collect();
    tested.sort_by(|x, y| x.1.total_cmp(&y.1));
    tested
}

/// Holm's step-down adjustment: the adjusted p-value of each test, in the order
/// given, `None` where no test was made. A test is significant at family level α
/// when its adjusted p-value is at most α; the chance of any false one among them
/// is then at most α.
pub fn holm(p_values: &[Option<f64>]) -> Vec<Option<f64>> {
    let tested = ascending(p_values);
    let m = tested.len();
    let mut adjusted = vec![None; p_values.len()];
    let mut running = 0f64;
    for (rank, &(index, p)) in tested.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p).min(1.0));
        adjusted[index] = Some(running);
    }
    adjusted
}

/// The two-sided level at which Holm's step-down procedure judged each test at
/// family level `alpha`, in the order given, `None` where no test was made: a test
/// it rejected at step k (the k-th smallest p-value, counting from 0, of m) has
/// `alpha / (m − k)`; every test it did not reject has the level of the step where
/// it stopped. So a test is rejected exactly when its p-value is at most its level
/// ([`holm`]'s adjusted p-value is then at most `alpha`), and an interval at that
/// level excludes "no change" exactly for the rejected tests: the interval shown
/// beside a verdict is the one the verdict was made at.
pub fn holm_levels(p_values: &[Option<f64>], alpha: f64) -> Vec<Option<f64>> {
    let tested = ascending(p_values);
    let m = tested.len();
    let mut levels = vec![None; p_values.len()];
    let mut stopped: Option<f64> = None;
    for (rank, &(index, p)) in tested.iter().enumerate() {
        let step = alpha / (m - rank) as f64;
        let level = match stopped {
            Some(level) => level,
            None if p <= step => step,
            None => *stopped.insert(step),
        };
        levels[index] = Some(level);
    }
    levels
}

/// P(Z > z) for a standard normal Z.
pub fn normal_upper_tail(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// The complementary error function, from the Chebyshev fit in Numerical Recipes
/// (relative error below 1.2e-7 everywhere): plenty for p-values and power.
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let value = t * poly.exp();
    if x >= 0.0 { value } else { 2.0 - value }
}

/// The `p` quantile of the standard normal distribution (Acklam's rational
/// approximation, relative error below 1.2e-9), for `p` in `(0, 1)`.
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let p = p.clamp(1e-300, 1.0 - 1e-16);
    let low = 0.02425;
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < low {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - low {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

#[cfg(test)]
#[path = "significance_tests.rs"]
mod tests;
