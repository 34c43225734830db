//! What a single result file adds up to: every metric's statistics, the failed
//! samples and the side's facts, ready for the exporters.

mod checkpoints;
mod slopes;

pub use checkpoints::{CheckpointRow, Checkpoints};

use crate::Metric;
use crate::compare::{FailedSample, failed_samples};
use crate::detail::StaircaseInstance;
use crate::result::{ProcessMemory, Request, ResultFile};
use crate::stats::{MetricStats, side_stats};
use std::collections::BTreeMap;

/// The `runtime` fact that says whether the page cache was dropped before each cold start:
/// a value starting with `yes` means it was (written by the pipeline's `--drop-caches`).
pub const CACHES_DROPPED_KEY: &str = "caches_dropped";

/// A summary of one result file.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Report {
    /// What was asked for.
    pub request: Request,
    /// The measured sha.
    pub sha: String,
    /// Every metric with samples, in metric order.
    pub metrics: Vec<MetricStats>,
    /// Every failed sample, in metric then trial order.
    pub failures: Vec<FailedSample>,
    /// The side's own error, when its last phase failed.
    pub error: Option<String>,
    /// Release artifacts: file name -> bytes.
    pub artifacts: BTreeMap<String, u64>,
    /// Named durations, seconds.
    pub timings: BTreeMap<String, f64>,
    /// Facts about the run.
    pub runtime: BTreeMap<String, String>,
    /// The process breakdown of the last memory measurement, largest RSS first.
    pub processes: Vec<ProcessMemory>,
    /// Steps that were not run: `<phase>:<trial>` -> why.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub skipped: BTreeMap<String, String>,
    /// The session slopes of each trial with their standard errors, and the ones that
    /// grow clearly faster than linearly, one line each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub session_slopes: Vec<String>,
    /// The session slopes fitted through fewer than [`crate::stats::MIN_SLOPE_POINTS`]
    /// points in every trial, with the most points one had: left out of `metrics`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub few_point_slopes: Vec<(Metric, u32)>,
    /// What the terminal received in the measure, ui and session phases, one row per
    /// kind of window.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub terminal_output: Vec<crate::export::terminal::TerminalRow>,
    /// Each turn of a short session (at most 12 turns).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub session_turns: Vec<crate::export::terminal::TurnRow>,
    /// A long session's checkpoints, one trial's, for a compact table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_checkpoints: Option<Checkpoints>,
    /// How many processes the family had at each measure trial's memory measurement:
    /// trial -> count, for the trials that recorded one.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub process_counts: BTreeMap<u32, u32>,
    /// What the staircase's instances had done before they were measured, when it ran
    /// (the first trial's; every trial of a run has the same spec).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub staircase_instance: Option<StaircaseInstance>,
    /// How many installs the measure trials took in turn (their records' `install`);
    /// 1 for a run with one install, and for files written before trials named theirs.
    pub measure_installs: u32,
    /// The busiest trial start when the host's load was above its cores
    /// ([`crate::busy::busy_host`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub busy: Option<crate::busy::BusyHost>,
}

impl Report {
    /// The target's name, for a heading beside the sha; `None` when the request names
    /// none, or when it is the sha itself (a spec without a source, package or version
    /// is known by its name alone, and `node-repl node-repl` says it twice).
    pub fn target(&self) -> Option<&str> {
        self.request
            .config
            .get("target")
            .map(String::as_str)
            .filter(|target| *target != self.sha)
    }

    /// What `cold` and `warm` mean in this run, when it measured `cold`: whether the page
    /// cache was dropped before each cold start (`runtime.caches_dropped`, written by
    /// `clibench run`) decides whether "cold" was a start from disk.
    pub fn cold_note(&self) -> Option<String> {
        if !self
            .metrics
            .iter()
            .any(|stats| stats.metric == Metric::Cold)
        {
            return None;
        }
        let dropped = self
            .runtime
            .get(CACHES_DROPPED_KEY)
            .is_some_and(|value| value.starts_with("yes"));
        let caches = if dropped {
            "the page cache was dropped before each cold start"
        } else {
            "the page cache was not dropped, so a cold start may read files still cached from the install or an earlier trial (`clibench run --drop-caches` drops it)"
        };
        let first = match self.measure_installs {
            1 => "in trial 0 the first start after the install".to_string(),
            installs => format!(
                "the trials took the {installs} installs in turn, so in trials 0 to {} the first start after an install",
                installs - 1
            ),
        };
        Some(format!(
            "`cold` is each trial's first start ({first}), `warm` the start right after it; {caches}."
        ))
    }

