//! The runs of `clibench startup` and their renderings (summary table, JSON, Markdown,
//! hyperfine's JSON). Renderers return text; writing happens in the caller.

use bench_core::export::text::{Align, render};
use bench_core::stats::Summary;
use bench_core::units::{format_bytes, format_seconds};
use std::collections::BTreeMap;

/// Version of the `clibench startup` JSON export.
pub const SCHEMA_VERSION: u32 = 1;

/// One measured run. Every figure is `None` when the run failed before it.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Run {
    /// Spawn to the first byte of output, seconds.
    pub first_byte_seconds: Option<f64>,
    /// Spawn to the first line with at least 3 letters or digits, seconds.
    pub first_frame_seconds: Option<f64>,
    /// Spawn to ready by the chosen mode, seconds.
    pub ready_seconds: Option<f64>,
    /// RSS of the program's processes once settled, bytes.
    pub rss_bytes: Option<u64>,
    /// PSS of the program's processes once settled, bytes (`None` when unreadable).
    pub pss_bytes: Option<u64>,
    /// How many processes the family had when memory was measured.
    pub processes: Option<usize>,
    /// How many detached processes (daemons outside the terminal's session) were
    /// still running after close and had to be stopped.
    pub detached_stopped: Option<usize>,
    /// User-mode CPU seconds of the run's processes that clibench reaped (its
    /// children's `cutime` in `/proc/self/stat`, as hyperfine's `user`).
    pub user_seconds: Option<f64>,
    /// Kernel-mode CPU seconds of the same processes (`cstime`, hyperfine's `system`).
    pub system_seconds: Option<f64>,
    /// The program's exit code, when it exited by itself with one (`--ready exit`).
    pub exit_code: Option<i32>,
    /// What the settle before the memory measurement did.
    pub settle: Option<bench_proc::SettleReport>,
    /// Why the run failed.
    pub error: Option<String>,
}

/// A figure reported per run and summarized.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Figure {
    /// [`Run::first_byte_seconds`].
    FirstByte,
    /// [`Run::first_frame_seconds`].
    FirstFrame,
    /// [`Run::ready_seconds`].
    Ready,
    /// [`Run::rss_bytes`].
    Rss,
    /// [`Run::pss_bytes`].
    Pss,
}

impl Figure {
    /// Every figure, in report order.
    pub const ALL: [Figure; 5] = [
        Figure::FirstByte,
        Figure::FirstFrame,
        Figure::Ready,
        Figure::Rss,
        Figure::Pss,
    ];

    /// The label people read.
    pub fn label(self) -> &'static str {
        match self {
            Figure::FirstByte => "first byte",
            Figure::FirstFrame => "first frame",
            Figure::Ready => "ready",
            Figure::Rss => "rss",
            Figure::Pss => "pss",
        }
    }

    /// The JSON key, with its unit.
    pub fn key(self) -> &'static str {
        match self {
            Figure::FirstByte => "first_byte_seconds",
            Figure::FirstFrame => "first_frame_seconds",
            Figure::Ready => "ready_seconds",
            Figure::Rss => "rss_bytes",
            Figure::Pss => "pss_bytes",
        }
    }

    /// Formats a value of this figure for people.
    pub fn format(self, value: f64) -> String {
        match self {
            Figure::Rss | Figure::Pss => format_bytes(value),
            _ => format_seconds(value),
        }
    }

    fn value(self, run: &Run) -> Option<f64> {
        match self {
            Figure::FirstByte => run.first_byte_seconds,
            Figure::FirstFrame => run.first_frame_seconds,
            Figure::Ready => run.ready_seconds,
            Figure::Rss => run.rss_bytes.map(|b| b as f64),
            Figure::Pss => run.pss_bytes.map(|b| b as f64),
        }
    }
}

/// All runs of one `clibench startup`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Report {
    /// Version of this format.
    pub schema_version: u32,
    /// The command and its arguments.
    pub command: Vec<String>,
    /// The ready mode, as given.
    pub ready_mode: String,
    /// Terminal columns.
    pub cols: u16,
    /// Terminal rows.
    pub rows: u16,
    /// The measured runs (warm-up runs are not kept).
    pub runs: Vec<Run>,
    /// Summary per figure key, over the runs that have the figure.
    pub summary: BTreeMap<&'static str, Summary>,
}

impl Report {
    /// A report over `runs`, with summaries computed.
    pub fn new(
        command: Vec<String>,
        ready_mode: String,
        (cols, rows): (u16, u16),
        runs: Vec<Run>,
    ) -> Report {
        let summary = Figure::ALL
            .iter()
            .filter_map(|&figure| {
                let values: Vec<f64> = runs.iter().filter_map(|r| figure.value(r)).collect();
                Summary::from_values(&values).map(|s| (figure.key(), s))
            })
            .collect();
        Report {
            schema_version: SCHEMA_VERSION,
            command,
            ready_mode,
            cols,
            rows,
            runs,
            summary,
        }
    }

