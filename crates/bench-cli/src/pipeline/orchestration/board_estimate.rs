//! How long a board will take: said once before it starts, from the steps it will run and
//! a guess of what one step of each phase takes (`guessed_cost`), and again when the
//! first round of each trial phase has run, from what the steps so far really took.
//!
//! A step not yet seen costs what the same target's steps of its phase took on average,
//! else what any target's did, else the guess. With a budget, the rounds expected are the
//! fewest whose cost reaches it (within the board's least and most rounds), as the gate
//! ([`super::board_rounds`]) starts a round while the budget has not passed.

use super::board_rounds::Rounds;
use crate::pipeline::Step;
use bench_core::Phase;
use std::collections::BTreeMap;
use std::time::Duration;

/// What one step of `phase` is guessed to take before any has run. The board of pi,
/// Claude Code and Codex in docs/agents.md (3 prepare, 3 install, 9 measure and 9 session
/// steps) took 7 minutes; these guesses add up to 7.75 for it. Runtime and ui, which no
/// agent board has run yet, are guessed as measure; a staircase starts several instances.
pub(crate) fn guessed_cost(phase: Phase) -> Duration {
    Duration::from_secs(match phase {
        Phase::Prepare => 20,
        Phase::Install => 30,
        Phase::Measure | Phase::Runtime | Phase::Ui => 15,
        Phase::Session => 20,
        Phase::Staircase => 60,
    })
}

fn trial_phase(phase: Phase) -> bool {
    matches!(
        phase,
        Phase::Measure | Phase::Runtime | Phase::Ui | Phase::Session
    )
}

/// What is left of a board and how long it should take.
#[derive(Debug, Clone, PartialEq)]
pub struct Forecast {
    /// The whole of what is left.
    pub total: Duration,
    /// The rounds of trials expected in all (with a budget, the clock decides).
    pub rounds: u32,
    /// Each phase's steps left and what one takes on average, in pipeline order.
    pub phases: Vec<(Phase, usize, Duration)>,
    /// Whether the costs come from steps that ran (else from `guessed_cost`).
    pub measured: bool,
    /// Whether a budget bounds the rounds.
    pub budgeted: bool,
}

impl Forecast {
    /// "expect about 8 min: 3 prepare ~20 s, ..." before the start; "expect about 3 min
    /// more: ..." once steps have run.
    pub fn line(&self) -> String {
        let steps: Vec<String> = self
            .phases
            .iter()
            .map(|(phase, count, each)| format!("{count} {phase} ~{}", step_time(*each)))
            .collect();
        let more = if self.measured { " more" } else { "" };
        let rounds = if self.budgeted {
            format!("{} rounds within the budget; ", self.rounds)
        } else {
            String::new()
        };
        let basis = if self.measured {
            "each step as long as the steps of its phase so far"
        } else {
            "guessed per step; a better estimate follows the first round of trials"
        };
        format!(
            "expect about {}{more}: {rounds}{} ({basis})",
            about(self.total),
            steps.join(", ")
        )
    }
}

/// The estimate of a board's order of steps as they end.
#[derive(Debug, Clone)]
pub struct Estimator {
    order: Vec<(usize, Step)>,
    rounds: Rounds,
    /// Per order index: whether the step has ended, and how long it ran when it ran.
    ended: Vec<Option<Option<Duration>>>,
    /// The order index of the last trial 0 of each trial phase: the end of its first round.
    first_round_ends: BTreeMap<usize, Phase>,
}

impl Estimator {
    /// An estimator of `order` (target index, step), run within `rounds`.
    pub fn new(order: Vec<(usize, Step)>, rounds: Rounds) -> Estimator {
        let mut first_round_ends = BTreeMap::new();
        for phase in [Phase::Measure, Phase::Runtime, Phase::Ui, Phase::Session] {
            if let Some(last) = order
                .iter()
                .rposition(|(_, step)| step.phase == phase && step.trial == 0)
            {
                first_round_ends.insert(last, phase);
            }
        }
        Estimator {
            ended: vec![None; order.len()],
            order,
            rounds,
            first_round_ends,
        }
    }

    /// The whole board by the guesses, before anything runs.
    pub fn before_start(&self) -> Forecast {
        self.forecast()
    }

