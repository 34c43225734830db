//! `clibench report`.

use crate::{clibench, example_result, run};
use bench_core::Report;
use bench_core::export::Format;

#[test]
fn prints_a_table_on_stderr() {
    let out = run(clibench()
        .env_remove("COLUMNS")
        .arg("report")
        .arg(example_result("base")));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "");
    insta::assert_snapshot!(out.stderr);
}

#[test]
fn an_80_column_terminal_gets_a_table_that_fits() {
    let out = run(clibench()
        .env("COLUMNS", "80")
        .arg("report")
        .arg(example_result("base")));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    for line in out.stderr.lines() {
        assert!(line.chars().count() <= 80, "{line}");
    }
    insta::assert_snapshot!(out.stderr);
}

#[test]
fn lists_failed_samples_under_the_table() {
    let out = run(clibench().arg("report").arg(example_result("candidate")));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    insta::assert_snapshot!(out.stderr);
}

#[test]
fn prints_each_format_on_stdout_as_the_library_exports_it() {
    let path = example_result("candidate");
    let report = Report::new(&bench_core::ResultFile::load(&path).unwrap());
    for format in Format::ALL {
        let out = run(clibench()
            .args(["report", "--format", format.name()])
            .arg(&path));
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        assert_eq!(out.stderr, "");
        assert_eq!(out.stdout, format.report(&report), "{format}");
    }
}

#[test]
fn html_goes_to_stdout_as_one_page() {
    let path = example_result("candidate");
    let result = bench_core::ResultFile::load(&path).unwrap();
    let out = run(clibench().args(["report", "--format", "html"]).arg(&path));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, bench_core::export::html::report(&result));
    assert!(out.stdout.contains("<figure id=\"chart-ready\">"));
}

#[test]
fn explain_prints_the_whole_glossary() {
    let out = run(clibench().args(["report", "--explain"]));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    insta::assert_snapshot!(out.stdout);
}

#[test]
fn explain_with_a_file_lists_only_its_metrics() {
    let out = run(clibench()
        .args(["report", "--explain"])
        .arg(example_result("candidate")));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    insta::assert_snapshot!(out.stdout);
    assert!(out.stdout.contains("  cold (seconds, lower is better): "));
    assert!(!out.stdout.contains("mixed"));
}

#[test]
fn truncated_result_fails_and_stays_unchanged() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("result.json");
    let full = std::fs::read(example_result("base")).unwrap();
    let truncated = &full[..full.len() / 3];
    std::fs::write(&path, truncated).unwrap();
    let out = run(clibench().arg("report").arg(&path));
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    let expected = format!("error: invalid result file {}: at `side.", path.display());
    assert!(out.stderr.starts_with(&expected), "{}", out.stderr);
    assert!(out.stderr.contains("EOF while parsing"), "{}", out.stderr);
    assert_eq!(std::fs::read(&path).unwrap(), truncated);
}

#[test]
fn invalid_value_names_the_file_and_json_path() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("result.json");
    let text = std::fs::read_to_string(example_result("base"))
        .unwrap()
        .replacen("\"value\": 0.412", "\"value\": -0.412", 1);
    std::fs::write(&path, text).unwrap();
    let out = run(clibench().arg("report").arg(&path));
    assert_eq!(out.code, Some(2));
    assert_eq!(
        out.stderr,
        format!(
            "error: invalid result file {}: at `side.metrics.cold[0].value`: \
             value -0.412 is not finite and non-negative\n",
            path.display()
        )
    );
}

#[test]
fn missing_file_is_an_input_error() {
    let out = run(clibench().args(["report", "/nonexistent/result.json"]));
    assert_eq!(out.code, Some(2));
    assert!(
        out.stderr
            .starts_with("error: failed to read /nonexistent/result.json: "),
        "{}",
        out.stderr
    );
}

#[test]
fn export_bmf_writes_the_library_export() {
    let path = example_result("base");
    let report = Report::new(&bench_core::ResultFile::load(&path).unwrap());
    let folder = tempfile::tempdir().unwrap();
    let bmf = folder.path().join("bmf.json");
    let out = run(clibench()
        .arg("report")
        .arg(&path)
        .arg("--export-bmf")
        .arg(&bmf));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(
        std::fs::read_to_string(&bmf).unwrap(),
        bench_core::export::bmf::report(&report)
    );
}
