//! `clibench ab`: one spec, base and head overrides, their trials interleaved on this
//! machine, then the comparison: the answer to "did this change make the agent slower or
//! fatter?" in one command.
//!
//! Exit codes: 0 when the comparison was made; 1 when a metric regressed and
//! `--fail-on-regression` was given, or a step failed; 2 for bad input; 130 interrupted.

use super::compare::Noise;
use super::drive::{drive, spec_source};
use super::run::parse_phases;
use crate::exit::{FAILURE, input_error};
use crate::pipeline::SpecSource;
use crate::pipeline::orchestration::ab::{Ab, AbSettings, compare_sides};
use crate::pipeline::orchestration::auto_trials::AutoTrials;
use crate::pipeline::orchestration::schedule::{Schedule, TIGHT_MEMORY_TRIALS};
use crate::pipeline::{PlanSettings, Shard};
use crate::spec::Override;
use bench_core::compare::CompareOptions;
use bench_core::sequential::{DEFAULT_WATCHED, SequentialPlan, Spending};
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `clibench ab`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  clibench ab --head measure.env.DEMO_AGENT_STARTUP_DELAY_MS=300
  clibench ab examples/agents/pi.toml --base version=0.63.1 \\
      --head version=0.73.1 --trials 10
  clibench ab spec.toml --base source.commit=BASE_SHA \\
      --head source.commit=HEAD_SHA --out ab-out --fail-on-regression

Each side is the spec with its overrides (KEY=VALUE, as `clibench run --set`).
Both sides are prepared and installed first, then their trials run in pairs,
base-head and head-base alternating (--seed N: each pair's order drawn from
N), so that a change in the machine's load lands on both sides alike; then
each side's staircase.")]
pub struct Args {
    /// The target's spec (TOML). Without it, the built-in demo agent.
    spec: Option<PathBuf>,
    /// Override a spec key on the base side (KEY=VALUE). Repeatable.
    #[arg(long = "base", value_name = "KEY=VALUE")]
    base: Vec<Override>,
    /// Override a spec key on the head side (KEY=VALUE). Repeatable.
    #[arg(long = "head", value_name = "KEY=VALUE")]
    head: Vec<Override>,
    /// A workload shipped with clibench run on both sides (see `clibench run --scenario`):
    /// its overrides come before --base's and --head's.
    #[arg(long, value_name = "NAME")]
    scenario: Option<crate::spec::Scenario>,
    /// Trials per side of the measure, runtime and ui phases, or `auto`: interleaved pairs
    /// until every watched metric is decided or could detect its target change, at planned
    /// looks that keep the false-alarm rate (see docs/verdicts.md). [default: 5, or auto
    /// with --budget]
    #[arg(long, value_parser = parse_trials, value_name = "N|auto")]
    trials: Option<Trials>,
    /// With --trials auto: at most this many pairs [default: 20, or 60 with --budget].
    #[arg(long, value_name = "N")]
    max_trials: Option<u32>,
    /// Run pairs until this much time (`2m`, `90s`) has passed since the first timed pair
    /// started, looking at the comparison as --trials auto does (which it implies) and
    /// stopping early when every watched metric is decided.
    #[arg(long, value_parser = parse_budget, value_name = "DURATION")]
    budget: Option<std::time::Duration>,
    /// With --trials auto: the detectable change (fraction) that counts as decided for a
    /// watched metric without a verdict [default: the spec's `[compare] target_mde`, else
    /// twice the metric's threshold].
    #[arg(long, value_name = "FRACTION")]
    target_mde: Option<f64>,
    /// Installations per side (at most 101). Pair k runs in install k mod N on both sides,
    /// so what one install has of its own (its user, home and files) varies from pair to
    /// pair instead of making one whole side faster.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = super::trial_count)]
    installs: u32,
    /// Phases to run, comma-separated [default: every phase the spec describes].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    phases: Option<Vec<String>>,
    /// Output folder: ab.json, base/, head/, comparison.md, comparison.json.
    /// [default: clibench-out/ab-<target>-<unix time>]
    #[arg(long, value_name = "DIR")]
    // The angle brackets are for --help, which shows this text as written.
    #[allow(rustdoc::invalid_html_tags)]
    out: Option<PathBuf>,
    /// Exit with code 1 when any metric regressed.
    #[arg(long)]
    fail_on_regression: bool,
    /// Also add both sides' results to this history store (an SQLite file, created when
    /// missing; see `clibench history`).
    #[arg(long, value_name = "PATH")]
    history: Option<PathBuf>,
    /// Draw each pair's order (base first or head first) from this seed, recorded in
    /// ab.json, instead of alternating.
    #[arg(long, value_name = "N", conflicts_with = "sequential")]
    seed: Option<u64>,
    /// Run all of base's trials, then all of head's (as two `clibench run`s would); for
    /// measuring what interleaving buys. The same as `--schedule sequential`.
    #[arg(long, conflicts_with = "schedule")]
    sequential: bool,
    /// How the sides' trials meet: `abba` (pairs of whole trials, alternating), `tight`
    /// (past the first --memory-trials measure trials, one process runs base's and head's
    /// starts back to back, each closed at ready, with no settle or memory walk between
    /// them), `duet` (as tight, but base's and head's programs start at the same moment)
    /// or `sequential` [default: tight].
    #[arg(long, value_parser = parse_schedule, value_name = "tight|abba|duet|sequential")]
    schedule: Option<Schedule>,
    /// With --schedule tight (the default) or duet: how many measure trials (the first
    /// ones) still settle and read memory [default: 3].
    #[arg(long, value_name = "N")]
    memory_trials: Option<u32>,
    /// Practical threshold as a fraction (changes within ±FRACTION are not counted), or one
    /// metric's as METRIC=FRACTION (a slope's as an amount in its unit), as `clibench
    /// compare`. Repeatable. [default: by kind]
    #[arg(long, value_parser = super::compare::parse_noise, value_name = "[METRIC=]FRACTION")]
    noise: Vec<Noise>,
    /// Run only shard K of N of the trials (see `clibench run --shard`).
    #[arg(long, value_name = "K/N")]
    shard: Option<Shard>,
    /// Keep the trial users and homes after the run.
    #[arg(long)]
    keep_users: bool,
}

