//! Snapshots of every exporter, for one result and for a comparison.

use crate::example;
use bench_core::compare::{CompareOptions, Verdict, compare};
use bench_core::{Format, Metric, Report};

fn comparison() -> bench_core::Comparison {
    compare(
        &example("base").side,
        &example("candidate").side,
        &CompareOptions::default(),
    )
}

#[test]
fn report_markdown() {
    insta::assert_snapshot!(Format::Markdown.report(&Report::new(&example("candidate"))));
}

#[test]
fn report_json() {
    insta::assert_snapshot!(Format::Json.report(&Report::new(&example("candidate"))));
}

#[test]
fn report_csv() {
    insta::assert_snapshot!(Format::Csv.report(&Report::new(&example("base"))));
}

#[test]
fn comparison_markdown() {
    insta::assert_snapshot!(Format::Markdown.comparison(&comparison()));
}

#[test]
fn comparison_json() {
    insta::assert_snapshot!(Format::Json.comparison(&comparison()));
}

#[test]
fn comparison_csv() {
    insta::assert_snapshot!(Format::Csv.comparison(&comparison()));
}

#[test]
fn example_verdicts_follow_from_the_numbers() {
    let comparison = comparison();
    let verdict = |metric| {
        comparison
            .metrics
            .iter()
            .find(|row| row.metric == metric)
            .map(|row| row.verdict)
    };
    assert_eq!(verdict(Metric::Cold), Some(Verdict::Regressed));
    assert_eq!(verdict(Metric::Rss), Some(Verdict::Improved));
    assert_eq!(verdict(Metric::Pss), Some(Verdict::Improved));
    assert_eq!(verdict(Metric::Warm), Some(Verdict::WithinNoise));
    assert_eq!(verdict(Metric::Install), Some(Verdict::WithinNoise));
    let missing: Vec<_> = comparison.missing.iter().map(|m| m.metric).collect();
    assert_eq!(missing, [Metric::Interrupt, Metric::Keystroke]);
    assert_eq!(comparison.candidate_failures.len(), 1);
}

#[test]
fn comparison_is_deterministic() {
    assert_eq!(comparison(), comparison());
}
