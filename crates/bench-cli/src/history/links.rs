//! Comparisons of two builds from within-run ratios only.
//!
//! Every run (one `clibench run` or `ab` invocation) has an offset of its own: the
//! machine's load, its caches, the hour. On this project's shared VMs that offset has a
//! log-sd of about 0.06 for CPU time and 0.22 for wall time (docs/verdicts.md), larger
//! than the changes bisect looks for, so values of two builds measured in different runs
//! are never compared directly. A [`Link`] is the change from one build to another as
//! measured *within* runs that measured both, and within a run trial by trial where the
//! trials pair: trial k of base and trial k of head of one `ab` run were measured
//! together (in a duet, at the same moment on one CPU), so the load of their moment
//! cancels in their ratio as the run's offset does in the run's. Two builds no run
//! measured together are compared by [`chain`]ing links through a build both runs
//! measured, their variances added.

use bench_core::stats::{self, Welch};
use std::collections::BTreeMap;

/// A value with its trial number: (trial, value in the metric's base unit).
pub type Trial = (u32, f64);

/// One build's values of a metric in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunValues {
    /// The run (`request.invocation_id`).
    pub run: String,
    /// Its values of the metric as (trial, value in the metric's base unit), in trial
    /// order.
    pub values: Vec<Trial>,
}

/// The change from one build (base) to another (head), from within-run comparisons.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    /// The test of head against base: the difference on the tested scale (logs when
    /// every value is positive), its standard error and degrees of freedom.
    pub test: Welch,
    /// Pairs it rests on: per run, the trials both builds have when they pair, else the
    /// smaller side's count, summed over the runs (for a chain, its weakest link's).
    pub pairs: u32,
    /// Runs it rests on.
    pub runs: u32,
}

/// The fewest common trials that make a run's sides pairs: one pair leaves no spread.
const MIN_PAIRS: usize = 2;

/// One run's two builds on the tested scale: trial by trial when their trials pair,
/// else the two sides' values.
enum RunPart {
    /// Head's value minus base's for each trial both have, and base's values of them.
    Paired {
        differences: Vec<f64>,
        bases: Vec<f64>,
    },
    /// The two sides' values, not paired.
    Unpaired { base: Vec<f64>, head: Vec<f64> },
}

/// `base` and `head` of one run as pairs when at least [`MIN_PAIRS`] trial numbers are
/// on both sides, once each (trials only one side has are left out); else unpaired.
fn run_part(base: &[Trial], head: &[Trial], scale: impl Fn(f64) -> f64) -> RunPart {
    let once = |values: &[Trial]| -> Option<BTreeMap<u32, f64>> {
        let map: BTreeMap<u32, f64> = values.iter().copied().collect();
        (map.len() == values.len()).then_some(map)
    };
    if let (Some(b), Some(h)) = (once(base), once(head)) {
        let pairs: Vec<(f64, f64)> = b
            .iter()
            .filter_map(|(trial, &vb)| h.get(trial).map(|&vh| (scale(vb), scale(vh))))
            .collect();
        if pairs.len() >= MIN_PAIRS {
            return RunPart::Paired {
                differences: pairs.iter().map(|(vb, vh)| vh - vb).collect(),
                bases: pairs.iter().map(|&(vb, _)| vb).collect(),
            };
        }
    }
    RunPart::Unpaired {
        base: base.iter().map(|&(_, v)| scale(v)).collect(),
        head: head.iter().map(|&(_, v)| scale(v)).collect(),
    }
}

/// Runs of one kind pooled: their differences weighted by precision, one spread.
#[derive(Default)]
struct Pool {
    /// Sum of the runs' weights (precision in units of the pooled variance).
    weight: f64,
    /// Sum of weight × the run's difference.
    weighted: f64,
    /// Sum of weight × the run's base mean.
    weighted_base: f64,
    /// Sum of squared deviations from each run's own mean(s).
    squares: f64,
    /// Degrees of freedom of the spread.
    df: f64,
    pairs: u32,
    runs: u32,
}

