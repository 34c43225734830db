//! One step of `clibench bisect` as an `ab` run: the settings that measure two builds of
//! the range with interleaved pairs in one run, and the records of both sides afterwards.
//! Running it (progress, Ctrl-C) is the binary's.
//!
//! A metric a duet pairs (a start's time or CPU time, a runtime, ui or session trial's
//! time: [`bench_core::compare::duet::paired`]) is measured as `ab` measures by default, in a
//! duet: each pair's two programs start at the same moment on one CPU, so the load of
//! that moment lands on both, and the history pairs them trial by trial
//! (`crate::history::links::direct`). Only trial 0 runs alone (the run needs it, and reads memory
//! there), so a step of `pairs` pairs runs `pairs + 1` trials a side. A memory metric needs
//! a memory read in every trial, which a duet's shared trials skip: those steps run in
//! ABBA order, every trial whole.

use crate::history::bisect::builds::Build;
use crate::history::store::ingest::{self, IngestError};
use crate::history::store::record::Record;
use crate::pipeline::orchestration::ab::{AbSettings, SIDES};
use crate::pipeline::orchestration::schedule::Order;
use crate::pipeline::{PlanSettings, SpecSource};
use crate::spec::{Override, OverrideSyntaxError};
use bench_core::{Metric, Phase};
use std::path::Path;

/// The measure trials of a duet step that run alone: trial 0 only (the first start after
/// the install, which `ab` never pairs); bisect reads no memory from a duet step.
const DUET_ALONE_TRIALS: u32 = 1;

/// The `ab` run of builds `base` and `head` with `pairs` pairs of `metric`, measuring
/// `phases`, into `out`: each side the spec with the override that selects its build. A
/// duet for a metric a duet pairs, with one more trial a side for trial 0, which runs
/// alone (at most a result's 101 trials: a run asked for more gives 100 pairs, and the
/// search measures the rest in another); ABBA order, one trial a side per pair,
/// otherwise.
pub fn settings(
    spec: &SpecSource,
    out: &Path,
    (base, head): (&Build, &Build),
    (pairs, metric): (u32, Metric),
    phases: &[Phase],
) -> Result<AbSettings, OverrideSyntaxError> {
    // A duet for what a duet pairs, else ABBA order, every trial whole.
    let duet = bench_core::compare::duet::paired(metric);
    let trials = if duet {
        (pairs + DUET_ALONE_TRIALS).min(bench_core::MAX_TRIAL + 1)
    } else {
        pairs
    };
    Ok(AbSettings {
        spec: spec.clone(),
        out: out.to_path_buf(),
        base: vec![base.set.parse::<Override>()?],
        head: vec![head.set.parse::<Override>()?],
        plan: PlanSettings {
            trials,
            phases: Some(phases.to_vec()),
            ..PlanSettings::default()
        },
        order: Order::Abba,
        tight: duet.then_some(DUET_ALONE_TRIALS),
        duet,
        auto: None,
    })
}

/// Both sides' records of the `ab` run in `out` (base, then head), under branch `main`.
/// Both carry the run's invocation, which is how the history pairs them.
pub fn records(out: &Path) -> Result<Vec<Record>, IngestError> {
    SIDES
        .iter()
        .map(|side| ingest::record_of(&out.join(side).join("result.json"), None, "main"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The build of a package release, as `bisect --good/--bad` with versions names it.
    fn build(version: &str) -> Build {
        Build {
            label: version.into(),
            name: version.into(),
            set: format!("version={version}"),
            revision: format!("pkg@{version}"),
        }
    }

    #[test]
    fn each_side_is_the_spec_with_its_builds_override() {
        let (good, middle) = (build("0.63.1"), build("0.68.1"));
        let ab = |metric| {
            settings(
                &SpecSource::Demo,
                Path::new("out"),
                (&good, &middle),
                (10, metric),
                &[Phase::Prepare, Phase::Install, Phase::Measure],
            )
            .unwrap()
        };
        let warm_cpu = ab(Metric::WarmCpu);
        assert_eq!(warm_cpu.base[0].to_string(), "version=0.63.1");
        assert_eq!(warm_cpu.head[0].to_string(), "version=0.68.1");
        // A start metric: a duet, trial 0 alone and 10 pairs after it.
        assert_eq!(warm_cpu.plan.trials, 11);
        assert_eq!((warm_cpu.duet, warm_cpu.tight), (true, Some(1)));
        // Memory is read in every trial: ABBA, no trial left out.
        let rss = ab(Metric::Rss);
        assert_eq!(rss.plan.trials, 10);
        assert_eq!((rss.order, rss.tight, rss.duet), (Order::Abba, None, false));
    }

    #[test]
    fn a_duet_step_never_asks_for_more_trials_than_a_result_holds() {
        let ab = settings(
            &SpecSource::Demo,
            Path::new("out"),
            (&build("1"), &build("2")),
            (
                crate::history::bisect::paired::MAX_PAIRS_PER_RUN,
                Metric::Cold,
            ),
            &[Phase::Measure],
        )
        .unwrap();
        assert_eq!(ab.plan.trials, bench_core::MAX_TRIAL + 1);
    }
}
