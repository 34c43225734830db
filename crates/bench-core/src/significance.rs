//! Significance over many metrics at once: the rank-sum test of one metric, Holm's
//! step-down adjustment over all metrics of a comparison, and the smallest change a
//! set of trials could have detected.
//!
//! # The test
//! Whether two sides differ is judged by the Wilcoxon–Mann–Whitney rank-sum test,
//! two-sided. Under "no change" and with the trials interleaved, every assignment
//! of the pooled values to the two sides is equally likely, so the test's p-value
//! is exact (conditional on ties, which get mid-ranks) whatever the distribution:
//! no normality, no large-sample assumption, outliers count as one rank. Up to
//! [`EXACT_LIMIT`] pooled samples the permutation distribution is counted exactly;
//! beyond, the normal approximation with the tie correction is used.
//!
//! # The family
//! A comparison asks the same question of about 25 metrics; at 5% each, most A/A
//! comparisons would find something. [`holm`] adjusts the p-values so that the
//! chance of *any* false verdict among them stays at the family's level (Holm 1979:
//! uniformly more powerful than Bonferroni, valid under any dependence between
//! metrics, which matters because cold and warm, rss and pss move together).
//!
//! # What a run could have seen
//! [`detectable_change`] is the relative change this test would detect with 80%
//! power at the level it was given, from the metric's spread (a robust standard
//! deviation of the log values) and the two trial counts. It is what "could detect
//! ±6%" means; see `docs/verdicts.md`.
//!
//! ```
//! use bench_core::significance::{holm, rank_sum_p_value};
//!
//! let base = [1.00, 1.02, 0.99, 1.01, 1.00, 1.03];
//! let slower = [1.10, 1.12, 1.09, 1.11, 1.13, 1.10];
//! let p = rank_sum_p_value(&base, &slower).unwrap();
//! assert!(p < 0.01);
//! // One clear change among three metrics keeps its significance.
//! let adjusted = holm(&[Some(p), Some(0.4), Some(0.9)]);
//! assert!(adjusted[0].unwrap() < 0.05);
//! ```

/// The largest pooled sample count whose permutation distribution is counted
/// exactly; beyond it the normal approximation is as good as the count and the
/// count's cost (`n² · N` steps) grows.
pub const EXACT_LIMIT: usize = 50;

/// The power [`detectable_change`] is computed for.
pub const POWER: f64 = 0.80;

/// The two-sided p-value of the rank-sum test of `a` against `b`; `None` when a
/// side has no finite value. 1 when every value is equal.
pub fn rank_sum_p_value(a: &[f64], b: &[f64]) -> Option<f64> {
    let a: Vec<f64> = a.iter().copied().filter(|v| v.is_finite()).collect();
    let b: Vec<f64> = b.iter().copied().filter(|v| v.is_finite()).collect();
    if a.is_empty() || b.is_empty() {
        return None;
    }
    // The test is symmetric: count subsets of the smaller side, which is cheaper.
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let ranks = doubled_mid_ranks(&small, &large);
    let n = small.len();
    let total = ranks.len();
    let observed: u64 = ranks[..n].iter().sum();
    // The mean of the doubled rank sum: n times the doubled mean rank, N + 1.
    let centre = n as f64 * (total as f64 + 1.0);
    let distance = (observed as f64 - centre).abs();
    if total <= EXACT_LIMIT {
        Some(exact_tail(&ranks, n, centre, distance))
    } else {
        Some(normal_tail(&ranks, n, distance))
    }
}

/// Twice the mid-rank of every pooled value (so ties stay integers), `small`'s
/// values first, then `large`'s.
fn doubled_mid_ranks(small: &[f64], large: &[f64]) -> Vec<u64> {
    let pooled: Vec<f64> = small.iter().chain(large).copied().collect();
    let mut order: Vec<usize> = (0..pooled.len()).collect();
    order.sort_by(|&x, &y| pooled[x].total_cmp(&pooled[y]));
    let mut ranks = vec![0u64; pooled.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && pooled[order[end]] == pooled[order[start]] {
            end += 1;
        }
        // Positions start+1 ..= end share the mid-rank (start + 1 + end) / 2.
        let doubled = (start + 1 + end) as u64;
        for &index in &order[start..end] {
            ranks[index] = doubled;
        }
        start = end;
    }
    ranks
}

