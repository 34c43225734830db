//! The order of an A/B run's steps: both sides prepared and installed first, then their
//! trials interleaved so that drift of the machine (a build starting next door, a CPU
//! getting hot) lands on both sides alike, then each side's staircase.
//!
//! Interleaving is per phase and per pair of trials: trial `i` of each side form a pair,
//! and a pair runs base-then-head or head-then-base. [`Order::Abba`] alternates the two
//! (AB BA AB BA ...), which cancels a linear drift; [`Order::RandomPairs`] draws each
//! pair's order from a seed, which is recorded so the order can be replayed;
//! [`Order::Sequential`] runs all of one side's trials before the other's, the way two
//! `clibench run`s do (kept to show what interleaving buys).
//!
//! ```
//! use bench_cli::pipeline::orchestration::schedule::{Order, interleave};
//! use bench_cli::pipeline::Step;
//! use bench_core::Phase;
//!
//! let trials = |n| (0..n).map(|trial| Step { phase: Phase::Measure, trial }).collect::<Vec<_>>();
//! let order = interleave(&[trials(2), trials(2)], Order::Abba);
//! let sides: Vec<usize> = order.iter().map(|&(side, _)| side).collect();
//! assert_eq!(sides, [0, 1, 1, 0]);
//! ```

use crate::pipeline::orchestration::plan::Step;
use bench_core::Phase;

/// How the trials of two sides are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Order {
    /// Pairs alternate: base-head, head-base, base-head, ...
    Abba,
    /// Each pair's order drawn from a generator seeded with `seed`.
    RandomPairs {
        /// The generator's seed.
        seed: u64,
    },
    /// Every trial of side 0, then every trial of side 1.
    Sequential,
}

/// `ab --schedule`: how the two sides' timed starts meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Schedule {
    /// Pairs in ABBA order (or the seed's), each trial as `run` does it: cold start,
    /// settle, memory, warm start, settle.
    Abba,
    /// Pairs in ABBA order (or the seed's), but only the first
    /// `TIGHT_MEMORY_TRIALS` (or `--memory-trials`) measure trials settle and read
    /// memory; each later pair is one process that runs base's and head's starts back to
    /// back, each closed at ready (see
    /// the measure phase's `pair`).
    Tight,
    /// As [`Schedule::Tight`], but each pair's two programs start at the same moment (a
    /// duet, as Bulej et al.'s duet benchmarking): the machine's drift lands on both alike
    /// when the two share its CPUs fairly.
    Duet,
    /// Every trial of base, then every trial of head.
    Sequential,
}

/// The measure trials of a tight schedule that still settle and read memory, by default.
pub const TIGHT_MEMORY_TRIALS: u32 = 3;

impl std::str::FromStr for Schedule {
    type Err = String;

    fn from_str(text: &str) -> Result<Schedule, String> {
        match text {
            "abba" => Ok(Schedule::Abba),
            "tight" => Ok(Schedule::Tight),
            "duet" => Ok(Schedule::Duet),
            "sequential" => Ok(Schedule::Sequential),
            other => Err(format!(
                "`{other}` is not a schedule: tight, abba, duet or sequential"
            )),
        }
    }
}

impl Schedule {
    /// The order of the pairs: alternating, drawn from `seed`, or one side after the other.
    pub fn order(self, seed: Option<u64>) -> Order {
        match (self, seed) {
            (Schedule::Sequential, _) => Order::Sequential,
            (Schedule::Abba | Schedule::Tight | Schedule::Duet, Some(seed)) => {
                Order::RandomPairs { seed }
            }
            (Schedule::Abba | Schedule::Tight | Schedule::Duet, None) => Order::Abba,
        }
    }
}

/// Whether a step is a trial that is interleaved (measure, runtime, ui), as opposed to
/// what each side does once before (prepare, install) or after (staircase).
fn interleaved(phase: Phase) -> bool {
    matches!(
        phase,
        Phase::Measure | Phase::Runtime | Phase::Ui | Phase::Session
    )
}