/// `--trials`: a count, or `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trials {
    Fixed(u32),
    Auto,
}

fn parse_trials(text: &str) -> Result<Trials, String> {
    if text == "auto" {
        return Ok(Trials::Auto);
    }
    text.parse()
        .map(Trials::Fixed)
        .map_err(|_| format!("`{text}` is neither a number of trials nor `auto`"))
}

fn parse_schedule(text: &str) -> Result<Schedule, String> {
    text.parse()
}

fn parse_budget(text: &str) -> Result<std::time::Duration, String> {
    bench_core::units::parse_duration(text).map_err(|error| error.to_string())
}

/// The watched metrics and target of `--trials auto` from the spec (`[compare] watch`,
/// `target_mde`), when it names them.
fn spec_watch(spec: &SpecSource) -> anyhow::Result<(Vec<bench_core::Metric>, Option<f64>)> {
    let SpecSource::File(path) = spec else {
        return Ok((DEFAULT_WATCHED.to_vec(), None));
    };
    let spec = crate::spec::load(path).map_err(|error| input_error(error.to_string()))?;
    let watched = match &spec.compare.watch {
        // The spec check refused unknown metric names.
        Some(names) => names.iter().filter_map(|name| name.parse().ok()).collect(),
        None => DEFAULT_WATCHED.to_vec(),
    };
    Ok((watched, spec.compare.target_mde))
}

/// Adds the spec's `[compare] noise` floors for the metrics `--noise` did not set.
fn with_spec_floors(
    options: CompareOptions,
    spec: Option<&PathBuf>,
) -> anyhow::Result<CompareOptions> {
    let Some(path) = spec else {
        return Ok(options);
    };
    let spec = crate::spec::load(path).map_err(|error| input_error(error.to_string()))?;
    Ok(bench_core::thresholds::fill_in(
        options,
        &spec.compare.floors(),
    ))
}