/// The exact permutation probability that a rank sum of `n` of the pooled values
/// lies at least `distance` from `centre`.
fn exact_tail(ranks: &[u64], n: usize, centre: f64, distance: f64) -> f64 {
    let mut sorted = ranks.to_vec();
    sorted.sort_unstable();
    let untied = sorted.iter().zip(1u64..).all(|(&rank, i)| rank == 2 * i);
    // Without ties the distribution depends only on the two counts, and sequential
    // looks and simulations ask for the same few again and again.
    let ways = if untied {
        UNTIED.with(|cache| {
            std::rc::Rc::clone(
                cache
                    .borrow_mut()
                    .entry((n, ranks.len()))
                    .or_insert_with(|| std::rc::Rc::new(rank_sum_counts(&sorted, n))),
            )
        })
    } else {
        std::rc::Rc::new(rank_sum_counts(&sorted, n))
    };
    let all: f64 = ways.iter().sum();
    // Sums are integers; the tolerance keeps a tie with the observed distance in
    // the tail despite float rounding.
    let tail: f64 = ways
        .iter()
        .enumerate()
        .filter(|&(sum, _)| (sum as f64 - centre).abs() >= distance - 1e-9)
        .map(|(_, &count)| count)
        .sum();
    (tail / all).min(1.0)
}

type Counts = std::rc::Rc<Vec<f64>>;

thread_local! {
    /// The rank-sum counts of untied samples, by (smaller count, pooled count).
    static UNTIED: std::cell::RefCell<std::collections::HashMap<(usize, usize), Counts>> =
        std::cell::RefCell::default();
}

/// How many `n`-subsets of `ranks` (ascending) have each rank sum, indexed by sum.
fn rank_sum_counts(ranks: &[u64], n: usize) -> Vec<f64> {
    let max_sum = ranks.iter().rev().take(n).sum::<u64>() as usize;
    // ways[k][s]: how many k-subsets of the values seen so far have rank sum s.
    // Counts reach C(50, 25) ~ 1.3e14 and sums of them more; f64 keeps 15 digits,
    // plenty for a probability.
    let mut ways = vec![vec![0f64; max_sum + 1]; n + 1];
    ways[0][0] = 1.0;
    let mut reach = 0usize;
    for &rank in ranks {
        let rank = rank as usize;
        // No subset of what was seen sums beyond `reach`; skipping the zeros above
        // it halves the work.
        reach = (reach + rank).min(max_sum);
        for k in (1..=n).rev() {
            let (lower, upper) = ways.split_at_mut(k);
            let from = &lower[k - 1];
            let to = &mut upper[0];
            for sum in (rank..=reach).rev() {
                to[sum] += from[sum - rank];
            }
        }
    }
    ways.swap_remove(n)
}

/// The normal approximation of [`exact_tail`], with the tie correction and a
/// continuity correction of half a rank.
fn normal_tail(ranks: &[u64], n: usize, distance: f64) -> f64 {
    let total = ranks.len() as f64;
    let m = total - n as f64;
    let mut sorted = ranks.to_vec();
    sorted.sort_unstable();
    let mut ties = 0.0;
    let mut start = 0;
    while start < sorted.len() {
        let end = sorted[start..].partition_point(|&r| r == sorted[start]) + start;
        let t = (end - start) as f64;
        ties += t * t * t - t;
        start = end;
    }
    // Variance of the (undoubled) rank sum.
    let variance = n as f64 * m / 12.0 * ((total + 1.0) - ties / (total * (total - 1.0)));
    if variance <= 0.0 {
        return 1.0;
    }
    // Back from doubled ranks to ranks.
    let z = ((distance / 2.0) - 0.5).max(0.0) / variance.sqrt();
    (2.0 * normal_upper_tail(z)).min(1.0)
}

/// Holm's step-down adjustment: the adjusted p-value of each test, in the order
/// given, `None` where no test was made. A test is significant at family level α
/// when its adjusted p-value is at most α; the chance of any false one among them
/// is then at most α.
pub fn holm(p_values: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut tested: Vec<(usize, f64)> = p_values
        .iter()
        .enumerate()
        .filter_map(|(index, p)| Some((index, (*p)?)))
        .collect();
    tested.sort_by(|x, y| x.1.total_cmp(&y.1));
    let m = tested.len();
    let mut adjusted = vec![None; p_values.len()];
    let mut running = 0f64;
    for (rank, &(index, p)) in tested.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p).min(1.0));
        adjusted[index] = Some(running);
    }
    adjusted
}

