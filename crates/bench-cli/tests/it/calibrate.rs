//! `clibench calibrate`: the report's shape, never its numbers (they are this machine's).

use crate::{clibench, run};

#[test]
fn calibrate_with_a_command_reports_every_part() {
    let out = run(clibench().args(["calibrate", "--duration", "1s", "--json", "--", "/bin/true"]));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON on stdout");
    let cpus = report["cpus"].as_array().expect("cpus");
    assert!(!cpus.is_empty());
    assert_eq!(
        report["per_cpu"].as_array().expect("per_cpu").len(),
        cpus.len()
    );
    let gaps: Vec<f64> = report["drift_by_gap"]
        .as_array()
        .expect("drift_by_gap")
        .iter()
        .map(|row| row["gap_ms"].as_f64().expect("gap_ms"))
        .collect();
    assert_eq!(gaps, [0.0, 100.0, 800.0]);
    assert!(
        report["correlation_by_gap"]
            .as_array()
            .is_some_and(|rows| !rows.is_empty())
    );
    let start = &report["start"];
    assert_eq!(start["command"], "/bin/true");
    assert!(start["starts"].as_u64().expect("starts") >= 4);
    let budgets: Vec<f64> = start["budgets"]
        .as_array()
        .expect("budgets")
        .iter()
        .map(|budget| budget["budget_seconds"].as_f64().expect("budget_seconds"))
        .collect();
    assert_eq!(budgets, [60.0, 300.0]);
}

#[test]
fn calibrate_prints_a_table_on_stderr() {
    let out = run(clibench().args(["calibrate", "--duration", "200ms"]));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    for heading in [
        "host noise:",
        "log spread",
        "two windows",
        "correlation, gap",
    ] {
        assert!(out.stderr.contains(heading), "{heading}: {}", out.stderr);
    }
}

#[test]
fn calibrate_refuses_a_duration_too_short_for_a_window() {
    let out = run(clibench().args(["calibrate", "--duration", "10ms"]));
    assert_ne!(out.code, Some(0));
    assert!(out.stderr.contains("too short"), "{}", out.stderr);
}
