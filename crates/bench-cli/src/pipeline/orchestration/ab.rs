//! An A/B run: one spec, two sets of overrides (base and head), each side prepared and
//! installed once, their trials interleaved (see [`schedule`](crate::pipeline::orchestration::schedule)), then a
//! comparison. What `clibench ab` does.
//!
//! The output folder holds `ab.json` (the settings, the order and its seed, written before
//! anything runs), `base/` and `head/` (each a whole run's folder with its
//! `result.json`), `comparison.md` and `comparison.json`.

use crate::pipeline::orchestration::auto_trials::{AutoGate, AutoTrials};
use crate::pipeline::orchestration::plan::{Plan, PlanSettings, SpecSource, Step};
use crate::pipeline::orchestration::runner::{Execution, Runner};
use crate::pipeline::orchestration::schedule::{Order, interleave};
use crate::pipeline::{Error, Shard};
use crate::spec::Override;
use bench_core::compare::{CompareOptions, Comparison, compare};
use bench_core::{Phase, ResultFile, Role};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The labels and sub-folders of the two sides.
pub const SIDES: [&str; 2] = ["base", "head"];

/// What an A/B run does.
#[derive(Debug, Clone)]
pub struct AbSettings {
    /// The spec both sides start from.
    pub spec: SpecSource,
    /// The output folder.
    pub out: PathBuf,
    /// The base side's overrides.
    pub base: Vec<Override>,
    /// The head side's overrides.
    pub head: Vec<Override>,
    /// Trials, installs, phases, users, shard: shared by both sides (their overrides are
    /// set from `base` and `head`).
    pub plan: PlanSettings,
    /// How the trials of the two sides are ordered.
    pub order: Order,
    /// With `--schedule tight`, the measure trials (the first ones) that still settle and
    /// read memory; the others are timed starts only. `None`: every trial does both.
    pub tight: Option<u32>,
    /// With `tight`, `--schedule duet`: each pair's two programs start at the same
    /// moment instead of one after the other.
    pub duet: bool,
    /// `--trials auto`: stop sampling when the watched metrics are decided; the plan's
    /// trials are then the maximum.
    pub auto: Option<AutoTrials>,
}

/// A checked A/B run: both sides' plans and the order of their steps.
#[derive(Debug, Clone)]
pub struct Ab {
    /// The settings it was made with.
    pub settings: AbSettings,
    /// The base and head plans, in that order.
    pub plans: [Plan; 2],
    /// The order of the steps: `(0, step)` is base's, `(1, step)` head's.
    pub order: Vec<(usize, Step)>,
    /// With `--trials auto`, the gate that stops sampling, and what it found.
    pub auto: Option<AutoGate>,
    /// With `--schedule tight`, the indices into `order` whose measure trial runs in one
    /// process with the next (the other side's trial of the same number): the tight pairs.
    pub pairs: BTreeSet<usize>,
}

/// `OUT/ab.json`: how an A/B run was made, so it can be understood and replayed.
#[derive(Debug, serde::Serialize)]
struct Schedule {
    spec: String,
    base: Vec<String>,
    head: Vec<String>,
    trials: u32,
    installs: u32,
    shard: Option<Shard>,
    order: Order,
    /// With `--schedule tight`: the measure trials that read memory.
    tight_memory_trials: Option<u32>,
    /// With `--schedule duet`: the pairs' programs start at the same moment.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    duet: bool,
    steps: Vec<ScheduledStep>,
}

#[derive(Debug, serde::Serialize)]
struct ScheduledStep {
    side: &'static str,
    phase: Phase,
    trial: u32,
    /// Runs in one process with the next step, their timed starts interleaved.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    paired_with_next: bool,
}

