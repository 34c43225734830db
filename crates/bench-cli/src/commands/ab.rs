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
use crate::pipeline::orchestration::ab::{Ab, AbSettings, compare_sides};
use crate::pipeline::orchestration::schedule::Order;
use crate::pipeline::{PlanSettings, Shard};
use crate::spec::Override;
use bench_core::compare::CompareOptions;
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
    /// Trials per side of the measure, runtime and ui phases.
    #[arg(long, default_value_t = 5, value_name = "N")]
    trials: u32,
    /// Installations per side.
    #[arg(long, default_value_t = 1, value_name = "N")]
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
    /// Draw each pair's order (base first or head first) from this seed, recorded in
    /// ab.json, instead of alternating.
    #[arg(long, value_name = "N", conflicts_with = "sequential")]
    seed: Option<u64>,
    /// Run all of base's trials, then all of head's (as two `clibench run`s would); for
    /// measuring what interleaving buys.
    #[arg(long)]
    sequential: bool,
    /// Noise floor as a fraction (changes within ±FRACTION are not counted), or one
    /// metric's floor as METRIC=FRACTION, as `clibench compare`. Repeatable. [default: 0.2]
    #[arg(long, value_parser = super::compare::parse_noise, value_name = "[METRIC=]FRACTION")]
    noise: Vec<Noise>,
    /// Run only shard K of N of the trials (see `clibench run --shard`).
    #[arg(long, value_name = "K/N")]
    shard: Option<Shard>,
    /// Keep the trial users and homes after the run.
    #[arg(long)]
    keep_users: bool,
}

/// Adds the spec's `[compare] noise` floors for the metrics `--noise` did not set.
fn with_spec_floors(
    mut options: CompareOptions,
    spec: Option<&PathBuf>,
) -> anyhow::Result<CompareOptions> {
    let Some(path) = spec else {
        return Ok(options);
    };
    let spec = crate::spec::load(path).map_err(|error| input_error(error.to_string()))?;
    for (name, &fraction) in &spec.compare.noise {
        // The spec check refused unknown metric names.
        if let Ok(metric) = name.parse::<bench_core::Metric>()
            && !options.floors.contains_key(&metric)
        {
            options = options.with_floor(metric, fraction);
        }
    }
    Ok(options)
}

/// Runs `clibench ab`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let options = super::compare::options(&args.noise)?;
    let fail_on_regression = args.fail_on_regression;
    let settings = settings(args)?;
    let ab = Ab::new(settings)?;
    let out = ab.out().to_path_buf();
    let Some(outcome) = drive("ab", |execution| ab.runner(execution), &out)? else {
        return Ok(ExitCode::from(130));
    };
    let options = with_spec_floors(options, outcome.specs.first())?;
    let found = compare_sides(&out, ab.settings.order, &options)?;
    // The table's own first line names the two shas, which are the same when only
    // overrides differ: name what differs instead.
    let table = bench_core::export::text::comparison(&found.comparison);
    let table = table
        .split_once('\n')
        .map_or(table.as_str(), |(_, rest)| rest);
    eprintln!("{}", found.sides);
    eprint!("{table}");
    print!("{}", found.markdown);
    eprintln!(
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
        let names: Vec<String> = found
            .comparison
            .regressions()
            .map(|row| format!("{} ({:+.1}%)", row.metric, row.change() * 100.0))
            .collect();
        eprintln!("error: head regressed: {}", names.join(", "));
        return Ok(ExitCode::from(FAILURE));
    }
    Ok(if outcome.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(FAILURE)
    })
}

fn settings(args: Args) -> anyhow::Result<AbSettings> {
    let phases = args.phases.as_deref().map(parse_phases).transpose()?;
    let spec = spec_source(args.spec.as_deref())?;
    let out = args.out.clone().unwrap_or_else(|| spec.default_ab_out());
    let order = match (args.seed, args.sequential) {
        (_, true) => Order::Sequential,
        (Some(seed), false) => Order::RandomPairs { seed },
        (None, false) => Order::Abba,
    };
    Ok(AbSettings {
        spec,
        out,
        base: args.base,
        head: args.head,
        plan: PlanSettings {
            trials: args.trials,
            installs: args.installs,
            phases,
            keep_users: args.keep_users,
            shard: args.shard,
            ..PlanSettings::default()
        },
        order,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::Metric;

    fn args(extra: &[&str]) -> Args {
        crate::commands::test_args::parse("ab", extra)
    }

    #[test]
    fn the_order_is_abba_unless_seeded_or_sequential() {
        assert_eq!(settings(args(&[])).unwrap().order, Order::Abba);
        assert_eq!(
            settings(args(&["--seed", "9"])).unwrap().order,
            Order::RandomPairs { seed: 9 }
        );
        assert_eq!(
            settings(args(&["--sequential"])).unwrap().order,
            Order::Sequential
        );
    }

    #[test]
    fn base_and_head_overrides_are_kept_apart() {
        let settings = settings(args(&[
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
        assert_eq!(options.floor(Metric::Rss), options.noise);
    }

    #[test]
    fn noise_takes_a_global_floor_and_per_metric_floors() {
        let args = args(&["--noise", "0.1", "--noise", "cold=0.05"]);
        let options = super::super::compare::options(&args.noise).unwrap();
        assert_eq!(options.noise, 0.1);
        assert_eq!(options.floor(Metric::Cold), 0.05);
    }

    #[test]
    fn the_default_output_folder_says_ab() {
        let out = settings(args(&[])).unwrap().out;
        let name = out.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("ab-demo-"), "{name}");
    }
}
