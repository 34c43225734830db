//! One step of `clibench bisect` as an `ab` run: the settings that measure two builds of
//! the range with interleaved pairs in one run, and the records of both sides afterwards.
//! Running it (progress, Ctrl-C) is the binary's.

use super::builds::Build;
use super::ingest::{self, IngestError};
use super::record::Record;
use crate::pipeline::orchestration::ab::{AbSettings, SIDES};
use crate::pipeline::orchestration::schedule::Order;
use crate::pipeline::{PlanSettings, SpecSource};
use crate::spec::{Override, OverrideSyntaxError};
use bench_core::Phase;
use std::path::Path;

/// The `ab` run of builds `base` and `head` with `pairs` pairs (ABBA order, one trial a
/// side per pair), measuring `phases`, into `out`: each side the spec with the override
/// that selects its build.
pub fn settings(
    spec: &SpecSource,
    out: &Path,
    (base, head): (&Build, &Build),
    pairs: u32,
    phases: &[Phase],
) -> Result<AbSettings, OverrideSyntaxError> {
    Ok(AbSettings {
        spec: spec.clone(),
        out: out.to_path_buf(),
        base: vec![base.set.parse::<Override>()?],
        head: vec![head.set.parse::<Override>()?],
        plan: PlanSettings {
            trials: pairs,
            phases: Some(phases.to_vec()),
            ..PlanSettings::default()
        },
        order: Order::Abba,
        tight: None,
        duet: false,
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

    #[test]
    fn each_side_is_the_spec_with_its_builds_override() {
        let build = |version: &str| Build {
            label: version.into(),
            name: version.into(),
            set: format!("version={version}"),
            revision: format!("pkg@{version}"),
        };
        let (good, middle) = (build("0.63.1"), build("0.68.1"));
        let ab = settings(
            &SpecSource::Demo,
            Path::new("out"),
            (&good, &middle),
            10,
            &[Phase::Prepare, Phase::Install, Phase::Measure],
        )
        .unwrap();
        assert_eq!(ab.base[0].to_string(), "version=0.63.1");
        assert_eq!(ab.head[0].to_string(), "version=0.68.1");
        assert_eq!(ab.plan.trials, 10);
        assert_eq!(ab.order, Order::Abba);
    }
}
