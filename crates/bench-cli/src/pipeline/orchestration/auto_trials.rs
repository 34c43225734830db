//! `clibench ab --trials auto`: run interleaved pairs until every watched metric is
//! decided or could detect its target change, at bench-core's group-sequential looks
//! ([`bench_core::stats::sequential`]), within a maximum of pairs and a time budget.
//!
//! The looks are taken during the first trial phase of the schedule (measure, normally):
//! before the pair that would make the pair count pass a planned look, both sides'
//! results, as the runner holds them from the steps that ran, are compared at that look's
//! share of alpha, and when
//! [`bench_core::stats::sequential::decide`] says stop, the phase's remaining pairs are
//! left out. Later trial phases (runtime, ui) run as many pairs as the first one did. The
//! final comparison must use [`AutoOutcome::alpha`], the share of the look the run
//! stopped at, for the false-alarm rate to hold.

use bench_core::compare::{CompareOptions, Comparison, compare};
use bench_core::stats::sequential::{Decision, SequentialPlan, decide};
use bench_core::{Metric, Phase, Side};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How `--trials auto` samples.
#[derive(Debug, Clone)]
pub struct AutoTrials {
    /// The looks and their shares of alpha; its last look is the maximum of pairs.
    pub plan: SequentialPlan,
    /// The metrics to wait for.
    pub watched: Vec<Metric>,
    /// The detectable change (fraction) a watched metric must reach to count as
    /// decided without a verdict; `None`: twice its threshold.
    pub target: Option<f64>,
    /// Stop starting pairs once this much time has passed since the first pair began
    /// (prepare and install, which run before it, are not counted).
    pub budget: Option<Duration>,
    /// How the looks compare (thresholds, seed); each look sets its own alpha.
    pub options: CompareOptions,
    /// The measure trials before the first pair (a paired schedule's memory trials, which
    /// run alone): they always run and are not pairs.
    pub alone: u32,
}

impl AutoTrials {
    /// What the run will do, said when it starts: the watched metrics, the budget and the
    /// most pairs.
    pub fn plan_line(&self) -> String {
        let watched: Vec<String> = self.watched.iter().map(ToString::to_string).collect();
        let budget = self.budget.map_or(String::new(), |budget| {
            format!(
                " or {} of pairs have run",
                bench_core::units::format_seconds(budget.as_secs_f64())
            )
        });
        format!(
            "pairs until {} are decided{budget} (at most {} pairs; --budget or --trials N to \
             change)",
            watched.join(", "),
            self.plan.looks().last().copied().unwrap_or_default()
        )
    }
}

/// Why sampling stopped, and where.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AutoOutcome {
    /// The pairs the first trial phase ran (its trials alone before them left out), and
    /// the trials each later phase ran (under a duet, its trial 0 alone and then pairs).
    pub pairs: BTreeMap<Phase, u32>,
    /// The looks taken (pair counts), in order.
    pub looks: Vec<u32>,
    /// `decided`, `budget` or `maximum`.
    pub reason: &'static str,
    /// The family level the final comparison must use.
    pub alpha: f64,
    /// From the first pair's start to the first step that did not run a pair (a pair left
    /// out, or the first step after the trial phases); when every pair ran and nothing came
    /// after them, to the start of the last pair step, so one step short.
    pub timed: Duration,
}