/// Runs `clibench ab`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let options = super::compare::options(&args.noise)?;
    let fail_on_regression = args.fail_on_regression;
    let history = args.history.clone();
    let settings = settings(args, &options)?;
    let ab = Ab::new(settings)?;
    let out = ab.out().to_path_buf();
    let Some(outcome) = drive("ab", |execution| ab.runner(execution), &out)? else {
        return Ok(ExitCode::from(130));
    };
    let mut options = with_spec_floors(options, outcome.specs.first())?;
    let auto = ab.auto.as_ref().map(|gate| gate.outcome());
    let note = auto.as_ref().map(|auto| {
        // The final comparison spends the share of alpha of the look it stopped at.
        options.alpha = auto.alpha;
        let pairs: Vec<String> = auto
            .pairs
            .iter()
            .map(|(phase, pairs)| format!("{phase} {pairs}"))
            .collect();
        format!(
            "--trials auto: stopped ({}) after {} pairs in {} of timed pairs; looks at {:?}; \
             this comparison's family false-alarm rate is {:.4} (its share of 5%); the \
             \"could detect\" column says what each metric could detect.",
            auto.reason,
            pairs.join(", "),
            bench_core::units::format_seconds(auto.timed.as_secs_f64()),
            auto.looks,
            auto.alpha
        )
    });
    if let Some(note) = &note {
        say!("clibench ab: {note}");
    }
    let found = compare_sides(
        &out,
        (ab.settings.order, ab.settings.tight),
        &options,
        note.as_deref(),
    )?;
    if let Some(store) = &history {
        let sides = crate::pipeline::orchestration::ab::SIDES
            .map(|side| (side, out.join(side).join("result.json")));
        super::history::add_after_ab(store, &out, &sides)?;
    }
    // The table's own first line names the two shas, which are the same when only
    // overrides differ: name what differs instead.
    let table =
        bench_core::export::text::comparison_fit(&found.comparison, crate::show::stderr_columns());
    let table = table
        .split_once('\n')
        .map_or(table.as_str(), |(_, rest)| rest);
    say!("{}", found.sides);
    say_part!("{table}");
    out!("{}", found.markdown);
    say!(
        "clibench ab: {} in {}; wrote {}, .json and .html",
        if outcome.failed.is_empty() {
            "done".to_owned()
        } else {
            format!("{} phase run(s) failed", outcome.failed.len())
        },
        bench_core::units::format_seconds(outcome.elapsed.as_secs_f64()),
        out.join("comparison.md").display(),
    );
    if fail_on_regression && found.comparison.has_regression() {
        say!(
            "error: head regressed: {}",
            bench_core::export::text::regressions(&found.comparison)
        );
        return Ok(ExitCode::from(FAILURE));
    }
    Ok(if outcome.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(FAILURE)
    })
}