    /// The summary of `figure`, if any run has it.
    pub fn summary(&self, figure: Figure) -> Option<&Summary> {
        self.summary.get(figure.key())
    }
}

/// The summary for people: one row per figure.
pub fn summary_table(report: &Report) -> String {
    let rows: Vec<Vec<String>> = Figure::ALL
        .iter()
        .filter_map(|&figure| {
            let summary = report.summary(figure)?;
            let format = |value: f64| figure.format(value);
            Some(vec![
                figure.label().to_owned(),
                format(summary.min),
                format(summary.median),
                format!("{} ± {}", format(summary.mean), format(summary.std_dev)),
                format(summary.max),
            ])
        })
        .collect();
    let ok = report.runs.iter().filter(|r| r.error.is_none()).count();
    let mut out = format!(
        "{} ({} ready, {} of {} runs ok)\n",
        report.command.join(" "),
        report.ready_mode,
        ok,
        report.runs.len()
    );
    if rows.is_empty() {
        out.push_str("no run produced a measurement\n");
        return out;
    }
    out.push_str(&render(
        &["figure", "min", "median", "mean ± sd", "max"],
        &[
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
        ],
        &rows,
    ));
    out
}

/// The report as pretty JSON.
pub fn to_json(report: &Report) -> serde_json::Result<String> {
    serde_json::to_string_pretty(report)
}

/// hyperfine's `--export-json` document.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
struct HyperfineExport {
    results: Vec<HyperfineResult>,
}

/// One entry of hyperfine's `--export-json` `results` array, field for field and
/// in hyperfine's order.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
struct HyperfineResult {
    command: String,
    mean: f64,
    /// `null` for a single run, as hyperfine writes it.
    stddev: Option<f64>,
    median: f64,
    user: f64,
    system: f64,
    min: f64,
    max: f64,
    times: Vec<f64>,
    /// Each timed run's exit code; `null` where clibench stopped the program (every
    /// mode but `exit`) or a signal ended it.
    exit_codes: Vec<Option<i32>>,
}

/// The report in the shape of hyperfine's `--export-json` (`{"results": [...]}`),
/// so hyperfine's plotting and statistics scripts read it. The one result is the
/// command, and its times are the seconds from spawn to ready of the runs that got
/// there (failed runs have no time and are left out, as are their exit codes);
/// `user` and `system` are the mean CPU seconds of the processes clibench reaped
/// after each run. `None` when no run got ready.
pub fn to_hyperfine_json(report: &Report) -> Option<String> {
    let summary = report.summary(Figure::Ready)?;
    let timed: Vec<&Run> = report
        .runs
        .iter()
        .filter(|run| run.ready_seconds.is_some())
        .collect();
    let times: Vec<f64> = timed.iter().filter_map(|run| run.ready_seconds).collect();
    let mean_of = |value: fn(&Run) -> Option<f64>| {
        let values: Vec<f64> = report.runs.iter().filter_map(value).collect();
        if values.is_empty() {
            0.0
        } else {
            values.iter().sum::<f64>() / values.len() as f64
        }
    };
    let result = HyperfineResult {
        command: report.command.join(" "),
        mean: summary.mean,
        stddev: (summary.n > 1).then_some(summary.std_dev),
        median: summary.median,
        user: mean_of(|run| run.user_seconds),
        system: mean_of(|run| run.system_seconds),
        min: summary.min,
        max: summary.max,
        exit_codes: timed.iter().map(|run| run.exit_code).collect(),
        times,
    };
    let document = HyperfineExport {
        results: vec![result],
    };
    // Invariant: strings, finite numbers from a summary and nulls always serialize.
    let mut text = serde_json::to_string_pretty(&document).expect("hyperfine JSON serializes");
    text.push('\n');
    Some(text)
}

/// The summary as a Markdown table, hyperfine style.
pub fn to_markdown(report: &Report) -> String {
    let ok = report.runs.iter().filter(|r| r.error.is_none()).count();
    let mut out = format!(
        "`{}` in a {}x{} terminal, ready by `{}`, {} of {} runs ok\n\n",
        report.command.join(" "),
        report.cols,
        report.rows,
        report.ready_mode,
        ok,
        report.runs.len()
    );
    out.push_str("| Figure | Min | Median | Mean ± σ | Max |\n|:---|---:|---:|---:|---:|\n");
    for figure in Figure::ALL {
        if let Some(s) = report.summary(figure) {
            let f = |v| figure.format(v);
            out.push_str(&format!(
                "| {} | {} | {} | {} ± {} | {} |\n",
                figure.label(),
                f(s.min),
                f(s.median),
                f(s.mean),
                f(s.std_dev),
                f(s.max)
            ));
        }
    }
    for (index, run) in report.runs.iter().enumerate() {
        if let Some(error) = &run.error {
            let first_line = error.lines().next().unwrap_or_default();
            out.push_str(&format!("\nRun {} failed: {first_line}\n", index + 1));
        }
    }
    out
}