impl Schedule {
    fn of(ab: &Ab) -> Schedule {
        let settings = &ab.settings;
        let describe = |sets: &[Override]| sets.iter().map(ToString::to_string).collect();
        Schedule {
            spec: match &settings.spec {
                SpecSource::File(path) => path.display().to_string(),
                SpecSource::Demo => "(built-in demo)".to_owned(),
            },
            base: describe(&settings.base),
            head: describe(&settings.head),
            trials: settings.plan.trials,
            installs: settings.plan.installs,
            shard: settings.plan.shard,
            order: settings.order,
            tight_memory_trials: settings.tight,
            duet: settings.duet,
            steps: ab
                .order
                .iter()
                .enumerate()
                .map(|(index, &(side, step))| ScheduledStep {
                    side: SIDES[side],
                    phase: step.phase,
                    trial: step.trial,
                    paired_with_next: ab.pairs.contains(&index),
                })
                .collect(),
        }
    }
}

impl Ab {
    /// Checks both sides' specs with their overrides; a bad override fails here, naming
    /// the side's key, before anything runs.
    pub fn new(settings: AbSettings) -> Result<Ab, Error> {
        let plan = |overrides: &[Override], side: &str| {
            let mut plan_settings = settings.plan.clone();
            plan_settings.overrides = overrides.to_vec();
            Plan::new(
                settings.spec.clone(),
                &settings.out.join(side),
                plan_settings,
            )
        };
        let mut plans = [
            plan(&settings.base, SIDES[0])?,
            plan(&settings.head, SIDES[1])?,
        ];
        // A tight schedule reaches the measure phase as a spec key, on both sides alike;
        // a plan without measure has no section to set it in.
        if let Some(trials) = settings.tight {
            for (side, overrides) in [&settings.base, &settings.head].into_iter().enumerate() {
                if plans[side].phases.contains(&Phase::Measure) {
                    let mut overrides = overrides.clone();
                    overrides.push(memory_trials_override(trials));
                    plans[side] = plan(&overrides, SIDES[side])?;
                }
            }
        }
        let order = interleave(&[plans[0].steps(), plans[1].steps()], settings.order);
        let pairs = settings
            .tight
            .map(|memory_trials| tight_pairs(&order, memory_trials, settings.duet))
            .unwrap_or_default();
        let auto = settings.auto.clone().map(AutoGate::new);
        Ok(Ab {
            settings,
            plans,
            order,
            auto,
            pairs,
        })
    }

    /// The output folder.
    pub fn out(&self) -> &Path {
        &self.settings.out
    }

    /// Writes `OUT/ab.json` (settings, order, seed) and returns the runner of both sides'
    /// steps in the scheduled order.
    pub fn runner(&self, execution: Execution) -> Result<Runner, Error> {
        std::fs::create_dir_all(self.out()).map_err(|source| Error::Io {
            action: "create the output folder",
            path: self.out().to_path_buf(),
            source,
        })?;
        let schedule = Schedule::of(self);
        // Invariant: the schedule holds only strings, numbers and derived Serialize types.
        let mut text = serde_json::to_string_pretty(&schedule).unwrap_or_default();
        text.push('\n');
        bench_core::io::write_atomic(&self.out().join("ab.json"), text.as_bytes())?;
        let plans = SIDES
            .iter()
            .zip(self.plans.iter())
            .map(|(label, plan)| ((*label).to_owned(), plan.clone()))
            .collect();
        let runner = Runner::interleaved(plans, self.order.clone(), execution)
            .pair(self.pairs.clone(), self.settings.duet);
        Ok(match &self.auto {
            Some(gate) => {
                let gate = gate.clone();
                runner.gate(Box::new(move |_, step, sides| gate.allow(step, sides)))
            }
            None => runner,
        })
    }
}

/// The tight pairs of an order: each measure trial past the memory trials (and never
/// trial 0, the first start after the install, whose failure decides what the run skips)
/// whose next step is the other side's trial of the same number; in a `duet`, each
/// runtime, ui and session trial past trial 0 as well, run whole at once. Returns the
/// index of each pair's first step.
fn tight_pairs(order: &[(usize, Step)], memory_trials: u32, duet: bool) -> BTreeSet<usize> {
    let pairs = |step: Step| match step.phase {
        Phase::Measure => step.trial >= memory_trials.max(1),
        phase => {
            duet && crate::pipeline::orchestration::trial_duet::pairs_whole_trials(phase)
                && step.trial >= 1
        }
    };
    order
        .windows(2)
        .enumerate()
        .filter(|(_, window)| {
            let [(side, step), (other, next)] = [window[0], window[1]];
            side != other && step == next && pairs(step)
        })
        .map(|(index, _)| index)
        .collect()
}

