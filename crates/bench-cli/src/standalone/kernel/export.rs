//! The runs of `clibench kernel` and their renderings (summary table, JSON, Markdown).
//! Renderers return text; writing happens in the caller.

use bench_core::export::text::{Align, render};
use bench_core::stats::Summary;
use bench_core::{Metric, Phase};
use std::collections::BTreeMap;

/// Version of the `clibench kernel` JSON export.
pub const SCHEMA_VERSION: u32 = 1;

/// One run of the measurement sequence.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Run {
    /// Each metric measured in this run, by name, in base units (seconds or bytes).
    pub values: BTreeMap<String, f64>,
    /// Each metric that failed in this run, by name.
    pub errors: BTreeMap<String, String>,
    /// The Python version the kernel reported.
    pub python: Option<String>,
    /// `pandas` or `lists`: what built the loaded-memory table.
    pub workload: Option<String>,
    /// A failure while closing a kernel after the metrics.
    pub close_error: Option<String>,
}

/// Summary of one metric over the runs.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MetricSummary {
    /// The metric's name (`kernel_exec`).
    pub metric: &'static str,
    /// `s` or `bytes`.
    pub unit: &'static str,
    /// What the metric measures.
    pub description: &'static str,
    /// Statistics over the runs that measured it; `None` when none did.
    pub summary: Option<Summary>,
    /// Runs in which it failed.
    pub failed_runs: usize,
}

/// Everything `clibench kernel` found.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Report {
    /// Version of this JSON layout.
    pub schema_version: u32,
    /// The kernel command (`python3 <reference kernel>` for the reference kernel).
    pub command: Vec<String>,
    /// True when the built-in reference kernel was measured.
    pub reference_kernel: bool,
    /// The Python version the kernel reported (first run that said).
    pub python: Option<String>,
    /// What built the loaded-memory table: `pandas` when importable, else `lists`.
    pub workload: Option<String>,
    /// Every run.
    pub runs: Vec<Run>,
    /// One entry per runtime metric, in measuring order.
    pub metrics: Vec<MetricSummary>,
}

fn description(metric: Metric) -> &'static str {
    match metric {
        Metric::KernelStart => "spawn to `ready`",
        Metric::KernelRss => "RSS of the kernel's session after `ready`",
        Metric::KernelExec => "mean per `pass` cell",
        Metric::Bash => "mean per `await bash(':')` cell",
        Metric::GitStatus => "mean per `git status --porcelain` cell",
        Metric::Output => "mean per cell printing 32 KiB",
        Metric::Mixed => "35 cells, git status every 4th",
        Metric::Interrupt => "interrupt to `done` of a cell in `await sleep(60)`",
        Metric::LoadedRss => "RSS with a 10,000 x 8 table and a 10,000-element list",
        Metric::Snapshot => "`snapshot` of the table and list",
        Metric::Restore => "`restore` in a fresh kernel, verified",
        // The report lists only the runtime phase's metrics.
        _ => "",
    }
}

/// Formats a value of `metric` for people.
pub fn format_value(metric: Metric, value: f64) -> String {
    metric.unit().format(value)
}

impl Report {
    /// Builds the report and its per-metric summaries.
    pub fn new(command: Vec<String>, reference_kernel: bool, runs: Vec<Run>) -> Report {
        let metrics = Phase::Runtime
            .metrics()
            .map(|metric| {
                let values: Vec<f64> = runs
                    .iter()
                    .filter_map(|run| run.values.get(metric.name()).copied())
                    .collect();
                MetricSummary {
                    metric: metric.name(),
                    unit: metric.unit().symbol(),
                    description: description(metric),
                    summary: Summary::from_values(&values),
                    failed_runs: runs
                        .iter()
                        .filter(|run| run.errors.contains_key(metric.name()))
                        .count(),
                }
            })
            .collect();
        Report {
            schema_version: SCHEMA_VERSION,
            python: runs.iter().find_map(|run| run.python.clone()),
            workload: runs.iter().find_map(|run| run.workload.clone()),
            command,
            reference_kernel,
            runs,
            metrics,
        }
    }

    /// How many runs measured every metric without an error.
    pub fn complete_runs(&self) -> usize {
        self.runs
            .iter()
            .filter(|run| {
                run.errors.is_empty() && run.values.len() == Phase::Runtime.metrics().count()
            })
            .count()
    }
}

fn summary_rows(report: &Report) -> Vec<(Metric, Option<&Summary>, usize)> {
    Phase::Runtime
        .metrics()
        .zip(&report.metrics)
        .map(|(metric, summary)| (metric, summary.summary.as_ref(), summary.failed_runs))
        .collect()
}

fn heading(report: &Report) -> String {
    let kernel = if report.reference_kernel {
        "reference kernel".to_owned()
    } else {
        report.command.join(" ")
    };
    format!(
        "{kernel} (python {}, loaded workload: {}), {} of {} runs complete",
        report.python.as_deref().unwrap_or("unknown"),
        report.workload.as_deref().unwrap_or("not built"),
        report.complete_runs(),
        report.runs.len()
    )
}