/// The order of the steps of two sides, as `(side, step)`: side 0's and then side 1's
/// prepare and install steps, the trial phases in pipeline order with each phase's trials
/// interleaved by `order`, then side 0's and side 1's staircase. Each side's own steps
/// keep their order. With more or fewer than two sides, the sides run one after another.
pub fn interleave(sides: &[Vec<Step>], order: Order) -> Vec<(usize, Step)> {
    let mut out = Vec::new();
    let tagged = |side: usize, keep: &dyn Fn(&Step) -> bool| -> Vec<(usize, Step)> {
        sides[side]
            .iter()
            .filter(|step| keep(step))
            .map(|&step| (side, step))
            .collect()
    };
    if sides.len() != 2 || order == Order::Sequential {
        for (side, steps) in sides.iter().enumerate() {
            let before: Vec<Step> = steps
                .iter()
                .copied()
                .filter(|step| !interleaved(step.phase) && step.phase != Phase::Staircase)
                .collect();
            out.extend(before.into_iter().map(|step| (side, step)));
        }
        for side in 0..sides.len() {
            out.extend(tagged(side, &|step| interleaved(step.phase)));
        }
        for side in 0..sides.len() {
            out.extend(tagged(side, &|step| step.phase == Phase::Staircase));
        }
        return out;
    }
    let mut generator = match order {
        Order::RandomPairs { seed } => Some(SplitMix64(seed)),
        Order::Abba | Order::Sequential => None,
    };
    for side in 0..2 {
        out.extend(tagged(side, &|step| {
            !interleaved(step.phase) && step.phase != Phase::Staircase
        }));
    }
    let mut pair_index = 0u64;
    for phase in Phase::ALL.into_iter().filter(|&phase| interleaved(phase)) {
        let a = tagged(0, &|step| step.phase == phase);
        let b = tagged(1, &|step| step.phase == phase);
        for pair in 0..a.len().max(b.len()) {
            let head_first = match &mut generator {
                Some(generator) => generator.next() & 1 == 1,
                None => pair_index % 2 == 1,
            };
            pair_index += 1;
            let (first, second) = if head_first { (&b, &a) } else { (&a, &b) };
            out.extend(first.get(pair).copied());
            out.extend(second.get(pair).copied());
        }
    }
    for side in 0..2 {
        out.extend(tagged(side, &|step| step.phase == Phase::Staircase));
    }
    out
}

