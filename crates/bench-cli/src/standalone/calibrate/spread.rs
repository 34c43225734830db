//! The pure statistics of `clibench calibrate`: spreads of logs, differences at a gap,
//! correlation by lag, and the change a budget of pairs could detect. Functions over
//! slices, so they are tested on synthetic data.

use bench_core::stats::Welch;
use std::time::Duration;

/// The sample standard deviation of `values`; `None` with fewer than two.
pub fn spread(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some(variance.sqrt())
}

/// The spread of the logs of positive `values` (a relative spread: 0.05 is about ±5%);
/// `None` with fewer than two or a value that is not positive.
pub(crate) fn log_spread(values: &[f64]) -> Option<f64> {
    if !values.iter().all(|v| v.is_finite() && *v > 0.0) {
        return None;
    }
    spread(&values.iter().map(|v| v.ln()).collect::<Vec<_>>())
}

/// The spread of `later[k + lag] - earlier[k]` over every `k` where both exist: how far
/// two events `lag` windows apart differ. With one series for both it is the drift of
/// one CPU over that lag; with two it is the drift between them.
pub(crate) fn difference_spread(
    earlier: &[Option<f64>],
    later: &[Option<f64>],
    lag: usize,
) -> Option<f64> {
    let differences: Vec<f64> = earlier
        .iter()
        .enumerate()
        .filter_map(|(k, first)| Some(later.get(k + lag).copied()?? - (*first)?))
        .collect();
    spread(&differences)
}

/// The correlation of `values[k]` with `values[k + lag]` (the autocorrelation at `lag`,
/// over the whole series' mean and variance), over the pairs where both are present;
/// `None` when the lag leaves no pair or the series has no spread.
pub(crate) fn lag_correlation(values: &[Option<f64>], lag: usize) -> Option<f64> {
    let present: Vec<f64> = values.iter().flatten().copied().collect();
    if present.is_empty() {
        return None;
    }
    let n = present.len() as f64;
    let mean = present.iter().sum::<f64>() / n;
    let variance = present.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    let products: Vec<f64> = values
        .iter()
        .zip(values.get(lag..)?)
        .filter_map(|(a, b)| Some(((*a)? - mean) * ((*b)? - mean)))
        .collect();
    if products.is_empty() || variance <= 0.0 {
        return None;
    }
    Some(products.iter().sum::<f64>() / products.len() as f64 / variance)
}

/// The log ratios of back-to-back pairs: `ln(values[2k + 1] / values[2k])`. An odd last
/// value has no partner and is left out.
pub(crate) fn pair_log_ratios(values: &[f64]) -> Vec<f64> {
    values
        .chunks_exact(2)
        .filter(|pair| pair[0] > 0.0 && pair[1] > 0.0)
        .map(|pair| (pair[1] / pair[0]).ln())
        .collect()
}

/// What a budget of tight pairs could detect for one metric.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct BudgetPower {
    /// The budget, in seconds.
    pub budget_seconds: f64,
    /// How many pairs fit in it.
    pub pairs: u64,
    /// The smallest relative change (0.05 = ±5%) the paired test would find with 80%
    /// power at `alpha`; `None` when fewer than two pairs fit.
    pub detectable: Option<f64>,
}

/// The most pairs [`budget_power`] counts: beyond it the answer no longer moves.
const MOST_PAIRS: u64 = 1_000_000;

