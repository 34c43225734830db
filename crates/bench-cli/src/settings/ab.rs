//! `clibench ab`'s settings: the schedule, the trials (a count, or `auto` with its
//! sequential plan, watched metrics and target) and the spec's floors.

use super::run::{parse_phases, scenario_tool, with_scenario};
use super::{SettingsError, ThresholdFlags, compare_options};
use bench_cli::pipeline::orchestration::ab::AbSettings;
use bench_cli::pipeline::orchestration::auto_trials::AutoTrials;
use bench_cli::pipeline::orchestration::schedule::{Schedule, TIGHT_MEMORY_TRIALS};
use bench_cli::pipeline::{PlanSettings, Shard, SpecSource};
use bench_cli::spec::{Compare, Override, Scenario};
use bench_core::Metric;
use bench_core::compare::CompareOptions;
use bench_core::stats::sequential::{DEFAULT_WATCHED, SequentialPlan, Spending};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

/// `--trials`: a count, or `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trials {
    /// This many trials a side.
    Fixed(u32),
    /// Interleaved pairs until every watched metric is decided.
    Auto,
}

impl FromStr for Trials {
    type Err = super::FlagValueError;

    fn from_str(text: &str) -> Result<Trials, Self::Err> {
        if text == "auto" {
            return Ok(Trials::Auto);
        }
        text.parse().map(Trials::Fixed).map_err(|_| {
            super::FlagValueError::new(format!("`{text}` is neither a number of trials nor `auto`"))
        })
    }
}

/// What `clibench ab` was asked for, as plain values.
#[derive(Debug, Clone, Default)]
pub struct AbRequest {
    /// The spec file; `None`: the demo.
    pub spec: Option<PathBuf>,
    /// The base side's overrides.
    pub base: Vec<Override>,
    /// The head side's overrides.
    pub head: Vec<Override>,
    /// A scenario both sides run, its overrides before each side's.
    pub scenario: Option<Scenario>,
    /// `--trials`; `None`: auto, within `--budget` or `DEFAULT_BUDGET`.
    pub trials: Option<Trials>,
    /// `--max-trials`; `None`: `BUDGET_MAX_PAIRS` within a budget, else 20.
    pub max_trials: Option<u32>,
    /// `--budget`.
    pub budget: Option<Duration>,
    /// `--target-mde`, a fraction in `0..1`.
    pub target_mde: Option<f64>,
    /// Installations per side.
    pub installs: u32,
    /// The phases to run, by name; `None`: every phase the spec describes.
    pub phases: Option<Vec<String>>,
    /// The output folder; `None`: the spec's default ab folder.
    pub out: Option<PathBuf>,
    /// `--seed`: each pair's order drawn from it.
    pub seed: Option<u64>,
    /// `--sequential`: the same as a sequential schedule.
    pub sequential: bool,
    /// `--schedule`; `None`: tight.
    pub schedule: Option<Schedule>,
    /// `--memory-trials`, for a tight or duet schedule.
    pub memory_trials: Option<u32>,
    /// Run only this shard of the trials.
    pub shard: Option<Shard>,
    /// Keep the trial users and homes.
    pub keep_users: bool,
}

/// The most pairs a run with `--budget` and no `--max-trials` may take: high enough that
/// the budget, not the count, ends it (a result holds at most 101 trials, and a paired
/// schedule's memory trials come first).
pub const BUDGET_MAX_PAIRS: u32 = 90;

/// The budget of timed pairs of an `ab` given no `--trials` and no `--budget`: with
/// what runs outside it (prepare, install, the memory trials' settling, the staircase, and
/// each later phase's three trials once it is spent) a whole default run of the demo takes
/// about 75 s when a change is seen at a glance and 100 s when it must use the whole
/// budget, a CI job's step. A change a person sees at a glance is decided at the first look
/// (6 pairs); a smaller one gets what a minute of pairs can see, and `--budget 2m` more
/// (docs/verdicts.md, "What the default decides").
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(60);

/// The spec's `[compare]` section (floors, watched metrics, target), read once for the
/// whole `ab` run; the default (none of them) for the demo.
fn spec_compare(spec: &SpecSource) -> Result<Compare, SettingsError> {
    match spec {
        SpecSource::File(path) => Ok(bench_cli::spec::load(path)?.compare),
        SpecSource::Demo => Ok(Compare::default()),
    }
}

/// The watched metrics (`[compare] watch`, else the default ones): what `--trials auto`
/// waits for and what the comparison gates on.
fn watched(compare: &Compare) -> Vec<Metric> {
    match &compare.watch {
        // The spec check refused unknown metric names.
        Some(names) => names.iter().filter_map(|name| name.parse().ok()).collect(),
        None => DEFAULT_WATCHED.to_vec(),
    }
}