impl AutoOutcome {
    /// The note a comparison made after `--trials auto` carries: why and when it stopped,
    /// and the family false-alarm rate it spent.
    pub fn note(&self) -> String {
        // The first phase counts pairs (its trials alone come before them); a later phase
        // counts its trials, whose first runs alone under a duet.
        let mut phases = self.pairs.iter();
        let first = phases
            .next()
            .map_or(String::from("no pairs"), |(phase, pairs)| {
                format!("{pairs} {phase} pairs")
            });
        let later: Vec<String> = phases
            .map(|(phase, trials)| format!("{phase} {trials}"))
            .collect();
        let later = if later.is_empty() {
            String::new()
        } else {
            format!(" (then trials: {})", later.join(", "))
        };
        // A look's own share when the look decided; what the looks left when the clock
        // or the count ended the run.
        let share = if self.reason == "decided" {
            "its look's share of 5%"
        } else {
            "what the looks before it left of 5%"
        };
        format!(
            "--trials auto: stopped ({}) after {first}{later}, {} of timed trials; looks at \
             {:?}; this comparison's family false-alarm rate is {:.4} ({share}); the \
             \"could detect\" column says what each metric could detect.",
            self.reason,
            bench_core::units::format_seconds(self.timed.as_secs_f64()),
            self.looks,
            self.alpha
        )
    }
}

/// The trials a later phase (runtime, ui, session) runs even when the budget is spent:
/// trial 0, which runs alone, and two pairs, the fewest a paired test can judge.
const LATER_PHASE_MIN_TRIALS: u32 = 3;