/// What `budget` could detect with pairs that each take `pair_time` and whose log ratios
/// spread by `pair_spread`, at two-sided level `alpha`: bench-core's paired test's
/// [`Welch::detectable_change`], for the pairs that fit.
pub(crate) fn budget_power(
    pair_spread: f64,
    pair_time: Duration,
    budget: Duration,
    alpha: f64,
) -> BudgetPower {
    let pairs = if pair_time.is_zero() {
        MOST_PAIRS
    } else {
        ((budget.as_secs_f64() / pair_time.as_secs_f64()) as u64).min(MOST_PAIRS)
    };
    let detectable = (pairs >= 2).then(|| {
        let n = pairs as f64;
        let variance = pair_spread * pair_spread;
        Welch {
            log_scale: true,
            difference: 0.0,
            standard_error: (variance / n).sqrt(),
            df: n - 1.0,
            p_value: 1.0,
            base_mean: 0.0,
            per_trial_variance: [variance, 0.0],
            known_variance: 0.0,
        }
        .detectable_change(alpha)
    });
    BudgetPower {
        budget_seconds: budget.as_secs_f64(),
        pairs,
        detectable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_spread_is_the_relative_spread() {
        let values = [1.0, std::f64::consts::E, 1.0, std::f64::consts::E];
        // Logs 0, 1, 0, 1: sample standard deviation sqrt(1/3).
        let spread = log_spread(&values).unwrap();
        assert!((spread - (1.0f64 / 3.0).sqrt()).abs() < 1e-12, "{spread}");
        assert_eq!(log_spread(&[1.0]), None);
        assert_eq!(log_spread(&[1.0, 0.0]), None);
    }

    #[test]
    fn a_steady_drift_shows_in_the_difference_at_a_gap_and_not_next_door() {
        // A slow square wave: 10 windows at 0, 10 at 1, repeated.
        let series: Vec<Option<f64>> = (0..200).map(|k| Some(((k / 10) % 2) as f64)).collect();
        let next = difference_spread(&series, &series, 1).unwrap();
        let apart = difference_spread(&series, &series, 10).unwrap();
        assert!(next < 0.4, "{next}");
        assert!(apart > 0.9, "{apart}");
    }

    #[test]
    fn difference_spread_skips_missing_windows() {
        let a = [Some(1.0), None, Some(3.0), Some(4.0)];
        let b = [Some(2.0), Some(2.0), None, Some(6.0)];
        // Pairs at lag 0: (1,2) and (4,6) only: differences 1 and 2.
        let spread = difference_spread(&a, &b, 0).unwrap();
        assert!((spread - 0.5f64.sqrt()).abs() < 1e-12, "{spread}");
    }

    #[test]
    fn lag_correlation_sees_plateaus_and_alternation() {
        let plateaus: Vec<Option<f64>> = (0..400).map(|k| Some(((k / 20) % 2) as f64)).collect();
        assert!(lag_correlation(&plateaus, 1).unwrap() > 0.8);
        assert!(lag_correlation(&plateaus, 20).unwrap() < -0.8);
        let alternating: Vec<Option<f64>> = (0..400).map(|k| Some((k % 2) as f64)).collect();
        assert!(lag_correlation(&alternating, 1).unwrap() < -0.9);
        assert_eq!(lag_correlation(&[Some(1.0); 3], 1), None);
        assert_eq!(lag_correlation(&[Some(1.0), Some(2.0)], 2), None);
    }

    #[test]
    fn a_missing_window_does_not_shift_the_lag() {
        // Alternating 0, 1 with every fifth window missing: neighbours still disagree.
        let gappy: Vec<Option<f64>> = (0..400)
            .map(|k| (k % 5 != 0).then_some((k % 2) as f64))
            .collect();
        assert!(lag_correlation(&gappy, 1).unwrap() < -0.9);
        assert!(lag_correlation(&gappy, 2).unwrap() > 0.9);
    }

    #[test]
    fn pairs_are_consecutive_and_an_odd_last_start_is_dropped() {
        let ratios = pair_log_ratios(&[1.0, 2.0, 4.0, 4.0, 9.0]);
        assert_eq!(ratios.len(), 2);
        assert!((ratios[0] - 2.0f64.ln()).abs() < 1e-12);
        assert_eq!(ratios[1], 0.0);
    }

    #[test]
    fn a_longer_budget_detects_a_smaller_change() {
        let pair = Duration::from_millis(200);
        let minute = budget_power(0.1, pair, Duration::from_secs(60), 0.05);
        let five = budget_power(0.1, pair, Duration::from_secs(300), 0.05);
        assert_eq!(minute.pairs, 300);
        assert_eq!(five.pairs, 1500);
        let (one, five) = (minute.detectable.unwrap(), five.detectable.unwrap());
        // (1.96 + 0.84) · 0.1 / √300 ≈ 0.0162, as a ratio ≈ 1.63%; five times the pairs
        // about √5 less.
        assert!((one - 0.0163).abs() < 0.001, "{one}");
        assert!((one / five - 5f64.sqrt()).abs() < 0.05, "{one} {five}");
    }

    #[test]
    fn a_budget_without_two_pairs_detects_nothing() {
        let power = budget_power(0.1, Duration::from_secs(40), Duration::from_secs(60), 0.05);
        assert_eq!(power.pairs, 1);
        assert_eq!(power.detectable, None);
    }
}