/// The trials a side and, for `auto`, the sequential plan that decides when to stop;
/// `alone` measure trials run before the pairs (a paired schedule's memory trials).
fn trials(
    request: &AbRequest,
    compare: &Compare,
    options: &CompareOptions,
    alone: u32,
) -> Result<(u32, Option<AutoTrials>), SettingsError> {
    // A budget alone means sampling until it is spent, which is what auto does; with no
    // trial flag at all, auto within the default budget: the default decides.
    let (trials, budget) = match request.trials {
        Some(trials) => (trials, request.budget),
        None => (Trials::Auto, Some(request.budget.unwrap_or(DEFAULT_BUDGET))),
    };
    let max_trials = request
        .max_trials
        .unwrap_or(if budget.is_some() {
            BUDGET_MAX_PAIRS
        } else {
            20
        })
        .max(1);
    match trials {
        Trials::Fixed(trials) => {
            if request.budget.is_some()
                || request.target_mde.is_some()
                || request.max_trials.is_some()
            {
                return Err(SettingsError::AutoOnly);
            }
            Ok((trials, None))
        }
        Trials::Auto => {
            if request
                .target_mde
                .is_some_and(|target| !(target > 0.0 && target < 1.0))
            {
                return Err(SettingsError::TargetMde);
            }
            let auto = AutoTrials {
                // Mostly O'Brien-Fleming-like, so a run cut by its budget keeps most
                // of alpha for its final comparison, with a fifth spent early, so a
                // change seen at a glance stops at the first look (docs/verdicts.md,
                // "`ab --trials auto`").
                plan: SequentialPlan::new(max_trials, options.alpha, Spending::Mixed),
                watched: watched(compare),
                target: request.target_mde.or(compare.target_mde),
                budget,
                options: options.clone(),
                alone,
            };
            Ok((max_trials, Some(auto)))
        }
    }
}

/// An `ab` run's settings and the options of its comparison.
#[derive(Debug)]
pub struct AbPlan {
    /// The run's settings.
    pub settings: AbSettings,
    /// The comparison's options: the flags over the spec's `[compare] noise` floors (what
    /// `--trials auto` looks with, and the final comparison uses).
    pub options: CompareOptions,
}