    /// What the staircase's per-instance metrics measured, when a staircase ran.
    pub fn staircase_note(&self) -> Option<String> {
        let instance = self.staircase_instance?;
        Some(format!("`instance_*`: {}.", instance.meaning()))
    }

    /// A line naming the session slopes left out of the table for their few points.
    pub fn slope_note(&self) -> Option<String> {
        slopes::note(&self.few_point_slopes)
    }

    /// The skipped steps grouped by reason, in order of their first step:
    /// (`["measure:0", "measure:1"]`, "install trial 0 failed").
    pub fn skipped_by_reason(&self) -> Vec<(Vec<&str>, &str)> {
        let mut groups: Vec<(Vec<&str>, &str)> = Vec::new();
        for (step, reason) in &self.skipped {
            match groups.iter_mut().find(|(_, r)| *r == reason.as_str()) {
                Some((steps, _)) => steps.push(step),
                None => groups.push((vec![step], reason)),
            }
        }
        groups
    }

    /// Summarizes `result`.
    pub fn new(result: &ResultFile) -> Report {
        let side = &result.side;
        // A slope through fewer than five points is no figure: not shown (the result
        // keeps it).
        let few = slopes::few_points(&side.sessions);
        let mut processes = side.processes.clone();
        processes.sort_by(|a, b| b.rss.cmp(&a.rss).then(a.pid.cmp(&b.pid)));
        Report {
            request: result.request.clone(),
            sha: side.sha.clone(),
            metrics: {
                let mut stats = side_stats(side);
                stats.retain(|row| !few.iter().any(|&(metric, _)| metric == row.metric));
                stats
            },
            failures: failed_samples(side),
            error: side.error.clone(),
            artifacts: side.artifacts.clone(),
            timings: side.timings.clone(),
            runtime: side.runtime.clone(),
            processes,
            skipped: side.skipped.clone(),
            session_slopes: slopes::lines(&side.sessions),
            // Said only of a slope the result holds as a metric: a session too short for
            // one (the demo's three turns) records none, and has nothing left out to explain.
            few_point_slopes: few
                .into_iter()
                .filter(|(metric, _)| side.metrics.contains_key(metric))
                .collect(),
            terminal_output: {
                let mut rows = crate::export::terminal::trial_rows(&side.trials);
                rows.extend(crate::export::terminal::rows(&side.sessions));
                rows
            },
            session_turns: crate::export::terminal::turn_rows(&side.sessions),
            session_checkpoints: checkpoints::of(&side.sessions),
            process_counts: side
                .trials
                .iter()
                .filter(|record| record.phase == crate::metric::Phase::Measure)
                .filter_map(|record| Some((record.trial, record.process_count?)))
                .collect(),
            staircase_instance: side
                .staircases
                .iter()
                .min_by_key(|run| run.trial)
                .map(|run| run.instance),
            measure_installs: side
                .trials
                .iter()
                .filter(|record| record.phase == crate::metric::Phase::Measure)
                .filter_map(|record| record.install)
                .collect::<std::collections::BTreeSet<u32>>()
                .len()
                .max(1) as u32,
            busy: crate::busy::busy_host(side),
        }
    }

