//! The format's round trips, limits and errors.

use super::*;
use crate::metric::{Metric, Phase};
use std::path::Path;

fn sample() -> ResultFile {
    let mut request = Request::new("abc123", Role::Base);
    request.repository = Some("owner/agent".into());
    request.pr = Some(42);
    request.config.insert("trials".into(), "3".into());
    let mut result = ResultFile::new(request);
    let side = &mut result.side;
    side.metrics.insert(
        Metric::Cold,
        vec![
            Observation::value(0, 0.412),
            Observation::error(1, "timed out"),
        ],
    );
    side.metrics
        .insert(Metric::Disk, vec![Observation::value(0, 123456789.0)]);
    side.processes.push(ProcessMemory {
        pid: 42,
        ppid: Some(1),
        name: "node".into(),
        rss: 100 << 20,
        pss: Some(80 << 20),
        uss: None,
        swap: Some(0),
        cpu_seconds: Some(1.5),
        threads: Some(11),
        cmdline: Some("node /usr/bin/agent --flag".into()),
        role: Some(ProcessRole::Program),
    });
    side.runtime.insert("kernel".into(), "6.1.0".into());
    side.artifacts.insert("agent.tgz".into(), 4096);
    side.timings.insert("ui:open".into(), 0.25);
    side.error = Some("warm settle: timed out".into());
    result
}

fn parse_error(text: &str) -> ParseError {
    ResultFile::from_json_str(text).unwrap_err()
}

fn with_observation(observation: &str) -> String {
    format!(
        r#"{{"schema_version":1,"request":{{"sha":"a"}},"side":{{"sha":"a","metrics":{{"cold":[{{"trial":0,"value":1.0}},{observation}]}}}}}}"#
    )
}

#[test]
fn round_trips_through_json() {
    let result = sample();
    let text = result.to_json_string();
    assert_eq!(ResultFile::from_json_str(&text).unwrap(), result);
}

#[test]
fn generated_results_round_trip_exactly() {
    use crate::rng::SplitMix64;
    let mut rng = SplitMix64::new(42);
    let texts = [
        "timed out",
        "quote \" and \\ back",
        "line\nbreak",
        "µs ✓ 日本",
        "",
    ];
    for _ in 0..300 {
        let mut result = ResultFile::new(Request::new("abc", Role::Candidate));
        for metric in Metric::ALL {
            if rng.below(3) == 0 {
                continue;
            }
            let samples = (0..rng.below(8) as u32)
                .map(|trial| {
                    if rng.below(5) == 0 {
                        Observation::error(trial, texts[rng.below(texts.len())])
                    } else {
                        // Arbitrary doubles the metric's unit can measure: every bit
                        // pattern of the mantissa at every exponent it allows.
                        let value = loop {
                            let bits = rng.next_u64() & 0x7FEF_FFFF_FFFF_FFFF;
                            let value = f64::from_bits(bits);
                            if metric.unit().unmeasurable(value).is_none() {
                                break value;
                            }
                        };
                        Observation::value(trial, value)
                    }
                })
                .collect();
            result.side.metrics.insert(metric, samples);
        }
        result
            .side
            .timings
            .insert("t".into(), rng.next_u64() as f64 / 3.0);
        assert_eq!(
            ResultFile::from_json_str(&result.to_json_string()).unwrap(),
            result
        );
    }
}

#[test]
fn reads_explicit_nulls_as_absent_fields() {
    let text = r#"{"schema_version":1,"request":{"sha":"a","role":"candidate"},
        "side":{"sha":"a","metrics":{"cold":[{"trial":0,"value":null,"error":"boom"}]},
        "processes":[{"pid":1,"name":"x","rss":5,"pss":null}],"error":null}}"#;
    let result = ResultFile::from_json_str(text).unwrap();
    assert_eq!(
        result.side.metrics[&Metric::Cold],
        vec![Observation::error(0, "boom")]
    );
}

