//! `clibench ab`: one spec, base and head overrides, their trials interleaved on this
//! machine, then the comparison: the answer to "did this change make the agent slower or
//! fatter?" in one command.
//!
//! Exit codes: 0 when the comparison was made; 1 when a metric regressed and
//! `--fail-on-regression` was given, or a step failed; 2 for bad input; 130 interrupted.

use super::drive::drive;
use crate::exit::{FAILURE, settings_error};
use crate::pipeline::Shard;
use crate::pipeline::orchestration::ab::{Ab, compare_sides};
use crate::pipeline::orchestration::auto_trials::AutoOutcome;
use crate::pipeline::orchestration::schedule::Schedule;
use crate::pipeline::out::history_add;
use crate::settings::{
    AbPlan, AbRequest, Noise, ThresholdFlags, Trials, ab_settings, compare_options,
};
use crate::spec::Override;
use crate::text::summary;
use std::collections::BTreeMap;
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
each side's staircase. With no --trials, pairs run until the watched metrics
are decided or 60s of pairs have run (--budget to change); --trials N runs N
pairs.")]
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
    /// Timed pairs of the measure, runtime, ui and session phases (a duet's or tight
    /// schedule's --memory-trials run alone before them, in addition), or `auto`:
    /// interleaved pairs until every watched metric is decided or could detect its target
    /// change, at planned looks that keep the false-alarm rate (see docs/verdicts.md).
    /// [default: auto, within --budget or 60s of pairs]
    #[arg(long, value_name = "N|auto")]
    trials: Option<Trials>,
    /// With --trials auto: at most this many pairs [default: 90 within a budget, else 20].
    #[arg(long, value_name = "N")]
    max_trials: Option<u32>,
    /// Run pairs until this much time (`2m`, `90s`) has passed since the first timed pair
    /// started, looking at the comparison as --trials auto does (which it implies) and
    /// stopping early when every watched metric is decided; at least 10s.
    #[arg(long, value_parser = crate::settings::budget, value_name = "DURATION")]
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
    #[arg(long, value_name = "PATH|URL", value_parser = crate::settings::store)]
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
    /// them), `duet` (as tight, but base's and head's programs start at the same moment,
    /// both confined to one CPU, and cold, warm and their CPU compare those pairs alone)
    /// or `sequential` [default: duet].
    #[arg(long, value_parser = |text: &str| text.parse::<Schedule>(), value_name = "tight|abba|duet|sequential")]
    schedule: Option<Schedule>,
    /// With --schedule duet (the default) or tight: how many measure trials (the first
    /// ones) still settle and read memory [default: 3].
    #[arg(long, value_name = "N")]
    memory_trials: Option<u32>,
    /// Practical threshold as a fraction (changes within ±FRACTION are not counted), or one
    /// metric's as METRIC=FRACTION (a slope's as an amount in its unit), as `clibench
    /// compare`. Repeatable. [default: by kind]
    #[arg(long, value_name = "[METRIC=]FRACTION")]
    noise: Vec<Noise>,
    /// Run only shard K of N of the trials (see `clibench run --shard`).
    #[arg(long, value_name = "K/N")]
    shard: Option<Shard>,
    /// Keep the trial users and homes after the run.
    #[arg(long)]
    keep_users: bool,
}

impl From<Args> for AbRequest {
    fn from(args: Args) -> AbRequest {
        AbRequest {
            spec: args.spec,
            base: args.base,
            head: args.head,
            scenario: args.scenario,
            trials: args.trials,
            max_trials: args.max_trials,
            budget: args.budget,
            target_mde: args.target_mde,
            installs: args.installs,
            phases: args.phases,
            out: args.out,
            seed: args.seed,
            sequential: args.sequential,
            schedule: args.schedule,
            memory_trials: args.memory_trials,
            shard: args.shard,
            keep_users: args.keep_users,
        }
    }
}

/// Runs `clibench ab`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let flags = ThresholdFlags {
        noise: args.noise.clone(),
        drift: Vec::new(),
    };
    // The flags are checked before anything else is read.
    compare_options(&flags, &BTreeMap::new()).map_err(settings_error)?;
    let fail_on_regression = args.fail_on_regression;
    let history = args.history.clone();
    let AbPlan {
        settings,
        mut options,
    } = ab_settings(AbRequest::from(args), &flags).map_err(settings_error)?;
    if let Some(auto) = &settings.auto {
        say!("clibench ab: {}", auto.plan_line());
    }
    let ab = Ab::new(settings)?;
    let out = ab.out().to_path_buf();
    let Some(outcome) = drive("ab", |execution| ab.runner(execution), &out)? else {
        return Ok(ExitCode::from(130));
    };
    let auto = ab.auto.as_ref().map(|gate| gate.outcome());
    // The final comparison spends the share of alpha of the look it stopped at.
    if let Some(auto) = &auto {
        options.alpha = auto.alpha;
    }
    let note = auto.as_ref().map(AutoOutcome::note);
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
        super::drive::say_added(history_add::add_after_ab(store, &out, &sides))?;
    }
    say!("{}", found.sides);
    say_part!(
        "{}",
        summary::ab_table(&found.comparison, crate::show::stderr_columns())
    );
    out!("{}", found.markdown);
    say!("{}", summary::ab_closing(&outcome, &out));
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
