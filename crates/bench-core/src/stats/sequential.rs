//! When to stop sampling: a group-sequential design for `clibench ab --trials auto`.
//!
//! Looking at a comparison after every few pairs and stopping as soon as it shows a
//! change makes false alarms far likelier than the level each look used ("peeking").
//! The valid way is to fix the looks in advance and give each look only a share of
//! the false-alarm rate, so that the shares add up to the family's alpha:
//!
//! - [`SequentialPlan::looks`]: the pair counts at which the comparison is made, from
//!   [`MIN_PAIRS`] growing by a quarter each time up to the maximum, which is always
//!   the last look.
//! - [`Spending`]: how much of alpha is spent by a fraction `t` of the maximum (Lan and
//!   DeMets' spending functions). Look `k` tests at the increment
//!   `spent(t_k) - spent(t_{k-1})` ([`SequentialPlan::alpha_at`]), with Holm's
//!   adjustment over the metrics inside it. By the union bound, the chance of a
//!   false verdict at any look is at most the sum of the increments, alpha, whatever
//!   the dependence between looks: conservative next to exact group-sequential
//!   boundaries (which need the joint distribution of the looks' statistics, known
//!   for a z-test of one metric, not for Holm over Welch tests of many), but valid
//!   for any test with valid p-values and any number of metrics. The boundary of
//!   look `k` for a metric is thus Welch's t quantile at its Holm share of the
//!   look's alpha.
//! - [`decide`]: after a look, whether every watched metric is decided (a verdict of
//!   change) or has reached its target detectable change; stopping for that
//!   (futility) never adds false alarms.
//!
//! ```
//! use bench_core::stats::sequential::{SequentialPlan, Spending};
//!
//! let plan = SequentialPlan::new(20, 0.05, Spending::Pocock);
//! assert_eq!(plan.looks(), [6, 8, 10, 13, 17, 20]);
//! let total: f64 = (0..plan.looks().len()).map(|k| plan.alpha_at(k)).sum();
//! assert!((total - 0.05).abs() < 1e-12);
//! ```

use super::distributions::{normal_quantile, normal_upper_tail};
use crate::compare::Comparison;
use crate::metric::Metric;

/// The fewest pairs of the first look. Below six a side the t-test's variance
/// estimate has four degrees of freedom or fewer: its quantiles at an early look's
/// small share of alpha are so large (qt(0.998, 4) = 7.2) that only a change
/// several times the noise could stop the run, and Welch's test is conservative on
/// skewed data that small, so the look would spend alpha for almost nothing.
pub const MIN_PAIRS: u32 = 6;

/// The metrics `--trials auto` waits for unless the spec names others. The start's
/// wall times, its times less its wait for a CPU (which keep a change of sleep at its
/// size where a duet's wall times shrink it) and its CPU times, and the memory.
pub const DEFAULT_WATCHED: [Metric; 8] = [
    Metric::Cold,
    Metric::Warm,
    Metric::ColdUnqueued,
    Metric::WarmUnqueued,
    Metric::ColdCpu,
    Metric::WarmCpu,
    Metric::Rss,
    Metric::Pss,
];

/// How alpha is spent over the looks, as a function of the information fraction
/// `t` (pairs so far / the maximum).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Spending {
    /// Pocock-like, `alpha · ln(1 + (e − 1) t)`: spends early, so a large change
    /// stops the run soon; the last look gets less than alpha.
    Pocock,
    /// O'Brien–Fleming-like, `2 − 2 Φ(z_{1−alpha/2} / √t)`: spends almost nothing
    /// early, so the last look keeps nearly the fixed design's power.
    OBrienFleming,
    /// A fifth of alpha spent Pocock-like and four fifths O'Brien–Fleming-like (a
    /// weighted sum of spending functions is one): the first look of a long plan
    /// gets about a thousandth, so a change a person sees at a glance stops the run
    /// there, and a run its budget ends keeps most of alpha for its final comparison.
    /// O'Brien–Fleming alone gave the first look of a 90-pair plan 3e-14, and a
    /// 300 ms delay on a 70 ms start waited ten pairs for the look at 10.
    Mixed,
}