/// The settings of an `ab` run from what was asked, and its comparison's options from
/// `flags` and the spec, which is read once for both.
pub fn ab_settings(request: AbRequest, flags: &ThresholdFlags) -> Result<AbPlan, SettingsError> {
    let phases = request.phases.as_deref().map(parse_phases).transpose()?;
    let spec = SpecSource::resolve(request.spec.as_deref())?;
    let compare = spec_compare(&spec)?;
    let mut options = compare_options(flags, &compare.floors())?;
    // Holm's family is what the comparison gates on, in every mode: with forty tested
    // metrics in it, a doubling of cold could stay undecided at five pairs.
    options.gated = Some(watched(&compare).into_iter().collect());
    let out = request.out.clone().unwrap_or_else(|| spec.default_ab_out());
    let schedule = match (request.schedule, request.sequential) {
        (_, true) => Schedule::Sequential,
        (Some(schedule), false) => schedule,
        // Both sides' starts at the same moment on one CPU: on a loaded VM their pairs
        // spread a fifth as much as back to back (docs/verdicts.md, "Duet on one CPU").
        (None, false) => Schedule::Duet,
    };
    if schedule == Schedule::Sequential && request.seed.is_some() {
        return Err(SettingsError::SeedWithoutPairs);
    }
    let order = schedule.order(request.seed);
    let paired = matches!(schedule, Schedule::Tight | Schedule::Duet);
    if !paired && request.memory_trials.is_some() {
        return Err(SettingsError::MemoryTrialsWithoutPairs);
    }
    let tight = paired.then_some(request.memory_trials.unwrap_or(TIGHT_MEMORY_TRIALS));
    let tools = request.scenario.map(|_| {
        (
            scenario_tool(&spec, &request.base),
            scenario_tool(&spec, &request.head),
        )
    });
    let (base_tool, head_tool) = tools.unwrap_or_default();
    // The memory trials run alone before the timed pairs, in addition to them: `--trials
    // N` is N pairs. Trial 0 runs alone even with no memory trial.
    let alone = tight.map_or(0, |memory| memory.max(1));
    let (trials, auto) = trials(&request, &compare, &options, alone)?;
    let settings = AbSettings {
        spec,
        out,
        base: with_scenario(request.scenario, base_tool.as_deref(), request.base),
        head: with_scenario(request.scenario, head_tool.as_deref(), request.head),
        plan: PlanSettings {
            trials,
            extra_measure_trials: alone,
            installs: request.installs,
            phases,
            keep_users: request.keep_users,
            shard: request.shard,
            ..PlanSettings::default()
        },
        order,
        tight,
        duet: schedule == Schedule::Duet,
        auto,
    };
    Ok(AbPlan { settings, options })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Noise;
    use bench_cli::pipeline::orchestration::ab::Ab;
    use bench_cli::pipeline::orchestration::schedule::Order;
    use bench_core::Phase;

    fn request() -> AbRequest {
        AbRequest {
            installs: 1,
            ..AbRequest::default()
        }
    }

    fn settings_of(request: AbRequest) -> Result<AbSettings, SettingsError> {
        ab_settings(request, &ThresholdFlags::default()).map(|plan| plan.settings)
    }

    fn scheduled(schedule: Schedule) -> AbRequest {
        AbRequest {
            schedule: Some(schedule),
            ..request()
        }
    }

    #[test]
    fn trials_auto_plans_looks_up_to_the_maximum() {
        let fixed = settings_of(AbRequest {
            trials: Some(Trials::Fixed(7)),
            ..request()
        })
        .unwrap();
        assert_eq!((fixed.plan.trials, fixed.auto.is_none()), (7, true));
        let auto = settings_of(AbRequest {
            trials: Some(Trials::Auto),
            max_trials: Some(12),
            budget: Some(Duration::from_secs(300)),
            ..request()
        })
        .unwrap();
        assert_eq!(auto.plan.trials, 12);
        let plan = auto.auto.unwrap();
        assert_eq!(plan.plan.looks(), [6, 8, 10, 12]);
        assert_eq!(plan.watched, DEFAULT_WATCHED);
        assert_eq!(plan.budget, Some(Duration::from_secs(300)));
        let fixed_with_budget = AbRequest {
            trials: Some(Trials::Fixed(5)),
            budget: Some(Duration::from_secs(300)),
            ..request()
        };
        assert!(settings_of(fixed_with_budget).is_err());
        let max_alone = settings_of(AbRequest {
            max_trials: Some(9),
            ..request()
        })
        .unwrap();
        assert_eq!(max_alone.plan.trials, 9);
        assert_eq!(max_alone.auto.unwrap().budget, Some(DEFAULT_BUDGET));
        let far_target = AbRequest {
            trials: Some(Trials::Auto),
            target_mde: Some(2.0),
            ..request()
        };
        assert!(settings_of(far_target).is_err());
        let many = "many".parse::<Trials>().unwrap_err().to_string();
        assert!(many.contains("nor `auto`"), "{many}");
    }

    #[test]
    fn no_trial_flag_samples_pairs_within_the_default_budget() {
        let settings = settings_of(request()).unwrap();
        let auto = settings.auto.unwrap();
        assert_eq!(auto.budget, Some(DEFAULT_BUDGET));
        assert_eq!(auto.watched, DEFAULT_WATCHED);
        assert_eq!(settings.plan.trials, BUDGET_MAX_PAIRS);
        // The duet's three memory trials run alone before the pairs.
        assert_eq!((settings.plan.extra_measure_trials, auto.alone), (3, 3));
    }

    #[test]
    fn trials_n_is_n_timed_pairs_after_the_memory_trials() {
        let fixed = |trials, schedule| {
            settings_of(AbRequest {
                trials: Some(Trials::Fixed(trials)),
                schedule: Some(schedule),
                ..request()
            })
            .unwrap()
        };
        for trials in [3, 5, 10] {
            let duet = fixed(trials, Schedule::Duet);
            assert_eq!(duet.plan.trials, trials);
            assert_eq!(duet.plan.extra_measure_trials, 3);
            let ab = Ab::new(duet).unwrap();
            let timed = ab
                .pairs
                .iter()
                .filter(|&&index| ab.order[index].1.phase == Phase::Measure);
            assert_eq!(timed.count() as u32, trials, "--trials {trials}");
        }
        // ABBA reads memory in every trial: nothing runs alone before its pairs.
        assert_eq!(fixed(5, Schedule::Abba).plan.extra_measure_trials, 0);
    }

    #[test]
    fn a_budget_alone_samples_pairs_until_it_is_spent() {
        let budget = |max_trials| AbRequest {
            budget: Some(Duration::from_secs(120)),
            max_trials,
            ..request()
        };
        let settings = settings_of(budget(None)).unwrap();
        let auto = settings.auto.unwrap();
        assert_eq!(auto.budget, Some(Duration::from_secs(120)));
        assert_eq!(settings.plan.trials, BUDGET_MAX_PAIRS);
        assert_eq!(auto.plan.looks().last(), Some(&BUDGET_MAX_PAIRS));
        let capped = settings_of(budget(Some(30))).unwrap();
        assert_eq!(capped.plan.trials, 30);
    }

    #[test]
    fn the_schedule_sets_the_order_and_tight_reads_memory_in_the_first_trials() {
        let tight = settings_of(scheduled(Schedule::Tight)).unwrap();
        assert_eq!((tight.order, tight.tight), (Order::Abba, Some(3)));
        let one = AbRequest {
            memory_trials: Some(1),
            ..scheduled(Schedule::Tight)
        };
        assert_eq!(settings_of(one).unwrap().tight, Some(1));
        let abba = settings_of(scheduled(Schedule::Abba)).unwrap();
        assert_eq!((abba.order, abba.tight), (Order::Abba, None));
        let sequential = settings_of(scheduled(Schedule::Sequential)).unwrap();
        assert_eq!(sequential.order, Order::Sequential);
        let seeded = AbRequest {
            seed: Some(1),
            ..scheduled(Schedule::Sequential)
        };
        assert!(settings_of(seeded).is_err());
        let abba_memory = AbRequest {
            memory_trials: Some(1),
            ..scheduled(Schedule::Abba)
        };
        assert!(settings_of(abba_memory).is_err());
        // A duet is the default.
        let default = settings_of(request()).unwrap();
        assert_eq!((default.order, default.tight), (Order::Abba, Some(3)));
        assert!(default.duet);
        let memory = AbRequest {
            memory_trials: Some(1),
            ..request()
        };
        assert_eq!(settings_of(memory).unwrap().tight, Some(1));
    }

    #[test]
    fn the_order_is_abba_unless_seeded_or_sequential() {
        assert_eq!(settings_of(request()).unwrap().order, Order::Abba);
        let seeded = AbRequest {
            seed: Some(9),
            ..request()
        };
        assert_eq!(
            settings_of(seeded).unwrap().order,
            Order::RandomPairs { seed: 9 }
        );
        let sequential = AbRequest {
            sequential: true,
            ..request()
        };
        assert_eq!(settings_of(sequential).unwrap().order, Order::Sequential);
    }

    #[test]
    fn base_and_head_overrides_are_kept_apart() {
        let set = |text: &str| text.parse::<Override>().unwrap();
        let settings = settings_of(AbRequest {
            base: vec![set("version=1")],
            head: vec![set("version=2"), set("measure.env.A=1")],
            ..request()
        })
        .unwrap();
        assert_eq!(settings.base.len(), 1);
        assert_eq!(settings.head.len(), 2);
        assert_eq!(settings.head[1].to_string(), "measure.env.A=1");
    }

    #[test]
    fn the_specs_floors_fill_in_what_noise_flags_did_not_set() {
        let dir = tempfile::tempdir().unwrap();
        let spec = dir.path().join("x.toml");
        std::fs::write(
            &spec,
            "name = \"x\"\n[compare]\nnoise = { cold = 0.05, warm = 0.07 }\n",
        )
        .unwrap();
        let flags = ThresholdFlags {
            noise: vec![Noise::Metric(Metric::Warm, 0.3)],
            drift: Vec::new(),
        };
        let request = AbRequest {
            spec: Some(spec),
            ..request()
        };
        let options = ab_settings(request, &flags).unwrap().options;
        assert_eq!(options.floor(Metric::Cold), 0.05);
        assert_eq!(
            options.floor(Metric::Warm),
            0.3,
            "the flag wins over the spec"
        );
        assert_eq!(options.floor(Metric::Rss), 0.02);
    }

    #[test]
    fn trials_auto_takes_floors_watch_and_target_from_the_spec() {
        let dir = tempfile::tempdir().unwrap();
        let spec = dir.path().join("x.toml");
        std::fs::write(
            &spec,
            "name = \"x\"\n[compare]\nnoise = { cold = 0.05 }\nwatch = [\"cold\"]\n\
             target_mde = 0.1\n",
        )
        .unwrap();
        let plan = ab_settings(
            AbRequest {
                spec: Some(spec),
                trials: Some(Trials::Auto),
                ..request()
            },
            &ThresholdFlags::default(),
        )
        .unwrap();
        let auto = plan.settings.auto.unwrap();
        assert_eq!(auto.watched, [Metric::Cold]);
        assert_eq!(auto.target, Some(0.1));
        assert_eq!(auto.options.floor(Metric::Cold), 0.05);
        assert_eq!(plan.options.floor(Metric::Cold), 0.05);
    }

    #[test]
    fn the_default_output_folder_says_ab() {
        let out = settings_of(request()).unwrap().out;
        let name = out.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("ab-demo-"), "{name}");
    }
}
