//! Holm's step-down adjustment of the p-values of many metrics tested at once.
//!
//! A comparison asks the same question of about 25 metrics; at 5% each, most A/A
//! comparisons would find something. [`holm`] adjusts the p-values so that the
//! chance of *any* false verdict among them stays at the family's level (Holm 1979:
//! uniformly more powerful than Bonferroni, valid under any dependence between
//! metrics, which matters because cold and warm, rss and pss move together).
//!
//! ```
//! use bench_core::stats::{holm, holm_levels};
//!
//! let p_values = [Some(0.01), None, Some(0.04), Some(0.03)];
//! assert_eq!(holm(&p_values)[1], None);
//! // Only the smallest p-value passes its step (0.05 / 3) at family level 0.05.
//! let levels = holm_levels(&p_values, 0.05);
//! assert!(p_values[0].unwrap() <= levels[0].unwrap());
//! assert!(p_values[2].unwrap() > levels[2].unwrap());
//! ```

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::welch;

    #[test]
    fn five_trials_a_side_can_show_a_doubling_through_holm() {
        // The regression of the last rule: 5 against 5 could give p = 0.008 at best,
        // never below 0.05 / 9. A doubling of a 10%-noisy time is far below it now.
        let base = [1.00, 1.12, 0.93, 1.05, 0.97];
        let doubled: Vec<f64> = [1.04, 0.95, 1.10, 0.99, 1.02]
            .iter()
            .map(|v| 2.0 * v)
            .collect();
        let p = welch(&base, &doubled).unwrap().p_value;
        assert!(p < 1e-6, "{p}");
        assert!(holm(&[Some(p); 25])[0].unwrap() < 0.05);
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
    fn holm_levels_reject_exactly_what_the_adjusted_p_values_reject() {
        let p_values = [Some(0.01), None, Some(0.04), Some(0.03), Some(0.002)];
        let levels = holm_levels(&p_values, 0.05);
        // Sorted 0.002, 0.01, 0.03, 0.04 of 4: steps 0.0125, 0.0167, 0.025 (stops), then
        // the stopping step's level for the rest.
        assert_eq!(levels[1], None);
        assert!((levels[4].unwrap() - 0.05 / 4.0).abs() < 1e-15);
        assert!((levels[0].unwrap() - 0.05 / 3.0).abs() < 1e-15);
        assert!((levels[3].unwrap() - 0.05 / 2.0).abs() < 1e-15);
        assert!((levels[2].unwrap() - 0.05 / 2.0).abs() < 1e-15);
        let mut rng = crate::rng::SplitMix64::new(31);
        for _ in 0..2000 {
            let p_values: Vec<Option<f64>> = (0..6)
                .map(|_| {
                    let u = rng.next_f64();
                    (u > 0.1).then_some(u.powi(4))
                })
                .collect();
            let levels = holm_levels(&p_values, 0.05);
            for ((p, adjusted), level) in p_values.iter().zip(holm(&p_values)).zip(levels) {
                let (Some(p), Some(adjusted), Some(level)) = (p, adjusted, level) else {
                    assert!(p.is_none() && adjusted.is_none() && level.is_none());
                    continue;
                };
                assert_eq!(*p <= level, adjusted <= 0.05, "{p_values:?}");
            }
        }
    }
}