    /// The step at `index` of the order ended, after `ran` (`None`: skipped). A forecast
    /// of what is left when it ended the first round of a trial phase and something is.
    pub fn step_ended(&mut self, index: usize, ran: Option<Duration>) -> Option<Forecast> {
        *self.ended.get_mut(index)? = Some(ran);
        if !self.first_round_ends.contains_key(&index) {
            return None;
        }
        Some(self.forecast()).filter(|forecast| !forecast.phases.is_empty())
    }

    fn forecast(&self) -> Forecast {
        let rounds = self.expected_rounds();
        let mut phases: BTreeMap<Phase, (usize, Duration)> = BTreeMap::new();
        for (index, &(target, step)) in self.order.iter().enumerate() {
            let left = self.ended[index].is_none();
            if !left || (trial_phase(step.phase) && step.trial >= rounds) {
                continue;
            }
            let (count, sum) = phases.entry(step.phase).or_default();
            *count += 1;
            *sum += self.cost(target, step.phase);
        }
        Forecast {
            total: phases.values().map(|(_, sum)| *sum).sum(),
            rounds,
            phases: phases
                .into_iter()
                .map(|(phase, (count, sum))| (phase, count, sum / count.max(1) as u32))
                .collect(),
            measured: self
                .ended
                .iter()
                .any(|ended| matches!(ended, Some(Some(_)))),
            budgeted: self.rounds.budget.is_some(),
        }
    }

    /// What a step of `target`'s `phase` should take.
    fn cost(&self, target: usize, phase: Phase) -> Duration {
        let ran = |own: bool| -> Vec<Duration> {
            self.order
                .iter()
                .zip(&self.ended)
                .filter(|((t, step), _)| step.phase == phase && (!own || *t == target))
                .filter_map(|(_, ended)| ended.flatten())
                .collect()
        };
        let mean = |times: Vec<Duration>| {
            (!times.is_empty()).then(|| times.iter().sum::<Duration>() / times.len() as u32)
        };
        mean(ran(true))
            .or_else(|| mean(ran(false)))
            .unwrap_or_else(|| guessed_cost(phase))
    }

    /// The rounds the board should run: all of them, or with a budget the fewest whose
    /// cost reaches it, within the least and the most.
    fn expected_rounds(&self) -> u32 {
        let Some(budget) = self.rounds.budget else {
            return self.rounds.max;
        };
        let round: Duration = self
            .order
            .iter()
            .filter(|(_, step)| trial_phase(step.phase) && step.trial == 0)
            .map(|&(target, step)| self.cost(target, step.phase))
            .sum();
        if round.is_zero() {
            return self.rounds.max;
        }
        let needed = (budget.as_secs_f64() / round.as_secs_f64()).ceil();
        (needed as u32).clamp(self.rounds.min(), self.rounds.max)
    }
}

/// A whole board's time in words: seconds under a minute and a half, else minutes.
fn about(time: Duration) -> String {
    let seconds = time.as_secs_f64();
    if seconds < 90.0 {
        format!("{} s", (seconds / 5.0).ceil().max(1.0) * 5.0)
    } else {
        format!("{} min", (seconds / 60.0).round())
    }
}

