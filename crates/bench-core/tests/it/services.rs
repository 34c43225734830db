//! The benchmark-service exporters against samples of each service's own format:
//! the same checker must accept the sample (written from the service's documented
//! shape) and clibench's output.

use crate::example;
use bench_core::compare::{CompareOptions, compare};
use bench_core::export::{bmf, github_benchmark};
use bench_core::{Metric, Report, Sample, record};
use serde_json::Value;

const BMF_SAMPLE: &str = include_str!("fixtures/bencher-bmf.json");
const GITHUB_SAMPLE: &str = include_str!("fixtures/github-action-benchmark-custom.json");

fn comparison() -> bench_core::compare::Comparison {
    let mut base = example("base").side;
    let mut candidate = example("candidate").side;
    for (trial, (b, c)) in [(100.0, 90.0), (110.0, 95.0)].into_iter().enumerate() {
        let mib = 1024.0 * 1024.0;
        record(
            &mut base,
            Metric::ReclaimedRss,
            trial as u32,
            Sample::Value(b * mib),
        );
        record(
            &mut candidate,
            Metric::ReclaimedRss,
            trial as u32,
            Sample::Value(c * mib),
        );
    }
    compare(&base, &candidate, &CompareOptions::default())
}

/// Bencher's published schema (https://bencher.dev/bmf.json): benchmark name ->
/// measure name -> `{value, lower_value?, upper_value?}`, all numbers.
fn check_bmf(document: &Value) -> Result<(), String> {
    let benchmarks = document
        .as_object()
        .ok_or("the document is not an object")?;
    for (benchmark, measures) in benchmarks {
        let measures = measures
            .as_object()
            .ok_or(format!("{benchmark} is not an object"))?;
        for (measure, metric) in measures {
            let metric = metric
                .as_object()
                .ok_or(format!("{benchmark}.{measure} is not an object"))?;
            if !metric.get("value").is_some_and(Value::is_number) {
                return Err(format!("{benchmark}.{measure} has no numeric value"));
            }
            for (key, number) in metric {
                if !["value", "lower_value", "upper_value"].contains(&key.as_str()) {
                    return Err(format!("{benchmark}.{measure} has an unknown key {key}"));
                }
                if !number.is_number() {
                    return Err(format!("{benchmark}.{measure}.{key} is not a number"));
                }
            }
        }
    }
    Ok(())
}

/// github-action-benchmark's custom tools: an array of `{name, unit, value}` with
/// optional `range` and `extra` strings.
fn check_github(document: &Value) -> Result<(), String> {
    let entries = document.as_array().ok_or("the document is not an array")?;
    for (index, entry) in entries.iter().enumerate() {
        let entry = entry
            .as_object()
            .ok_or(format!("[{index}] is not an object"))?;
        for required in ["name", "unit", "value"] {
            if !entry.contains_key(required) {
                return Err(format!("[{index}] lacks {required}"));
            }
        }
        for (key, field) in entry {
            let fits = match key.as_str() {
                "value" => field.is_number(),
                "name" | "unit" | "range" | "extra" => field.is_string(),
                _ => return Err(format!("[{index}] has an unknown key {key}")),
            };
            if !fits {
                return Err(format!("[{index}].{key} has the wrong type"));
            }
        }
    }
    Ok(())
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

#[test]
fn the_checkers_accept_the_services_samples_and_reject_other_shapes() {
    assert_eq!(check_bmf(&parse(BMF_SAMPLE)), Ok(()));
    assert_eq!(check_github(&parse(GITHUB_SAMPLE)), Ok(()));
    assert!(check_bmf(&parse(r#"{"cold": {"latency": {"median": 1.0}}}"#)).is_err());
    assert!(check_bmf(&parse(r#"{"cold": {"latency": {"value": "1"}}}"#)).is_err());
    assert!(check_github(&parse(r#"[{"name": "cold", "value": 1.0}]"#)).is_err());
    assert!(check_github(&parse(r#"[{"name": "cold", "unit": "ms", "value": "1"}]"#)).is_err());
}

#[test]
fn bmf_of_a_comparison_has_bencher_shape() {
    let text = bmf::comparison(&comparison());
    let document = parse(&text);
    assert_eq!(check_bmf(&document), Ok(()));
    // The candidate's median and range, in Bencher's units.
    let cold = &document["cold"]["latency"];
    assert_eq!(cold["value"], 587_000_000.0);
    assert!(cold["lower_value"].as_f64() <= cold["value"].as_f64());
    assert_eq!(document["disk"]["file-size"]["value"], 216_006_656.0);
    assert!(document["rss"]["memory"].is_object());
    // Measured on the candidate only, still exported; measured on the base only, not.
    assert!(document["keystroke"].is_object());
    assert!(document.get("interrupt").is_none());
    insta::assert_snapshot!(text);
}

#[test]
fn bmf_of_a_single_result_has_bencher_shape() {
    let text = bmf::report(&Report::new(&example("base")));
    let document = parse(&text);
    assert_eq!(check_bmf(&document), Ok(()));
    assert!(document["interrupt"]["latency"]["value"].is_number());
}

#[test]
fn github_benchmark_splits_by_direction_and_has_the_action_shape() {
    let documents = github_benchmark::comparison(&comparison());
    let smaller = parse(&documents.smaller_is_better);
    assert_eq!(check_github(&smaller), Ok(()));
    let names: Vec<&str> = smaller
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"cold") && names.contains(&"keystroke"));
    assert!(!names.contains(&"reclaimed_rss"));
    let cold = smaller
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["name"] == "cold")
        .unwrap();
    assert_eq!(cold["unit"], "ms");
    assert!((cold["value"].as_f64().unwrap() - 587.0).abs() < 1e-9);
    // Two separate runs of five trials: cold's +41% is within their drift, its interval
    // (the test's own, at Holm's level) says so, and the entry says what they could
    // have detected.
    let extra = cold["extra"].as_str().unwrap();
    assert!(
        extra.contains("within noise (+41.3%, 99.167% CI -37.9% to")
            && extra.contains("could detect over ±100%"),
        "{extra}"
    );
    let bigger = parse(documents.bigger_is_better.as_deref().unwrap());
    assert_eq!(check_github(&bigger), Ok(()));
    assert_eq!(bigger[0]["name"], "reclaimed_rss");
    assert_eq!(bigger.as_array().unwrap().len(), 1);
    insta::assert_snapshot!("github_benchmark_smaller", documents.smaller_is_better);
    insta::assert_snapshot!(
        "github_benchmark_bigger",
        documents.bigger_is_better.unwrap()
    );
}

#[test]
fn without_bigger_is_better_metrics_there_is_no_second_document() {
    let plain = compare(
        &example("base").side,
        &example("candidate").side,
        &CompareOptions::default(),
    );
    assert_eq!(github_benchmark::comparison(&plain).bigger_is_better, None);
}
