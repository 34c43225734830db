//! hyperfine's `--export-json` shape (`{"results": [...]}`), so hyperfine's plotting
//! and statistics scripts read a `clibench startup` result.

use crate::metric::Metric;
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
    /// `null` for each run: clibench stops the program, which does not exit on its own.
    exit_codes: Vec<Option<i32>>,
}

/// `side`'s starts as hyperfine's document with one result, `command`: its times are the
/// `ready` samples in trial order (failed starts have none and are left out, as are their
/// exit codes); `user` and `system` are the means of `user_cpu` and `system_cpu` (0 when
/// none was measured). `None` when no start got ready.
pub fn side(side: &Side, command: &str) -> Option<String> {
    let times = side.values(Metric::Ready);
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
            exit_codes: vec![None; times.len()],
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
}