impl Pool {
    fn add(&mut self, part: &RunPart) {
        match part {
            RunPart::Paired { differences, bases } => {
                let mean_d = mean(differences);
                let n = differences.len() as f64;
                self.weight += n;
                self.weighted += n * mean_d;
                self.weighted_base += n * mean(bases);
                self.squares += differences
                    .iter()
                    .map(|d| (d - mean_d).powi(2))
                    .sum::<f64>();
                self.df += n - 1.0;
                self.pairs += differences.len() as u32;
            }
            RunPart::Unpaired { base, head } => {
                let (mean_b, mean_h) = (mean(base), mean(head));
                // Precision of this run's difference, in units of the common variance.
                let w = 1.0 / (1.0 / base.len() as f64 + 1.0 / head.len() as f64);
                self.weight += w;
                self.weighted += w * (mean_h - mean_b);
                self.weighted_base += w * mean_b;
                self.squares += base.iter().map(|v| (v - mean_b).powi(2)).sum::<f64>()
                    + head.iter().map(|v| (v - mean_h).powi(2)).sum::<f64>();
                self.df += (base.len() + head.len()) as f64 - 2.0;
                self.pairs += base.len().min(head.len()) as u32;
            }
        }
        self.runs += 1;
    }

    /// The pooled test; `None` without a run or a degree of freedom.
    fn test(&self, log_scale: bool, paired: bool) -> Option<Welch> {
        if self.runs == 0 || self.df < 1.0 || self.weight <= 0.0 {
            return None;
        }
        let difference = self.weighted / self.weight;
        let variance = self.squares / self.df;
        let standard_error = (variance / self.weight).sqrt();
        if !difference.is_finite() || !standard_error.is_finite() {
            return None;
        }
        Some(Welch {
            log_scale,
            difference,
            standard_error,
            df: self.df,
            p_value: p_value(difference, standard_error, self.df),
            base_mean: self.weighted_base / self.weight,
            // As stats::paired says of pairs: the per-pair variance and 0.
            per_trial_variance: if paired {
                [variance, 0.0]
            } else {
                [variance, variance]
            },
            known_variance: 0.0,
        })
    }
}

/// The link from `base` to `head` over every run that measured both. Within a run
/// whose two builds share at least two trial numbers, the run's estimate is the mean of
/// log(head_k / base_k) over those trials, its variance the pairs' spread over their
/// count (a paired test: what loaded the machine at trial k loaded both). A run whose
/// trials do not pair (a store whose trials were not measured side by side) gives its
/// difference of mean logs, as before pairing. The runs of each kind are combined with
/// weights by their precision and one spread pooled over them (a blocked design: the
/// run is the block, its offset cancels in its difference); when both kinds are present
/// the two pooled estimates are combined by their variances. Logs are taken when every
/// value is positive, else raw differences. `None` when no run measured both, or the
/// runs leave no degree of freedom for the spread.
///
/// The spread is pooled rather than each run tested on its own: `ab` runs of a few pairs
/// each would otherwise give each run's test one or two degrees of freedom, and a
/// t quantile of 12.7 at one (two builds 4 times apart read `+467% [-67%, +9495%]` from
/// two runs of two pairs).
pub fn direct(base: &[RunValues], head: &[RunValues]) -> Option<Link> {
    let shared: Vec<(&[Trial], &[Trial])> = base
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
        .all(|(b, h)| b.iter().chain(h.iter()).all(|&(_, v)| v > 0.0));
    let scale = |v: f64| if log_scale { v.ln() } else { v };
    let (mut paired, mut unpaired) = (Pool::default(), Pool::default());
    for (b, h) in &shared {
        let part = run_part(b, h, scale);
        match part {
            RunPart::Paired { .. } => paired.add(&part),
            RunPart::Unpaired { .. } => unpaired.add(&part),
        }
    }
    let tests = [
        paired.test(log_scale, true).map(|t| (t, &paired)),
        unpaired.test(log_scale, false).map(|t| (t, &unpaired)),
    ];
    let test = match tests {
        [Some((one, _)), None] | [None, Some((one, _))] => one,
        [Some((p, _)), Some((u, _))] => by_precision(p, u)?,
        [None, None] => return None,
    };
    let used: Vec<&Pool> = tests.iter().flatten().map(|(_, pool)| *pool).collect();
    Some(Link {
        test,
        pairs: used.iter().map(|pool| pool.pairs).sum(),
        runs: used.iter().map(|pool| pool.runs).sum(),
    })
}

