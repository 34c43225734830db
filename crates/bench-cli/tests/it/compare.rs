//! `clibench compare`.

use crate::{clibench, example_result, run};
use bench_core::compare::{CompareOptions, compare};
use bench_core::export::Format;

fn compare_examples() -> std::process::Command {
    let mut command = clibench();
    command
        .arg("compare")
        .arg(example_result("base"))
        .arg(example_result("candidate"));
    command
}

#[test]
fn prints_a_table_with_verdicts_on_stderr() {
    let out = run(compare_examples().env_remove("COLUMNS"));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "");
    insta::assert_snapshot!(out.stderr);
}

#[test]
fn an_80_column_terminal_gets_a_table_that_fits() {
    let out = run(compare_examples().env("COLUMNS", "80"));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    for line in out.stderr.lines() {
        assert!(line.chars().count() <= 80, "{line}");
    }
    insta::assert_snapshot!(out.stderr);
}

#[test]
fn prints_each_format_on_stdout_as_the_library_exports_it() {
    let load = |name| bench_core::ResultFile::load(&example_result(name)).unwrap();
    let comparison = compare(
        &load("base").side,
        &load("candidate").side,
        &CompareOptions::default(),
    );
    for format in Format::ALL {
        let out = run(compare_examples().args(["--format", format.name()]));
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        assert_eq!(out.stderr, "");
        assert_eq!(out.stdout, format.comparison(&comparison), "{format}");
    }
}

#[test]
fn fail_on_regression_exits_1_only_when_asked() {
    let out = run(compare_examples().arg("--fail-on-regression"));
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr.ends_with(
            // 1 MiB more disk (0.5%) is `changed`; 5 trials a side decide no timing.
            "error: regressed beyond the threshold: bundle (+256.0 KiB, +1.4%)\n"
        ),
        "{}",
        out.stderr
    );
    // A global floor above the cold start's change does not hide exact size changes...
    let out = run(compare_examples().args(["--fail-on-regression", "--noise", "0.6"]));
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr.ends_with("bundle (+256.0 KiB, +1.4%)\n"),
        "{}",
        out.stderr
    );
    // ...but floors set for those metrics do.
    let out = run(compare_examples().args([
        "--fail-on-regression",
        "--noise",
        "0.6",
        "--noise",
        "bundle=0.05",
        "--noise",
        "disk=0.05",
    ]));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    // The same files compared the other way round: the bundle improves, and memory's
    // +42% from 5 trials a side is beyond the runs' drift, so it fails.
    let out = run(clibench()
        .args(["compare", "--fail-on-regression"])
        .arg(example_result("candidate"))
        .arg(example_result("base")));
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr.contains("2 regressed, 1 improved"),
        "{}",
        out.stderr
    );
}

#[test]
fn export_markdown_writes_the_same_markdown() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("comment.md");
    let out = run(compare_examples().arg("--export-markdown").arg(&path));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let markdown = run(compare_examples().args(["--format", "markdown"])).stdout;
    assert_eq!(std::fs::read_to_string(&path).unwrap(), markdown);
}

#[test]
fn export_bmf_and_github_benchmark_write_the_library_exports() {
    let load = |name| bench_core::ResultFile::load(&example_result(name)).unwrap();
    let comparison = compare(
        &load("base").side,
        &load("candidate").side,
        &CompareOptions::default(),
    );
    let folder = tempfile::tempdir().unwrap();
    let bmf = folder.path().join("bmf.json");
    let github = folder.path().join("bench.json");
    let out = run(compare_examples()
        .arg("--export-bmf")
        .arg(&bmf)
        .arg("--export-github-benchmark")
        .arg(&github));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(
        std::fs::read_to_string(&bmf).unwrap(),
        bench_core::export::bmf::comparison(&comparison)
    );
    let documents = bench_core::export::github_benchmark::comparison(&comparison);
    assert_eq!(
        std::fs::read_to_string(&github).unwrap(),
        documents.smaller_is_better
    );
    // The examples have no bigger-is-better metric, so there is no second file.
    assert_eq!(documents.bigger_is_better, None);
    assert!(!folder.path().join("bench-bigger.json").exists());
}

#[test]
fn export_html_writes_the_html_page_with_the_change_chart() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("comparison.html");
    let out = run(compare_examples().arg("--export-html").arg(&path));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let page = std::fs::read_to_string(&path).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("<figure id=\"chart-changes\">"));
    let html = run(compare_examples().args(["--format", "html"])).stdout;
    assert_eq!(page, html);
}

#[test]
fn bad_noise_and_bad_files_exit_2() {
    let out = run(compare_examples().args(["--noise", "1.5"]));
    assert_eq!(out.code, Some(2));
    assert!(out.stderr.contains("outside 0..1"), "{}", out.stderr);
    let out = run(compare_examples().args(["--noise", "colder=0.1"]));
    assert_eq!(out.code, Some(2));
    assert!(
        out.stderr.contains("unknown metric `colder`"),
        "{}",
        out.stderr
    );
    let out = run(compare_examples().args(["--noise", "0.1", "--noise", "0.2"]));
    assert_eq!(out.code, Some(2));
    assert!(out.stderr.contains("given twice"), "{}", out.stderr);

    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("candidate.json");
    std::fs::write(
        &path,
        "{\"schema_version\": 1, \"request\": {\"sha\": \"x\"}, \"side\": 3}",
    )
    .unwrap();
    let out = run(clibench()
        .arg("compare")
        .arg(example_result("base"))
        .arg(&path));
    assert_eq!(out.code, Some(2));
    assert_eq!(
        out.stderr,
        format!(
            "error: invalid result file {}: at `side`: invalid type: integer `3`, \
             expected struct Side at line 1 column 56\n",
            path.display()
        )
    );
}

