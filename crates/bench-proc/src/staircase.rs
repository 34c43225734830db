//! The staircase: the marginal memory of one more instance.
//!
//! One warm-up instance is created, started, settled and stopped first, so
//! one-time costs (caches, JIT, shared daemons) are paid before measuring. Then
//! instances are added one at a time and the whole family is measured after each
//! settles; the per-step deltas and their average are the marginal cost of one
//! instance. The first step often pays what the warm-up could not leave behind
//! (a shared daemon, a cache the instances share), so the median of the later
//! steps is reported as well: the steady cost of one more instance. Finally all
//! are stopped and the memory given back is measured.
//!
//! The engine knows nothing about what an instance is: anything that implements
//! [`Instances`] (a spawned command, a PTY session, a VM on a shared sidecar) works.
//! [`record_report`] records its report in a result, for every caller alike.

mod record;

pub use record::record_report;

use crate::settle::{Settle, SettleReport, settle_sleeping};
use crate::snapshot_linux::{ProcRoot, Selector, Snapshot, SnapshotError};
use serde::Serialize;
use std::fmt;

/// How to make, check and remove one instance.
pub trait Instances {
    /// One running instance.
    type Instance;
    /// What creating, starting, verifying or stopping may fail with.
    type Error: std::error::Error + Send + Sync + 'static;
    /// Creates an instance (for example spawns the process).
    fn create(&mut self) -> Result<Self::Instance, Self::Error>;
    /// Brings it to its steady state (for example waits until it is ready).
    fn start(&mut self, instance: &mut Self::Instance) -> Result<(), Self::Error>;
    /// Checks, after it settled and before it is measured, that it still works.
    fn verify(&mut self, instance: &mut Self::Instance) -> Result<(), Self::Error>;
    /// Stops and removes it, including its daemons.
    fn stop(&mut self, instance: Self::Instance) -> Result<(), Self::Error>;
    /// Called after each step is measured, for live progress; does nothing
    /// unless overridden.
    fn measured(&mut self, step: &Step) {
        let _ = step;
    }
}

/// How the staircase runs.
#[derive(Debug, Clone)]
pub struct StaircaseOptions {
    /// Instances to add, at least 1.
    pub count: usize,
    /// Wait after each change before measuring: a fixed time, or until the family's
    /// memory is quiet (see [`crate::settle`]).
    pub settle: Settle,
    /// The family measured after each step: typically the harness's own tree
    /// (with the harness a child subreaper) or the benchmark user's uid.
    pub family: Selector,
    /// Pids left out of every measurement (for example the harness itself).
    pub exclude_pids: Vec<u32>,
    /// Whether to run the warm-up instance first.
    pub warmup: bool,
}

/// The family's totals at one point of the staircase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FamilyTotals {
    /// Live processes.
    pub process_count: u32,
    /// Sum of RSS in bytes.
    pub rss_bytes: u64,
    /// Sum of PSS in bytes, `None` if any was unreadable.
    pub pss_bytes: Option<u64>,
    /// Sum of USS in bytes, `None` if any was unreadable.
    pub uss_bytes: Option<u64>,
}

impl FamilyTotals {
    /// Totals of a snapshot.
    pub fn of(snapshot: &Snapshot) -> FamilyTotals {
        FamilyTotals {
            process_count: u32::try_from(snapshot.processes.len()).unwrap_or(u32::MAX),
            rss_bytes: snapshot.total_rss_bytes(),
            pss_bytes: snapshot.total_pss_bytes(),
            uss_bytes: snapshot.total_uss_bytes(),
        }
    }
}

/// One added instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Step {
    /// 0 for the first added instance.
    pub index: usize,
    /// RSS change since the previous measurement, in bytes.
    pub rss_delta_bytes: i64,
    /// PSS change, `None` if PSS was unknown on either side.
    pub pss_delta_bytes: Option<i64>,
    /// USS change, `None` if USS was unknown on either side.
    pub uss_delta_bytes: Option<i64>,
    /// The family after this step.
    pub totals: FamilyTotals,
}

