//! The busy-host warning reaches every report a person reads: Markdown, the terminal
//! text and HTML, for one result and for a comparison.

use crate::example;
use bench_core::compare::{CompareOptions, compare};
use bench_core::export::{html, markdown, text};
use bench_core::{Phase, Report, ResultFile, TrialRecord};

const WARNING: &str = "the host was busy: load 6.10 on 2 CPUs at measure trial 1&#39;s start";

/// The example candidate, run on 2 cores with a load of 6.1 at trial 1's start.
fn busy_candidate() -> ResultFile {
    let mut result = example("candidate");
    result.side.runtime.insert("cores".into(), "2".into());
    for (trial, load) in [(0, 0.4), (1, 6.1)] {
        let mut record = TrialRecord::new(Phase::Measure, trial);
        record.load_average = Some([load, 1.0, 1.0]);
        result.side.trials.push(record);
    }
    result
}

#[test]
fn a_busy_run_is_warned_about_in_every_report() {
    let result = busy_candidate();
    let report = Report::new(&result);
    let plain = WARNING.replace("&#39;", "'");
    assert!(markdown::report(&report).contains(&format!("> **Warning**: {plain}")));
    assert!(text::report(&report).contains(&format!("warning: {plain}; timings may be off")));
    assert!(
        html::report(&result).contains(WARNING),
        "{}",
        html::report(&result)
    );
}

#[test]
fn a_comparison_names_the_side_whose_host_was_busy() {
    let comparison = compare(
        &example("base").side,
        &busy_candidate().side,
        &CompareOptions::default(),
    );
    let plain = WARNING.replace("&#39;", "'");
    assert!(
        markdown::comparison(&comparison).contains(&format!("> **Warning** (candidate): {plain}"))
    );
    assert!(text::comparison(&comparison).contains(&format!("warning (candidate): {plain}")));
    assert!(!text::comparison(&comparison).contains("warning (base)"));
    assert!(html::comparison(&comparison).contains(WARNING));
}

#[test]
fn a_quiet_run_has_no_warning() {
    let result = example("candidate");
    assert!(!markdown::report(&Report::new(&result)).contains("host was busy"));
    assert!(!text::report(&Report::new(&result)).contains("busy"));
}