/// Two `clibench startup --export-json` files compare as two `clibench run` results do,
/// the way hyperfine users compare two exports.
#[test]
fn two_startup_exports_compare_metric_by_metric() {
    let folder = tempfile::tempdir().unwrap();
    let export = |name: &str, program: &str| {
        let path = folder.path().join(name);
        let out = run(clibench()
            .args([
                "startup", "--runs", "2", "--warmup", "0", "--settle", "50ms",
            ])
            .args(["--ready", "pattern:ready>", "--export-json"])
            .arg(&path)
            .args(["--", "sh", "-c", program]));
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        path
    };
    let base = export("base.json", "printf 'ready> '; exec cat");
    let candidate = export("candidate.json", "printf 'ready> '; exec sleep 60");
    let out = run(clibench()
        .arg("compare")
        .arg(&base)
        .arg(&candidate)
        .args(["--format", "json"]));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let comparison: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        comparison["candidate_sha"],
        "sh -c printf 'ready> '; exec sleep 60"
    );
    let metrics: Vec<&str> = comparison["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["metric"].as_str().unwrap())
        .collect();
    for metric in ["first_byte", "ready", "rss"] {
        assert!(metrics.contains(&metric), "{metric}: {metrics:?}");
    }
    // Each side's two starts are its trials.
    let ready = comparison["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["metric"] == "ready")
        .unwrap();
    assert_eq!(ready["base"]["summary"]["n"], 2, "{ready}");
    assert_eq!(ready["candidate"]["summary"]["n"], 2, "{ready}");
}

/// `mem`, `staircase` and `kernel` print result files with `--json`: two of each compare
/// as two `clibench run` results do, and `clibench report` renders one.
#[test]
fn mem_staircase_and_kernel_exports_compare_and_report() {
    let folder = tempfile::tempdir().unwrap();
    let cases: [(&str, &[&str], &[&str]); 3] = [
        (
            "mem",
            &["mem", "--settle", "100ms", "--json", "--", "sleep", "30"],
            &["rss", "pss", "uss", "peak_rss"],
        ),
        (
            "staircase",
            &[
                "staircase",
                "--count",
                "1",
                "--settle",
                "100ms",
                "--json",
                "--",
                "sleep",
                "30",
            ],
            &["instance_rss", "reclaimed_rss"],
        ),
        (
            "kernel",
            &["kernel", "--runs", "1", "--json"],
            &["kernel_start", "kernel_rss", "restore"],
        ),
    ];
    for (name, args, expected) in cases {
        let export = |side: &str| {
            let out = run(clibench().args(args));
            assert_eq!(out.code, Some(0), "{name}: {}", out.stderr);
            let path = folder.path().join(format!("{name}-{side}.json"));
            std::fs::write(&path, &out.stdout).unwrap();
            path
        };
        let (base, candidate) = (export("base"), export("candidate"));
        let out = run(clibench()
            .arg("compare")
            .arg(&base)
            .arg(&candidate)
            .args(["--format", "json"]));
        assert_eq!(out.code, Some(0), "{name}: {}", out.stderr);
        let comparison: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        let metrics: Vec<&str> = comparison["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row["metric"].as_str().unwrap())
            .collect();
        for metric in expected {
            assert!(metrics.contains(metric), "{name}: {metric}: {metrics:?}");
        }
        let out = run(clibench().arg("report").arg(&base));
        assert_eq!(out.code, Some(0), "{name}: {}", out.stderr);
        for metric in expected {
            assert!(
                out.stderr.contains(metric),
                "{name}: {metric}: {}",
                out.stderr
            );
        }
    }
}

#[test]
fn the_thresholds_a_spec_recorded_in_its_results_reach_compare() {
    // Both results recorded `[compare] noise = { rss = 0.5 }`: rss's −30% is within
    // that threshold, as `clibench ab` of the same spec would judge it.
    let folder = tempfile::tempdir().unwrap();
    let recorded = |name: &str, noise: &str| {
        let mut result = bench_core::ResultFile::load(&example_result(name)).unwrap();
        result.request.config.insert(
            bench_core::compare::thresholds::CONFIG_KEY.into(),
            noise.into(),
        );
        let path = folder.path().join(format!("{name}.json"));
        result.save(&path).unwrap();
        path
    };
    let (base, candidate) = (
        recorded("base", "rss=0.5"),
        recorded("candidate", "rss=0.5"),
    );
    let verdict_of_rss = |extra: &[&str]| {
        let out = run(clibench()
            .arg("compare")
            .arg(&base)
            .arg(&candidate)
            .args(["--format", "csv"])
            .args(extra));
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        let line = out
            .stdout
            .lines()
            .find(|l| l.starts_with("rss,"))
            .unwrap()
            .to_owned();
        line.rsplit(',').next().unwrap().to_owned()
    };
    assert_eq!(verdict_of_rss(&[]), "within_noise");
    // The command line wins over what the results recorded.
    assert_eq!(verdict_of_rss(&["--noise", "rss=0.1"]), "improved");
    // A threshold edited into nonsense is refused, naming the result it is in.
    let broken = recorded("candidate", "rss=7");
    let out = run(clibench().arg("compare").arg(&base).arg(&broken));
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("the candidate result's recorded thresholds: compare_noise sets rss to `7`"),
        "{}",
        out.stderr
    );
}
