//! What a staircase leaves in a result: [`record_report`] turns a [`StaircaseReport`] into
//! bench-core's result model, the same way for every caller of the engine.

use super::StaircaseReport;
use bench_core::detail::{InstanceCost, MAX_STEPS, StaircaseInstance, StaircaseRun, StaircaseStep};
use bench_core::{Metric, Phase, Sample, Side, record};

/// Records `report` as `trial` of `side`, for `clibench staircase` and the pipeline's
/// staircase phase alike: the metrics (a negative average, memory that shrank, is
/// recorded as an invalid value; an unreadable PSS or USS as an error), and every step
/// (at most [`MAX_STEPS`]) with the averages and steady costs, and every settle in the
/// trial's record. `instance` says what one instance was (an idle program, or an agent
/// that played a turn).
pub fn record_report(
    side: &mut Side,
    trial: u32,
    report: &StaircaseReport,
    instance: StaircaseInstance,
) {
    let bytes = |value: Option<i64>, what: &str| match value {
        Some(bytes) => Sample::Value(bytes as f64),
        None => Sample::Error(format!("the {what} of some process was unreadable")),
    };
    for (metric, value, what) in [
        (
            Metric::InstanceRss,
            Some(report.avg_per_instance_rss_bytes),
            "RSS",
        ),
        (
            Metric::InstancePss,
            report.avg_per_instance_pss_bytes,
            "PSS",
        ),
        (
            Metric::InstanceUss,
            report.avg_per_instance_uss_bytes,
            "USS",
        ),
        (
            Metric::ReclaimedRss,
            Some(report.reclaimed_rss_bytes),
            "RSS",
        ),
    ] {
        record(side, metric, trial, bytes(value, what));
    }
    let steps = report
        .steps
        .iter()
        .take(MAX_STEPS)
        .map(|step| StaircaseStep {
            instances: u32::try_from(step.index + 1).unwrap_or(u32::MAX),
            rss_bytes: step.totals.rss_bytes,
            pss_bytes: step.totals.pss_bytes,
            rss_delta_bytes: step.rss_delta_bytes,
            pss_delta_bytes: step.pss_delta_bytes,
            uss_delta_bytes: step.uss_delta_bytes,
            process_count: Some(step.totals.process_count),
        })
        .collect();
    side.staircases.retain(|run| run.trial != trial);
    side.staircases.push(StaircaseRun {
        trial,
        baseline_rss_bytes: report.baseline.rss_bytes,
        steps,
        after_teardown_rss_bytes: report.after_teardown.rss_bytes,
        after_teardown_process_count: Some(report.after_teardown.process_count),
        reclaimed_rss_bytes: report.reclaimed_rss_bytes,
        reclaimed_pss_bytes: report.reclaimed_pss_bytes,
        average: Some(InstanceCost {
            rss_bytes: report.avg_per_instance_rss_bytes,
            pss_bytes: report.avg_per_instance_pss_bytes,
            uss_bytes: report.avg_per_instance_uss_bytes,
        }),
        steady: report
            .steady_per_instance_rss_bytes
            .map(|rss_bytes| InstanceCost {
                rss_bytes,
                pss_bytes: report.steady_per_instance_pss_bytes,
                uss_bytes: report.steady_per_instance_uss_bytes,
            }),
        instance,
    });
    side.staircases.sort_by_key(|run| run.trial);
    let trial_record = side.trial_record_mut(Phase::Staircase, trial);
    for settle in &report.settles {
        trial_record.push_settle(settle.settle.record(&settle.stage));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::staircase::{FamilyTotals, Step};
    use bench_core::{Request, ResultFile, Role};

    fn totals(processes: u32, rss_mib: u64) -> FamilyTotals {
        FamilyTotals {
            process_count: processes,
            rss_bytes: rss_mib << 20,
            pss_bytes: Some(rss_mib << 19),
            uss_bytes: Some(rss_mib << 18),
        }
    }

    #[test]
    fn a_report_is_recorded_with_its_steps_and_costs() {
        let report = StaircaseReport {
            count: 2,
            baseline: totals(0, 0),
            steps: vec![
                Step {
                    index: 0,
                    rss_delta_bytes: 66 << 20,
                    pss_delta_bytes: Some(64 << 20),
                    uss_delta_bytes: Some(63 << 20),
                    totals: totals(1, 66),
                },
                Step {
                    index: 1,
                    rss_delta_bytes: 65 << 20,
                    pss_delta_bytes: None,
                    uss_delta_bytes: Some(-(1 << 20)),
                    totals: totals(2, 131),
                },
            ],
            avg_per_instance_rss_bytes: 131 << 19,
            avg_per_instance_pss_bytes: None,
            avg_per_instance_uss_bytes: Some(31 << 20),
            steady_per_instance_rss_bytes: Some(65 << 20),
            steady_per_instance_pss_bytes: None,
            steady_per_instance_uss_bytes: Some(-(1 << 20)),
            settles: Vec::new(),
            after_teardown: totals(0, 0),
            reclaimed_rss_bytes: 131 << 20,
            reclaimed_pss_bytes: None,
        };
        let mut result = ResultFile::new(Request::new("node", Role::Candidate));
        record_report(&mut result.side, 0, &report, StaircaseInstance::Idle);
        result.validate().unwrap();
        let side = &result.side;
        assert_eq!(side.values(Metric::InstanceRss), [(131u64 << 19) as f64]);
        assert_eq!(side.values(Metric::ReclaimedRss), [(131u64 << 20) as f64]);
        let pss = &side.metrics[&Metric::InstancePss][0];
        assert_eq!(
            pss.error.as_deref(),
            Some("the PSS of some process was unreadable")
        );
        let run = &side.staircases[0];
        assert_eq!(run.steps[1].process_count, Some(2));
        assert_eq!(run.steps[1].uss_delta_bytes, Some(-(1 << 20)));
        assert_eq!(run.steady.as_ref().map(|s| s.rss_bytes), Some(65 << 20));
        // What the terminal shows, from the result alone.
        let table = bench_core::export::staircase::steps(side);
        assert!(
            table.contains("\nsteady             +65.0 MiB          ?   -1.0 MiB\n"),
            "{table}"
        );
    }
}