/// The smallest relative change (0.06 = ±6%) the rank-sum test would find with
/// [`POWER`] at two-sided level `alpha`, for samples of `n_base` and `n_candidate`
/// values whose log values have standard deviation `log_spread`. Infinite when the
/// trials are too few for any p-value to reach `alpha`: no change, however large,
/// could have been detected.
pub fn detectable_change(log_spread: f64, n_base: usize, n_candidate: usize, alpha: f64) -> f64 {
    if n_base == 0 || n_candidate == 0 || smallest_p_value(n_base, n_candidate) > alpha {
        return f64::INFINITY;
    }
    // The rank-sum test is 3/π as efficient as the t-test on normal data (its
    // asymptotic relative efficiency), hence the larger standard error.
    let standard_error = log_spread
        * (1.0 / n_base as f64 + 1.0 / n_candidate as f64).sqrt()
        * (std::f64::consts::PI / 3.0).sqrt();
    let z = normal_quantile(1.0 - alpha / 2.0) + normal_quantile(POWER);
    (z * standard_error).exp_m1()
}

/// The smallest two-sided p-value the rank-sum test can give with these sample
/// counts: both extreme arrangements out of C(n + m, n).
pub fn smallest_p_value(n: usize, m: usize) -> f64 {
    let (small, total) = (n.min(m), n + m);
    // ln C(total, small), summed to stay finite for large counts.
    let log_choose: f64 = (0..small)
        .map(|i| ((total - i) as f64).ln() - ((i + 1) as f64).ln())
        .sum();
    (2.0 * (-log_choose).exp()).min(1.0)
}