fn settings(args: Args, options: &CompareOptions) -> anyhow::Result<AbSettings> {
    let phases = args.phases.as_deref().map(parse_phases).transpose()?;
    let spec = spec_source(args.spec.as_deref())?;
    // A budget alone means sampling until it is spent, which is what auto does.
    let trials = match (args.trials, args.budget) {
        (Some(trials), _) => trials,
        (None, Some(_)) => Trials::Auto,
        (None, None) => Trials::Fixed(5),
    };
    let max_trials = args
        .max_trials
        .unwrap_or(if args.budget.is_some() { 60 } else { 20 })
        .max(1);
    let (trials, auto) = match trials {
        Trials::Fixed(trials) => {
            if args.budget.is_some() || args.target_mde.is_some() || args.max_trials.is_some() {
                return Err(input_error(
                    "--budget, --max-trials and --target-mde go with --trials auto",
                ));
            }
            (trials, None)
        }
        Trials::Auto => {
            if args
                .target_mde
                .is_some_and(|target| !(target > 0.0 && target < 1.0))
            {
                return Err(input_error(
                    "--target-mde is a fraction in 0..1 (0.05 = ±5%)",
                ));
            }
            let (watched, spec_target) = spec_watch(&spec)?;
            let options = with_spec_floors(options.clone(), args.spec.as_ref())?;
            let auto = AutoTrials {
                plan: SequentialPlan::new(max_trials, options.alpha, Spending::Pocock),
                watched,
                target: args.target_mde.or(spec_target),
                budget: args.budget,
                options,
            };
            (max_trials, Some(auto))
        }
    };
    let out = args.out.clone().unwrap_or_else(|| spec.default_ab_out());
    let schedule = match (args.schedule, args.sequential) {
        (_, true) => Schedule::Sequential,
        (Some(schedule), false) => schedule,
        // Measured best or as good on this VM quiet and loaded (docs/verdicts.md).
        (None, false) => Schedule::Tight,
    };
    if schedule == Schedule::Sequential && args.seed.is_some() {
        return Err(input_error(
            "--seed orders pairs, which a sequential schedule has none of",
        ));
    }
    let order = schedule.order(args.seed);
    let paired = matches!(schedule, Schedule::Tight | Schedule::Duet);
    if !paired && args.memory_trials.is_some() {
        return Err(input_error(
            "--memory-trials goes with --schedule tight or duet",
        ));
    }
    let tight = paired.then_some(args.memory_trials.unwrap_or(TIGHT_MEMORY_TRIALS));
    Ok(AbSettings {
        spec,
        out,
        base: super::run::with_scenario(args.scenario, args.base),
        head: super::run::with_scenario(args.scenario, args.head),
        plan: PlanSettings {
            trials,
            installs: args.installs,
            phases,
            keep_users: args.keep_users,
            shard: args.shard,
            ..PlanSettings::default()
        },
        order,
        tight,
        duet: schedule == Schedule::Duet,
        auto,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::orchestration::schedule::Order;
    use bench_core::Metric;

    fn args(extra: &[&str]) -> Args {
        crate::commands::test_args::parse("ab", extra)
    }

    fn settings_of(args: Args) -> anyhow::Result<AbSettings> {
        settings(args, &CompareOptions::default())
    }

    #[test]
    fn trials_auto_plans_looks_up_to_the_maximum() {
        let fixed = settings_of(args(&["--trials", "7"])).unwrap();
        assert_eq!((fixed.plan.trials, fixed.auto.is_none()), (7, true));
        let auto = settings_of(args(&[
            "--trials",
            "auto",
            "--max-trials",
            "12",
            "--budget",
            "5m",
        ]))
        .unwrap();
        assert_eq!(auto.plan.trials, 12);
        let plan = auto.auto.unwrap();
        assert_eq!(plan.plan.looks(), [6, 8, 10, 12]);
        assert_eq!(plan.watched, DEFAULT_WATCHED);
        assert_eq!(plan.budget, Some(std::time::Duration::from_secs(300)));
        assert!(settings_of(args(&["--trials", "5", "--budget", "5m"])).is_err());
        assert!(settings_of(args(&["--max-trials", "9"])).is_err());
        assert!(settings_of(args(&["--trials", "auto", "--target-mde", "2"])).is_err());
        assert!(parse_trials("many").unwrap_err().contains("nor `auto`"));
    }

    #[test]
    fn a_budget_alone_samples_pairs_until_it_is_spent() {
        let settings = settings_of(args(&["--budget", "2m"])).unwrap();
        let auto = settings.auto.unwrap();
        assert_eq!(auto.budget, Some(std::time::Duration::from_secs(120)));
        assert_eq!(settings.plan.trials, 60);
        assert_eq!(auto.plan.looks().last(), Some(&60));
        let capped = settings_of(args(&["--budget", "2m", "--max-trials", "30"])).unwrap();
        assert_eq!(capped.plan.trials, 30);
    }

    #[test]
    fn the_schedule_sets_the_order_and_tight_reads_memory_in_the_first_trials() {
        let tight = settings_of(args(&["--schedule", "tight"])).unwrap();
        assert_eq!((tight.order, tight.tight), (Order::Abba, Some(3)));
        let tight = settings_of(args(&["--schedule", "tight", "--memory-trials", "1"])).unwrap();
        assert_eq!(tight.tight, Some(1));
        let abba = settings_of(args(&["--schedule", "abba"])).unwrap();
        assert_eq!((abba.order, abba.tight), (Order::Abba, None));
        let sequential = settings_of(args(&["--schedule", "sequential"])).unwrap();
        assert_eq!(sequential.order, Order::Sequential);
        assert!(settings_of(args(&["--schedule", "sequential", "--seed", "1"])).is_err());
        assert!(settings_of(args(&["--schedule", "abba", "--memory-trials", "1"])).is_err());
        // Tight is the default.
        let default = settings_of(args(&[])).unwrap();
        assert_eq!((default.order, default.tight), (Order::Abba, Some(3)));
        assert_eq!(
            settings_of(args(&["--memory-trials", "1"])).unwrap().tight,
            Some(1)
        );
    }

    #[test]
    fn the_order_is_abba_unless_seeded_or_sequential() {
        assert_eq!(settings_of(args(&[])).unwrap().order, Order::Abba);
        assert_eq!(
            settings_of(args(&["--seed", "9"])).unwrap().order,
            Order::RandomPairs { seed: 9 }
        );
        assert_eq!(
            settings_of(args(&["--sequential"])).unwrap().order,
            Order::Sequential
        );
    }

    #[test]
    fn base_and_head_overrides_are_kept_apart() {
        let settings = settings_of(args(&[
            "--base",
            "version=1",
            "--head",
            "version=2",
            "--head",
            "measure.env.A=1",
        ]))
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
        let flags = super::super::compare::options(&args(&["--noise", "warm=0.3"]).noise).unwrap();
        let options = with_spec_floors(flags, Some(&spec)).unwrap();
        assert_eq!(options.floor(Metric::Cold), 0.05);
        assert_eq!(
            options.floor(Metric::Warm),
            0.3,
            "the flag wins over the spec"
        );
        assert_eq!(options.floor(Metric::Rss), 0.02);
    }

    #[test]
    fn noise_takes_a_global_floor_and_per_metric_floors() {
        let args = args(&["--noise", "0.1", "--noise", "cold=0.05"]);
        let options = super::super::compare::options(&args.noise).unwrap();
        assert_eq!(options.noise, Some(0.1));
        assert_eq!(options.floor(Metric::Cold), 0.05);
    }

    #[test]
    fn the_default_output_folder_says_ab() {
        let out = settings_of(args(&[])).unwrap().out;
        let name = out.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("ab-demo-"), "{name}");
    }
}
