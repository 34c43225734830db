//! A step hands the runner what it recorded (its outcome), through a pipe only the phase
//! child holds: the runner learns a failure without reading `result.json` back, and
//! nothing a target prints can stand in for the outcome.

use crate::pipeline_run::{demo, edit, load};
use crate::{clibench, run};
use bench_cli::pipeline::{
    Execution, Observer, Plan, PlanSettings, Progress, Runner, SpecSource, StepResult, headline,
};
use bench_core::Phase;
use rusty_fork::rusty_fork_test;
use std::path::Path;

/// An install that fails with exit status 7, after printing on stdout and stderr a line
/// that is a whole outcome saying the trial failed for another reason (braces as octal
/// escapes: a spec's braces are placeholders).
const FORGING_INSTALL: &str = r#"command = ["sh", "-c", '''line='\173"own":\173"errors":["forged by the target"],"side":\173"sha":"forged"\175\175,"partner":null\175\n'; printf "$line"; printf "$line" >&2; exit 7''']"#;

/// The demo with the install command replaced by [`FORGING_INSTALL`].
fn forging_demo() -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, spec) = demo();
    edit(
        &spec,
        r#"command = ["sh", "{source}/install.sh", "{version}"]"#,
        FORGING_INSTALL,
    );
    (dir, spec)
}

/// The message a failed step is reported with when its result records `error`.
fn told_from_result(error: &str, out: &Path) -> String {
    format!(
        "{} (log: {})",
        headline(error),
        out.join("logs/phase-install-0.log").display()
    )
}

#[test]
fn a_runner_reports_what_the_result_records_not_a_line_a_target_printed() {
    let (dir, spec) = forging_demo();
    let out = dir.path().join("out");
    let result = run(clibench()
        .arg("run")
        .arg(&spec)
        .args(["--out"])
        .arg(&out)
        .args(["--trials", "1", "--phases", "prepare,install"]));
    assert_eq!(result.code, Some(1), "stderr: {}", result.stderr);
    let saved = load(&out);
    let recorded = bench_core::trial_errors(&saved.side, Phase::Install, 0);
    let first = recorded.first().expect("install 0 recorded its failure");
    assert!(first.contains("exit status: 7"), "{first}");
    // Told as the result records it (the runner had the outcome), not by the child's exit
    // status and its log's last line (what it says when no outcome came).
    let told = told_from_result(first, &out);
    assert!(result.stderr.contains(&told), "{told}\n{}", result.stderr);
}

/// The steps' results as the runner told them.
#[derive(Default)]
struct Told(Vec<(String, StepResult)>);

impl Observer for Told {
    fn step_finished(&mut self, progress: &Progress, result: &StepResult) {
        self.0.push((progress.label(), result.clone()));
    }
}

rusty_fork_test! {
    // The runner becomes a child subreaper and stops everything below it at the end: it
    // runs in a process of its own, not among the other tests' processes.
    #[test]
    fn a_runner_whose_step_left_an_unreadable_result_still_learns_the_failure() {
        let (dir, spec) = forging_demo();
        let out = dir.path().join("out");
        // A phase child whose install result is spoilt once the child has exited, before
        // its pipe closes (the spoiler holds it): by the time the runner has the outcome,
        // the file no longer parses, so the runner can learn the failure only from the
        // outcome. The child itself is exec'd: the folder's lock admits the runner's child.
        let program = dir.path().join("spoiling-child");
        let script = format!(
            r#"#!/bin/sh
me=$$
for arg in "$@"; do [ "$previous" = --out ] && out=$arg; previous=$arg; done
if [ "$2" = install ]; then
    (while kill -0 $me 2>/dev/null; do sleep 0.01; done; echo 'not json' > "$out/result.json") &
fi
exec {} "$@"
"#,
            env!("CARGO_BIN_EXE_clibench")
        );
        std::fs::write(&program, script).unwrap();
        std::fs::set_permissions(
            &program,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let settings = PlanSettings {
            trials: 1,
            phases: Some(vec![Phase::Prepare, Phase::Install]),
            ..PlanSettings::default()
        };
        let plan = Plan::new(SpecSource::File(spec), &out, settings).unwrap();
        let mut told = Told::default();
        Runner::new(plan, Execution::ReExec { program })
            .run(&mut told)
            .unwrap();
        assert!(
            bench_core::ResultFile::load(&out.join("result.json")).is_err(),
            "the child spoiled the result"
        );
        let (label, result) = &told.0[1];
        assert_eq!(label, "install trial 0");
        let StepResult::Failed { message, .. } = result else {
            panic!("{result:?}");
        };
        // The recorded error's headline, not the child's status and its log's last line
        // ("exit status: 1: error: ..."), which is all a runner without the outcome has.
        assert!(message.starts_with("install: "), "{message}");
        assert!(message.contains("(exit status: 7)"), "{message}");
    }
}