/// The outcome of a staircase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StaircaseReport {
    /// Instances added.
    pub count: usize,
    /// The family before the first instance (after the warm-up was stopped).
    pub baseline: FamilyTotals,
    /// One entry per added instance.
    pub steps: Vec<Step>,
    /// Average RSS delta per instance in bytes (rounded).
    pub avg_per_instance_rss_bytes: i64,
    /// Average PSS delta per instance, `None` if PSS was unknown.
    pub avg_per_instance_pss_bytes: Option<i64>,
    /// Average USS delta per instance, `None` if USS was unknown.
    pub avg_per_instance_uss_bytes: Option<i64>,
    /// Median RSS delta of the steps after the first, in bytes (the steady cost
    /// of one more instance); `None` with fewer than two steps.
    pub steady_per_instance_rss_bytes: Option<i64>,
    /// Median PSS delta of the steps after the first; `None` with fewer than two
    /// steps or when PSS was unknown on any of them.
    pub steady_per_instance_pss_bytes: Option<i64>,
    /// Median USS delta of the steps after the first; `None` as for PSS.
    pub steady_per_instance_uss_bytes: Option<i64>,
    /// The family after all instances were stopped and it settled.
    pub after_teardown: FamilyTotals,
    /// RSS given back by stopping all instances, in bytes.
    pub reclaimed_rss_bytes: i64,
    /// PSS given back, `None` if PSS was unknown.
    pub reclaimed_pss_bytes: Option<i64>,
    /// Every settle, in order: the warm-up's (when there was one), the baseline's,
    /// one per step, the teardown's.
    pub settles: Vec<StageSettle>,
}

/// One settle of the staircase and where it was.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageSettle {
    /// `warmup`, `baseline`, `step-N` (from 0) or `teardown`.
    pub stage: String,
    /// What it did.
    pub settle: SettleReport,
}

/// Where in the staircase something failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The warm-up instance.
    Warmup,
    /// Measuring the family before the first instance.
    Baseline,
    /// Adding instance N (0-based).
    Step(usize),
    /// Stopping the instances.
    Teardown,
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stage::Warmup => f.write_str("the warm-up"),
            Stage::Baseline => f.write_str("the baseline measurement"),
            Stage::Step(index) => write!(f, "step {index}"),
            Stage::Teardown => f.write_str("the teardown"),
        }
    }
}

/// What an instance operation was doing when it failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// [`Instances::create`].
    Create,
    /// [`Instances::start`].
    Start,
    /// [`Instances::verify`].
    Verify,
    /// [`Instances::stop`].
    Stop,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Action::Create => "create",
            Action::Start => "start",
            Action::Verify => "verify",
            Action::Stop => "stop",
        })
    }
}

/// Why a staircase failed. Instances already created are stopped first.
#[derive(Debug, thiserror::Error)]
pub enum StaircaseError<E: std::error::Error + 'static> {
    /// `count` was 0.
    #[error("the staircase needs at least one instance (count was 0)")]
    ZeroCount,
    /// An instance operation failed.
    #[error("failed to {action} the instance during {stage}")]
    Instance {
        /// Where.
        stage: Stage,
        /// What.
        action: Action,
        /// The instance's error.
        #[source]
        source: E,
    },
    /// Measuring the family failed.
    #[error("failed to measure the family during {stage}")]
    Measure {
        /// Where.
        stage: Stage,
        /// The snapshot error.
        #[source]
        source: SnapshotError,
    },
}

/// Runs the staircase over the live `/proc`.
pub fn run<I: Instances>(
    instances: &mut I,
    options: &StaircaseOptions,
) -> Result<StaircaseReport, StaircaseError<I::Error>> {
    run_in(&ProcRoot::live(), instances, options)
}

/// Runs the staircase, measuring through a given proc root.
pub fn run_in<I: Instances>(
    root: &ProcRoot,
    instances: &mut I,
    options: &StaircaseOptions,
) -> Result<StaircaseReport, StaircaseError<I::Error>> {
    if options.count == 0 {
        return Err(StaircaseError::ZeroCount);
    }
    let mut walker = Walker {
        root,
        options,
        settles: Vec::with_capacity(options.count + 3),
    };
    if options.warmup {
        warm_up(&mut walker, instances)?;
    }
    walker.settle(Stage::Baseline);
    let baseline = walker.measure(Stage::Baseline)?;
    let mut running: Vec<I::Instance> = Vec::with_capacity(options.count);
    let mut steps = Vec::with_capacity(options.count);
    let mut previous = baseline;
    for index in 0..options.count {
        let totals = match add_instance(&mut walker, instances, &mut running, index) {
            Ok(totals) => totals,
            Err(error) => {
                for instance in running.into_iter().rev() {
                    let _ = instances.stop(instance);
                }
                return Err(error);
            }
        };
        let step = Step {
            index,
            rss_delta_bytes: delta(totals.rss_bytes, previous.rss_bytes),
            pss_delta_bytes: both(totals.pss_bytes, previous.pss_bytes),
            uss_delta_bytes: both(totals.uss_bytes, previous.uss_bytes),
            totals,
        };
        instances.measured(&step);
        steps.push(step);
        previous = totals;
    }
    stop_all(instances, running)?;
    walker.settle(Stage::Teardown);
    let after_teardown = walker.measure(Stage::Teardown)?;
    Ok(report(
        options.count,
        (baseline, previous, after_teardown),
        steps,
        walker.settles,
    ))
}