/// The share of alpha [`Spending::Mixed`] spends Pocock-like.
const MIXED_EARLY_SHARE: f64 = 0.2;

impl Spending {
    /// The alpha spent by information fraction `t` in `0..=1`.
    pub fn spent(self, alpha: f64, t: f64) -> f64 {
        let t = t.clamp(0.0, 1.0);
        if t == 0.0 {
            return 0.0;
        }
        match self {
            Spending::Pocock => alpha * (1.0 + (std::f64::consts::E - 1.0) * t).ln(),
            Spending::OBrienFleming => {
                2.0 * normal_upper_tail(normal_quantile(1.0 - alpha / 2.0) / t.sqrt())
            }
            Spending::Mixed => {
                Spending::Pocock.spent(MIXED_EARLY_SHARE * alpha, t)
                    + Spending::OBrienFleming.spent((1.0 - MIXED_EARLY_SHARE) * alpha, t)
            }
        }
    }
}

/// The looks of a sequential run and the alpha each gets.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SequentialPlan {
    looks: Vec<u32>,
    alpha: f64,
    spending: Spending,
}

impl SequentialPlan {
    /// A plan for at most `max_pairs` pairs at family level `alpha`. With fewer than
    /// [`MIN_PAIRS`] pairs allowed there is one look, at the maximum.
    pub fn new(max_pairs: u32, alpha: f64, spending: Spending) -> SequentialPlan {
        let mut looks = Vec::new();
        let mut next = MIN_PAIRS;
        while next < max_pairs {
            looks.push(next);
            // A quarter more each time, at least two pairs (one ABBA block).
            next = (next + 2).max(next + next.div_ceil(4));
        }
        looks.push(max_pairs.max(1));
        SequentialPlan {
            looks,
            alpha,
            spending,
        }
    }

    /// The pair counts at which the comparison is made, ascending; the last is the
    /// maximum.
    pub fn looks(&self) -> &[u32] {
        &self.looks
    }

    /// The family level of a final comparison made after the looks `taken` (indices, in
    /// order) when the run stopped for a reason the comparisons did not give (the time
    /// budget, the maximum): everything the looks taken did not spend, so that the
    /// levels used add up to alpha. The union bound holds as long as *when* the run stops
    /// does not depend on the comparisons' outcome (a clock, a count); a stop the
    /// comparisons decided must use that look's own [`SequentialPlan::alpha_at`].
    pub fn remaining(&self, taken: &[usize]) -> f64 {
        let spent: f64 = taken.iter().map(|&k| self.alpha_at(k)).sum();
        (self.alpha - spent).max(0.0)
    }

    /// The family level of look `k` (counted from 0): its share of alpha.
    pub fn alpha_at(&self, k: usize) -> f64 {
        let Some(&last) = self.looks.last() else {
            return 0.0;
        };
        let fraction = |index: usize| f64::from(self.looks[index]) / f64::from(last);
        let spent = |index: usize| self.spending.spent(self.alpha, fraction(index));
        match k {
            _ if k >= self.looks.len() => 0.0,
            // The last look spends what is left, so the shares add up to alpha.
            _ if k + 1 == self.looks.len() => self.alpha - if k == 0 { 0.0 } else { spent(k - 1) },
            0 => spent(0),
            _ => spent(k) - spent(k - 1),
        }
    }
}

/// What [`decide`] concluded after a look.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "decision")]
pub enum Decision {
    /// Every watched metric has a verdict of change, or could have detected a change
    /// of its target size and estimates none beyond its threshold: more pairs would not
    /// change the answer.
    Stop,
    /// These watched metrics are still undecided.
    Continue {
        /// The undecided metrics, in metric order.
        undecided: Vec<Metric>,
    },
}

