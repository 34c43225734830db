//! What `clibench run` tells when it is done, around the summary table: the phases the
//! spec does not describe, each failure that made later steps skip, how the run ended,
//! where its files are and what to do next. Text only; the binary prints it.

use bench_cli::pipeline::out::screens::FAILURE_SCREEN_PREFIX;
use bench_cli::pipeline::{Plan, RunOutcome, SpecSource};
use bench_core::Phase;
use std::path::{Path, PathBuf};

/// `clibench run: SPEC describes no [ui]; skipping that phase`, when a spec file leaves
/// phases out.
pub fn skipped_phases_line(plan: &Plan) -> Option<String> {
    let SpecSource::File(path) = &plan.spec else {
        return None;
    };
    if plan.skipped.is_empty() {
        return None;
    }
    Some(format!(
        "clibench run: {} describes no {}; skipping {}",
        path.display(),
        plan.skipped
            .iter()
            .map(|phase| format!("[{phase}]"))
            .collect::<Vec<_>>()
            .join(", "),
        if plan.skipped.len() == 1 {
            "that phase"
        } else {
            "those phases"
        }
    ))
}

/// The summary's first lines: each failure that made later steps skip and what it cost
/// ("install trial 0 failed; 9 later step(s) skipped because of it"). Its error is told
/// live and in the summary's `failed:` line, so it is not repeated here.
pub fn root_cause_lines(outcome: &RunOutcome) -> Vec<String> {
    outcome
        .root_causes
        .iter()
        .map(|root| {
            format!(
                "clibench run: {} failed; {} later step(s) skipped because of it{}",
                root.step.label(),
                root.skipped,
                if root.step.phase == Phase::Install || root.step.phase == Phase::Prepare {
                    ""
                } else {
                    " (--keep-going runs them)"
                }
            )
        })
        .collect()
}

/// The lines after the table: how the run ended, its files, and the next step.
/// `clibench` is the command as the user ran it (`target/debug/clibench` under `cargo
/// run`), `spec` the spec file as given.
pub fn closing(outcome: &RunOutcome, out: &Path, clibench: &str, spec: Option<&Path>) -> String {
    let ended = if outcome.failed.is_empty() {
        "done".to_owned()
    } else if outcome.skipped.is_empty() {
        format!("{} phase run(s) failed", outcome.failed.len())
    } else {
        format!(
            "{} phase run(s) failed, {} skipped",
            outcome.failed.len(),
            outcome.skipped.len()
        )
    };
    format!(
        "\nclibench run: {ended} in {}\n  result  {}\n  report  {}\n  html    {}\n{}",
        bench_core::units::format_seconds(outcome.elapsed.as_secs_f64()),
        out.join("result.json").display(),
        out.join("report.md").display(),
        out.join("report.html").display(),
        next_step(clibench, spec, out, !outcome.failed.is_empty())
    )
}

/// `clibench ab`'s last line: how its runs ended, in how long, and where the comparison is.
pub fn ab_closing(outcome: &RunOutcome, out: &Path) -> String {
    format!(
        "clibench ab: {} in {}; wrote {}, .json and .html",
        if outcome.failed.is_empty() {
            "done".to_owned()
        } else {
            format!("{} phase run(s) failed", outcome.failed.len())
        },
        bench_core::units::format_seconds(outcome.elapsed.as_secs_f64()),
        out.join("comparison.md").display(),
    )
}

/// `ab`'s comparison table fitted to `columns`, without the table's own first line: it
/// names the two shas, which are the same when only overrides differ (the sides line
/// before it names what differs instead).
pub fn ab_table(comparison: &bench_core::compare::Comparison, columns: usize) -> String {
    let table = bench_core::export::text::comparison_fit(comparison, columns);
    match table.split_once('\n') {
        Some((_, rest)) => rest.to_owned(),
        None => table,
    }
}

/// What to do with a result: compare it with another build; after a failure, read the
/// logs and run again (a failed result has nothing to compare).
fn next_step(clibench: &str, spec: Option<&Path>, out: &Path, failed: bool) -> String {
    let spec = spec.map_or(String::new(), |spec| format!("{} ", spec.display()));
    if failed {
        return format!(
            "next: the failed steps' logs are in {}; after a fix, run again:\n  \
             {clibench} run {spec}--out NEW",
            out.join("logs").display()
        );
    }
    format!(
        "next: measure another build and compare the two:\n  \
         {clibench} run {spec}--out OTHER && {clibench} compare {} OTHER/result.json",
        out.join("result.json").display()
    )
}

/// The screens failed session turns stopped on, `OUT/logs/screen-at-failure-*.txt` in
/// name order, each with its path: what `clibench run --show-screen` prints.
pub fn failure_screens(out: &Path) -> Vec<(PathBuf, String)> {
    let Ok(entries) = std::fs::read_dir(out.join("logs")) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(FAILURE_SCREEN_PREFIX) && n.ends_with(".txt"))
        })
        .collect();
    paths.sort();
    paths
        .into_iter()
        .filter_map(|path| {
            let text = bench_core::io::read_input_file(&path, 1 << 20).ok()?;
            Some((path, text))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_cli::pipeline::{RootCause, Step};
    use std::time::Duration;

    #[test]
    fn a_run_that_failed_points_at_its_logs_not_at_compare() {
        let outcome = RunOutcome {
            failed: vec![(
                0,
                Step {
                    phase: Phase::Measure,
                    trial: 0,
                },
            )],
            elapsed: Duration::from_secs(3),
            ..RunOutcome::default()
        };
        let text = closing(
            &outcome,
            Path::new("out"),
            "clibench",
            Some(Path::new("a.toml")),
        );
        assert!(
            text.starts_with("\nclibench run: 1 phase run(s) failed in "),
            "{text}"
        );
        assert!(text.contains("logs are in out/logs"), "{text}");
        assert!(text.ends_with("clibench run a.toml --out NEW"), "{text}");
        assert!(!text.contains("compare"), "{text}");
    }

    #[test]
    fn a_run_that_succeeded_shows_how_to_compare_it() {
        let text = closing(
            &RunOutcome::default(),
            Path::new("out"),
            "target/debug/clibench",
            None,
        );
        assert!(text.contains("  html    out/report.html\n"), "{text}");
        assert!(
            text.ends_with(
                "target/debug/clibench run --out OTHER && target/debug/clibench compare \
                 out/result.json OTHER/result.json"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_root_cause_past_install_says_keep_going_runs_what_it_skipped() {
        let root = |phase| RootCause {
            side: 0,
            step: Step { phase, trial: 0 },
            message: "boom".to_owned(),
            skipped: 4,
        };
        let outcome = RunOutcome {
            root_causes: vec![root(Phase::Install), root(Phase::Measure)],
            ..RunOutcome::default()
        };
        assert_eq!(
            root_cause_lines(&outcome),
            [
                "clibench run: install trial 0 failed; 4 later step(s) skipped because of it",
                "clibench run: measure trial 0 failed; 4 later step(s) skipped because of it \
                 (--keep-going runs them)"
            ]
        );
    }
}