/// What [`compare_sides`] found and wrote.
#[derive(Debug)]
pub struct AbComparison {
    /// The comparison of head (candidate) against base.
    pub comparison: Comparison,
    /// The Markdown written to `OUT/comparison.md`.
    pub markdown: String,
    /// What made head differ from base, for a terminal's first line: both sides may have
    /// built the same commit, so their shas alone do not tell them apart.
    pub sides: String,
}

/// Marks `OUT/base/result.json` as the base and `OUT/head/result.json` as the candidate,
/// compares them and writes `OUT/comparison.md` and `OUT/comparison.json`; `order` is how
/// the run interleaved their trials, which the Markdown names, with `note` (how
/// `--trials auto` sampled) after it.
pub fn compare_sides(
    out: &Path,
    (order, tight): (Order, Option<u32>),
    options: &CompareOptions,
    note: Option<&str>,
) -> Result<AbComparison, Error> {
    let mut sides = Vec::new();
    for (label, role) in SIDES.iter().zip([Role::Base, Role::Candidate]) {
        let folder = out.join(label);
        let path = folder.join("result.json");
        if !path.exists() {
            return Err(Error::NoResult {
                logs: folder.join("logs"),
            });
        }
        let mut result = ResultFile::load(&path).map_err(Error::ResultUnreadable)?;
        if result.request.role != role {
            result.request.role = role;
            result.save(&path).map_err(|source| Error::ResultSave {
                path: path.clone(),
                source,
            })?;
        }
        sides.push(result);
    }
    let mut comparison = compare(&sides[0].side, &sides[1].side, options);
    // The titles name the sides by what their users set, not by ab's own setting.
    comparison.base_overrides = given_overrides(&sides[0], tight).map(str::to_owned);
    comparison.candidate_overrides = given_overrides(&sides[1], tight).map(str::to_owned);
    let mut markdown = bench_core::export::markdown::comparison(&comparison);
    markdown.push_str(&sides_line(&sides[0], &sides[1], order, tight));
    if let Some(note) = note {
        markdown.push_str(&format!("\n<sub>{note}</sub>\n"));
    }
    bench_core::io::write_atomic(&out.join("comparison.md"), markdown.as_bytes())?;
    let json = bench_core::export::json::comparison(&comparison);
    bench_core::io::write_atomic(&out.join("comparison.json"), json.as_bytes())?;
    let html = bench_core::export::html::comparison(&comparison);
    bench_core::io::write_atomic(&out.join("comparison.html"), html.as_bytes())?;
    let [base_own, head_own] = own_overrides(&sides[0], &sides[1], tight);
    let describe = |result: &ResultFile, own: Option<&str>| {
        let overrides = match own {
            None => "the spec as it is",
            Some("") => "the overrides both sides ran with",
            Some(own) => own,
        };
        format!("{overrides} ({})", short_sha(&result.request.sha))
    };
    let sides = format!(
        "head (candidate): {} vs base: {}",
        describe(&sides[1], head_own),
        describe(&sides[0], base_own)
    );
    Ok(AbComparison {
        comparison,
        markdown,
        sides,
    })
}

/// `[measure] memory_trials = trials`, which a paired schedule sets on both sides, after
/// their own overrides.
fn memory_trials_override(trials: u32) -> Override {
    Override::table_key("measure", "memory_trials", trials.to_string())
}

/// The overrides a side was given (`--base`, `--head`, a scenario's), as its result
/// records them, less the `measure.memory_trials` that a paired schedule (`tight`) put
/// after them: that one is ab's own setting, alike on both sides, which the footnote names
/// as such. `None`: the side ran the spec as it is.
fn given_overrides(result: &ResultFile, tight: Option<u32>) -> Option<&str> {
    let recorded = result
        .request
        .config
        .get(bench_core::OVERRIDES_KEY)?
        .as_str();
    let Some(trials) = tight else {
        return Some(recorded);
    };
    let own = memory_trials_override(trials).to_string();
    match recorded.strip_suffix(own.as_str()) {
        Some("") => None,
        Some(given) if given.ends_with(' ') => Some(given.trim_end()),
        _ => Some(recorded),
    }
}

