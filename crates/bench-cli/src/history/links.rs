//! Comparisons of two builds from within-run ratios only.
//!
//! Every run (one `clibench run` or `ab` invocation) has an offset of its own: the
//! machine's load, its caches, the hour. On this project's shared VMs that offset has a
//! log-sd of about 0.06 for CPU time and 0.22 for wall time (docs/verdicts.md), larger
//! than the changes bisect looks for, so values of two builds measured in different runs
//! are never compared directly. A [`Link`] is the change from one build to another as
//! measured *within* runs that measured both (each run's difference of mean log values,
//! the runs combined, one spread pooled over them); two builds no run measured together are compared
//! by [`chain`]ing links through a build both runs measured, their variances added.

use bench_core::significance::{self, Welch};

/// One build's values of a metric in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunValues {
    /// The run (`request.invocation_id`).
    pub run: String,
    /// Its values of the metric, in the metric's base unit.
    pub values: Vec<f64>,
}

/// The change from one build (base) to another (head), from within-run comparisons.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    /// The test of head against base: the difference on the tested scale (logs when
    /// every value is positive), its standard error and degrees of freedom.
    pub test: Welch,
    /// Pairs it rests on: per run, the smaller side's count, summed over the runs (for
    /// a chain, its weakest link's).
    pub pairs: u32,
    /// Runs it rests on.
    pub runs: u32,
}