/// What a staircase measures through (the proc root and the options), and the settles
/// it waited so far.
struct Walker<'a> {
    root: &'a ProcRoot,
    options: &'a StaircaseOptions,
    settles: Vec<StageSettle>,
}

impl Walker<'_> {
    /// The family's totals now, without the excluded processes.
    fn measure<E: std::error::Error>(
        &self,
        stage: Stage,
    ) -> Result<FamilyTotals, StaircaseError<E>> {
        let options = self.options;
        self.root
            .snapshot(&options.family)
            .map(|snap| FamilyTotals::of(&snap.without(&options.exclude_pids)))
            .map_err(|source| StaircaseError::Measure { stage, source })
    }

    /// Waits until the family is quiet, and keeps how long that took.
    fn settle(&mut self, stage: Stage) {
        let options = self.options;
        let settle = settle_sleeping(
            self.root,
            &options.family,
            &options.exclude_pids,
            &options.settle,
        );
        let stage = match stage {
            Stage::Warmup => "warmup".to_owned(),
            Stage::Baseline => "baseline".to_owned(),
            Stage::Step(index) => format!("step-{index}"),
            Stage::Teardown => "teardown".to_owned(),
        };
        self.settles.push(StageSettle { stage, settle });
    }
}

/// An instance's error at `stage` while doing `action`.
fn fail<E: std::error::Error>(stage: Stage, action: Action) -> impl FnOnce(E) -> StaircaseError<E> {
    move |source| StaircaseError::Instance {
        stage,
        action,
        source,
    }
}

/// One instance started, settled, verified and stopped before the baseline, so that
/// what a first start brings along (caches, daemons) is not billed to step one.
fn warm_up<I: Instances>(
    walker: &mut Walker<'_>,
    instances: &mut I,
) -> Result<(), StaircaseError<I::Error>> {
    let stage = Stage::Warmup;
    let mut warm = instances.create().map_err(fail(stage, Action::Create))?;
    let started = instances
        .start(&mut warm)
        .map_err(fail(stage, Action::Start))
        .and_then(|()| {
            walker.settle(stage);
            instances
                .verify(&mut warm)
                .map_err(fail(stage, Action::Verify))
        });
    let stopped = instances.stop(warm).map_err(fail(stage, Action::Stop));
    started?;
    stopped
}

/// Step `index`: one more instance created, started (into `running`), settled and
/// verified; the family's totals then.
fn add_instance<I: Instances>(
    walker: &mut Walker<'_>,
    instances: &mut I,
    running: &mut Vec<I::Instance>,
    index: usize,
) -> Result<FamilyTotals, StaircaseError<I::Error>> {
    let stage = Stage::Step(index);
    let mut instance = instances.create().map_err(fail(stage, Action::Create))?;
    if let Err(error) = instances.start(&mut instance) {
        let _ = instances.stop(instance);
        return Err(fail(stage, Action::Start)(error));
    }
    running.push(instance);
    walker.settle(stage);
    let last = running.len() - 1;
    instances
        .verify(&mut running[last])
        .map_err(fail(stage, Action::Verify))?;
    walker.measure(stage)
}

/// Stops every running instance, the last started first; the first error, after
/// trying them all.
fn stop_all<I: Instances>(
    instances: &mut I,
    running: Vec<I::Instance>,
) -> Result<(), StaircaseError<I::Error>> {
    let mut first_error = None;
    for instance in running.into_iter().rev() {
        if let Err(error) = instances.stop(instance) {
            first_error.get_or_insert(error);
        }
    }
    match first_error {
        Some(error) => Err(fail(Stage::Teardown, Action::Stop)(error)),
        None => Ok(()),
    }
}