/// Each side's given overrides (see [`given_overrides`]) without the leading ones both
/// ran with (a scenario's), which say nothing about how the sides differ; `None` for a
/// side given none.
fn own_overrides<'a>(
    base: &'a ResultFile,
    head: &'a ResultFile,
    tight: Option<u32>,
) -> [Option<&'a str>; 2] {
    match (given_overrides(base, tight), given_overrides(head, tight)) {
        (Some(base), Some(head)) => {
            let (base, head) = bench_core::compare::own_overrides(base, head);
            [Some(base), Some(head)]
        }
        (base, head) => [base, head],
    }
}

/// A sha's first 12 characters, as the reports show it.
fn short_sha(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

/// The line that says what each side was, since both may have built the same commit.
fn sides_line(base: &ResultFile, head: &ResultFile, order: Order, tight: Option<u32>) -> String {
    let [base_own, head_own] = own_overrides(base, head, tight);
    let describe = |own: Option<&str>| match own {
        Some("") => "the overrides both sides ran with".to_owned(),
        Some(own) => bench_core::export::markdown::code(own),
        None => "the spec as it is".to_owned(),
    };
    let order = match order {
        Order::Abba => "; trials interleaved in ABBA pairs",
        Order::RandomPairs { .. } => "; trials interleaved in pairs of random order",
        Order::Sequential => "; base's trials first, then head's (--sequential)",
    };
    // The results say whether their pairs shared a CPU: a duet that could not confine
    // its starts ran as two programs at once, and is not described as confined.
    let shared = [base, head]
        .map(|result| bench_core::compare::duet::shared_cpu_trials(&result.side, Phase::Measure));
    let duet = !shared[0].is_empty() && !shared[1].is_empty();
    let pairs = shared[0].intersection(&shared[1]).count();
    let tight = tight.map_or(String::new(), |trials| {
        let first = trials.max(1);
        // ab's own setting, named as such: no side was given it.
        let memory = format!(
            "the first {first} measure trials ran alone, before the pairs, and the first \
             {trials} settled and read memory (ab's own `{}` on both sides)",
            memory_trials_override(trials)
        );
        if duet {
            format!(
                "; duet pairs: from measure trial {first} on, one process starts both sides' \
                 programs at the same moment, confined to one CPU (cold with cold, then warm \
                 with warm), each closed at ready, and the start metrics are tested on those \
                 {pairs} pairs alone; their base is base's trials alone and their candidate \
                 base alone plus the pairs' difference, since sharing a CPU slows both \
                 (docs/verdicts.md, \"The program's own numbers\"); {memory}"
            )
        } else {
            format!(
                "; tight pairs: from measure trial {first} on, one process runs both sides' \
                 starts back to back (cold base-head, warm head-base, or the reverse), each \
                 closed at ready; {memory}"
            )
        }
    });
    let whole = whole_trial_duets(base, head);
    // An A/A run: saying "base = X; head = X" leaves the reader to spot that they match.
    let sides = if base_own == head_own {
        format!(
            "base and head (candidate) = {}, alike (an A/A run)",
            describe(base_own)
        )
    } else {
        format!(
            "base = {}; head (candidate) = {}",
            describe(base_own),
            describe(head_own)
        )
    };
    format!("\n<sub>clibench ab: {sides}{order}{tight}{whole}.</sub>\n")
}

/// The footnote's words for the runtime, ui and session trials that ran as duets on both
/// sides (empty when none did).
fn whole_trial_duets(base: &ResultFile, head: &ResultFile) -> String {
    let phases: Vec<String> = [Phase::Runtime, Phase::Ui, Phase::Session]
        .into_iter()
        .filter(|&phase| {
            let shared = |result: &ResultFile| {
                bench_core::compare::duet::shared_cpu_trials(&result.side, phase)
            };
            shared(base).intersection(&shared(head)).next().is_some()
        })
        .map(|phase| phase.to_string())
        .collect();
    if phases.is_empty() {
        return String::new();
    }
    format!(
        "; {} trials from trial 1 on ran both sides at the same moment, confined to one CPU, \
         and their times compare those pairs alone",
        phases.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(out: &Path, head: &[&str]) -> AbSettings {
        AbSettings {
            spec: SpecSource::Demo,
            out: out.to_path_buf(),
            base: Vec::new(),
            head: head.iter().map(|text| text.parse().unwrap()).collect(),
            plan: PlanSettings {
                trials: 2,
                phases: Some(vec![Phase::Prepare, Phase::Install, Phase::Measure]),
                ..PlanSettings::default()
            },
            order: Order::Abba,
            tight: None,
            duet: false,
            auto: None,
        }
    }

    #[test]
    fn each_side_runs_in_its_own_folder_with_its_own_overrides() {
        let ab = Ab::new(settings(Path::new("out"), &["measure.env.X=1"])).unwrap();
        assert_eq!(ab.plans[0].out, Path::new("out/base"));
        assert_eq!(ab.plans[1].out, Path::new("out/head"));
        assert!(ab.plans[0].settings.overrides.is_empty());
        assert_eq!(
            ab.plans[1].settings.overrides[0].to_string(),
            "measure.env.X=1"
        );
        let sides: Vec<usize> = ab.order.iter().map(|&(side, _)| side).collect();
        assert_eq!(sides, [0, 0, 1, 1, 0, 1, 1, 0]);
    }

    #[test]
    fn a_tight_schedule_sets_memory_trials_on_both_sides_after_their_own_overrides() {
        let mut settings = settings(Path::new("out"), &["measure.env.X=1"]);
        settings.tight = Some(2);
        let ab = Ab::new(settings).unwrap();
        let described = |side: usize| -> Vec<String> {
            ab.plans[side]
                .settings
                .overrides
                .iter()
                .map(ToString::to_string)
                .collect()
        };
        assert_eq!(described(0), ["measure.memory_trials=2"]);
        assert_eq!(described(1), ["measure.env.X=1", "measure.memory_trials=2"]);
        let mut without_measure = self::settings(Path::new("out"), &[]);
        without_measure.tight = Some(2);
        without_measure.plan.phases = Some(vec![Phase::Prepare, Phase::Install]);
        let ab = Ab::new(without_measure).unwrap();
        assert!(ab.plans[0].settings.overrides.is_empty());
    }

    #[test]
    fn a_bad_override_on_one_side_fails_before_anything_runs() {
        let error = Ab::new(settings(Path::new("out"), &["measure.ready_timeout=x"])).unwrap_err();
        assert!(error.is_input());
        assert!(
            error.to_string().contains("measure.ready_timeout"),
            "{error}"
        );
    }

    #[test]
    fn the_schedule_is_written_with_its_seed_and_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut settings = settings(dir.path(), &[]);
        settings.order = Order::RandomPairs { seed: 42 };
        let ab = Ab::new(settings).unwrap();
        ab.runner(Execution::InProcess).unwrap();
        let text = std::fs::read_to_string(dir.path().join("ab.json")).unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(json["order"]["kind"], "random_pairs");
        assert_eq!(json["order"]["seed"], 42);
        assert_eq!(json["steps"].as_array().unwrap().len(), 8);
        assert_eq!(json["steps"][0]["side"], "base");
        assert_eq!(json["steps"][0]["phase"], "prepare");
    }

    fn side_result(out: &Path, label: &str, cold: &[f64]) {
        side_result_with(out, label, cold, None);
    }

    /// A side's result, with `overrides` recorded as a run records its overrides.
    fn side_result_with(out: &Path, label: &str, cold: &[f64], overrides: Option<&str>) {
        let mut result = ResultFile::new(bench_core::Request::new("abc", Role::Candidate));
        if let Some(overrides) = overrides {
            result
                .request
                .config
                .insert(bench_core::OVERRIDES_KEY.to_owned(), overrides.to_owned());
        }
        for (trial, value) in cold.iter().enumerate() {
            bench_core::record(
                &mut result.side,
                bench_core::Metric::Cold,
                trial as u32,
                bench_core::Sample::Value(*value),
            );
        }
        std::fs::create_dir_all(out.join(label)).unwrap();
        result.save(&out.join(label).join("result.json")).unwrap();
    }

    #[test]
    fn comparing_sets_the_roles_and_writes_both_exports() {
        let dir = tempfile::tempdir().unwrap();
        side_result(dir.path(), "base", &[0.40, 0.41, 0.42, 0.40, 0.41]);
        // Ten times slower: these results carry no trial times, so they are judged as
        // separate runs, whose drift between runs only a change this large outgrows.
        side_result(dir.path(), "head", &[4.0, 4.1, 4.2, 4.0, 4.1]);
        let found = compare_sides(
            dir.path(),
            (Order::Sequential, None),
            &CompareOptions::default(),
            None,
        )
        .unwrap();
        assert!(found.comparison.has_regression());
        let base = ResultFile::load(&dir.path().join("base/result.json")).unwrap();
        assert_eq!(base.request.role, Role::Base);
        let head = ResultFile::load(&dir.path().join("head/result.json")).unwrap();
        assert_eq!(head.request.role, Role::Candidate);
        let markdown = std::fs::read_to_string(dir.path().join("comparison.md")).unwrap();
        assert_eq!(markdown, found.markdown);
        assert!(
            markdown.ends_with(
                "<sub>clibench ab: base and head (candidate) = the spec as it is, alike (an A/A run); base's trials first, then head's (--sequential).</sub>\n"
            ),
            "{markdown}"
        );
        let json = std::fs::read_to_string(dir.path().join("comparison.json")).unwrap();
        assert!(serde_json::from_str::<serde_json::Value>(&json).is_ok());
        let html = std::fs::read_to_string(dir.path().join("comparison.html")).unwrap();
        assert!(html.starts_with("<!DOCTYPE html>"), "{html:.200}");
        assert!(
            found
                .sides
                .starts_with("head (candidate): the spec as it is (")
                && found.sides.contains(" vs base: the spec as it is ("),
            "{}",
            found.sides
        );
    }

    /// The title, the footnote and the terminal's line of a duet `ab` (memory trials 3)
    /// whose sides recorded `base` and `head` as their overrides.
    fn duet_names(base: Option<&str>, head: Option<&str>) -> String {
        let dir = tempfile::tempdir().unwrap();
        side_result_with(dir.path(), "base", &[0.40, 0.41, 0.42], base);
        side_result_with(dir.path(), "head", &[0.40, 0.41, 0.42], head);
        let found = compare_sides(
            dir.path(),
            (Order::Abba, Some(3)),
            &CompareOptions::default(),
            None,
        )
        .unwrap();
        let title = found.markdown.lines().next().unwrap_or_default();
        let footnote = found.markdown.lines().last().unwrap_or_default();
        format!("{title}\n{footnote}\n{}", found.sides)
    }

    #[test]
    fn ab_names_its_own_memory_trials_as_its_own_not_as_overrides_the_sides_were_given() {
        // No side given an override: both ran the spec as it is, with ab's setting.
        let own = "measure.memory_trials=3";
        insta::assert_snapshot!(
            "ab_sides_given_no_overrides",
            duet_names(Some(own), Some(own))
        );
        // Head given one: only that tells the sides apart.
        let head = "measure.env.X=1 measure.memory_trials=3";
        insta::assert_snapshot!(
            "ab_head_given_an_override",
            duet_names(Some(own), Some(head))
        );
        // A scenario both sides were given is theirs, not ab's.
        let scenario = "session.turns=10";
        let [base, head] = [
            format!("{scenario} {own}"),
            format!("{scenario} measure.env.X=1 {own}"),
        ];
        insta::assert_snapshot!(
            "ab_sides_given_a_scenario",
            duet_names(Some(&base), Some(&head))
        );
    }

    #[test]
    fn a_side_without_a_result_is_named() {
        let dir = tempfile::tempdir().unwrap();
        side_result(dir.path(), "base", &[0.4]);
        let error = compare_sides(
            dir.path(),
            (Order::Abba, None),
            &CompareOptions::default(),
            None,
        )
        .unwrap_err();
        assert!(error.to_string().contains("head"), "{error}");
    }
}