/// The link from `base` to `head` over every run that measured both: each run's own
/// difference of means (on logs when every value is positive), the runs combined with
/// weights by their precision, and one spread pooled over every run's two sides (a
/// blocked design: the run is the block, its offset cancels in its difference). `None`
/// when no run measured both, or the runs leave no degree of freedom for the spread.
///
/// The spread is pooled rather than each run tested on its own: `ab` runs of a few pairs
/// each would otherwise give each run's Welch test one or two degrees of freedom, and a
/// t quantile of 12.7 at one (two builds 4 times apart read `+467% [-67%, +9495%]` from
/// two runs of two pairs).
pub fn direct(base: &[RunValues], head: &[RunValues]) -> Option<Link> {
    let shared: Vec<(&[f64], &[f64])> = base
        .iter()
        .filter_map(|b| {
            head.iter()
                .find(|h| h.run == b.run)
                .map(|h| (b.values.as_slice(), h.values.as_slice()))
        })
        .filter(|(b, h)| !b.is_empty() && !h.is_empty())
        .collect();
    // One scale for every run, or their differences could not be added: logs only when
    // every value of every run is positive.
    let log_scale = shared
        .iter()
        .all(|(b, h)| b.iter().chain(h.iter()).all(|&v| v > 0.0));
    let scale = |v: f64| if log_scale { v.ln() } else { v };
    let (mut weight, mut weighted, mut weighted_base) = (0.0, 0.0, 0.0);
    let (mut squares, mut df, mut pairs) = (0.0, 0.0, 0u32);
    for (b, h) in &shared {
        let (b, h): (Vec<f64>, Vec<f64>) = (
            b.iter().map(|&v| scale(v)).collect(),
            h.iter().map(|&v| scale(v)).collect(),
        );
        let (mean_b, mean_h) = (mean(&b), mean(&h));
        // Precision of this run's difference, in units of the common variance.
        let w = 1.0 / (1.0 / b.len() as f64 + 1.0 / h.len() as f64);
        weight += w;
        weighted += w * (mean_h - mean_b);
        weighted_base += w * mean_b;
        squares += b.iter().map(|v| (v - mean_b).powi(2)).sum::<f64>()
            + h.iter().map(|v| (v - mean_h).powi(2)).sum::<f64>();
        df += (b.len() + h.len()) as f64 - 2.0;
        pairs += b.len().min(h.len()) as u32;
    }
    if shared.is_empty() || df < 1.0 || weight <= 0.0 {
        return None;
    }
    let difference = weighted / weight;
    let standard_error = (squares / df / weight).sqrt();
    if !difference.is_finite() || !standard_error.is_finite() {
        return None;
    }
    Some(Link {
        test: Welch {
            log_scale,
            difference,
            standard_error,
            df,
            p_value: p_value(difference, standard_error, df),
            base_mean: weighted_base / weight,
            per_trial_variance: [squares / df, squares / df],
            known_variance: 0.0,
        },
        pairs,
        runs: shared.len() as u32,
    })
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// The two-sided p-value of "no change"; without spread the sides are equal (1) or
/// certainly differ (0).
fn p_value(difference: f64, standard_error: f64, df: f64) -> f64 {
    if standard_error > 0.0 {
        significance::t_two_sided(difference / standard_error, df)
    } else if difference == 0.0 {
        1.0
    } else {
        0.0
    }
}

/// The link from `a` to `c` through `b`: `a` to `b`, then `b` to `c`, measured in
/// different runs, whose offsets cancel within each link. The differences add, and so do
/// their variances (the two links are independent measurements). `None` when the links
/// are on different scales.
pub fn chain(first: &Link, second: &Link) -> Option<Link> {
    if first.test.log_scale != second.test.log_scale {
        return None;
    }
    let mut test = combine(&[(1.0, first.test), (1.0, second.test)])?;
    // On raw values a difference is read against the first build's mean.
    test.base_mean = first.test.base_mean;
    Some(Link {
        test,
        pairs: first.pairs.min(second.pairs),
        runs: first.runs + second.runs,
    })
}

/// The link from `head` to `base`: the same test, the other way round.
pub fn reversed(link: &Link) -> Link {
    let mut test = link.test;
    test.difference = -test.difference;
    test.base_mean = link.test.base_mean + link.test.difference;
    test.per_trial_variance = [
        link.test.per_trial_variance[1],
        link.test.per_trial_variance[0],
    ];
    Link { test, ..*link }
}

/// `Σ aᵢ·dᵢ` of independent tests, with variance `Σ aᵢ²·vᵢ` and Welch–Satterthwaite's
/// degrees of freedom; the base mean is the weighted one. (A chain's two links come from
/// different runs, with spreads of their own, so theirs are not pooled.)
fn combine(parts: &[(f64, Welch)]) -> Option<Welch> {
    let first = parts.first()?.1;
    let difference: f64 = parts.iter().map(|(a, t)| a * t.difference).sum();
    let components: Vec<(f64, f64)> = parts
        .iter()
        .map(|(a, t)| (a * a * t.standard_error * t.standard_error, t.df))
        .collect();
    let variance: f64 = components.iter().map(|(v, _)| v).sum();
    let denominator: f64 = components
        .iter()
        .filter(|(_, df)| *df > 0.0)
        .map(|(v, df)| v * v / df)
        .sum();
    // Without spread every part's degrees of freedom count: the sum of theirs.
    let df = if denominator > 0.0 {
        variance * variance / denominator
    } else {
        parts.iter().map(|(_, t)| t.df).sum()
    };
    let total_weight: f64 = parts.iter().map(|(a, _)| a).sum();
    let base_mean = if total_weight > 0.0 {
        parts.iter().map(|(a, t)| a * t.base_mean).sum::<f64>() / total_weight
    } else {
        first.base_mean
    };
    let standard_error = variance.sqrt();
    if !difference.is_finite() || !standard_error.is_finite() {
        return None;
    }
    Some(Welch {
        log_scale: first.log_scale,
        difference,
        standard_error,
        df,
        p_value: p_value(difference, standard_error, df),
        base_mean,
        per_trial_variance: [f64::NAN, f64::NAN],
        known_variance: 0.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(run: &str, level: f64) -> RunValues {
        RunValues {
            run: run.into(),
            values: [0.99, 1.0, 1.01, 1.0].iter().map(|v| v * level).collect(),
        }
    }

    #[test]
    fn each_runs_offset_cancels_within_it() {
        // Two runs 40% apart, each measuring head 7% above base.
        let base = [run("a", 1.0), run("b", 1.4)];
        let head = [run("a", 1.07), run("b", 1.4 * 1.07)];
        let link = direct(&base, &head).unwrap();
        assert!((link.test.estimate() - 1.07).abs() < 1e-9, "{link:?}");
        assert_eq!((link.pairs, link.runs), (8, 2));
        let (low, high) = link.test.interval(0.05);
        assert!(low > 1.05 && high < 1.09, "{low} {high}");
    }

    #[test]
    fn builds_of_different_runs_are_not_compared() {
        assert_eq!(direct(&[run("a", 1.0)], &[run("b", 1.07)]), None);
        // One value a side leaves no spread to judge the difference by.
        let single = |level: f64| RunValues {
            run: "a".into(),
            values: vec![level],
        };
        assert_eq!(direct(&[single(1.0)], &[single(1.07)]), None);
    }

    #[test]
    fn runs_of_two_pairs_share_one_spread() {
        // Two runs of two pairs each, 4 times apart, at a spread of about 10%: each run's
        // own Welch test would have about one degree of freedom (a t quantile of 12.7).
        let side = |name: &str, level: f64, a: f64, b: f64| RunValues {
            run: name.into(),
            values: vec![level * a, level * b],
        };
        let base = [side("a", 0.5, 0.9, 1.1), side("b", 0.8, 1.1, 0.9)];
        let head = [side("a", 2.0, 1.1, 0.9), side("b", 3.2, 0.9, 1.1)];
        let link = direct(&base, &head).unwrap();
        assert_eq!(link.test.df, 4.0);
        let (low, high) = link.test.interval(0.05);
        assert!((link.test.estimate() - 4.0).abs() < 1e-9, "{link:?}");
        assert!(low > 3.0 && high < 5.5, "{low} {high}");
    }

    #[test]
    fn a_chain_adds_the_changes_and_the_variances() {
        let one = direct(&[run("a", 1.0)], &[run("a", 1.05)]).unwrap();
        let two = direct(&[run("b", 2.0)], &[run("b", 2.0 * 1.10)]).unwrap();
        let chained = chain(&one, &two).unwrap();
        assert!((chained.test.estimate() - 1.05 * 1.10).abs() < 1e-9);
        let variance = one.test.standard_error.powi(2) + two.test.standard_error.powi(2);
        assert!((chained.test.standard_error.powi(2) - variance).abs() < 1e-15);
        assert_eq!((chained.pairs, chained.runs), (4, 2));
        // Wider than either link.
        let width = |l: &Link| {
            let (low, high) = l.test.interval(0.05);
            (high / low).ln()
        };
        assert!(width(&chained) > width(&one).max(width(&two)));
    }

    #[test]
    fn a_reversed_link_is_the_inverse_change() {
        let link = direct(&[run("a", 1.0)], &[run("a", 1.25)]).unwrap();
        let back = reversed(&link);
        assert!((back.test.estimate() * link.test.estimate() - 1.0).abs() < 1e-9);
        let (low, high) = link.test.interval(0.05);
        let (back_low, back_high) = back.test.interval(0.05);
        assert!((back_low * high - 1.0).abs() < 1e-9 && (back_high * low - 1.0).abs() < 1e-9);
    }

    #[test]
    fn values_at_zero_are_compared_as_differences() {
        let base = RunValues {
            run: "a".into(),
            values: vec![0.0, 1.0, 0.0, 1.0],
        };
        let head = RunValues {
            run: "a".into(),
            values: vec![10.0, 11.0, 10.0, 11.0],
        };
        let link = direct(&[base], &[head]).unwrap();
        assert!(!link.test.log_scale);
        assert!((link.test.difference - 10.0).abs() < 1e-9);
    }
}