    /// A line naming the trials whose process family had another size, when the measure
    /// trials differ: `trial 0: 1 process; trials 1, 2: 3 processes`. A first run that
    /// does work later runs skip, or a daemon that came or went, changes what was
    /// measured, and the medians alone do not show it.
    pub fn family_note(&self) -> Option<String> {
        let mut groups: Vec<(u32, Vec<u32>)> = Vec::new();
        for (&trial, &count) in &self.process_counts {
            match groups.iter_mut().find(|(c, _)| *c == count) {
                Some((_, trials)) => trials.push(trial),
                None => groups.push((count, vec![trial])),
            }
        }
        if groups.len() < 2 {
            return None;
        }
        let parts: Vec<String> = groups
            .iter()
            .map(|(count, trials)| {
                let list: Vec<String> = trials.iter().map(u32::to_string).collect();
                format!(
                    "{} {}: {count} {}",
                    if trials.len() == 1 { "trial" } else { "trials" },
                    list.join(", "),
                    if *count == 1 { "process" } else { "processes" }
                )
            })
            .collect();
        Some(format!(
            "the process family changed between trials (at the memory measurement): {}; \
             OUT/logs/memory-N.json lists each trial's processes",
            parts.join("; ")
        ))
    }
}

#[cfg(test)]
mod family_tests {
    use super::*;
    use crate::metric::Phase;