/// The report of a staircase of `count` steps: the averages from the baseline to the
/// last step, the steady costs, and what the teardown gave back.
fn report(
    count: usize,
    (baseline, last, after_teardown): (FamilyTotals, FamilyTotals, FamilyTotals),
    steps: Vec<Step>,
    settles: Vec<StageSettle>,
) -> StaircaseReport {
    let per_step = count as f64;
    let average = |delta: Option<i64>| delta.map(|d| (d as f64 / per_step).round() as i64);
    StaircaseReport {
        count,
        baseline,
        avg_per_instance_rss_bytes: (delta(last.rss_bytes, baseline.rss_bytes) as f64 / per_step)
            .round() as i64,
        avg_per_instance_pss_bytes: average(both(last.pss_bytes, baseline.pss_bytes)),
        avg_per_instance_uss_bytes: average(both(last.uss_bytes, baseline.uss_bytes)),
        steady_per_instance_rss_bytes: steady(&steps, |step| Some(step.rss_delta_bytes)),
        steady_per_instance_pss_bytes: steady(&steps, |step| step.pss_delta_bytes),
        steady_per_instance_uss_bytes: steady(&steps, |step| step.uss_delta_bytes),
        steps,
        after_teardown,
        reclaimed_rss_bytes: delta(last.rss_bytes, after_teardown.rss_bytes),
        reclaimed_pss_bytes: both(last.pss_bytes, after_teardown.pss_bytes),
        settles,
    }
}

fn delta(after: u64, before: u64) -> i64 {
    i64::try_from(after).unwrap_or(i64::MAX) - i64::try_from(before).unwrap_or(i64::MAX)
}

fn both(after: Option<u64>, before: Option<u64>) -> Option<i64> {
    Some(delta(after?, before?))
}