#[test]
fn rejects_a_trial_above_100_with_its_path() {
    let error = parse_error(&with_observation(r#"{"trial":101,"value":1.0}"#));
    assert_eq!(error.path(), "side.metrics.cold[1].trial");
    assert_eq!(
        error.to_string(),
        "at `side.metrics.cold[1].trial`: trial 101 is above 100"
    );
}

#[test]
fn rejects_both_or_neither_of_value_and_error() {
    let both = parse_error(&with_observation(r#"{"trial":1,"value":1.0,"error":"x"}"#));
    assert_eq!(both.path(), "side.metrics.cold[1]");
    let neither = parse_error(&with_observation(r#"{"trial":1}"#));
    assert!(
        neither
            .to_string()
            .contains("exactly one of value or error")
    );
}

#[test]
fn rejects_negative_values_long_errors_and_repeated_trials() {
    let negative = parse_error(&with_observation(r#"{"trial":1,"value":-0.5}"#));
    assert_eq!(negative.path(), "side.metrics.cold[1].value");
    let long = format!(
        r#"{{"trial":1,"error":"{}"}}"#,
        "é".repeat(MAX_ERROR_CHARS + 1)
    );
    assert_eq!(
        parse_error(&with_observation(&long)).path(),
        "side.metrics.cold[1].error"
    );
    let at_limit = format!(r#"{{"trial":1,"error":"{}"}}"#, "é".repeat(MAX_ERROR_CHARS));
    assert!(ResultFile::from_json_str(&with_observation(&at_limit)).is_ok());
    let repeated = parse_error(&with_observation(r#"{"trial":0,"value":2.0}"#));
    assert_eq!(
        repeated.to_string(),
        "at `side.metrics.cold[1].trial`: trial 0 appears twice"
    );
}

#[test]
fn rejects_values_no_measurement_of_their_unit_can_have() {
    // The extremes that made a trend chart of the history loop for ever (1e308 beside
    // 5e-324): a subnormal, and values beyond any clock or memory.
    for (value, problem) in [
        (
            "5e-324",
            "5e-324 is subnormal, smaller than any measurement of s",
        ),
        (
            "1e308",
            "1e308 is beyond any measurement of s (at most 1e7)",
        ),
        ("1e8", "1e8 is beyond any measurement of s (at most 1e7)"),
    ] {
        let error = parse_error(&with_observation(&format!(
            r#"{{"trial":1,"value":{value}}}"#
        )));
        assert_eq!(error.path(), "side.metrics.cold[1].value");
        assert!(error.to_string().contains(problem), "{error}");
    }
    // Zero, the smallest normal double and the largest measurable value are taken.
    for value in ["0", "2.2250738585072014e-308", "1e7"] {
        let json = with_observation(&format!(r#"{{"trial":1,"value":{value}}}"#));
        assert!(ResultFile::from_json_str(&json).is_ok(), "{value}");
    }
    let memory = format!(
        r#"{{"schema_version":1,"request":{{"sha":"a"}},"side":{{"sha":"a","metrics":{{"rss":[{{"trial":0,"value":{}}}]}}}}}}"#,
        2f64.powi(61)
    );
    let error = ResultFile::from_json_str(&memory).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("beyond any measurement of bytes"),
        "{error}"
    );
}

#[test]
fn rejects_unknown_fields_and_metrics_with_their_paths() {
    let unknown = parse_error(&with_observation(r#"{"trial":1,"value":1.0,"unit":"s"}"#));
    assert_eq!(unknown.path(), "side.metrics.cold[1].unit");
    assert!(
        unknown.to_string().contains("unknown field `unit`"),
        "{unknown}"
    );
    let metric = parse_error(
        r#"{"schema_version":1,"request":{"sha":"a"},"side":{"sha":"a","metrics":{"colder":[]}}}"#,
    );
    assert_eq!(
        metric.to_string(),
        "at `side.metrics`: unknown metric `colder` at line 1 column 84"
    );
}

#[test]
fn rejects_too_many_processes_and_long_names() {
    let mut result = sample();
    result.side.processes[0].name = "n".repeat(81);
    assert_eq!(
        result.validate().unwrap_err().path,
        "side.processes[0].name"
    );
    let process = result.side.processes[0].clone();
    result.side.processes = vec![process; 129];
    assert_eq!(result.validate().unwrap_err().path, "side.processes");
}

#[test]
fn set_processes_keeps_the_largest_and_cuts_names() {
    let mut side = Side::new("a");
    let processes = (0..200)
        .map(|pid| ProcessMemory {
            pid,
            ppid: None,
            name: "x".repeat(100),
            rss: u64::from(pid) * 10,
            pss: None,
            uss: None,
            swap: None,
            cpu_seconds: None,
            threads: None,
            cmdline: Some("y".repeat(300)),
            role: None,
        })
        .collect();
    side.set_processes(processes);
    assert_eq!(side.processes.len(), MAX_PROCESSES);
    assert_eq!(side.processes[0].pid, 199);
    assert_eq!(side.processes[0].name.chars().count(), MAX_NAME_CHARS);
    let cmdline = side.processes[0].cmdline.as_deref().unwrap_or_default();
    assert_eq!(cmdline.chars().count(), MAX_CMDLINE_CHARS);
    assert_eq!(side.processes[127].pid, 72);
}

#[test]
fn a_cut_error_keeps_what_failed_and_the_bottom_of_the_screen() {
    let screen: String = (1..=400)
        .map(|row| format!("row {row:03} of the screen\n"))
        .collect();
    // A message whose hint is longer than a third of the limit keeps all of it.
    let hint = "allow dialogs (ready_allow_dialog, --allow-dialog) ".repeat(30);
    let error = format!("turn 3: timed out; {hint}; last screen:\n{screen}> the prompt");
    let cut = truncate_chars(error, MAX_ERROR_CHARS);
    assert_eq!(cut.chars().count(), MAX_ERROR_CHARS);
    assert!(
        cut.starts_with(&format!("turn 3: timed out; {hint}; last screen:")),
        "{cut}"
    );
    assert!(
        cut.ends_with("row 400 of the screen\n> the prompt"),
        "{cut}"
    );
    assert!(cut.contains(" … "), "{cut}");
    assert_eq!(truncate_chars("short".into(), MAX_ERROR_CHARS), "short");
    assert_eq!(truncate_chars("abcdef".into(), 2), "ab");
}

#[test]
fn truncated_and_malformed_text_names_a_path() {
    let text = sample().to_json_string();
    let cut = &text[..text.len() / 2];
    let error = parse_error(cut);
    assert!(matches!(error, ParseError::Syntax { .. }));
    assert!(error.to_string().contains("EOF"), "{error}");
    let wrong_type = parse_error(&with_observation(r#"{"trial":"one","value":1.0}"#));
    assert_eq!(wrong_type.path(), "side.metrics.cold[1].trial");
    let trailing = parse_error(&format!("{text}x"));
    assert!(trailing.to_string().contains("trailing"), "{trailing}");
}

#[test]
fn another_schema_version_is_named() {
    let error =
        parse_error(r#"{"schema_version":2,"request":{"sha":"a"},"side":{"sha":"a","new":1}}"#);
    assert_eq!(error, ParseError::Version { found: 2 });
    let error = parse_error(r#"{"schema_version":7,"request":{"sha":"a"},"side":{"sha":"a"}}"#);
    assert_eq!(error.path(), "schema_version");
}

#[test]
fn save_refuses_invalid_results_and_writes_valid_ones() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("result.json");
    let mut result = sample();
    result.save(&path).unwrap();
    assert_eq!(ResultFile::load(&path).unwrap(), result);
    result.side.timings.insert("bad".into(), f64::NAN);
    let error = result.save(&path).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("at `side.timings.bad`: timing NaN"),
        "{error}"
    );
    assert_eq!(ResultFile::load(&path).unwrap(), sample());
}

#[test]
fn load_or_create_merges_creates_and_never_overwrites_garbage() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("result.json");
    let request = Request::new("abc123", Role::Base);
    let fresh = ResultFile::load_or_create(&path, &request).unwrap();
    assert_eq!(fresh, ResultFile::new(request.clone()));
    sample().save(&path).unwrap();
    assert_eq!(
        ResultFile::load_or_create(&path, &request).unwrap(),
        sample()
    );
    let other = ResultFile::load_or_create(&path, &Request::new("def", Role::Base)).unwrap_err();
    assert!(
        other.to_string().contains("sha `abc123`, not `def`"),
        "{other}"
    );
    std::fs::write(&path, b"{\"schema_version\":1,").unwrap();
    let error = ResultFile::load_or_create(&path, &request).unwrap_err();
    let message = error.to_string();
    let expected = format!("invalid result file {}: at `", path.display());
    assert!(message.starts_with(&expected), "{message}");
    assert!(message.contains("EOF while parsing"), "{message}");
    // The message is complete on its own, so an error chain does not repeat it.
    assert!(std::error::Error::source(&error).is_none());
    assert_eq!(std::fs::read(&path).unwrap(), b"{\"schema_version\":1,");
}

#[test]
fn trial_records_round_trip_and_are_optional() {
    let mut result = sample();
    let record = result.side.trial_record_mut(Phase::Measure, 1);
    record.started_unix_ms = Some(1_764_500_000_000);
    record.load_average = Some([0.5, 0.25, 0.125]);
    record.host = Some("runner-7".into());
    result
        .side
        .trial_record_mut(Phase::Measure, 1)
        .process_count = Some(3);
    result.side.trial_record_mut(Phase::Ui, 0).process_count = Some(2);
    result
        .side
        .trial_record_mut(Phase::Ui, 0)
        .push_settle(SettleRecord {
            session: "ui".into(),
            until: SettleUntil::Quiet,
            max_seconds: 5.0,
            quiet_seconds: Some(0.1),
            tolerance: Some(0.01),
            took_seconds: 0.183,
            ended: SettleEnded::Quiet,
        });
    assert_eq!(result.side.trials.len(), 2);
    assert_eq!(result.side.trials[0].host.as_deref(), Some("runner-7"));
    assert_eq!(result.side.trials[0].process_count, Some(3));
    let text = result.to_json_string();
    assert_eq!(ResultFile::from_json_str(&text).unwrap(), result);
    // Without records the field is left out, so older readers see no change.
    assert!(!sample().to_json_string().contains("\"trials\": ["));
}

#[test]
fn rejects_invalid_trial_records_with_their_paths() {
    let mut result = sample();
    result.side.trial_record_mut(Phase::Measure, 0).load_average = Some([1.0, f64::NAN, 0.0]);
    assert_eq!(
        result.validate().unwrap_err().path,
        "side.trials[0].load_average"
    );
    result.side.trials[0].load_average = None;
    result.side.trials[0].host = Some("h".repeat(256));
    assert_eq!(result.validate().unwrap_err().path, "side.trials[0].host");
    result.side.trials[0].host = None;
    for bad in [0.0, -1.0, f64::INFINITY] {
        result.side.trials[0].speed_probe_seconds = Some(bad);
        assert_eq!(
            result.validate().unwrap_err().path,
            "side.trials[0].speed_probe_seconds"
        );
    }
    result.side.trials[0].speed_probe_seconds = Some(0.002);
    assert!(result.validate().is_ok());
    result.side.trials[0].speed_probe_seconds = None;
    let twice = result.side.trials[0].clone();
    result.side.trials.push(twice);
    assert!(
        result
            .validate()
            .unwrap_err()
            .to_string()
            .contains("measure trial 0 is recorded twice")
    );
    result.side.trials.pop();
    result.side.trials[0].push_settle(SettleRecord {
        session: "cold".into(),
        until: SettleUntil::Fixed,
        max_seconds: 1.0,
        quiet_seconds: None,
        tolerance: Some(1.5),
        took_seconds: 1.0,
        ended: SettleEnded::Elapsed,
    });
    assert_eq!(
        result.validate().unwrap_err().path,
        "side.trials[0].settles[0].tolerance"
    );
    result.side.trials[0].settles[0].tolerance = None;
    result.side.trials[0].settles[0].took_seconds = -1.0;
    assert_eq!(
        result.validate().unwrap_err().path,
        "side.trials[0].settles[0].took_seconds"
    );
    result.side.trials[0].settles.clear();
    result.side.trials[0].trial = 101;
    assert_eq!(result.validate().unwrap_err().path, "side.trials[0].trial");
}

#[test]
fn missing_file_is_a_read_error_naming_it() {
    let error = ResultFile::load(Path::new("/nonexistent/result.json")).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("failed to read /nonexistent/result.json: No such file")
    );
}

#[test]
fn terminal_windows_round_trip_and_are_checked() {
    let mut result = sample();
    let window = |name: &str, seconds: f64| crate::TerminalWindow {
        window: name.into(),
        seconds,
        output: crate::detail::TerminalOutput {
            bytes: 2048,
            frames: 3,
            full_clears: 1,
            alt_screen_switches: 1,
        },
    };
    let record = result.side.trial_record_mut(Phase::Measure, 0);
    record.push_terminal(window("cold to ready", 0.25));
    record.push_terminal(window("cold idle after ready", 1.0));
    let text = result.to_json_string();
    assert!(text.contains("\"cold idle after ready\""));
    assert_eq!(ResultFile::from_json_str(&text).unwrap(), result);
    // The first MAX_TERMINAL_WINDOWS are kept, labels cut to their limit.
    let record = &mut result.side.trials[0];
    for step in 0..100 {
        record.push_terminal(window(&format!("ui: {step} {}", "x".repeat(60)), 0.1));
    }
    assert_eq!(record.terminal.len(), MAX_TERMINAL_WINDOWS);
    assert!(result.validate().is_ok());
    result.side.trials[0].terminal[1].seconds = f64::NAN;
    assert_eq!(
        result.validate().unwrap_err().path,
        "side.trials[0].terminal[1].seconds"
    );
}