/// Whether the run may stop after a look whose comparison (made at the look's
/// [`SequentialPlan::alpha_at`]) is `comparison`: a watched metric regressed, or every metric of `watched` that the
/// comparison measured is decided (regressed or improved) or detects `target(metric)`
/// (a fraction) or less while its estimate stays within its threshold. A watched metric missing from the comparison is not waited
/// for: more trials of a metric that was not measured would not measure it.
pub fn decide(
    comparison: &Comparison,
    watched: &[Metric],
    target: impl Fn(Metric) -> f64,
) -> Decision {
    // A watched metric that regressed is the gate's answer: more pairs would only make
    // a person wait for it (a 300 ms delay ran a 90 s budget to its end while cold_cpu,
    // which a sleep does not move, could not yet detect 6%). Stopping at a look that
    // found a change spends no more than that look's share of alpha.
    let watched_rows = || {
        comparison
            .metrics
            .iter()
            .filter(|row| watched.contains(&row.metric))
    };
    // An estimate already past its threshold is a change in the making, not a metric
    // that would have shown one: in a duet, where two programs share a CPU, a +10% start
    // shows as +3 to +5% and was stopped at 22 pairs with warm +3.7% (p 0.003 against
    // the look's 0.0005) because it "could detect" 6%. It gets more pairs, until a
    // verdict or the budget.
    let in_the_making = |row: &crate::compare::MetricComparison| {
        let beyond = row.ratio.is_finite() && (row.ratio - 1.0).abs() > row.floor;
        beyond && !row.verdict.is_change() && row.detectable.is_some()
    };
    let regressed = watched_rows().any(|row| row.verdict == crate::compare::Verdict::Regressed);
    if regressed {
        // The gate has its answer; what still holds the run is a watched change in the
        // making, whose size the comment will print: +5 ms of start-up CPU stopped at six
        // pairs on cold_cpu's verdict with cold at +10.6% ± 30%, within noise.
        let making: Vec<Metric> = watched_rows()
            .filter(|row| in_the_making(row))
            .map(|row| row.metric)
            .collect();
        return if making.is_empty() {
            Decision::Stop
        } else {
            Decision::Continue { undecided: making }
        };
    }
    let undecided: Vec<Metric> = watched_rows()
        .filter(|row| {
            let reached = row
                .detectable
                .is_some_and(|detectable| detectable <= target(row.metric));
            !(row.verdict.is_change()
                || (reached && !in_the_making(row))
                || row.detectable.is_none())
        })
        .map(|row| row.metric)
        .collect();
    if undecided.is_empty() {
        Decision::Stop
    } else {
        Decision::Continue { undecided }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{CompareOptions, Interleaving, Verdict, compare};
    use crate::rng::SplitMix64;
    use crate::{Sample, Side, record};

    #[test]
    fn looks_grow_by_a_quarter_and_end_at_the_maximum() {
        let plan = SequentialPlan::new(30, 0.05, Spending::Pocock);
        assert_eq!(plan.looks(), [6, 8, 10, 13, 17, 22, 28, 30]);
        assert_eq!(SequentialPlan::new(4, 0.05, Spending::Pocock).looks(), [4]);
        assert_eq!(SequentialPlan::new(6, 0.05, Spending::Pocock).looks(), [6]);
    }

    #[test]
    fn the_shares_add_up_to_alpha_and_differ_by_spending() {
        for spending in [Spending::Pocock, Spending::OBrienFleming, Spending::Mixed] {
            let plan = SequentialPlan::new(20, 0.05, spending);
            let shares: Vec<f64> = (0..plan.looks().len()).map(|k| plan.alpha_at(k)).collect();
            assert!(shares.iter().all(|&share| share > 0.0), "{shares:?}");
            assert!((shares.iter().sum::<f64>() - 0.05).abs() < 1e-12);
            assert_eq!(plan.alpha_at(99), 0.0);
        }
        let pocock = SequentialPlan::new(20, 0.05, Spending::Pocock);
        let obf = SequentialPlan::new(20, 0.05, Spending::OBrienFleming);
        assert!(pocock.alpha_at(0) > 10.0 * obf.alpha_at(0));
        assert!(obf.alpha_at(5) > pocock.alpha_at(5));
        assert!((Spending::OBrienFleming.spent(0.05, 1.0) - 0.05).abs() < 1e-6);
        assert!((Spending::Pocock.spent(0.05, 1.0) - 0.05).abs() < 1e-12);
        assert!((Spending::Mixed.spent(0.05, 1.0) - 0.05).abs() < 1e-6);
        // The default budget's plan of 90 pairs: the first look can stop for a change
        // seen at a glance (O'Brien-Fleming alone gives it 3e-14), and the look at 28
        // pairs has left over 90% of alpha for a budget-ended final comparison.
        let mixed = SequentialPlan::new(90, 0.05, Spending::Mixed);
        let obf = SequentialPlan::new(90, 0.05, Spending::OBrienFleming);
        assert!(mixed.alpha_at(0) > 1e-3, "{}", mixed.alpha_at(0));
        assert!(obf.alpha_at(0) < 1e-10, "{}", obf.alpha_at(0));
        let at_28 = mixed.looks().iter().position(|&pairs| pairs == 28).unwrap();
        let taken: Vec<usize> = (0..=at_28).collect();
        assert!(
            mixed.remaining(&taken) > 0.045,
            "{}",
            mixed.remaining(&taken)
        );
    }

    /// The four metrics the simulations draw: two skewed times, two memory totals.
    const SIMULATED: [Metric; 4] = [Metric::Cold, Metric::Warm, Metric::Rss, Metric::Pss];

    /// One simulated `ab --trials auto` run: four watched metrics drawn pair by pair
    /// (the candidate's `cold` scaled by `effect`), compared at each look, stopping
    /// for a verdict or when every metric could detect `target`. Returns the pairs it
    /// stopped at and whether any verdict of change was given there.
    fn simulate(
        rng: &mut SplitMix64,
        plan: &SequentialPlan,
        peek_at: Option<f64>,
        effect: f64,
        target: f64,
    ) -> (u32, bool) {
        simulate_within(rng, plan, peek_at, effect, target, None, &left_by)
    }

    /// What a run stopped by its budget before look `k` tests at: what looks `0..k` left.
    fn left_by(plan: &SequentialPlan, k: usize) -> f64 {
        plan.remaining(&(0..k).collect::<Vec<_>>())
    }

    /// As [`simulate`], but the time budget runs out after `budget` pairs (drawn before
    /// the run, as a clock is blind to the comparisons): when that is before look `k`,
    /// the final comparison is made there at `at_budget(plan, k)`.
    fn simulate_within(
        rng: &mut SplitMix64,
        plan: &SequentialPlan,
        peek_at: Option<f64>,
        effect: f64,
        target: f64,
        budget: Option<u32>,
        at_budget: &dyn Fn(&SequentialPlan, usize) -> f64,
    ) -> (u32, bool) {
        let mut uniform = || rng.next_f64();
        let max = *plan.looks().last().unwrap();
        let mut base = Side::new("b");
        let mut head = Side::new("h");
        for trial in 0..max {
            for (side, scale) in [(&mut base, 1.0), (&mut head, effect)] {
                for (metric, spread) in SIMULATED.iter().zip([0.05, 0.05, 0.01, 0.01]) {
                    // A skewed start-up time or a memory total around 1.
                    let noise = -spread * (1.0 - uniform()).ln();
                    let value = if *metric == Metric::Cold {
                        scale * (1.0 + noise)
                    } else {
                        1.0 + noise
                    };
                    record(side, *metric, trial, Sample::Value(value));
                }
            }
        }
        let first = |side: &Side, n: u32| {
            let mut cut = side.clone();
            for samples in cut.metrics.values_mut() {
                samples.retain(|sample| sample.trial < n);
            }
            cut
        };
        for (k, &look) in plan.looks().iter().enumerate() {
            let out_of_time = budget.filter(|&budget| budget < look);
            let pairs = out_of_time.unwrap_or(look);
            let alpha = match out_of_time {
                Some(_) => at_budget(plan, k),
                None => plan.alpha_at(k),
            };
            let options = CompareOptions {
                alpha: peek_at.unwrap_or(alpha),
                // No practical threshold: the stopping rule alone must hold the rate.
                noise: Some(0.0),
                interleaving: Some(Interleaving::Interleaved),
                ..CompareOptions::default()
            };
            let comparison = compare(&first(&base, pairs), &first(&head, pairs), &options);
            let changed = comparison.metrics.iter().any(|row| row.verdict.is_change());
            let last = k + 1 == plan.looks().len() || out_of_time.is_some();
            if changed || last || decide(&comparison, &SIMULATED, |_| target) == Decision::Stop {
                return (pairs, changed);
            }
        }
        unreachable!("the last look always returns")
    }

    #[test]
    fn a_a_false_alarms_stay_at_alpha_and_peeking_would_not() {
        let plan = SequentialPlan::new(20, 0.05, Spending::Pocock);
        let repetitions = 400;
        // Nominal at most 20 of 400 (binomial sd ~4.4): a rule above 26 is broken.
        // With this seed the design gives 3 (the union bound is conservative) and
        // peeking 32.
        let tolerance = 26;
        // A target no run reaches: every look is taken, the worst case for peeking.
        let false_alarms = |peek_at: Option<f64>| {
            let mut rng = SplitMix64::new(20_26);
            (0..repetitions)
                .filter(|_| simulate(&mut rng, &plan, peek_at, 1.0, 0.0).1)
                .count()
        };
        let sequential = false_alarms(None);
        assert!(sequential <= tolerance, "{sequential} of {repetitions}");
        // The same looks, each at the full 5%: the rate this design exists to avoid
        // fails the same tolerance, so the test can tell a broken rule.
        let peeking = false_alarms(Some(0.05));
        assert!(peeking > tolerance, "{peeking} vs {sequential}");
    }

    #[test]
    fn a_budget_that_ends_between_looks_spends_what_they_left_and_keeps_alpha() {
        // The budget runs out after 6 to 40 pairs of a plan for 40, drawn from the seed
        // before each run; the final comparison gets what the looks taken left.
        for spending in [Spending::Pocock, Spending::OBrienFleming] {
            let plan = SequentialPlan::new(40, 0.05, spending);
            let mut rng = SplitMix64::new(31);
            let repetitions = 400;
            let false_alarms = (0..repetitions)
                .filter(|_| {
                    let budget = 6 + (rng.next_u64() % 35) as u32;
                    simulate_within(&mut rng, &plan, None, 1.0, 0.0, Some(budget), &left_by).1
                })
                .count();
            // Nominal at most 20 of 400 (binomial sd ~4.4): a rule above 26 is broken.
            assert!(
                false_alarms <= 26,
                "{spending:?}: {false_alarms} of {repetitions}"
            );
        }
    }

    #[test]
    fn a_change_near_the_noise_is_found_more_often_when_the_budget_spends_what_is_left() {
        // +3% on a start whose noise is 5% (exponential), a plan for 60 pairs whose
        // budget runs out at 40, as a 2-minute budget does on a busy host: at the next
        // look's share (what the rule did) the final comparison has a sliver of alpha;
        // at what the looks left, nearly a fixed test's power.
        let found = |at_budget: &dyn Fn(&SequentialPlan, usize) -> f64| {
            let plan = SequentialPlan::new(60, 0.05, Spending::OBrienFleming);
            let mut rng = SplitMix64::new(5);
            (0..200)
                .filter(|_| {
                    simulate_within(&mut rng, &plan, None, 1.03, 0.0, Some(40), at_budget).1
                })
                .count()
        };
        let next_share = found(&|plan: &SequentialPlan, k| plan.alpha_at(k));
        let what_is_left = found(&left_by);
        assert!(
            what_is_left > next_share + 20,
            "what is left {what_is_left}, the next look's share {next_share} of 200"
        );
    }

    #[test]
    fn what_the_looks_taken_left_is_more_than_the_next_looks_share() {
        let plan = SequentialPlan::new(60, 0.05, Spending::OBrienFleming);
        let taken: Vec<usize> = (0..6).collect();
        let left = plan.remaining(&taken);
        assert!(left > plan.alpha_at(6), "{left} vs {}", plan.alpha_at(6));
        let spent: f64 = taken.iter().map(|&k| plan.alpha_at(k)).sum();
        assert!((left + spent - 0.05).abs() < 1e-12);
        assert_eq!(plan.remaining(&[]), 0.05);
    }

    #[test]
    fn a_large_change_stops_early_and_is_found() {
        let plan = SequentialPlan::new(20, 0.05, Spending::Pocock);
        let mut rng = SplitMix64::new(7);
        let runs: Vec<(u32, bool)> = (0..40)
            .map(|_| simulate(&mut rng, &plan, None, 1.3, 0.06))
            .collect();
        let found = runs.iter().filter(|run| run.1).count();
        let mean_pairs = runs.iter().map(|run| f64::from(run.0)).sum::<f64>() / 40.0;
        assert!(found >= 38, "{found} of 40");
        assert!(mean_pairs < 10.0, "{mean_pairs}");
    }

    #[test]
    fn an_estimate_past_its_threshold_is_not_decided_by_what_it_could_detect() {
        let mut base = Side::new("b");
        let mut head = Side::new("h");
        for trial in 0..10u32 {
            let jitter = 1.0 + f64::from(trial % 3) * 0.01;
            record(&mut base, Metric::Cold, trial, Sample::Value(jitter));
            record(&mut head, Metric::Cold, trial, Sample::Value(jitter));
        }
        let options = CompareOptions {
            interleaving: Some(Interleaving::Interleaved),
            ..CompareOptions::default()
        };
        let mut comparison = compare(&base, &head, &options);
        let row = comparison
            .metrics
            .iter_mut()
            .find(|row| row.metric == Metric::Cold)
            .unwrap();
        // The duet run that stopped at 22 pairs: warm +3.7%, within noise at the look's
        // level, could detect 6% or less.
        row.verdict = Verdict::WithinNoise;
        (row.ratio, row.floor, row.detectable) = (1.037, 0.03, Some(0.05));
        let watched = [Metric::Cold];
        assert_eq!(
            decide(&comparison, &watched, |_| 0.06),
            Decision::Continue {
                undecided: vec![Metric::Cold]
            }
        );
        // Within its threshold, what it could detect decides it.
        let row = &mut comparison.metrics[0];
        assert_eq!(row.metric, Metric::Cold);
        row.ratio = 1.01;
        assert_eq!(decide(&comparison, &watched, |_| 0.06), Decision::Stop);
    }

    #[test]
    fn undecided_metrics_are_named_and_unwatched_ones_ignored() {
        let mut base = Side::new("b");
        let mut head = Side::new("h");
        for trial in 0..10u32 {
            let jitter = f64::from(trial % 5) * 0.02;
            record(&mut base, Metric::Cold, trial, Sample::Value(1.0 + jitter));
            record(&mut head, Metric::Cold, trial, Sample::Value(0.6 + jitter));
            record(
                &mut base,
                Metric::Warm,
                trial,
                Sample::Value(1.0 + 4.0 * jitter),
            );
            // Its partner trial differs: warm's pairs are noisy.
            record(
                &mut head,
                Metric::Warm,
                trial,
                Sample::Value(1.0 + 4.0 * f64::from((trial + 2) % 5) * 0.02),
            );
            record(
                &mut base,
                Metric::Mixed,
                trial,
                Sample::Value(1.0 + 9.0 * jitter),
            );
            record(
                &mut head,
                Metric::Mixed,
                trial,
                Sample::Value(1.0 + 9.0 * jitter),
            );
        }
        let options = CompareOptions {
            interleaving: Some(Interleaving::Interleaved),
            ..CompareOptions::default()
        };
        let comparison = compare(&base, &head, &options);
        // Cold improved; warm is too noisy for ±6%; mixed is not watched.
        assert_eq!(
            decide(&comparison, &DEFAULT_WATCHED, |_| 0.06),
            Decision::Continue {
                undecided: vec![Metric::Warm]
            }
        );
        assert_eq!(
            decide(&comparison, &DEFAULT_WATCHED, |_| 0.5),
            Decision::Stop
        );
    }

    #[test]
    fn a_watched_regression_ends_the_run_whatever_the_others_still_need() {
        let mut base = Side::new("b");
        let mut head = Side::new("h");
        for trial in 0..10u32 {
            let jitter = f64::from(trial % 5) * 0.02;
            record(&mut base, Metric::Cold, trial, Sample::Value(1.0 + jitter));
            record(&mut head, Metric::Cold, trial, Sample::Value(1.5 + jitter));
            // Warm's pairs are noisy and within its threshold: undecided alone.
            let noisy = |k: u32| 1.0 + 0.08 * f64::from(k % 5);
            record(&mut base, Metric::Warm, trial, Sample::Value(noisy(trial)));
            record(
                &mut head,
                Metric::Warm,
                trial,
                Sample::Value(noisy(trial + 2)),
            );
        }
        let options = CompareOptions {
            interleaving: Some(Interleaving::Interleaved),
            ..CompareOptions::default()
        };
        let comparison = compare(&base, &head, &options);
        assert_eq!(
            decide(&comparison, &[Metric::Warm], |_| 0.06),
            Decision::Continue {
                undecided: vec![Metric::Warm]
            }
        );
        assert_eq!(
            decide(&comparison, &[Metric::Cold, Metric::Warm], |_| 0.06),
            Decision::Stop
        );
    }

    #[test]
    fn a_watched_regression_waits_for_a_watched_change_in_the_making() {
        let mut base = Side::new("b");
        let mut head = Side::new("h");
        for trial in 0..6u32 {
            let jitter = f64::from(trial % 3) * 0.02;
            record(
                &mut base,
                Metric::ColdCpu,
                trial,
                Sample::Value(1.0 + jitter),
            );
            record(
                &mut head,
                Metric::ColdCpu,
                trial,
                Sample::Value(1.5 + jitter),
            );
            // Cold's pairs say +10% on average, too noisy yet for a verdict.
            let head_cold = if trial % 2 == 0 { 1.45 } else { 0.85 };
            record(&mut base, Metric::Cold, trial, Sample::Value(1.0));
            record(&mut head, Metric::Cold, trial, Sample::Value(head_cold));
        }
        let options = CompareOptions {
            interleaving: Some(Interleaving::Interleaved),
            ..CompareOptions::default()
        };
        let comparison = compare(&base, &head, &options);
        let cold = comparison
            .metrics
            .iter()
            .find(|row| row.metric == Metric::Cold)
            .unwrap();
        assert!(!cold.verdict.is_change() && cold.ratio > 1.05, "{cold:?}");
        assert_eq!(
            decide(&comparison, &[Metric::Cold, Metric::ColdCpu], |_| 0.06),
            Decision::Continue {
                undecided: vec![Metric::Cold]
            }
        );
        assert_eq!(
            decide(&comparison, &[Metric::ColdCpu], |_| 0.06),
            Decision::Stop
        );
    }
}