/// The median of one delta over the steps after the first (the mean of the two
/// middle values, rounded, for an even number); `None` with fewer than two steps
/// or when any of those deltas is unknown.
fn steady(steps: &[Step], delta: impl Fn(&Step) -> Option<i64>) -> Option<i64> {
    let mut later = steps
        .get(1..)?
        .iter()
        .map(|step| delta(step).map(|bytes| bytes as f64))
        .collect::<Option<Vec<f64>>>()?;
    if later.is_empty() {
        return None;
    }
    later.sort_by(f64::total_cmp);
    Some(bench_core::stats::median_of_sorted(&later).round() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tree::{children, process};
    use std::path::PathBuf;
    use std::time::Duration;

    /// Instances that appear as 400 KiB children of pid 10 in a fixture tree.
    struct Fake {
        root: PathBuf,
        next_pid: u32,
        live: Vec<u32>,
        fail_verify_at: Option<u32>,
        created: u32,
        observed: Vec<usize>,
    }

    #[derive(Debug, thiserror::Error)]
    #[error("fake instance {0} broke")]
    struct Broke(u32);

    impl Fake {
        fn write_children(&self) {
            let list: Vec<String> = self.live.iter().map(u32::to_string).collect();
            children(&self.root, 10, 10, &list.join(" "));
        }
    }

    impl Instances for Fake {
        type Instance = u32;
        type Error = Broke;
        fn create(&mut self) -> Result<u32, Broke> {
            self.next_pid += 1;
            self.created += 1;
            process(&self.root, self.next_pid, 10, 'S', 0, 400);
            self.live.push(self.next_pid);
            self.write_children();
            Ok(self.next_pid)
        }
        fn start(&mut self, _: &mut u32) -> Result<(), Broke> {
            Ok(())
        }
        fn verify(&mut self, pid: &mut u32) -> Result<(), Broke> {
            match self.fail_verify_at {
                Some(n) if n == self.created => Err(Broke(*pid)),
                _ => Ok(()),
            }
        }
        fn measured(&mut self, step: &Step) {
            self.observed.push(step.index);
        }
        fn stop(&mut self, pid: u32) -> Result<(), Broke> {
            self.live.retain(|&p| p != pid);
            self.write_children();
            std::fs::remove_dir_all(self.root.join(pid.to_string())).unwrap();
            Ok(())
        }
    }

    fn setup(fail_verify_at: Option<u32>) -> (tempfile::TempDir, Fake, StaircaseOptions) {
        let dir = tempfile::tempdir().unwrap();
        process(dir.path(), 10, 1, 'S', 0, 1000);
        let fake = Fake {
            root: dir.path().to_path_buf(),
            next_pid: 100,
            live: Vec::new(),
            fail_verify_at,
            created: 0,
            observed: Vec::new(),
        };
        let options = StaircaseOptions {
            count: 3,
            settle: Settle::Fixed(Duration::ZERO),
            family: Selector::Tree(10),
            exclude_pids: Vec::new(),
            warmup: true,
        };
        (dir, fake, options)
    }

    #[test]
    fn steps_average_and_reclaim_follow_the_family() {
        let (dir, mut fake, options) = setup(None);
        let report = run_in(&ProcRoot::new(dir.path()), &mut fake, &options).unwrap();
        assert_eq!(fake.created, 4, "one warm-up and three steps");
        assert_eq!(report.baseline.rss_bytes, 1000 * 1024);
        assert_eq!(report.steps.len(), 3);
        for step in &report.steps {
            assert_eq!(step.rss_delta_bytes, 400 * 1024);
            assert_eq!(step.pss_delta_bytes, Some(200 * 1024));
            assert_eq!(step.uss_delta_bytes, Some(100 * 1024));
        }
        assert_eq!(report.avg_per_instance_rss_bytes, 400 * 1024);
        assert_eq!(report.avg_per_instance_pss_bytes, Some(200 * 1024));
        assert_eq!(report.steady_per_instance_rss_bytes, Some(400 * 1024));
        assert_eq!(report.steady_per_instance_pss_bytes, Some(200 * 1024));
        assert_eq!(report.reclaimed_rss_bytes, 3 * 400 * 1024);
        assert_eq!(report.after_teardown.process_count, 1);
        assert_eq!(fake.observed, [0, 1, 2]);
        let stages: Vec<&str> = report.settles.iter().map(|s| s.stage.as_str()).collect();
        assert_eq!(
            stages,
            [
                "warmup", "baseline", "step-0", "step-1", "step-2", "teardown"
            ]
        );
    }

    #[test]
    fn failed_verify_stops_every_instance() {
        let (dir, mut fake, options) = setup(Some(3));
        let error = run_in(&ProcRoot::new(dir.path()), &mut fake, &options).unwrap_err();
        assert_eq!(
            error.to_string(),
            "failed to verify the instance during step 1"
        );
        assert!(fake.live.is_empty(), "left running: {:?}", fake.live);
    }

    fn step(index: usize, rss_mib: i64, pss_mib: Option<i64>) -> Step {
        Step {
            index,
            rss_delta_bytes: rss_mib << 20,
            pss_delta_bytes: pss_mib.map(|m| m << 20),
            uss_delta_bytes: None,
            totals: FamilyTotals {
                process_count: 1,
                rss_bytes: 0,
                pss_bytes: None,
                uss_bytes: None,
            },
        }
    }

    #[test]
    fn steady_cost_is_the_median_of_the_steps_after_the_first() {
        // The first step carries a shared daemon (90 MiB); the rest cost ~20 MiB.
        let steps = [
            step(0, 90, Some(80)),
            step(1, 22, Some(20)),
            step(2, 18, Some(16)),
            step(3, 40, Some(21)),
        ];
        let rss = |s: &Step| Some(s.rss_delta_bytes);
        assert_eq!(steady(&steps, rss), Some(22 << 20));
        assert_eq!(steady(&steps, |s| s.pss_delta_bytes), Some(20 << 20));
        // An even number of later steps: the mean of the middle two.
        assert_eq!(steady(&steps[..3], rss), Some(20 << 20));
        assert_eq!(
            steady(&steps[..1], rss),
            None,
            "one step has no later steps"
        );
        let unknown = [step(0, 90, Some(80)), step(1, 22, None)];
        assert_eq!(steady(&unknown, |s| s.pss_delta_bytes), None);
    }

    #[test]
    fn zero_count_is_refused() {
        let (dir, mut fake, mut options) = setup(None);
        options.count = 0;
        let error = run_in(&ProcRoot::new(dir.path()), &mut fake, &options).unwrap_err();
        assert!(matches!(error, StaircaseError::ZeroCount));
        assert_eq!(fake.created, 0);
    }
}