    #[test]
    fn trials_whose_family_differs_are_named() {
        let mut result = ResultFile::new(Request::new("a", crate::result::Role::Candidate));
        for (trial, count) in [(0, 1), (1, 3), (2, 3)] {
            result
                .side
                .trial_record_mut(Phase::Measure, trial)
                .process_count = Some(count);
        }
        let report = Report::new(&result);
        let note = report.family_note().unwrap();
        assert!(
            note.contains("trial 0: 1 process; trials 1, 2: 3 processes"),
            "{note}"
        );
        result
            .side
            .trial_record_mut(Phase::Measure, 0)
            .process_count = Some(3);
        assert_eq!(Report::new(&result).family_note(), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Phase, Request, Role};

    #[test]
    fn session_slopes_are_listed_with_their_error_and_a_curve_is_flagged() {
        let fit = |slope, curvature_t| crate::stats::Fit {
            slope,
            std_error: Some(slope / 100.0),
            walk_std_error: None,
            points: 10,
            curvature_t: Some(curvature_t),
        };
        let run = crate::detail::SessionRun {
            trial: 2,
            dialect: String::new(),
            turns: Vec::new(),
            growth_bytes_per_turn: Some(1048576.0),
            warmup_turns: 1,
            pss_every: 1,
            growth: Some(fit(1048576.0, 0.5)),
            lag: Some(fit(0.0001, 9.0)),
            render: None,
            checkpoints: Vec::new(),
            idle_seconds: 1.0,
            idle_cpu_share: None,
            idle_monotonic_ns: None,
            idle_output: None,
            startup_output: None,
            pastes: Vec::new(),
        };
        let mut result = ResultFile::new(Request::new("a", Role::Candidate));
        result.side.sessions.push(run);
        let page = crate::export::markdown::report(&Report::new(&result));
        let line = page
            .lines()
            .find(|line| line.starts_with("- trial 2"))
            .unwrap_or_else(|| panic!("{page}"));
        insta::assert_snapshot!(line, @"- trial 2 (after 1 warm-up turns): `session_growth` 1.0 MiB/turn ± 10.2 KiB over 10 turns; `lag_growth` 10.0 ms/100 turns ± 100 µs over 10 checkpoints **faster than linear**");
    }

    #[test]
    fn a_slope_through_few_points_is_explained_only_when_the_result_holds_it() {
        let mut run: crate::detail::SessionRun = serde_json::from_str(
            r#"{"trial":0,"dialect":"","turns":[],"warmup_turns":1,"idle_seconds":1.0}"#,
        )
        .unwrap();
        run.growth = Some(crate::stats::Fit {
            slope: 28_000.0,
            std_error: None,
            walk_std_error: None,
            points: 2,
            curvature_t: None,
        });
        let mut result = ResultFile::new(Request::new("a", Role::Candidate));
        result.side.sessions.push(run);
        // A short session records no `session_growth`: nothing was left out.
        assert_eq!(Report::new(&result).slope_note(), None);
        // A result that holds it (one written before, or a failed long session) is told why
        // its row is missing.
        crate::record(
            &mut result.side,
            crate::Metric::SessionGrowth,
            0,
            crate::Sample::Value(28_000.0),
        );
        let note = Report::new(&result).slope_note().unwrap();
        assert!(
            note.starts_with("`session_growth` (2 points): not shown"),
            "{note}"
        );
    }

    #[test]
    fn an_outlier_trial_in_the_table_is_explained_below_it() {
        let mut result = ResultFile::new(Request::new("a", Role::Candidate));
        result.side =
            crate::test_support::side("a", &[(crate::Metric::Cold, &[0.4, 0.41, 0.4, 0.4, 2.0])]);
        let text = crate::export::text::report(&Report::new(&result));
        assert!(text.contains("#4"), "{text}");
        assert!(
            text.contains("\noutliers: #N is trial N, whose value lies more than 3.5 median"),
            "{text}"
        );
        result.side = crate::test_support::side("a", &[(crate::Metric::Cold, &[0.4, 0.41])]);
        let text = crate::export::text::report(&Report::new(&result));
        assert!(!text.contains("outliers:"), "{text}");
    }

    #[test]
    fn the_cold_note_says_when_the_trials_took_several_installs_in_turn() {
        let mut result = ResultFile::new(Request::new("a", Role::Candidate));
        result.side = crate::test_support::side("a", &[(crate::Metric::Cold, &[0.4, 0.41, 0.4])]);
        let one = Report::new(&result).cold_note().unwrap();
        assert!(
            one.contains("(in trial 0 the first start after the install)"),
            "{one}"
        );
        for (trial, install) in [(0, 0), (1, 1), (2, 0)] {
            result.side.trial_record_mut(Phase::Measure, trial).install = Some(install);
        }
        let two = Report::new(&result).cold_note().unwrap();
        assert!(
            two.contains(
                "took the 2 installs in turn, so in trials 0 to 1 the first start after an install"
            ),
            "{two}"
        );
    }

    #[test]
    fn skipped_steps_are_grouped_by_their_reason() {
        let mut result = ResultFile::new(Request::new("a", Role::Candidate));
        let side = &mut result.side;
        side.set_skipped(Phase::Measure, 0, "install trial 0 failed");
        side.set_skipped(Phase::Ui, 0, "install trial 0 failed");
        side.set_skipped(Phase::Runtime, 1, "same failure as runtime trial 0: x");
        let report = Report::new(&result);
        assert_eq!(
            report.skipped_by_reason(),
            [
                (vec!["measure:0", "ui:0"], "install trial 0 failed"),
                (vec!["runtime:1"], "same failure as runtime trial 0: x"),
            ]
        );
        let text = crate::export::text::report(&report);
        assert!(
            text.ends_with(
                "\nskipped: measure:0, ui:0: install trial 0 failed\nskipped: runtime:1: same failure as runtime trial 0: x\n"
            ),
            "{text}"
        );
        // Nothing measured cold: nothing to say about it.
        assert_eq!(report.cold_note(), None);
    }

    #[test]
    fn the_text_report_says_what_kind_of_instance_the_staircase_measured() {
        use crate::detail::StaircaseRun;
        let mut result = ResultFile::new(Request::new("a", Role::Candidate));
        assert_eq!(Report::new(&result).staircase_note(), None);
        let run = |trial, instance| StaircaseRun {
            trial,
            baseline_rss_bytes: 1,
            steps: Vec::new(),
            after_teardown_rss_bytes: 1,
            after_teardown_process_count: None,
            reclaimed_rss_bytes: 0,
            reclaimed_pss_bytes: None,
            average: None,
            steady: None,
            instance,
        };
        result.side.staircases = vec![run(0, StaircaseInstance::Session)];
        let text = crate::export::text::report(&Report::new(&result));
        assert!(
            text.contains(
                "\n`instance_*`: per-instance cost, each instance after one scripted turn.\n"
            ),
            "{text}"
        );
        result.side.staircases = vec![run(0, StaircaseInstance::Idle)];
        let text = crate::export::text::report(&Report::new(&result));
        assert!(text.contains("each instance idle at its prompt."), "{text}");
    }

    #[test]
    fn a_staircase_written_before_sessions_reads_as_idle() {
        let run: crate::detail::StaircaseRun = serde_json::from_str(
            r#"{"trial":0,"baseline_rss_bytes":1,"steps":[],"after_teardown_rss_bytes":1,"reclaimed_rss_bytes":0}"#,
        )
        .unwrap();
        assert_eq!(run.instance, StaircaseInstance::Idle);
    }
}