/// A robust standard deviation of the logs of `values`: 1.4826 × their median
/// absolute deviation (which equals the standard deviation for normal data, and
/// ignores the odd outlier), or their standard deviation when more than half are
/// equal. `None` for fewer than two positive values.
pub fn log_spread(values: &[f64]) -> Option<f64> {
    let mut logs: Vec<f64> = values
        .iter()
        .filter(|v| v.is_finite() && **v > 0.0)
        .map(|v| v.ln())
        .collect();
    if logs.len() < 2 {
        return None;
    }
    logs.sort_by(f64::total_cmp);
    let median = crate::stats::median_of_sorted(&logs);
    let mut deviations: Vec<f64> = logs.iter().map(|v| (v - median).abs()).collect();
    deviations.sort_by(f64::total_cmp);
    let mad = crate::stats::median_of_sorted(&deviations);
    if mad > 0.0 {
        return Some(1.4826 * mad);
    }
    let mean = logs.iter().sum::<f64>() / logs.len() as f64;
    let variance = logs.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (logs.len() - 1) as f64;
    Some(variance.sqrt())
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
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    #[test]
    fn complete_separation_has_the_smallest_p_value() {
        // Two of C(10, 5) = 252 arrangements are as extreme.
        let p = rank_sum_p_value(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]).unwrap();
        assert!((p - 2.0 / 252.0).abs() < 1e-12, "{p}");
        assert!((smallest_p_value(5, 5) - 2.0 / 252.0).abs() < 1e-12);
        // Three trials a side can never reach 5%: C(6, 3) = 20.
        assert!((smallest_p_value(3, 3) - 0.1).abs() < 1e-12);
    }

    /// The p-value by brute force: every way to pick `a.len()` of the pooled values.
    fn enumerated_p_value(a: &[f64], b: &[f64]) -> f64 {
        let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
        let ranks = doubled_mid_ranks(a, b);
        let n = a.len();
        let centre = n as f64 * (pooled.len() as f64 + 1.0);
        let observed: u64 = ranks[..n].iter().sum();
        let distance = (observed as f64 - centre).abs();
        let (mut all, mut extreme) = (0u64, 0u64);
        for mask in 0u32..(1 << pooled.len()) {
            if mask.count_ones() as usize != n {
                continue;
            }
            let sum: u64 = (0..pooled.len())
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| ranks[i])
                .sum();
            all += 1;
            if (sum as f64 - centre).abs() >= distance - 1e-9 {
                extreme += 1;
            }
        }
        extreme as f64 / all as f64
    }

    #[test]
    fn the_count_matches_brute_force_with_and_without_ties() {
        let x = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30];
        let y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.15, 1.29];
        let p = rank_sum_p_value(&x, &y).unwrap();
        assert!((p - enumerated_p_value(&x, &y)).abs() < 1e-12, "{p}");
        // Heavy ties, unequal sizes (the smaller side goes first in the count).
        let tied = [2.0, 2.0, 3.0, 3.0, 3.0, 5.0];
        let other = [1.0, 2.0, 2.0, 2.0, 3.0, 1.0, 1.0, 4.0, 2.0, 1.0];
        let p = rank_sum_p_value(&tied, &other).unwrap();
        assert!((p - enumerated_p_value(&tied, &other)).abs() < 1e-12, "{p}");
        assert!(p < 0.2 && p > 0.001, "{p}");
        assert_eq!(rank_sum_p_value(&[2.0, 2.0], &[2.0, 2.0, 2.0]), Some(1.0));
        assert_eq!(rank_sum_p_value(&[], &[1.0]), None);
        assert_eq!(rank_sum_p_value(&x, &y), rank_sum_p_value(&y, &x));
    }

    #[test]
    fn the_normal_approximation_agrees_with_the_exact_count() {
        let mut rng = SplitMix64::new(3);
        let mut draw = |n: usize, shift: f64| -> Vec<f64> {
            (0..n)
                .map(|_| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 + shift)
                .collect()
        };
        let a = draw(25, 0.0);
        let b = draw(25, 0.15);
        let ranks = doubled_mid_ranks(&a, &b);
        let centre = 25.0 * 51.0;
        let observed: u64 = ranks[..25].iter().sum();
        let distance = (observed as f64 - centre).abs();
        let exact = exact_tail(&ranks, 25, centre, distance);
        let normal = normal_tail(&ranks, 25, distance);
        assert!((exact - normal).abs() < 0.01, "{exact} {normal}");
    }

    #[test]
    fn holm_adjusts_step_down_and_keeps_untested_slots() {
        let adjusted = holm(&[Some(0.01), None, Some(0.04), Some(0.03)]);
        // Sorted: 0.01 * 3, max(0.03 * 2, 0.03), max(0.04 * 1, 0.06).
        assert_eq!(adjusted[1], None);
        assert!((adjusted[0].unwrap() - 0.03).abs() < 1e-12);
        assert!((adjusted[3].unwrap() - 0.06).abs() < 1e-12);
        assert!((adjusted[2].unwrap() - 0.06).abs() < 1e-12);
        assert_eq!(holm(&[Some(0.9), Some(0.8)]), [Some(1.0), Some(1.0)]);
    }

    #[test]
    fn normal_functions_match_tables() {
        assert!((normal_quantile(0.975) - 1.959_964).abs() < 1e-5);
        assert!((normal_quantile(0.8) - 0.841_621).abs() < 1e-5);
        assert!((normal_quantile(0.001) + 3.090_232).abs() < 1e-5);
        assert!((normal_upper_tail(1.959_964) - 0.025).abs() < 1e-6);
        assert!((normal_upper_tail(-1.0) - 0.841_345).abs() < 1e-6);
    }

    #[test]
    fn the_detectable_change_shrinks_with_trials_and_is_infinite_below_any_verdict() {
        let three = detectable_change(0.03, 3, 3, 0.05);
        assert_eq!(three, f64::INFINITY);
        let ten = detectable_change(0.03, 10, 10, 0.05);
        let thirty = detectable_change(0.03, 30, 30, 0.05);
        // (1.96 + 0.84) * 0.03 * sqrt(2/10) * sqrt(pi/3) ~ 3.9%.
        assert!((ten - 0.0394).abs() < 0.001, "{ten}");
        assert!(thirty < ten * 0.6, "{thirty} {ten}");
        // A stricter level needs a larger change.
        assert!(detectable_change(0.03, 10, 10, 0.002) > ten);
    }

    #[test]
    fn log_spread_is_robust_and_falls_back_on_ties() {
        let spread = log_spread(&[1.0, 1.01, 0.99, 1.0, 100.0]).unwrap();
        assert!(spread < 0.02, "{spread}");
        let tied = log_spread(&[1.0, 1.0, 1.0, 2.0]).unwrap();
        assert!(tied > 0.3, "{tied}");
        assert_eq!(log_spread(&[5.0, 5.0]), Some(0.0));
        assert_eq!(log_spread(&[5.0]), None);
    }

    /// A/A: both sides drawn from one skewed, outlier-prone distribution. Each
    /// test's false-alarm rate stays at (or below) its level.
    #[test]
    fn the_test_holds_its_level_on_a_a_data() {
        let mut rng = SplitMix64::new(11);
        let mut draw = || {
            let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            // Exponential tail on a base, like a start-up time.
            1.0 - 0.05 * (1.0 - u).ln()
        };
        let repetitions = 2000;
        let mut rejected = 0;
        for _ in 0..repetitions {
            let a: Vec<f64> = (0..10).map(|_| draw()).collect();
            let b: Vec<f64> = (0..10).map(|_| draw()).collect();
            if rank_sum_p_value(&a, &b).unwrap() <= 0.05 {
                rejected += 1;
            }
        }
        // Nominal 100 of 2000; the binomial standard deviation is ~10.
        assert!(rejected <= 125, "{rejected} of {repetitions}");
        assert!(
            rejected >= 60,
            "{rejected} of {repetitions}: far too conservative"
        );
    }
}
