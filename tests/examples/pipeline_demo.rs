//! `examples/pipeline_demo.rs`: the pipeline run from Rust on the demo agent, in process.

use crate::example;

#[test]
fn runs_prepare_install_and_measure_on_the_demo_and_reads_the_result() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("run");
    let output = example("pipeline_demo")
        .arg(&dir)
        .arg("prepare,install,measure")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let steps: Vec<&str> = stdout.lines().take(3).collect();
    assert_eq!(
        steps,
        [
            "prepare trial 0: ok",
            "install trial 0: ok",
            "measure trial 0: ok"
        ]
    );
    // The figures the three phases record, each from the result file the run wrote.
    for metric in [
        "bundle ", "install ", "cold ", "warm ", "rss ", "pss ", "disk ",
    ] {
        assert!(
            stdout.lines().any(|line| line.starts_with(metric)),
            "no {metric}in:\n{stdout}"
        );
    }
    assert!(dir.join("result.json").is_file());
    // The cleanup removed everything the run created, so its state file is gone too.
    assert!(!dir.join("state.json").exists());
}