/// The summary people read on stderr.
pub fn summary_table(report: &Report) -> String {
    let rows: Vec<Vec<String>> = summary_rows(report)
        .into_iter()
        .map(|(metric, summary, failed)| {
            let format = |value: f64| format_value(metric, value);
            match summary {
                Some(summary) => vec![
                    metric.name().to_owned(),
                    format(summary.median),
                    format!("{} ± {}", format(summary.mean), format(summary.std_dev)),
                    format(summary.min),
                    format(summary.max),
                    format!("{}", summary.n),
                    if failed > 0 {
                        format!("{failed} failed")
                    } else {
                        String::new()
                    },
                ],
                None => vec![
                    metric.name().to_owned(),
                    "-".to_owned(),
                    "-".to_owned(),
                    "-".to_owned(),
                    "-".to_owned(),
                    "0".to_owned(),
                    if failed > 0 {
                        format!("{failed} failed")
                    } else {
                        "not reached".to_owned()
                    },
                ],
            }
        })
        .collect();
    let mut out = heading(report);
    out.push('\n');
    out.push_str(&render(
        &[
            "metric",
            "median",
            "mean ± sd",
            "min",
            "max",
            "runs",
            "note",
        ],
        &[
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Left,
        ],
        &rows,
    ));
    for (index, run) in report.runs.iter().enumerate() {
        for (metric, error) in &run.errors {
            out.push_str(&format!("run {}: {metric} failed: {error}\n", index + 1));
        }
        if let Some(error) = &run.close_error {
            out.push_str(&format!(
                "run {}: closing the kernel failed: {error}\n",
                index + 1
            ));
        }
    }
    out
}

/// The report as pretty JSON.
pub fn to_json(report: &Report) -> serde_json::Result<String> {
    serde_json::to_string_pretty(report)
}

/// The summary as a Markdown table.
pub fn to_markdown(report: &Report) -> String {
    let mut out = format!("## {}\n\n", heading(report));
    out.push_str("| metric | what | median | mean ± sd | min | max | runs |\n");
    out.push_str("|---|---|---:|---:|---:|---:|---:|\n");
    for (metric, summary, failed) in summary_rows(report) {
        let format = |value: f64| format_value(metric, value);
        let cells = match summary {
            Some(summary) => [
                format(summary.median),
                format!("{} ± {}", format(summary.mean), format(summary.std_dev)),
                format(summary.min),
                format(summary.max),
                if failed > 0 {
                    format!("{} ({failed} failed)", summary.n)
                } else {
                    summary.n.to_string()
                },
            ],
            None => [
                "-".to_owned(),
                "-".to_owned(),
                "-".to_owned(),
                "-".to_owned(),
                format!("0 ({failed} failed)"),
            ],
        };
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            metric.name(),
            description(metric),
            cells.join(" | ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two runs with fixed numbers: one complete, one that failed at `interrupt`.
    fn sample_report() -> Report {
        let complete: [(Metric, f64); 11] = [
            (Metric::KernelStart, 0.0512),
            (Metric::KernelRss, 14_680_064.0),
            (Metric::KernelExec, 0.000_131),
            (Metric::Bash, 0.0031),
            (Metric::GitStatus, 0.0042),
            (Metric::Output, 0.0035),
            (Metric::Mixed, 0.041),
            (Metric::Interrupt, 0.0009),
            (Metric::LoadedRss, 19_922_944.0),
            (Metric::Snapshot, 0.012),
            (Metric::Restore, 0.009),
        ];
        let first = Run {
            values: complete
                .iter()
                .map(|(metric, value)| (metric.name().to_owned(), *value))
                .collect(),
            errors: BTreeMap::new(),
            python: Some("3.11.7".into()),
            workload: Some("lists".into()),
            close_error: None,
        };
        let mut second = Run {
            values: complete
                .iter()
                .take(7)
                .map(|(metric, value)| (metric.name().to_owned(), value * 1.1))
                .collect(),
            python: Some("3.11.7".into()),
            ..Run::default()
        };
        second.errors.insert(
            "interrupt".into(),
            "interrupted cell ended with status ok and errors [], expected status error with KeyboardInterrupt".into(),
        );
        Report::new(
            vec!["python3".into(), "kernel.py".into()],
            true,
            vec![first, second],
        )
    }

    #[test]
    fn summary_table_shows_every_metric_and_the_failures() {
        insta::assert_snapshot!(summary_table(&sample_report()));
    }

    #[test]
    fn markdown_lists_every_metric() {
        insta::assert_snapshot!(to_markdown(&sample_report()));
    }

    /// Rounds every float to 6 significant digits, so the snapshot does not depend on
    /// the last bits of how statistics are summed.
    fn round_floats(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Number(number) if number.is_f64() => {
                let float = number.as_f64().unwrap_or_default();
                let rounded: f64 = format!("{float:.5e}").parse().unwrap_or(float);
                *value = serde_json::json!(rounded);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(round_floats),
            serde_json::Value::Object(fields) => fields.values_mut().for_each(round_floats),
            _ => {}
        }
    }

    #[test]
    fn json_has_runs_and_summaries() {
        let mut json: serde_json::Value =
            serde_json::from_str(&to_json(&sample_report()).unwrap()).unwrap();
        round_floats(&mut json);
        insta::assert_json_snapshot!(json);
    }
}