/// Two independent estimates of one difference (the paired runs' and the unpaired
/// runs'), weighted by the inverse of their variances; by equal weights when one has
/// no spread, which would otherwise take every weight.
fn by_precision(one: Welch, other: Welch) -> Option<Welch> {
    let (v1, v2) = (one.standard_error.powi(2), other.standard_error.powi(2));
    let (a1, a2) = if v1 > 0.0 && v2 > 0.0 {
        (v2 / (v1 + v2), v1 / (v1 + v2))
    } else {
        (0.5, 0.5)
    };
    let mut test = combine(&[(a1, one), (a2, other)])?;
    test.per_trial_variance = [f64::NAN, f64::NAN];
    Some(test)
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// The two-sided p-value of "no change"; without spread the sides are equal (1) or
/// certainly differ (0).
fn p_value(difference: f64, standard_error: f64, df: f64) -> f64 {
    if standard_error > 0.0 {
        stats::t_two_sided(difference / standard_error, df)
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
    use bench_core::rng::SplitMix64;

    /// Trials 0 to 3 of a build at `level` in run `run`, with a little spread.
    fn run(run: &str, level: f64) -> RunValues {
        numbered(run, &[0.99, 1.0, 1.01, 1.0].map(|v| v * level))
    }

    /// As [`run`], the spread in another order: its trials pair with [`run`]'s, each
    /// pair's ratio a little off the change.
    fn other(run: &str, level: f64) -> RunValues {
        numbered(run, &[1.0, 0.99, 1.0, 1.01].map(|v| v * level))
    }

    /// `values` as trials 0, 1, 2, ...
    fn numbered(run: &str, values: &[f64]) -> RunValues {
        RunValues {
            run: run.into(),
            values: (0..).zip(values.iter().copied()).collect(),
        }
    }

    #[test]
    fn each_runs_offset_cancels_within_it() {
        // Two runs 40% apart, each measuring head 7% above base.
        let base = [run("a", 1.0), run("b", 1.4)];
        let head = [other("a", 1.07), other("b", 1.4 * 1.07)];
        let link = direct(&base, &head).unwrap();
        assert!((link.test.estimate() - 1.07).abs() < 1e-9, "{link:?}");
        assert_eq!((link.pairs, link.runs), (8, 2));
        // Paired: 8 pairs, 2 runs, one mean each.
        assert_eq!(link.test.df, 6.0);
        let (low, high) = link.test.interval(0.05);
        assert!(low > 1.05 && high < 1.09, "{low} {high}");
    }

    #[test]
    fn builds_of_different_runs_are_not_compared() {
        assert_eq!(direct(&[run("a", 1.0)], &[run("b", 1.07)]), None);
        // One value a side leaves no spread to judge the difference by.
        let single = |level: f64| numbered("a", &[level]);
        assert_eq!(direct(&[single(1.0)], &[single(1.07)]), None);
    }

    #[test]
    fn runs_whose_trials_do_not_pair_share_one_spread() {
        // Two runs of two values a side, 4 times apart, at a spread of about 10%, head's
        // trials numbered apart from base's (nothing pairs): each run's own Welch test
        // would have about one degree of freedom (a t quantile of 12.7).
        let side = |name: &str, first: u32, level: f64, a: f64, b: f64| RunValues {
            run: name.into(),
            values: vec![(first, level * a), (first + 1, level * b)],
        };
        let base = [side("a", 0, 0.5, 0.9, 1.1), side("b", 0, 0.8, 1.1, 0.9)];
        let head = [side("a", 2, 2.0, 1.1, 0.9), side("b", 2, 3.2, 0.9, 1.1)];
        let link = direct(&base, &head).unwrap();
        assert_eq!(link.test.df, 4.0);
        let (low, high) = link.test.interval(0.05);
        assert!((link.test.estimate() - 4.0).abs() < 1e-9, "{link:?}");
        assert!(low > 3.0 && high < 5.5, "{low} {high}");
    }

    #[test]
    fn a_paired_run_and_an_unpaired_one_are_combined_by_their_variances() {
        let paired = (run("a", 1.0), other("a", 1.10));
        // Nothing of run b pairs: head's trials are numbered from 10.
        let mut unpaired_head = other("b", 2.0 * 1.10);
        for (trial, _) in &mut unpaired_head.values {
            *trial += 10;
        }
        let unpaired = (run("b", 2.0), unpaired_head);
        let both = direct(
            &[paired.0.clone(), unpaired.0.clone()],
            &[paired.1.clone(), unpaired.1.clone()],
        )
        .unwrap();
        assert!((both.test.estimate() - 1.10).abs() < 1e-9, "{both:?}");
        assert_eq!((both.pairs, both.runs), (8, 2));
        let alone = [
            direct(&[paired.0], &[paired.1]).unwrap(),
            direct(&[unpaired.0], &[unpaired.1]).unwrap(),
        ];
        // Both runs together are surer than either alone.
        for link in alone {
            assert!(
                both.test.standard_error < link.test.standard_error,
                "{link:?}"
            );
        }
    }

    /// A run of `pairs` pairs: each pair's two values share a load factor of log-sd 0.3
    /// (the machine of that moment), each value has its own spread of 2%, and head is
    /// `change` times base. With `paired` false head's trials are numbered apart from
    /// base's, so the same values are compared as two unpaired samples.
    fn loaded_run(rng: &mut SplitMix64, pairs: u32, change: f64, paired: bool) -> [RunValues; 2] {
        let (mut base, mut head) = (Vec::new(), Vec::new());
        for trial in 0..pairs {
            let load = (0.3 * rng.next_normal()).exp();
            base.push((trial, load * (0.02 * rng.next_normal()).exp()));
            let head_trial = if paired { trial } else { trial + pairs };
            head.push((head_trial, change * load * (0.02 * rng.next_normal()).exp()));
        }
        [base, head].map(|values| RunValues {
            run: "r".into(),
            values,
        })
    }

    fn decides(link: &Link) -> bool {
        let (low, high) = link.test.interval(0.05);
        low > 1.0 || high < 1.0
    }

    #[test]
    fn pairs_sharing_a_load_decide_a_change_that_the_load_hides_from_means() {
        // +5% under a shared load spread of 30%: trial by trial the load cancels; as two
        // samples it is six times the change.
        let mut rng = SplitMix64::new(34);
        let (mut paired_decided, mut unpaired_decided) = (0, 0);
        for _ in 0..50 {
            let [base, head] = loaded_run(&mut rng, 20, 1.05, true);
            let link = direct(std::slice::from_ref(&base), std::slice::from_ref(&head)).unwrap();
            paired_decided += usize::from(decides(&link) && link.test.estimate() > 1.0);
            let apart = RunValues {
                run: head.run,
                values: head.values.iter().map(|&(t, v)| (t + 20, v)).collect(),
            };
            unpaired_decided += usize::from(decides(&direct(&[base], &[apart]).unwrap()));
        }
        assert_eq!(paired_decided, 50);
        assert!(unpaired_decided < 10, "{unpaired_decided} of 50");
    }

    #[test]
    fn paired_runs_without_a_change_hold_their_false_alarm_rate() {
        // A/A: 400 simulated bisect links of 2 runs of 10 pairs each, the load shared
        // within each pair and each run offset on its own: about 5% may decide at a
        // 95% level, and the interval must not be so wide that none ever does.
        let mut rng = SplitMix64::new(2026);
        let mut alarms = 0;
        for _ in 0..400 {
            let mut runs: [Vec<RunValues>; 2] = [Vec::new(), Vec::new()];
            for name in ["a", "b"] {
                let offset = (0.2 * rng.next_normal()).exp();
                for (side, mut values) in
                    loaded_run(&mut rng, 10, 1.0, true).into_iter().enumerate()
                {
                    values.run = name.into();
                    values.values.iter_mut().for_each(|(_, v)| *v *= offset);
                    runs[side].push(values);
                }
            }
            alarms += usize::from(decides(&direct(&runs[0], &runs[1]).unwrap()));
        }
        assert!((8..=32).contains(&alarms), "{alarms} of 400");
    }

    #[test]
    fn a_chain_adds_the_changes_and_the_variances() {
        let one = direct(&[run("a", 1.0)], &[other("a", 1.05)]).unwrap();
        let two = direct(&[run("b", 2.0)], &[other("b", 2.0 * 1.10)]).unwrap();
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
    fn values_at_zero_are_compared_as_differences() {
        let base = numbered("a", &[0.0, 1.0, 0.0, 1.0]);
        let head = numbered("a", &[10.0, 11.0, 10.0, 11.0]);
        let link = direct(&[base], &[head]).unwrap();
        assert!(!link.test.log_scale);
        assert!((link.test.difference - 10.0).abs() < 1e-9);
    }
}