/// The gate's state, shared with the caller that reads the outcome afterwards.
#[derive(Debug)]
struct State {
    auto: AutoTrials,
    /// When the first trial step was asked for: the budget counts from there.
    started: Option<Instant>,
    /// When the first step that ran no pair was asked for, after the first pair.
    ended: Option<Instant>,
    /// When the last trial step was asked for.
    last_asked: Option<Instant>,
    /// Whether each (phase, trial) pair runs, decided when its first step is asked.
    pairs: BTreeMap<(Phase, u32), bool>,
    first_phase: Option<Phase>,
    /// The pair count the first phase stopped at, and why.
    stopped: Option<(u32, &'static str)>,
    /// Indices of the looks taken.
    looks_taken: Vec<usize>,
    /// Each watched metric's trials (the fewer of the two sides) at the last look.
    counts_at_last_look: BTreeMap<Metric, usize>,
}

/// The gate of an `ab --trials auto` run and the handle to its outcome.
#[derive(Debug, Clone)]
pub struct AutoGate {
    state: Arc<Mutex<State>>,
}

fn trial_phase(phase: Phase) -> bool {
    matches!(
        phase,
        Phase::Measure | Phase::Runtime | Phase::Ui | Phase::Session
    )
}

impl AutoGate {
    /// A gate sampling as `auto` says.
    pub fn new(auto: AutoTrials) -> AutoGate {
        AutoGate {
            state: Arc::new(Mutex::new(State {
                auto,
                started: None,
                ended: None,
                last_asked: None,
                pairs: BTreeMap::new(),
                first_phase: None,
                stopped: None,
                looks_taken: Vec::new(),
                counts_at_last_look: BTreeMap::new(),
            })),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(state) => state,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Whether to run `step` (the runner's gate), given both sides' results as they stand
    /// (base's, head's).
    pub fn allow(&self, step: crate::pipeline::Step, sides: &[Side]) -> bool {
        let mut state = self.lock();
        if !trial_phase(step.phase) {
            if state.started.is_some() && state.ended.is_none() {
                state.ended = Some(Instant::now());
            }
            return true;
        }
        let now = Instant::now();
        state.started.get_or_insert(now);
        state.last_asked = Some(now);
        let key = (step.phase, step.trial);
        let run = match state.pairs.get(&key) {
            Some(&decided) => decided,
            None => {
                let run = state.decide_pair(step.phase, step.trial, sides);
                state.pairs.insert(key, run);
                run
            }
        };
        if !run && state.ended.is_none() {
            state.ended = Some(now);
        }
        run
    }

    /// What happened, once the run is over.
    pub fn outcome(&self) -> AutoOutcome {
        let state = self.lock();
        let mut pairs: BTreeMap<Phase, u32> = BTreeMap::new();
        for (&(phase, trial), &run) in &state.pairs {
            if let Some(before) = state.pairs_before(phase, trial)
                && run
            {
                let count = pairs.entry(phase).or_default();
                *count = (*count).max(before + 1);
            }
        }
        let plan = &state.auto.plan;
        let last = plan.looks().len().saturating_sub(1);
        let (reason, alpha) = match state.stopped {
            // Stopped by a look: its analysis is the final one.
            Some((_, "decided")) => {
                let k = state.looks_taken.last().copied().unwrap_or(last);
                ("decided", plan.alpha_at(k))
            }
            // Stopped between looks by the clock: what the looks taken left. When the run
            // stops depends on time alone, not on what the looks saw, so the levels used
            // still add up to alpha ([`SequentialPlan::remaining`]).
            Some((_, reason)) => (reason, plan.remaining(&state.looks_taken)),
            None => ("maximum", plan.alpha_at(last)),
        };
        let timed = match (state.started, state.ended.or(state.last_asked)) {
            (Some(started), Some(ended)) => ended - started,
            _ => Duration::ZERO,
        };
        AutoOutcome {
            timed,
            pairs,
            looks: state.looks_taken.iter().map(|&k| plan.looks()[k]).collect(),
            reason,
            alpha,
        }
    }
}

impl State {
    /// Whether the budget has passed since the first trial step.
    fn budget_spent(&self) -> bool {
        self.auto.budget.is_some_and(|budget| {
            self.started
                .is_some_and(|started| started.elapsed() >= budget)
        })
    }

    /// The pairs of `phase` before its trial `trial`: the measure phase's trials less the
    /// ones that run alone before its pairs.
    fn pairs_before(&self, phase: Phase, trial: u32) -> Option<u32> {
        match phase {
            Phase::Measure => trial.checked_sub(self.auto.alone),
            _ => Some(trial),
        }
    }

    /// Whether trial `trial` of `phase` runs: its pairs before it have run.
    fn decide_pair(&mut self, phase: Phase, trial: u32, sides: &[Side]) -> bool {
        // A trial that runs alone before the pairs is not a pair: it always runs.
        let Some(trial) = self.pairs_before(phase, trial) else {
            return true;
        };
        let first = *self.first_phase.get_or_insert(phase);
        if phase != first {
            // A later phase runs as many pairs as the first, and within the budget: its
            // pairs can take several times a start's (a demo session pair takes 6.6 s), and
            // a budget that only the first phase kept ran a 90 s budget for 9.5 minutes.
            // It keeps the trials its test needs.
            let spent = trial >= LATER_PHASE_MIN_TRIALS && self.budget_spent();
            return !spent && self.stopped.is_none_or(|(pairs, _)| trial < pairs);
        }
        if self.stopped.is_some() {
            return false;
        }
        if trial > 0 && self.budget_spent() {
            self.stopped = Some((trial, "budget"));
            return false;
        }
        let look = self.auto.plan.looks()[..self.auto.plan.looks().len() - 1]
            .iter()
            .position(|&pairs| pairs == trial);
        if let Some(k) = look {
            self.looks_taken.push(k);
            if self.look(k, trial, sides) == Some(Decision::Stop) {
                self.stopped = Some((trial, "decided"));
                return false;
            }
        }
        true
    }

    /// The comparison of `sides` at look `k`; `None` without both sides (the run goes on,
    /// and the final comparison will say what is wrong).
    fn look(&mut self, k: usize, pairs: u32, sides: &[Side]) -> Option<Decision> {
        let [base, head] = sides else {
            return None;
        };
        let options = CompareOptions {
            alpha: self.auto.plan.alpha_at(k),
            ..self.auto.options.clone()
        };
        let comparison = compare(base, head, &options);
        let growing = self.growing_watched(&comparison, pairs);
        let target = |metric| {
            self.auto
                .target
                .unwrap_or_else(|| 2.0 * options.floor(metric))
        };
        Some(decide(&comparison, &growing, target))
    }

    /// The watched metrics that more pairs can still measure more of. A metric whose
    /// trials did not grow between two looks while the pairs did (under a tight or duet
    /// schedule, `rss` and `pss` come from the first memory trials alone) would hold the
    /// run to its budget for nothing: more pairs never narrow it.
    fn growing_watched(&mut self, comparison: &Comparison, pairs: u32) -> Vec<Metric> {
        let counts: BTreeMap<Metric, usize> = comparison
            .metrics
            .iter()
            .filter(|row| self.auto.watched.contains(&row.metric))
            .map(|row| {
                let count = |stats: &bench_core::stats::MetricStats| {
                    stats.summary.as_ref().map_or(0, |summary| summary.n)
                };
                (row.metric, count(&row.base).min(count(&row.candidate)))
            })
            .collect();
        let first_look = self.counts_at_last_look.is_empty();
        let growing = self
            .auto
            .watched
            .iter()
            .copied()
            .filter(|metric| {
                let now = counts.get(metric).copied().unwrap_or(0);
                let before = self.counts_at_last_look.get(metric).copied();
                first_look || now >= pairs as usize || before.is_none_or(|before| now > before)
            })
            .collect();
        self.counts_at_last_look = counts;
        growing
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::Step;
    use bench_core::compare::Interleaving;
    use bench_core::stats::sequential::Spending;
    use bench_core::{Sample, record};

    /// A side whose cold trials measured `values`.
    fn side(values: &[f64], sha: &str) -> Side {
        let mut side = Side::new(sha);
        for (trial, &value) in values.iter().enumerate() {
            record(&mut side, Metric::Cold, trial as u32, Sample::Value(value));
        }
        side
    }

    fn gate(budget: Option<Duration>) -> AutoGate {
        let auto = AutoTrials {
            plan: SequentialPlan::new(20, 0.05, Spending::Pocock),
            watched: vec![Metric::Cold],
            target: None,
            budget,
            options: CompareOptions {
                interleaving: Some(Interleaving::Interleaved),
                ..CompareOptions::default()
            },
            alone: 0,
        };
        AutoGate::new(auto)
    }

    #[test]
    fn the_measure_trials_that_run_alone_are_not_pairs_and_do_not_move_the_looks() {
        // Three trials alone, then six pairs of a clear change.
        let base: Vec<f64> = (0..9).map(|i| 1.0 + 0.01 * f64::from(i)).collect();
        let head: Vec<f64> = base.iter().map(|v| v * 1.5).collect();
        let sides = [side(&base, "b"), side(&head, "h")];
        let mut auto = gate(None).lock().auto.clone();
        auto.alone = 3;
        let gate = AutoGate::new(auto);
        for trial in 0..9 {
            assert!(gate.allow(step(Phase::Measure, trial), &sides), "{trial}");
        }
        // The first look is at six pairs: measure trial 9, not trial 6.
        assert!(!gate.allow(step(Phase::Measure, 9), &sides));
        assert!(gate.allow(step(Phase::Runtime, 5), &sides));
        assert!(!gate.allow(step(Phase::Runtime, 6), &sides));
        let outcome = gate.outcome();
        assert_eq!(outcome.looks, [6]);
        assert_eq!(outcome.pairs[&Phase::Measure], 6);
        assert_eq!(outcome.pairs[&Phase::Runtime], 6);
    }

    fn step(phase: Phase, trial: u32) -> Step {
        Step { phase, trial }
    }

    #[test]
    fn a_clear_change_stops_at_the_first_look_and_later_phases_follow() {
        let base: Vec<f64> = (0..6).map(|i| 1.0 + 0.01 * f64::from(i)).collect();
        let head: Vec<f64> = base.iter().map(|v| v * 1.5).collect();
        let sides = [side(&base, "b"), side(&head, "h")];
        let gate = gate(None);
        assert!(gate.allow(step(Phase::Prepare, 0), &sides));
        for trial in 0..6 {
            assert!(gate.allow(step(Phase::Measure, trial), &sides), "{trial}");
            assert!(
                gate.allow(step(Phase::Measure, trial), &sides),
                "the pair's second step"
            );
        }
        // Six pairs ran: the first look (6) sees cold regressed and stops.
        assert!(!gate.allow(step(Phase::Measure, 6), &sides));
        assert!(!gate.allow(step(Phase::Measure, 7), &sides));
        assert!(gate.allow(step(Phase::Runtime, 5), &sides));
        assert!(!gate.allow(step(Phase::Runtime, 6), &sides));
        assert!(gate.allow(step(Phase::Staircase, 0), &sides));
        let outcome = gate.outcome();
        assert_eq!(outcome.reason, "decided");
        assert_eq!(outcome.looks, [6]);
        assert_eq!(outcome.pairs[&Phase::Measure], 6);
        let plan = SequentialPlan::new(20, 0.05, Spending::Pocock);
        assert_eq!(outcome.alpha, plan.alpha_at(0));
    }

    #[test]
    fn no_change_goes_on_past_the_look_and_a_spent_budget_stops_it() {
        let noisy = [1.0, 1.3, 0.8, 1.1, 0.9, 1.25];
        // The same values in another order: no change, but pairs that differ (equal
        // pairs would be a certain "no change", decided at once).
        let shuffled = [1.25, 0.8, 1.3, 0.9, 1.1, 1.0];
        let sides = [side(&noisy, "b"), side(&shuffled, "h")];
        let gate = gate(None);
        for trial in 0..=6 {
            assert!(gate.allow(step(Phase::Measure, trial), &sides), "{trial}");
        }
        assert_eq!(gate.outcome().reason, "maximum");
        let spent = super::tests::gate(Some(Duration::ZERO));
        assert!(
            spent.allow(step(Phase::Measure, 0), &sides),
            "the first pair always runs"
        );
        assert!(!spent.allow(step(Phase::Measure, 1), &sides));
        let outcome = spent.outcome();
        assert_eq!(
            (outcome.reason, outcome.pairs[&Phase::Measure]),
            ("budget", 1)
        );
        // No look was taken: the final comparison has all of alpha, where the next
        // look's share (what it had) was a sliver of it.
        assert_eq!(outcome.alpha, 0.05);
    }

    #[test]
    fn a_budget_stop_after_looks_spends_what_they_left() {
        let noisy: Vec<f64> = (0..20).map(|i| 1.0 + 0.3 * f64::from(i % 5)).collect();
        let shuffled: Vec<f64> = (0..20)
            .map(|i| 1.0 + 0.3 * f64::from((i + 2) % 5))
            .collect();
        let sides = [side(&noisy, "b"), side(&shuffled, "h")];
        let gate = gate(Some(Duration::from_secs(2)));
        for trial in 0..=8 {
            assert!(gate.allow(step(Phase::Measure, trial), &sides), "{trial}");
        }
        std::thread::sleep(Duration::from_millis(2100));
        assert!(!gate.allow(step(Phase::Measure, 9), &sides));
        let outcome = gate.outcome();
        assert_eq!(
            (outcome.reason, outcome.looks.as_slice()),
            ("budget", &[6, 8][..])
        );
        let plan = SequentialPlan::new(20, 0.05, Spending::Pocock);
        let left = 0.05 - plan.alpha_at(0) - plan.alpha_at(1);
        assert!((outcome.alpha - left).abs() < 1e-12, "{}", outcome.alpha);
        assert!(outcome.alpha > plan.alpha_at(2));
    }

    #[test]
    fn a_watched_metric_that_more_pairs_do_not_measure_does_not_hold_the_run() {
        // Cold is the same on both sides in every pair (decided at once); rss was read in
        // three memory trials only, too few to decide, and never more.
        let cold: Vec<f64> = (0..20).map(|i| 1.0 + 0.01 * f64::from(i % 3)).collect();
        let sides = [[100.0, 130.0, 80.0], [120.0, 90.0, 110.0]].map(|rss| {
            let mut side = side(&cold, "s");
            for (trial, value) in rss.into_iter().enumerate() {
                record(&mut side, Metric::Rss, trial as u32, Sample::Value(value));
            }
            side
        });
        let mut auto = gate(None).lock().auto.clone();
        auto.watched = vec![Metric::Cold, Metric::Rss];
        let gate = AutoGate::new(auto);
        for trial in 0..8 {
            assert!(gate.allow(step(Phase::Measure, trial), &sides), "{trial}");
        }
        // The first look waits for rss; the second sees it did not grow and stops.
        assert!(!gate.allow(step(Phase::Measure, 8), &sides));
        let outcome = gate.outcome();
        assert_eq!(
            (outcome.reason, outcome.looks.as_slice()),
            ("decided", &[6, 8][..])
        );
    }

    #[test]
    fn a_later_phase_stops_at_the_spent_budget_after_the_pairs_its_test_needs() {
        let noisy = [1.0, 1.3, 0.8, 1.1, 0.9, 1.25];
        let shuffled = [1.25, 0.8, 1.3, 0.9, 1.1, 1.0];
        let sides = [side(&noisy, "b"), side(&shuffled, "h")];
        let gate = gate(Some(Duration::ZERO));
        assert!(gate.allow(step(Phase::Measure, 0), &sides));
        assert!(
            !gate.allow(step(Phase::Measure, 1), &sides),
            "the budget is spent"
        );
        // Measure ran one pair: a later phase never runs more than the first did.
        assert!(gate.allow(step(Phase::Runtime, 0), &sides));
        assert!(!gate.allow(step(Phase::Runtime, 1), &sides));
        let long = super::tests::gate(None);
        let mut auto = long.lock().auto.clone();
        auto.budget = Some(Duration::from_millis(50));
        let gate = AutoGate::new(auto);
        for trial in 0..5 {
            assert!(gate.allow(step(Phase::Measure, trial), &sides), "{trial}");
        }
        std::thread::sleep(Duration::from_millis(60));
        assert!(!gate.allow(step(Phase::Measure, 5), &sides));
        // Five measure pairs ran; the budget is spent, so the runtime phase keeps three
        // trials, the fewest its paired test can judge, not five.
        for trial in 0..3 {
            assert!(gate.allow(step(Phase::Runtime, trial), &sides), "{trial}");
        }
        assert!(!gate.allow(step(Phase::Runtime, 3), &sides));
        assert_eq!(gate.outcome().pairs[&Phase::Runtime], 3);
    }

    #[test]
    fn the_budget_counts_from_the_first_pair_not_from_prepare_and_install() {
        let noisy = [1.0, 1.3, 0.8, 1.1, 0.9, 1.25];
        let sides = [side(&noisy, "b"), side(&noisy, "h")];
        let gate = gate(Some(Duration::from_secs(3600)));
        assert!(gate.allow(step(Phase::Prepare, 0), &sides));
        assert!(gate.allow(step(Phase::Install, 0), &sides));
        assert_eq!(
            gate.outcome().timed,
            Duration::ZERO,
            "no pair has started: nothing of the budget is spent"
        );
        for trial in 0..3 {
            assert!(gate.allow(step(Phase::Measure, trial), &sides));
        }
        // The first step after the trial phases ends the timed part.
        assert!(gate.allow(step(Phase::Staircase, 0), &sides));
        let timed = gate.outcome().timed;
        assert_eq!(
            gate.outcome().timed,
            timed,
            "the clock stopped at the staircase"
        );
        assert_eq!(gate.outcome().reason, "maximum");
        // A pair the budget leaves out stops the clock too, before any staircase.
        let spent = super::tests::gate(Some(Duration::ZERO));
        assert!(spent.allow(step(Phase::Measure, 0), &sides));
        assert!(!spent.allow(step(Phase::Measure, 1), &sides));
        let timed = spent.outcome().timed;
        assert_eq!(spent.outcome().timed, timed);
    }
}
