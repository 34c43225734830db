//! `clibench kernel` against the reference kernel and against a command that is no kernel.

use crate::{clibench, run};
use bench_core::{Metric, ResultFile};

const METRICS: [&str; 11] = [
    "kernel_start",
    "kernel_rss",
    "kernel_exec",
    "bash",
    "git_status",
    "output",
    "mixed",
    "interrupt",
    "loaded_rss",
    "snapshot",
    "restore",
];

#[test]
fn kernel_measures_every_runtime_metric_of_the_reference_kernel() {
    let folder = tempfile::tempdir().unwrap();
    let markdown = folder.path().join("kernel.md");
    let transcripts = folder.path().join("transcripts");
    let result = run(clibench()
        .args(["kernel", "--runs", "1", "--json", "--export-markdown"])
        .arg(&markdown)
        .arg("--transcripts")
        .arg(&transcripts));
    assert_eq!(result.code, Some(0), "stderr: {}", result.stderr);
    let report = ResultFile::from_json_str(&result.stdout).unwrap();
    assert_eq!(report.request.config["reference_kernel"], "true");
    let values = &report.side.metrics;
    for metric in METRICS {
        let samples = &values[&metric.parse::<Metric>().unwrap()];
        assert!(
            samples.len() == 1 && samples[0].value.is_some_and(|v| v > 0.0),
            "{metric}: {values:?}"
        );
    }
    // Figures that can be wrong while positive: memory is a Python process's (megabytes, not
    // bytes or kilobytes), the loaded workload adds to it, and `mixed` is a total of 35 cells
    // while `kernel_exec` is the mean of one.
    let value = |metric: &str| report.side.values(metric.parse().unwrap())[0];
    let mib = 1024.0 * 1024.0;
    assert!(value("kernel_rss") > 4.0 * mib, "{values:?}");
    assert!(
        value("loaded_rss") > value("kernel_rss") + mib,
        "{values:?}"
    );
    assert!(value("mixed") > value("kernel_exec"), "{values:?}");
    assert!(report.side.error.is_none(), "{:?}", report.side.error);
    let workload = report.side.runtime["workload"].as_str();
    assert!(workload == "pandas" || workload == "lists", "{workload}");
    // The summary table names every metric; the heading says which workload was built.
    for metric in METRICS {
        assert!(
            result.stderr.contains(metric),
            "{metric} missing: {}",
            result.stderr
        );
    }
    assert!(
        result
            .stderr
            .contains(&format!("loaded workload: {workload}"))
    );
    let markdown = std::fs::read_to_string(&markdown).unwrap();
    assert!(markdown.contains("| `restore` |"), "{markdown}");
    assert!(transcripts.join("kernel-0.jsonl").is_file());
    assert!(transcripts.join("restore-0.jsonl").is_file());
}

#[test]
fn kernel_that_is_not_a_kernel_fails_the_run_with_the_reason() {
    let result = run(clibench().args([
        "kernel",
        "--runs",
        "1",
        "--json",
        "--timeout",
        "10s",
        "--",
        "python3",
        "-c",
        "print('hello, not a kernel')",
    ]));
    assert_eq!(result.code, Some(1), "stderr: {}", result.stderr);
    let report = ResultFile::from_json_str(&result.stdout).unwrap();
    let error = report.side.metrics[&Metric::KernelStart][0]
        .error
        .as_deref()
        .unwrap();
    assert!(error.contains("hello, not a kernel"), "{error}");
    assert!(
        result.stderr.contains("kernel_start failed"),
        "{}",
        result.stderr
    );
}

#[test]
fn kernel_rejects_zero_runs() {
    let result = run(clibench().args(["kernel", "--runs", "0"]));
    assert_eq!(result.code, Some(2), "stderr: {}", result.stderr);
    assert!(result.stderr.contains("--runs must be at least 1"));
}

#[test]
fn the_kernel_gets_a_fresh_home_not_the_callers() {
    let folder = tempfile::tempdir().unwrap();
    let callers_home = folder.path().join("caller");
    std::fs::create_dir(&callers_home).unwrap();
    std::fs::write(callers_home.join(".bashrc"), "sleep 1\n").unwrap();
    let seen = folder.path().join("seen-home");
    let prelude = format!(
        "from rlm import bash\nimport os\nopen({:?}, 'w').write(os.environ['HOME'] + '|' + ','.join(sorted(os.listdir(os.environ['HOME']))))",
        seen.display().to_string()
    );
    let result = run(clibench()
        .args(["kernel", "--runs", "1", "--json", "--prelude", &prelude])
        .env("HOME", &callers_home));
    assert_eq!(result.code, Some(0), "stderr: {}", result.stderr);
    let seen = std::fs::read_to_string(&seen).unwrap();
    let (home, entries) = seen.split_once('|').unwrap();
    assert_ne!(home, callers_home.display().to_string());
    assert!(home.contains("clibench-kernel-"), "{home}");
    assert_eq!(entries, "", "the home is not empty: {entries}");
}
