//! The checked-in JSON Schema of result files must match the types.
//!
//! Regenerate it with `CLIBENCH_UPDATE_SCHEMA=1 cargo nextest run -p bench-core schema`.

use bench_core::json_schema;
use std::path::PathBuf;

fn checked_in() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/result.schema.json")
}

#[test]
fn checked_in_schema_matches_the_types() {
    let path = checked_in();
    let generated = json_schema();
    if std::env::var_os("CLIBENCH_UPDATE_SCHEMA").is_some_and(|value| value == "1") {
        std::fs::write(&path, &generated).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == generated,
        "{} is out of date with the result types; regenerate it with \
         `CLIBENCH_UPDATE_SCHEMA=1 cargo nextest run -p bench-core schema` and review the diff",
        path.display()
    );
}

#[test]
fn schema_states_the_limits() {
    let schema: serde_json::Value = serde_json::from_str(&json_schema()).unwrap();
    let observation = &schema["$defs"]["Observation"];
    assert_eq!(observation["properties"]["trial"]["maximum"], 100);
    assert_eq!(observation["properties"]["error"]["maxLength"], 4000);
    assert_eq!(observation["additionalProperties"], false);
    assert_eq!(
        schema["$defs"]["ProcessMemory"]["properties"]["name"]["maxLength"],
        80
    );
    assert_eq!(
        schema["$defs"]["Side"]["properties"]["processes"]["maxItems"],
        128
    );
    // The schema's limit is a literal; it must follow the constant.
    assert_eq!(
        schema["$defs"]["Side"]["properties"]["trials"]["maxItems"],
        bench_core::MAX_TRIAL_RECORDS
    );
    assert_eq!(
        schema["$defs"]["TrialRecord"]["properties"]["host"]["maxLength"],
        bench_core::MAX_HOST_CHARS
    );
    let metrics = schema["$defs"]["Side"]["properties"]["metrics"].to_string();
    assert!(metrics.contains("Metric"), "{metrics}");
}

#[test]
fn example_results_round_trip() {
    for name in ["base", "candidate"] {
        let result = crate::example(name);
        let text = result.to_json_string();
        assert_eq!(
            bench_core::ResultFile::from_json_str(&text).unwrap(),
            result
        );
    }
}
