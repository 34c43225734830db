//! How many rounds of trials a board runs: every round the trial count allows, or, with a
//! time budget, rounds until the budget has passed since the first trial started, at
//! least `MIN_BUDGET_ROUNDS` so that every row can be ranked.
//!
//! A round is trial k of every target (with a budget, of every trial phase: see
//! `round_major`). The budget is looked at only when a
//! round's first step is due, never in the middle of one, so every target has run the
//! same number of trials when the board stops.

use crate::pipeline::Step;
use bench_core::Phase;
use bench_core::board::{Sampling, Stopped};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The fewest rounds a budget runs: three trials a target are what an interval and a test
/// need to say anything.
pub const MIN_BUDGET_ROUNDS: u32 = 3;

/// The most rounds a budget runs when no trial count is given.
pub const BUDGET_MAX_ROUNDS: u32 = 20;

/// How many rounds a board may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rounds {
    /// The most rounds (`--trials`).
    pub max: u32,
    /// Stop starting rounds once this much time has passed since the first trial.
    pub budget: Option<Duration>,
}

impl Rounds {
    /// The fewest rounds that run whatever the clock says.
    pub fn min(self) -> u32 {
        match self.budget {
            Some(_) => MIN_BUDGET_ROUNDS.min(self.max),
            None => self.max,
        }
    }
}

#[derive(Debug)]
struct State {
    rounds: Rounds,
    /// When the first trial step was asked for: the budget counts from there.
    started: Option<Instant>,
    /// Whether each round runs, decided when its first step is asked for.
    decided: BTreeMap<u32, bool>,
    /// Whether the budget ended the rounds.
    out_of_time: bool,
}

/// The runner's gate of a board: lets a round's steps run or leaves the whole round out.
#[derive(Debug, Clone)]
pub struct RoundGate {
    state: Arc<Mutex<State>>,
}

fn trial_phase(phase: Phase) -> bool {
    matches!(
        phase,
        Phase::Measure | Phase::Runtime | Phase::Ui | Phase::Session
    )
}

impl RoundGate {
    /// A gate for `rounds`.
    pub fn new(rounds: Rounds) -> RoundGate {
        RoundGate {
            state: Arc::new(Mutex::new(State {
                rounds,
                started: None,
                decided: BTreeMap::new(),
                out_of_time: false,
            })),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(state) => state,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Whether `step` runs: prepare, install and staircase always; a trial when its round
    /// runs.
    pub fn allow(&self, step: Step) -> bool {
        if !trial_phase(step.phase) {
            return true;
        }
        let mut state = self.lock();
        state.started.get_or_insert_with(Instant::now);
        if let Some(&runs) = state.decided.get(&step.trial) {
            return runs;
        }
        let runs = state.decide(step.trial);
        state.decided.insert(step.trial, runs);
        runs
    }

    /// The rounds that ran and why no more did, for `board.json`.
    pub fn sampling(&self) -> Sampling {
        let state = self.lock();
        let rounds = state.decided.values().filter(|&&runs| runs).count();
        Sampling {
            rounds: u32::try_from(rounds).unwrap_or(u32::MAX),
            stopped: if state.out_of_time {
                Stopped::Budget
            } else {
                Stopped::Trials
            },
            budget: state.rounds.budget,
            model_script: None,
            script_not_applied: Vec::new(),
        }
    }
}

impl State {
    /// Whether round `round` runs; asked once, when its first step is due.
    fn decide(&mut self, round: u32) -> bool {
        if round >= self.rounds.max || self.out_of_time {
            return false;
        }
        if round < self.rounds.min() {
            return true;
        }
        let spent = self
            .rounds
            .budget
            .zip(self.started)
            .is_some_and(|(budget, started)| started.elapsed() >= budget);
        if spent {
            self.out_of_time = true;
        }
        !spent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(phase: Phase, trial: u32) -> Step {
        Step { phase, trial }
    }

    #[test]
    fn a_spent_budget_still_runs_three_rounds_then_stops_between_rounds() {
        let gate = RoundGate::new(Rounds {
            max: 20,
            budget: Some(Duration::ZERO),
        });
        assert!(gate.allow(step(Phase::Prepare, 0)));
        for round in 0..3 {
            for phase in [Phase::Measure, Phase::Session] {
                assert!(gate.allow(step(phase, round)), "{phase} {round}");
                assert!(gate.allow(step(phase, round)), "the other target's");
            }
        }
        assert!(!gate.allow(step(Phase::Measure, 3)));
        assert!(
            !gate.allow(step(Phase::Session, 3)),
            "a round is left out whole"
        );
        assert!(!gate.allow(step(Phase::Measure, 4)));
        assert!(gate.allow(step(Phase::Staircase, 0)));
        let sampling = gate.sampling();
        assert_eq!((sampling.rounds, sampling.stopped), (3, Stopped::Budget));
        assert_eq!(sampling.budget, Some(Duration::ZERO));
    }

    #[test]
    fn a_round_started_within_the_budget_runs_to_its_end_though_the_budget_passes() {
        let gate = RoundGate::new(Rounds {
            max: 20,
            budget: Some(Duration::from_secs(1)),
        });
        for round in 0..3 {
            assert!(gate.allow(step(Phase::Measure, round)));
        }
        // Round 3 is due within the budget: it runs, all of it, even after the budget.
        assert!(gate.allow(step(Phase::Measure, 3)));
        std::thread::sleep(Duration::from_millis(1050));
        assert!(gate.allow(step(Phase::Session, 3)));
        assert!(!gate.allow(step(Phase::Measure, 4)));
        assert_eq!(gate.sampling().rounds, 4);
    }

    #[test]
    fn without_a_budget_every_round_of_the_trial_count_runs() {
        let gate = RoundGate::new(Rounds {
            max: 2,
            budget: None,
        });
        assert!(gate.allow(step(Phase::Measure, 0)));
        assert!(gate.allow(step(Phase::Measure, 1)));
        assert!(!gate.allow(step(Phase::Measure, 2)));
        let sampling = gate.sampling();
        assert_eq!((sampling.rounds, sampling.stopped), (2, Stopped::Trials));
    }

    #[test]
    fn a_budget_that_outlasts_the_trial_count_stops_at_the_count() {
        let gate = RoundGate::new(Rounds {
            max: 5,
            budget: Some(Duration::from_secs(3600)),
        });
        for round in 0..5 {
            assert!(gate.allow(step(Phase::Measure, round)));
        }
        assert!(!gate.allow(step(Phase::Measure, 5)));
        let sampling = gate.sampling();
        assert_eq!((sampling.rounds, sampling.stopped), (5, Stopped::Trials));
    }
}