/// SplitMix64 (Steele, Lea and Flood): a small generator, enough to order pairs; the same
/// seed always gives the same order.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(phases: &[(Phase, u32)]) -> Vec<Step> {
        phases
            .iter()
            .flat_map(|&(phase, trials)| (0..trials).map(move |trial| Step { phase, trial }))
            .collect()
    }

    fn full(trials: u32) -> Vec<Step> {
        steps(&[
            (Phase::Prepare, 1),
            (Phase::Install, 1),
            (Phase::Measure, trials),
            (Phase::Runtime, trials),
            (Phase::Staircase, 1),
        ])
    }

    fn labels(order: &[(usize, Step)]) -> Vec<String> {
        order
            .iter()
            .map(|(side, step)| format!("{}{}{}", ["A", "B"][*side], step.phase, step.trial))
            .collect()
    }

    #[test]
    fn abba_prepares_both_then_alternates_pairs_then_staircases() {
        let order = interleave(&[full(3), full(3)], Order::Abba);
        assert_eq!(
            labels(&order),
            [
                "Aprepare0",
                "Ainstall0",
                "Bprepare0",
                "Binstall0",
                "Ameasure0",
                "Bmeasure0",
                "Bmeasure1",
                "Ameasure1",
                "Ameasure2",
                "Bmeasure2",
                "Bruntime0",
                "Aruntime0",
                "Aruntime1",
                "Bruntime1",
                "Bruntime2",
                "Aruntime2",
                "Astaircase0",
                "Bstaircase0",
            ]
        );
    }

    #[test]
    fn tight_and_abba_alternate_pairs_and_sequential_does_not() {
        assert_eq!(Schedule::Tight.order(None), Order::Abba);
        assert_eq!(Schedule::Abba.order(None), Order::Abba);
        assert_eq!(
            Schedule::Tight.order(Some(3)),
            Order::RandomPairs { seed: 3 }
        );
        assert_eq!(Schedule::Sequential.order(Some(3)), Order::Sequential);
        let order = interleave(&[full(4), full(4)], Schedule::Tight.order(None));
        let first_of_pairs: Vec<usize> = order[4..12].chunks(2).map(|pair| pair[0].0).collect();
        assert_eq!(first_of_pairs, [0, 1, 0, 1]);
        assert_eq!("tight".parse(), Ok(Schedule::Tight));
        assert_eq!("duet".parse(), Ok(Schedule::Duet));
        assert_eq!(Schedule::Duet.order(None), Order::Abba);
        assert!(
            "trio"
                .parse::<Schedule>()
                .unwrap_err()
                .contains("tight, abba, duet or sequential")
        );
    }

    #[test]
    fn sequential_runs_one_side_s_trials_after_the_other_s() {
        let order = interleave(&[full(2), full(2)], Order::Sequential);
        assert_eq!(
            labels(&order)[4..10],
            [
                "Ameasure0",
                "Ameasure1",
                "Aruntime0",
                "Aruntime1",
                "Bmeasure0",
                "Bmeasure1"
            ]
        );
    }

    #[test]
    fn every_step_runs_exactly_once_and_each_side_keeps_its_order() {
        let sides = [full(7), full(5)];
        for order in [
            Order::Abba,
            Order::Sequential,
            Order::RandomPairs { seed: 1 },
            Order::RandomPairs { seed: 99 },
        ] {
            let scheduled = interleave(&sides, order);
            for (side, steps) in sides.iter().enumerate() {
                let own: Vec<Step> = scheduled
                    .iter()
                    .filter(|(s, _)| *s == side)
                    .map(|&(_, step)| step)
                    .collect();
                assert_eq!(&own, steps, "{order:?}");
            }
        }
    }

    #[test]
    fn random_pairs_are_balanced_and_replayable_from_the_seed() {
        let sides = [
            steps(&[(Phase::Measure, 40)]),
            steps(&[(Phase::Measure, 40)]),
        ];
        let order = interleave(&sides, Order::RandomPairs { seed: 7 });
        assert_eq!(order, interleave(&sides, Order::RandomPairs { seed: 7 }));
        assert_ne!(order, interleave(&sides, Order::RandomPairs { seed: 8 }));
        // Each pair holds one trial of each side.
        for pair in order.chunks(2) {
            assert_ne!(pair[0].0, pair[1].0);
            assert_eq!(pair[0].1, pair[1].1);
        }
        let base_first = order.chunks(2).filter(|pair| pair[0].0 == 0).count();
        assert!((5..=35).contains(&base_first), "{base_first} of 40");
    }

    #[test]
    fn a_side_with_more_trials_finishes_alone() {
        let sides = [steps(&[(Phase::Measure, 1)]), steps(&[(Phase::Measure, 3)])];
        let order = interleave(&sides, Order::Abba);
        assert_eq!(
            labels(&order),
            ["Ameasure0", "Bmeasure0", "Bmeasure1", "Bmeasure2"]
        );
    }

    #[test]
    fn in_abba_each_side_runs_first_in_half_the_pairs() {
        let sides = [
            steps(&[(Phase::Measure, 10)]),
            steps(&[(Phase::Measure, 10)]),
        ];
        let order = interleave(&sides, Order::Abba);
        let base_first = order.chunks(2).filter(|pair| pair[0].0 == 0).count();
        assert_eq!(base_first, 5);
        // Balanced positions: the mean position of each side's trials is the same.
        let mean = |side: usize| -> f64 {
            let positions: Vec<usize> = order
                .iter()
                .enumerate()
                .filter(|(_, (s, _))| *s == side)
                .map(|(position, _)| position)
                .collect();
            positions.iter().sum::<usize>() as f64 / positions.len() as f64
        };
        assert_eq!(mean(0), mean(1));
    }
}
