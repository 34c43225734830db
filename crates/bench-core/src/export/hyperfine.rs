//! hyperfine's `--export-json` shape (`{"results": [...]}`), so hyperfine's plotting
//! and statistics scripts read a `clibench startup` result.

use crate::metric::{Metric, Phase};
use crate::result::Side;
use crate::stats::Summary;

/// hyperfine's `--export-json` document.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
struct Document {
    results: Vec<Entry>,
}

/// One entry of hyperfine's `results` array, field for field and in hyperfine's order.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
struct Entry {
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
    /// ready mode but `exit`) or a signal ended it.
    exit_codes: Vec<Option<i32>>,
}

/// `side`'s starts as hyperfine's document with one result, `command`: its times are the
/// `ready` samples in trial order (failed starts have none and are left out, as are their
/// exit codes), each exit code the measure phase's trial record's; `user` and `system`
/// are the means of `user_cpu` and `system_cpu` (0 when none was measured). `None` when
/// no start got ready.
pub fn side(side: &Side, command: &str) -> Option<String> {
    let mut timed: Vec<(u32, f64)> = side
        .metrics
        .get(&Metric::Ready)
        .into_iter()
        .flatten()
        .filter_map(|sample| Some((sample.trial, sample.value?)))
        .collect();
    timed.sort_by_key(|(trial, _)| *trial);
    let times: Vec<f64> = timed.iter().map(|(_, time)| *time).collect();
    let exit_code = |trial: u32| {
        side.trials
            .iter()
            .find(|record| record.phase == Phase::Measure && record.trial == trial)
            .and_then(|record| record.exit_code)
    };
    let exit_codes = timed.iter().map(|(trial, _)| exit_code(*trial)).collect();
    let summary = Summary::from_values(&times)?;
    let mean_of = |metric: Metric| {
        let values = side.values(metric);
        if values.is_empty() {
            0.0
        } else {
            values.iter().sum::<f64>() / values.len() as f64
        }
    };
    let document = Document {
        results: vec![Entry {
            command: command.to_string(),
            mean: summary.mean,
            stddev: (summary.n > 1).then_some(summary.std_dev),
            median: summary.median,
            user: mean_of(Metric::UserCpu),
            system: mean_of(Metric::SystemCpu),
            min: summary.min,
            max: summary.max,
            exit_codes,
            times,
        }],
    };
    // Invariant: strings, finite numbers from a summary and nulls always serialize.
    let mut text = serde_json::to_string_pretty(&document).expect("hyperfine JSON serializes");
    text.push('\n');
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Sample, record};

    fn starts() -> Side {
        let mut side = Side::new("pi --model x");
        for (trial, ready) in [(0, Some(0.412)), (1, Some(0.398)), (2, None)] {
            match ready {
                Some(ready) => record(&mut side, Metric::Ready, trial, Sample::Value(ready)),
                None => record(
                    &mut side,
                    Metric::Ready,
                    trial,
                    Sample::Error("timed out".into()),
                ),
            }
            if ready.is_some() {
                record(&mut side, Metric::UserCpu, trial, Sample::Value(0.25));
                record(&mut side, Metric::SystemCpu, trial, Sample::Value(0.05));
            }
        }
        side
    }

    /// The keys and JSON types of hyperfine's result entries.
    fn shape(document: &serde_json::Value) -> Vec<(String, &'static str)> {
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
        // A sample of hyperfine's own `--export-json` output.
        let sample: serde_json::Value =
            serde_json::from_str(include_str!("fixtures/hyperfine-export.json")).unwrap();
        let text = side(&starts(), "pi --model x").unwrap();
        let ours: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(shape(&ours), shape(&sample));
        let result = &ours["results"][0];
        assert_eq!(result["command"], "pi --model x");
        // The two starts that got ready; the failed third has no time.
        assert_eq!(result["times"], serde_json::json!([0.412, 0.398]));
        assert_eq!(result["exit_codes"].as_array().unwrap().len(), 2);
        assert!((result["mean"].as_f64().unwrap() - 0.405).abs() < 1e-12);
        assert_eq!(result["min"], 0.398);
        assert_eq!(result["user"], 0.25);
        assert!(result["stddev"].as_f64().unwrap() > 0.0);
        insta::assert_snapshot!(text);
    }

    #[test]
    fn stddev_is_null_for_one_run_and_nothing_without_ready() {
        let mut one = Side::new("x");
        record(&mut one, Metric::Ready, 0, Sample::Value(0.5));
        let json: serde_json::Value = serde_json::from_str(&side(&one, "x").unwrap()).unwrap();
        assert!(json["results"][0]["stddev"].is_null());
        assert_eq!(json["results"][0]["user"], 0.0);
        let mut failed = Side::new("x");
        record(
            &mut failed,
            Metric::Ready,
            0,
            Sample::Error("timed out".into()),
        );
        assert_eq!(side(&failed, "x"), None);
    }

    #[test]
    fn exit_codes_are_the_timed_trials_own() {
        let mut exits = Side::new("sh -c exit");
        for (trial, ready, code) in [
            (0, Some(0.1), Some(3)),
            (1, None, Some(1)),
            (2, Some(0.2), None),
        ] {
            match ready {
                Some(ready) => record(&mut exits, Metric::Ready, trial, Sample::Value(ready)),
                None => record(
                    &mut exits,
                    Metric::Ready,
                    trial,
                    Sample::Error("failing status".into()),
                ),
            }
            exits.trial_record_mut(Phase::Measure, trial).exit_code = code;
        }
        let json: serde_json::Value =
            serde_json::from_str(&side(&exits, "sh -c exit").unwrap()).unwrap();
        // Trial 1 has no time, so its code is left out with it; trial 2 was stopped.
        assert_eq!(
            json["results"][0]["exit_codes"],
            serde_json::json!([3, null])
        );
        assert_eq!(json["results"][0]["times"], serde_json::json!([0.1, 0.2]));
    }
}
