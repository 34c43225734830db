//! How often E-divisive finds a change where there is one and where there is none:
//! synthetic series of 60 points with multiplicative noise of a log-sd like this
//! project's shared VMs (0.03 to 0.06), with a 5% step at point 40, and A/A series
//! without one. Fixed seeds, so the numbers in docs/history.md can be reproduced:
//!
//! ```sh
//! cargo run -p bench-cli --example changepoint_rates -- 100        # series per row
//! cargo run -p bench-cli --example changepoint_rates -- 100 0.05   # another alpha
//! ```

use bench_cli::history::changepoint::{Method, Settings, change_points};
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
        .unwrap_or(10);
    let mut settings = Settings::default();
    if let Some(alpha) = std::env::args().nth(2).and_then(|a| a.parse().ok()) {
        settings.alpha = alpha;
    }
    if let Some(method) = std::env::args().nth(3) {
        settings.method = match method.as_str() {
            "energy" => Method::Energy,
            "energy-t" => Method::EnergyStudentT,
            "max-t" => Method::MaxT,
            other => panic!("unknown method {other}: energy, energy-t or max-t"),
        };
    }
    println!(
        "{series} series of 60 points per row; {:?}, alpha {}, {} permutations",
        settings.method, settings.alpha, settings.permutations
    );
    println!("log-sd  step found (at 38..=42)  A/A with any change point");
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
            "{sd:<6}  {found:>3}/{series} ({near:>3}/{series})        {false_alarms:>3}/{series}"
        );
    }
}
