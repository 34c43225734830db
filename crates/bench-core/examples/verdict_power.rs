//! How often the verdict rule cries wolf, and what it catches, on trial data resampled
//! from a real A/A run: `cargo run --release -p bench-core --example verdict_power --
//! OUT/base/result.json OUT/head/result.json [REPS]`.
//!
//! Both sides' samples of each metric are pooled (an A/A run: one distribution). Each
//! repetition draws 10 trials a side with replacement; the candidate's `cold` and `warm`
//! get a constant start-up delay of 0%, +5% or +10% of the pooled cold median (the
//! demo's `DEMO_AGENT_STARTUP_DELAY_MS` sleeps, so CPU time and memory stay as they are).
//! Then `--trials auto` the same way: pairs drawn one by one, compared at the planned
//! looks, up to 20 pairs.

use bench_core::compare::{CompareOptions, Interleaving, compare};
use bench_core::stats::sequential::{DEFAULT_WATCHED, Decision, SequentialPlan, Spending, decide};
use bench_core::{Metric, ResultFile, Sample, Side, record};
use std::collections::BTreeMap;

/// SplitMix64, as the crate's own generator.
struct Rng(u64);

impl Rng {
    fn below(&mut self, bound: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((u128::from(z ^ (z >> 31)) * bound as u128) >> 64) as usize
    }
}

fn draw(
    pools: &BTreeMap<Metric, Vec<f64>>,
    rng: &mut Rng,
    trials: u32,
    delay: f64,
    sha: &str,
) -> Side {
    let mut side = Side::new(sha);
    for (&metric, pool) in pools {
        for trial in 0..trials {
            let mut value = pool[rng.below(pool.len())];
            if matches!(metric, Metric::Cold | Metric::Warm) {
                value += delay;
            }
            record(&mut side, metric, trial, Sample::Value(value));
        }
    }
    side
}

fn first(side: &Side, n: u32) -> Side {
    let mut cut = side.clone();
    for samples in cut.metrics.values_mut() {
        samples.retain(|sample| sample.trial < n);
    }
    cut
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: verdict_power BASE.json HEAD.json [REPS]");
        std::process::exit(2);
    }
    let reps: usize = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(20);
    let mut pools: BTreeMap<Metric, Vec<f64>> = BTreeMap::new();
    for path in &args[1..3] {
        let result = ResultFile::load(std::path::Path::new(path)).expect("a result file");
        for metric in [
            Metric::Cold,
            Metric::Warm,
            Metric::ColdCpu,
            Metric::WarmCpu,
            Metric::Rss,
            Metric::Pss,
        ] {
            pools
                .entry(metric)
                .or_default()
                .extend(result.side.values(metric));
        }
    }
    pools.retain(|_, pool| !pool.is_empty());
    let mut cold = pools[&Metric::Cold].clone();
    cold.sort_by(f64::total_cmp);
    let cold_median = cold[cold.len() / 2];
    println!(
        "pooled cold median {:.1} ms over {} samples; {reps} repetitions",
        cold_median * 1000.0,
        cold.len()
    );
    let options = CompareOptions {
        interleaving: Some(Interleaving::Interleaved),
        ..CompareOptions::default()
    };
    for percent in [0.0, 5.0, 10.0] {
        let delay = cold_median * percent / 100.0;
        let mut rng = Rng(0x5eed + percent as u64);
        let (mut any_false, mut cold_found, mut warm_found) = (0, 0, 0);
        for _ in 0..reps {
            let base = draw(&pools, &mut rng, 10, 0.0, "b");
            let head = draw(&pools, &mut rng, 10, delay, "h");
            let comparison = compare(&base, &head, &options);
            let changed = |metric| {
                comparison
                    .metrics
                    .iter()
                    .any(|row| row.metric == metric && row.verdict.is_change())
            };
            let false_verdict = comparison.metrics.iter().any(|row| {
                row.verdict.is_change()
                    && (percent == 0.0 || !matches!(row.metric, Metric::Cold | Metric::Warm))
            });
            any_false += usize::from(false_verdict);
            cold_found += usize::from(changed(Metric::Cold));
            warm_found += usize::from(changed(Metric::Warm));
        }
        println!(
            "fixed 10 a side, +{percent}%: cold regressed {cold_found}/{reps}, warm {warm_found}/{reps}, repetitions with a false verdict {any_false}/{reps}"
        );
        let plan = SequentialPlan::new(20, 0.05, Spending::Pocock);
        let mut rng = Rng(0xa070 + percent as u64);
        let (mut found, mut false_alarms, mut pairs_total) = (0, 0, 0u32);
        for _ in 0..reps {
            let base = draw(&pools, &mut rng, 20, 0.0, "b");
            let head = draw(&pools, &mut rng, 20, delay, "h");
            for (k, &pairs) in plan.looks().iter().enumerate() {
                let looked = CompareOptions {
                    alpha: plan.alpha_at(k),
                    ..options.clone()
                };
                let comparison = compare(&first(&base, pairs), &first(&head, pairs), &looked);
                let target = |metric| 2.0 * looked.floor(metric);
                let last = k + 1 == plan.looks().len();
                if last || decide(&comparison, &DEFAULT_WATCHED, target) == Decision::Stop {
                    pairs_total += pairs;
                    let cold = comparison
                        .metrics
                        .iter()
                        .any(|r| r.metric == Metric::Cold && r.verdict.is_change());
                    let wrong = comparison.metrics.iter().any(|row| {
                        row.verdict.is_change()
                            && (percent == 0.0
                                || !matches!(row.metric, Metric::Cold | Metric::Warm))
                    });
                    found += usize::from(cold);
                    false_alarms += usize::from(wrong);
                    break;
                }
            }
        }
        println!(
            "auto (at most 20 pairs), +{percent}%: cold regressed {found}/{reps}, false {false_alarms}/{reps}, mean pairs {:.1}",
            f64::from(pairs_total) / reps as f64
        );
    }
}
