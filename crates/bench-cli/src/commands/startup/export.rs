//! The runs of `clibench startup` and their renderings (JSON, Markdown). Renderers
//! return text; writing happens in the command.

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

/// The report as pretty JSON.
pub fn to_json(report: &Report) -> serde_json::Result<String> {
    serde_json::to_string_pretty(report)
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
pub(crate) mod tests {
    use super::*;

    pub(crate) fn sample_report() -> Report {
        let run = |ready: f64, pss: Option<u64>| Run {
            first_byte_seconds: Some(0.012),
            first_frame_seconds: Some(0.08),
            ready_seconds: Some(ready),
            rss_bytes: Some(48 * 1024 * 1024),
            pss_bytes: pss,
            processes: Some(2),
            detached_stopped: Some(0),
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

    #[test]
    fn screens_are_boxed() {
        assert_eq!(frame_screen("ab\n\nc"), "┌──┐\n│ab│\n│  │\n│c │\n└──┘");
    }
}
