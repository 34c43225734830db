//! How often E-divisive finds a change where there is one and where there is none:
//! synthetic series of 60 points with multiplicative noise of a log-sd like this
//! project's shared VMs (0.03 to 0.06), with a 5% step at point 40, and A/A series
//! without one. Fixed seeds, so the numbers in docs/history.md can be reproduced:
//!
//! ```sh
//! cargo run -p bench-cli --example changepoint_rates -- 100                   # every method
//! cargo run -p bench-cli --example changepoint_rates -- 1000 energy-t 0.01    # one, at a level
//! ```
//!
//! The methods: `max-t` (the default: the largest two-sample t over the cuts, with a
//! permutation test), `energy` (E-divisive with a permutation test) and `energy-t`
//! (E-divisive's cut confirmed by a Student t-test, as Otava does).

use bench_cli::history::change_points::find::{Method, Settings, change_points};
use bench_core::rng::SplitMix64;

fn noisy(rng: &mut SplitMix64, n: usize, level: f64, sd: f64) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let (u, v) = (rng.next_f64().max(1e-12), rng.next_f64());
            let z = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
            level * (sd * z).exp()
        })
        .collect()
}

fn main() {
    let series: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(100);
    let methods: Vec<(Method, f64)> = match std::env::args().nth(2).as_deref() {
        None | Some("all") => vec![
            (Method::MaxT, 0.05),
            (Method::Energy, 0.05),
            (Method::EnergyStudentT, 0.005),
        ],
        Some(method) => {
            let method = match method {
                "energy" => Method::Energy,
                "energy-t" => Method::EnergyStudentT,
                "max-t" => Method::MaxT,
                other => panic!("unknown method {other}: energy-t, energy, max-t or all"),
            };
            let alpha = std::env::args()
                .nth(3)
                .and_then(|a| a.parse().ok())
                .unwrap_or(0.05);
            vec![(method, alpha)]
        }
    };
    for (method, alpha) in methods {
        let settings = Settings {
            method,
            alpha,
            ..Settings::default()
        };
        println!(
            "{method:?} at {alpha}: {series} series of 60 points per row ({} permutations where permuted)",
            settings.permutations
        );
        println!("log-sd  5% step found (at 38..=42)  A/A with any change point");
        for sd in [0.03, 0.045, 0.06] {
            let mut rng = SplitMix64::new(42);
            let (mut found, mut near, mut false_alarms) = (0, 0, 0);
            for _ in 0..series {
                let mut step = noisy(&mut rng, 40, 1.0, sd);
                step.extend(noisy(&mut rng, 20, 1.05, sd));
                let changes = change_points(&step, &settings);
                if !changes.is_empty() {
                    found += 1;
                }
                if changes.iter().any(|c| (38..=42).contains(&c.index)) {
                    near += 1;
                }
                if !change_points(&noisy(&mut rng, 60, 1.0, sd), &settings).is_empty() {
                    false_alarms += 1;
                }
            }
            println!(
                "{sd:<6}  {found:>4}/{series} ({near:>4}/{series})     {false_alarms:>4}/{series}"
            );
        }
    }
}
