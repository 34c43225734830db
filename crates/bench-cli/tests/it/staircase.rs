//! `clibench staircase` on a real program.

use crate::{clibench, run};
use bench_core::{Metric, ResultFile};

/// The result file `clibench staircase --json` printed.
fn staircase(stdout: &str) -> ResultFile {
    ResultFile::from_json_str(stdout).unwrap_or_else(|error| panic!("{error}: {stdout}"))
}

#[test]
fn zero_count_is_a_usage_error() {
    let out = run(clibench().args(["staircase", "--count", "0", "--", "sleep", "10"]));
    assert_eq!(out.code, Some(2));
    assert_eq!(out.stderr, "error: --count must be at least 1\n");
}

#[test]
fn python_instances_of_16_mib_each() {
    // Each instance says when its 16 MiB are allocated, and the staircase waits for
    // that in its terminal before the settle: however slowly python starts on a loaded
    // machine, no instance is measured half-way.
    let out = run(clibench().args([
        "staircase",
        "--count",
        "2",
        "--tty",
        "--ready",
        "pattern:allocated",
        "--settle",
        "300ms",
        "--json",
        "--",
        "python3",
        "-c",
        "import time; x = b'x' * (16 << 20); print('allocated', flush=True); time.sleep(60)",
    ]));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let result = staircase(&out.stdout);
    let run = &result.side.staircases[0];
    assert_eq!(run.steps.len(), 2);
    assert_eq!(result.request.config["count"], "2");
    assert!(result.side.runtime["cores"].parse::<u32>().unwrap() >= 1);
    // Each instance holds 16 MiB of its own plus the interpreter's private
    // memory (a few MiB), so its PSS is at least the 16 MiB. USS is not
    // additive: a new instance turns pages the others held alone into shared
    // ones, so their USS drops.
    let mib = |metric: Metric| result.side.values(metric)[0] / (1 << 20) as f64;
    let (rss, pss, uss) = (
        mib(Metric::InstanceRss),
        mib(Metric::InstancePss),
        mib(Metric::InstanceUss),
    );
    assert!(
        (16.0..40.0).contains(&pss),
        "PSS per instance {pss} MiB\n{}",
        out.stderr
    );
    assert!(
        uss <= pss && pss <= rss,
        "rss {rss} pss {pss} uss {uss}\n{}",
        out.stderr
    );
    let reclaimed = mib(Metric::ReclaimedRss);
    assert!(
        (reclaimed - 2.0 * rss).abs() <= 0.05 * 2.0 * rss,
        "reclaimed {reclaimed} of {}",
        2.0 * rss
    );
    assert_eq!(run.after_teardown_process_count, Some(0));
    assert!(out.stderr.contains("CPU: "), "{}", out.stderr);
    assert!(out.stderr.contains("avg"), "{}", out.stderr);
}

#[test]
fn tty_instances_each_run_in_their_own_terminal() {
    let out = run(clibench().args([
        "staircase",
        "--tty",
        "--count",
        "2",
        // As above: room for python's start and allocation on a loaded machine.
        "--settle",
        "2s",
        "--json",
        "--",
        "python3",
        "-c",
        crate::mem::TTY_ONLY,
    ]));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let result = staircase(&out.stdout);
    let run = &result.side.staircases[0];
    let steps = &run.steps;
    assert_eq!(steps.len(), 2);
    for step in steps {
        let pss = step.pss_delta_bytes.unwrap();
        assert!(pss >= 16 << 20, "an instance added only {pss} bytes of PSS");
    }
    // With two steps the steady cost is the second step's.
    assert_eq!(
        run.steady.as_ref().and_then(|steady| steady.pss_bytes),
        steps[1].pss_delta_bytes
    );
    assert_eq!(run.after_teardown_process_count, Some(0));
    assert!(out.stderr.contains("steady"), "{}", out.stderr);
}

#[test]
fn an_instance_that_quits_without_a_terminal_suggests_tty() {
    let out = run(clibench().args([
        "staircase",
        "--count",
        "1",
        "--settle",
        "1s",
        "--",
        "sh",
        "-c",
        crate::mem::SH_TTY_ONLY,
    ]));
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr.contains("exited (exit status: 1) within")
            && out.stderr.contains("it needs a terminal: try --tty"),
        "{}",
        out.stderr
    );
}
