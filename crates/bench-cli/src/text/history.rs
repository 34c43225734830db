//! What `clibench history` tells a person and computes for it: each subcommand's lines,
//! the series it shows or charts with their change points, and which checked metrics
//! regressed. The binary prints these; they are built here so that they are tested as
//! text.

use bench_cli::history::change_points::check::{MetricCheck, Outcome};
use bench_cli::history::change_points::find::{self as changepoint, ChangePoint, change_points};
use bench_cli::history::render;
use bench_cli::history::{self as series, Added, Record, Series, Stored};
use bench_core::Metric;
use std::path::Path;

/// After `history add`: what was added and what the store now holds.
pub fn added_line(added: Added, stored: u64, store: &Path) -> String {
    format!(
        "clibench history: {}; {stored} in {}",
        added.summary(),
        store.display()
    )
}

/// After importing one other store.
pub fn imported_line(other: &Path, added: Added) -> String {
    format!("clibench history: {}: {}", other.display(), added.summary())
}

/// What `history show` has to say about a metric.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    /// No series holds the metric: a line for stderr.
    Nothing(String),
    /// Each series with its sparkline, change points and table, for stdout.
    Series(String),
}

/// `history show METRIC` over `stored`: one block per target, branch and testbed, each
/// with its change points and its last `rows` points (0: all).
pub fn show(stored: &[Stored], metric: Metric, rows: usize) -> Shown {
    let blocks: Vec<String> = with_changes(stored, &[metric])
        .iter()
        .map(|(one, changes)| render::series_text(one, changes, rows))
        .collect();
    if blocks.is_empty() {
        return Shown::Nothing(format!(
            "clibench history: no {metric} values stored for this choice"
        ));
    }
    Shown::Series(blocks.join("\n"))
}

/// Every metric some stored record holds, in the metrics' order.
pub fn present_metrics(stored: &[Stored]) -> Vec<Metric> {
    let mut present: Vec<Metric> = stored
        .iter()
        .flat_map(|row| row.record.samples.keys().copied())
        .collect();
    present.sort();
    present.dedup();
    present
}

/// Each series of `metrics` in `stored` with its change points (the default method).
pub fn with_changes(stored: &[Stored], metrics: &[Metric]) -> Vec<(Series, Vec<ChangePoint>)> {
    let settings = changepoint::Settings::default();
    metrics
        .iter()
        .flat_map(|&metric| series::series(stored, metric))
        .map(|one| {
            let changes = change_points(&one.medians(), &settings);
            (one, changes)
        })
        .collect()
}

/// After `history report --out FILE`.
pub fn page_line(series: usize, path: &Path) -> String {
    format!(
        "clibench history: {series} series, wrote {}",
        path.display()
    )
}

/// After `history report --export-bmf FILE`.
pub fn bmf_line(results: usize, path: &Path) -> String {
    format!(
        "clibench history: {results} result(s) in Bencher Metric Format, wrote {}",
        path.display()
    )
}

/// Before `history check`'s table: which result, on which testbed, against which branch.
pub fn check_heading(record: &Record) -> String {
    format!(
        "clibench history check: {} ({}) on testbed {} against branch {}",
        record.target,
        record.label(),
        record.testbed.fingerprint(),
        record.branch
    )
}

/// The metrics `checks` found regressed, with their change: `cold (+12.0%)`.
pub fn regressed(checks: &[MetricCheck]) -> Vec<String> {
    checks
        .iter()
        .filter(|c| c.outcome == Outcome::Regressed)
        .map(|c| format!("{} ({:+.1}%)", c.metric, c.change * 100.0))
        .collect()
}

/// The error line of `history check --fail-on-regression` when some metric regressed.
pub fn regressed_line(regressed: &[String]) -> String {
    format!(
        "error: regressed against the history: {}",
        regressed.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_cli::history::change_points::check::{self, Settings};
    use bench_core::{Observation, Phase, Request, ResultFile, Role};

    /// A result of `target` at `sha`, measured at `started` (Unix ms), with these cold starts.
    fn result(target: &str, sha: &str, started: u64, cold: &[f64]) -> ResultFile {
        let mut result = ResultFile::new(Request::new(sha, Role::Candidate));
        result.request.config.insert("target".into(), target.into());
        result.side.runtime.insert("cpu".into(), "Test CPU".into());
        let starts = cold.iter().enumerate();
        let observations = starts
            .map(|(i, &v)| Observation::value(i as u32, v))
            .collect();
        result.side.metrics.insert(Metric::Cold, observations);
        result
            .side
            .trial_record_mut(Phase::Measure, 0)
            .started_unix_ms = Some(started);
        result
    }

    fn stored(points: &[(u64, f64)]) -> Vec<Stored> {
        points
            .iter()
            .enumerate()
            .map(|(id, &(started, cold))| Stored {
                id: id as i64 + 1,
                record: Record::of(
                    &result("demo", &format!("rev{id}"), started, &[cold, cold * 1.01]),
                    None,
                    "main",
                )
                .unwrap(),
            })
            .collect()
    }

    #[test]
    fn a_metric_nobody_stored_is_said_so() {
        let rows = stored(&[(1, 0.3), (2, 0.3)]);
        assert_eq!(
            show(&rows, Metric::Warm, 20),
            Shown::Nothing("clibench history: no warm values stored for this choice".into())
        );
        assert!(matches!(show(&rows, Metric::Cold, 20), Shown::Series(_)));
        assert_eq!(present_metrics(&rows), [Metric::Cold]);
    }

    #[test]
    fn a_regressed_metric_is_named_with_its_change() {
        let earlier = stored(
            &(0..8)
                .map(|i| (i, 0.30 + 0.001 * i as f64))
                .collect::<Vec<_>>(),
        );
        let new = stored(&[(100, 0.45)]).remove(0).record;
        let checks = check::check(&new, None, &earlier, &[], &Settings::default());
        let named = regressed(&checks);
        assert_eq!(named.len(), 1, "{checks:?}");
        assert!(named[0].starts_with("cold (+"), "{named:?}");
        assert!(
            regressed_line(&named).starts_with("error: regressed against the history: cold (+")
        );
        assert!(check_heading(&new).starts_with("clibench history check: demo (rev0) on testbed "));
    }
}
