//! What `clibench calibrate` found, as a typed report (serialized by `--json`) and the
//! short table a person reads.

use super::spread::BudgetPower;
use std::fmt::Write as _;

/// The host's noise profile.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Report {
    /// The 1, 5 and 15 minute load averages when calibration started.
    pub load_average: Option<[f64; 3]>,
    /// The CPUs measured (those this process may run on).
    pub cpus: Vec<usize>,
    /// The width of one window of the CPU loop, in milliseconds: about one start of a
    /// small program.
    pub window_ms: f64,
    /// How long the CPU loop ran on each CPU, in seconds.
    pub cpu_seconds: f64,
    /// Each CPU's drift.
    pub per_cpu: Vec<CpuDrift>,
    /// The spread of the difference between two CPUs' windows at the same moment (the
    /// first two CPUs; `None` on one CPU): what a duet pair split across CPUs sees.
    pub cross_cpu_same_moment: Option<f64>,
    /// The spread of the difference of two windows by their gap, the same CPU and across
    /// the first two CPUs.
    pub drift_by_gap: Vec<DriftAtGap>,
    /// How a window correlates with a later one on the same CPU, by their gap.
    pub correlation_by_gap: Vec<CorrelationAtGap>,
    /// The command's starts, when one was given.
    pub start: Option<StartNoise>,
}

/// One CPU's drift.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CpuDrift {
    /// The CPU's number.
    pub cpu: usize,
    /// How many chunks of the loop were timed.
    pub chunks: u64,
    /// The spread of the windows' mean log times.
    pub window_spread: Option<f64>,
}

/// The spread of the difference of two windows `gap_ms` apart (end of the first to start
/// of the second): about what the log ratio of a pair of events that far apart spreads.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DriftAtGap {
    /// The gap, in milliseconds.
    pub gap_ms: f64,
    /// Both windows on one CPU, averaged over the CPUs' variances.
    pub same_cpu: Option<f64>,
    /// The later window on the second CPU, the earlier on the first.
    pub cross_cpu: Option<f64>,
}

/// The correlation of a window with the one `gap_ms` later (end to start) on the same
/// CPU, averaged over the CPUs: near 1, events that far apart share their drift and a
/// pair's ratio cancels it; near 0, they drift apart.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CorrelationAtGap {
    /// The gap, in milliseconds.
    pub gap_ms: f64,
    /// The correlation, `None` when the run was too short for the gap.
    pub correlation: Option<f64>,
}

/// A command's own starts, back to back.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StartNoise {
    /// The command line, as shown to people.
    pub command: String,
    /// How many starts were timed.
    pub starts: usize,
    /// The median time from spawn to exit, in seconds.
    pub median_seconds: f64,
    /// The spread of the starts' log times.
    pub log_spread: Option<f64>,
    /// The spread of the log ratio of back-to-back pairs (start 2k + 1 over start 2k).
    pub pair_spread: Option<f64>,
    /// The level the detectable change is computed at (two-sided, one metric).
    pub alpha: f64,
    /// What 1 minute and 5 minutes of such pairs could detect.
    pub budgets: Vec<BudgetPower>,
}

/// The table a person reads.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let load = report
        .load_average
        .map_or("unknown".to_owned(), |load| format!("{:.2}", load[0]));
    let _ = writeln!(
        out,
        "host noise: {} CPU(s), {:.0} ms windows, {:.1} s of a fixed loop on each, load {load} at the start",
        report.cpus.len(),
        report.window_ms,
        report.cpu_seconds
    );
    if let Some(load) = report.load_average
        && load[0] > report.cpus.len() as f64
    {
        let _ = writeln!(
            out,
            "warning: load {:.2} on {} CPU(s) at the start: the other work's noise is in these numbers",
            load[0],
            report.cpus.len()
        );
    }
    let _ = writeln!(out, "\n{:<24} {:>10}", "CPU", "log spread");
    for cpu in &report.per_cpu {
        let _ = writeln!(
            out,
            "{:<24} {:>10}",
            format!("cpu {} ({} chunks)", cpu.cpu, cpu.chunks),
            number(cpu.window_spread)
        );
    }
    let _ = writeln!(
        out,
        "\n{:<24} {:>10} {:>10}",
        "two windows", "same CPU", "two CPUs"
    );
    let _ = writeln!(
        out,
        "{:<24} {:>10} {:>10}",
        "at the same moment",
        "-",
        number(report.cross_cpu_same_moment)
    );
    for row in &report.drift_by_gap {
        let _ = writeln!(
            out,
            "{:<24} {:>10} {:>10}",
            format!("{:.0} ms apart", row.gap_ms),
            number(row.same_cpu),
            number(row.cross_cpu)
        );
    }
    let _ = writeln!(out, "\n{:<24} {:>10}", "correlation, gap", "same CPU");
    for row in &report.correlation_by_gap {
        let value = row
            .correlation
            .map_or("-".to_owned(), |c| format!("{c:+.2}"));
        let _ = writeln!(
            out,
            "{:<24} {value:>10}",
            format!("{:.0} ms apart", row.gap_ms)
        );
    }
    if let Some(start) = &report.start {
        let _ = writeln!(
            out,
            "\n`{}`: {} starts, median {:.1} ms, log spread {}, back-to-back pair spread {}",
            start.command,
            start.starts,
            start.median_seconds * 1e3,
            number(start.log_spread),
            number(start.pair_spread)
        );
        for budget in &start.budgets {
            let could = budget
                .detectable
                .map_or("nothing (fewer than 2 pairs)".to_owned(), |d| {
                    format!("±{:.1}%", d * 100.0)
                });
            let _ = writeln!(
                out,
                "  {:.0} min of tight pairs: {} pairs, could detect {could}",
                budget.budget_seconds / 60.0,
                budget.pairs
            );
        }
    }
    out
}

/// A spread with three decimals, `-` when there was too little to compute it.
fn number(value: Option<f64>) -> String {
    value.map_or("-".to_owned(), |v| format!("{v:.3}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Report {
        Report {
            load_average: Some([3.1, 2.0, 1.0]),
            cpus: vec![0, 1],
            window_ms: 50.0,
            cpu_seconds: 10.0,
            per_cpu: vec![
                CpuDrift {
                    cpu: 0,
                    chunks: 1000,
                    window_spread: Some(0.171),
                },
                CpuDrift {
                    cpu: 1,
                    chunks: 900,
                    window_spread: None,
                },
            ],
            cross_cpu_same_moment: Some(0.217),
            drift_by_gap: vec![DriftAtGap {
                gap_ms: 800.0,
                same_cpu: Some(0.193),
                cross_cpu: None,
            }],
            correlation_by_gap: vec![CorrelationAtGap {
                gap_ms: 0.0,
                correlation: Some(0.72),
            }],
            start: Some(StartNoise {
                command: "python3 -c pass".into(),
                starts: 37,
                median_seconds: 0.0277,
                log_spread: Some(0.262),
                pair_spread: Some(0.376),
                alpha: 0.05,
                budgets: vec![
                    BudgetPower {
                        budget_seconds: 60.0,
                        pairs: 110,
                        detectable: Some(0.107),
                    },
                    BudgetPower {
                        budget_seconds: 300.0,
                        pairs: 1,
                        detectable: None,
                    },
                ],
            }),
        }
    }

    #[test]
    fn the_table_names_each_part_and_warns_of_a_busy_start() {
        insta::assert_snapshot!(render(&sample()));
    }
}