/// A screen inside a box, so that its blank rows and edges are visible.
pub fn frame_screen(screen: &str) -> String {
    let width = screen.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    let mut out = format!("┌{}┐\n", "─".repeat(width));
    for line in screen.lines() {
        let pad = width - line.chars().count();
        out.push_str(&format!("│{line}{}│\n", " ".repeat(pad)));
    }
    out.push_str(&format!("└{}┘", "─".repeat(width)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_report() -> Report {
        let run = |ready: f64, pss: Option<u64>| Run {
            first_byte_seconds: Some(0.012),
            first_frame_seconds: Some(0.08),
            ready_seconds: Some(ready),
            rss_bytes: Some(48 * 1024 * 1024),
            pss_bytes: pss,
            processes: Some(2),
            detached_stopped: Some(0),
            user_seconds: Some(0.25),
            system_seconds: Some(0.05),
            exit_code: None,
            settle: None,
            error: None,
        };
        Report::new(
            vec!["pi".into(), "--model".into(), "x".into()],
            "probe".into(),
            (120, 40),
            vec![
                run(0.412, Some(30 * 1024 * 1024)),
                run(0.398, Some(31 * 1024 * 1024)),
                Run {
                    first_byte_seconds: Some(0.011),
                    error: Some(
                        "timed out after 30.0 s waiting for the probe echo; last screen:\n  | pi"
                            .into(),
                    ),
                    ..Run::default()
                },
            ],
        )
    }

    #[test]
    fn the_summary_table_lists_every_measured_figure() {
        insta::assert_snapshot!(summary_table(&sample_report()));
    }

    #[test]
    fn markdown_has_one_row_per_figure_and_names_failed_runs() {
        insta::assert_snapshot!(to_markdown(&sample_report()));
    }

    #[test]
    fn json_keeps_runs_and_summaries_with_units_in_names() {
        insta::assert_snapshot!(to_json(&sample_report()).unwrap());
    }

    #[test]
    fn summaries_skip_runs_without_the_figure() {
        let report = sample_report();
        assert_eq!(report.summary(Figure::FirstByte).unwrap().n, 3);
        assert_eq!(report.summary(Figure::Ready).unwrap().n, 2);
    }

    /// The keys and JSON types of hyperfine's result entries, from a sample of its
    /// `--export-json` output.
    fn hyperfine_shape(document: &serde_json::Value) -> Vec<(String, &'static str)> {
        let kind = |value: &serde_json::Value| match value {
            serde_json::Value::Number(_) | serde_json::Value::Null => "number or null",
            serde_json::Value::String(_) => "string",
            serde_json::Value::Array(_) => "array",
            _ => "other",
        };
        let results = document["results"].as_array().expect("a results array");
        let mut shape: Vec<(String, &'static str)> = results
            .iter()
            .flat_map(|result| {
                result
                    .as_object()
                    .expect("each result is an object")
                    .iter()
                    .map(|(key, value)| (key.clone(), kind(value)))
            })
            .collect();
        shape.sort();
        shape.dedup();
        shape
    }

    #[test]
    fn hyperfine_export_has_hyperfines_shape() {
        let sample: serde_json::Value =
            serde_json::from_str(include_str!("fixtures/hyperfine-export.json")).unwrap();
        let ours: serde_json::Value =
            serde_json::from_str(&to_hyperfine_json(&sample_report()).unwrap()).unwrap();
        assert_eq!(hyperfine_shape(&ours), hyperfine_shape(&sample));
        let result = &ours["results"][0];
        assert_eq!(result["command"], "pi --model x");
        // The two runs that got ready; the failed third has no time.
        assert_eq!(result["times"], serde_json::json!([0.412, 0.398]));
        assert_eq!(result["exit_codes"].as_array().unwrap().len(), 2);
        assert!((result["mean"].as_f64().unwrap() - 0.405).abs() < 1e-12);
        assert_eq!(result["min"], 0.398);
        assert_eq!(result["user"], 0.25);
        assert!(result["stddev"].as_f64().unwrap() > 0.0);
        insta::assert_snapshot!(to_hyperfine_json(&sample_report()).unwrap());
    }

    #[test]
    fn hyperfine_stddev_is_null_for_one_run_and_nothing_without_ready() {
        let mut report = sample_report();
        report.runs.truncate(1);
        let report = Report::new(report.command, report.ready_mode, (120, 40), report.runs);
        let one: serde_json::Value =
            serde_json::from_str(&to_hyperfine_json(&report).unwrap()).unwrap();
        assert!(one["results"][0]["stddev"].is_null());
        let failed = Report::new(
            vec!["x".into()],
            "probe".into(),
            (80, 24),
            vec![Run::default()],
        );
        assert_eq!(to_hyperfine_json(&failed), None);
    }

    #[test]
    fn screens_are_boxed() {
        assert_eq!(frame_screen("ab\n\nc"), "┌──┐\n│ab│\n│  │\n│c │\n└──┘");
    }
}