/// One step's time: tenths under 10 s, whole seconds under two minutes, else minutes.
fn step_time(time: Duration) -> String {
    let seconds = time.as_secs_f64();
    if seconds < 10.0 {
        format!("{seconds:.1} s")
    } else if seconds < 120.0 {
        format!("{seconds:.0} s")
    } else {
        format!("{:.0} min", seconds / 60.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::orchestration::board::round_robin;

    /// A target's steps without the staircase: the phases an agent board runs.
    fn steps(trials: u32) -> Vec<Step> {
        let mut steps = crate::pipeline::orchestration::board::tests::steps(trials);
        steps.retain(|step| step.phase != Phase::Staircase);
        steps
    }

    fn secs(seconds: u64) -> Duration {
        Duration::from_secs(seconds)
    }

    #[test]
    fn before_the_start_every_step_is_guessed() {
        let order = round_robin(&[steps(3), steps(3), steps(3)]);
        let estimator = Estimator::new(
            order,
            Rounds {
                max: 3,
                budget: None,
            },
        );
        let forecast = estimator.before_start();
        // The board of docs/agents.md: 3 × 20 + 3 × 30 + 9 × 15 + 9 × 20 seconds.
        assert_eq!(forecast.total, secs(465));
        assert_eq!(
            forecast.line(),
            "expect about 8 min: 3 prepare ~20 s, 3 install ~30 s, 9 measure ~15 s, \
             9 session ~20 s (guessed per step; a better estimate follows the first round of \
             trials)"
        );
    }

    #[test]
    fn the_end_of_a_phases_first_round_says_what_is_left_as_the_steps_took() {
        let order = round_robin(&[steps(3), steps(3)]);
        let mut estimator = Estimator::new(
            order.clone(),
            Rounds {
                max: 3,
                budget: None,
            },
        );
        let mut told = Vec::new();
        for (index, &(target, step)) in order.iter().enumerate() {
            // Target 1's measure trials take twice target 0's; sessions take 10 s.
            let took = match step.phase {
                Phase::Measure => secs(2 + 2 * target as u64),
                Phase::Session => secs(10),
                _ => secs(1),
            };
            if let Some(forecast) = estimator.step_ended(index, Some(took)) {
                told.push((index, forecast));
            }
        }
        assert_eq!(told.len(), 2, "one after each phase's first round");

        let (index, after_measure) = &told[0];
        assert_eq!(
            order[*index].1,
            Step {
                phase: Phase::Measure,
                trial: 0
            }
        );
        // Left: 2 measure trials of each (2 s and 4 s), then 6 sessions guessed (20 s).
        assert_eq!(after_measure.total, secs(2 * 2 + 2 * 4 + 6 * 20));
        assert!(after_measure.measured);
        let (_, after_session) = &told[1];
        assert_eq!(after_session.total, secs(4 * 10));
        assert!(
            after_session
                .line()
                .starts_with("expect about 40 s more: 4 session ~10 s"),
            "{}",
            after_session.line()
        );
    }

    #[test]
    fn a_budget_expects_the_rounds_that_reach_it_but_never_fewer_than_three() {
        let order = round_robin(&[steps(20), steps(20)]);
        let rounds = |budget| Rounds {
            max: 20,
            budget: Some(budget),
        };
        // A round of guesses: two targets' measure and session, (15 + 20) × 2 = 70 s.
        let estimator = Estimator::new(order.clone(), rounds(secs(600)));
        assert_eq!(estimator.before_start().rounds, 9);
        let short = Estimator::new(order.clone(), rounds(secs(10)));
        assert_eq!(short.before_start().rounds, 3);
        let long = Estimator::new(order, rounds(secs(36_000)));
        assert_eq!(long.before_start().rounds, 20);
        assert!(
            long.before_start()
                .line()
                .contains("20 rounds within the budget; "),
            "{}",
            long.before_start().line()
        );
    }

    #[test]
    fn a_first_round_that_ends_the_board_says_nothing_more() {
        let order = round_robin(&[steps(1), steps(1)]);
        let mut estimator = Estimator::new(
            order.clone(),
            Rounds {
                max: 1,
                budget: None,
            },
        );
        let told: Vec<usize> = (0..order.len())
            .filter(|&index| estimator.step_ended(index, Some(secs(1))).is_some())
            .collect();
        // After measure's round: the sessions are left; after the sessions' round, nothing.
        let first_session = order.len() - 2;
        assert_eq!(told, [first_session - 1]);
    }

    #[test]
    fn a_skipped_step_counts_nothing_for_its_phase() {
        let order = round_robin(&[steps(2), steps(2)]);
        let mut estimator = Estimator::new(
            order.clone(),
            Rounds {
                max: 2,
                budget: None,
            },
        );
        let first_measure = order
            .iter()
            .position(|(_, step)| step.phase == Phase::Measure)
            .unwrap();
        estimator.step_ended(first_measure, None);
        assert_eq!(
            estimator.cost(0, Phase::Measure),
            guessed_cost(Phase::Measure)
        );
    }

    #[test]
    fn times_read_as_a_person_says_them() {
        assert_eq!(about(secs(3)), "5 s");
        assert_eq!(about(secs(61)), "65 s");
        assert_eq!(about(secs(14 * 60 + 20)), "14 min");
        assert_eq!(step_time(Duration::from_millis(2140)), "2.1 s");
        assert_eq!(step_time(secs(40)), "40 s");
        assert_eq!(step_time(secs(300)), "5 min");
    }
}
