//! `clibench bisect`: the first commit between a good and a bad one that made a metric
//! move, each step an `ab` comparison of two builds (the search is the history
//! library's; this file lists the commits, runs the comparisons and prints).

use super::drive::{drive, spec_source};
use crate::exit::{FAILURE, input_error};
use crate::pipeline::orchestration::ab::{Ab, AbSettings, SIDES, compare_sides};
use crate::pipeline::orchestration::schedule::Order;
use crate::pipeline::{PlanSettings, SpecSource};
use anyhow::Context;
use bench_cli::history::bisect::{self, Bisection, Comparer, Measured, Outcome};
use bench_cli::history::builds::{self, Build};
use bench_cli::history::paired::{Measure, Paired, PairedError};
use bench_cli::history::{BuildKey, Record, Testbed, ingest};
use bench_core::compare::CompareOptions;
use bench_core::units::format_seconds;
use bench_core::{Metric, Phase};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Flags of `clibench bisect`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  clibench bisect spec.toml --good v1.2.0 --bad main --metric cold
  clibench bisect spec.toml --good HEAD~15 --bad HEAD --metric rss --budget 30m
  clibench bisect pi.toml --good 0.63.1 --bad 0.73.1 --metric warm

Each step compares two commits of the spec's [source] repository (a local
clone), or two published versions of its package (pre-releases only when an
end is one), from what the history store holds of them on this machine, and
measures with ab's interleaved pairs only what it lacks; see docs/history.md.")]
pub struct Args {
    /// The target's spec (TOML): with a `[source]` whose repository is a local clone
    /// (bisect its commits), or with a `package` and `version` and no `[source]` (bisect
    /// the package's published versions).
    spec: PathBuf,
    /// A commit (or any git ref), or a published version, where the metric was as it
    /// should be.
    #[arg(long, value_name = "REF")]
    good: String,
    /// A later commit where it was not (bisect follows its first parents back to
    /// --good), or a later version (the versions between come from `npm view`).
    #[arg(long, value_name = "REF")]
    bad: String,
    /// The metric to follow (`cold`, `warm`, `rss`, ...).
    #[arg(long, value_name = "M")]
    metric: String,
    /// Pairs of a first comparison (each side's trials).
    #[arg(long, default_value_t = 5, value_name = "N", value_parser = super::trial_count)]
    trials: u32,
    /// The most pairs an undecided comparison grows to, doubling.
    #[arg(long, default_value_t = 20, value_name = "N", value_parser = super::trial_count)]
    max_trials: u32,
    /// Start no comparison after this much time (`30m`, `2h`).
    #[arg(long, value_parser = parse_budget, value_name = "DURATION")]
    budget: Option<Duration>,
    /// The git repository to list commits in [default: the spec's source.repository].
    #[arg(long, value_name = "PATH")]
    repository: Option<PathBuf>,
    /// Output folder: one `ab` folder per comparison [default: clibench-bisect-<unix time>].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The history store: builds it already holds measurements of on this testbed are
    /// not measured again, and every measurement is added to it [default: the history's
    /// default store, see `clibench history --help`].
    #[arg(long, value_name = "PATH")]
    history: Option<PathBuf>,
}

fn parse_budget(text: &str) -> Result<Duration, String> {
    bench_core::units::parse_duration(text).map_err(|error| error.to_string())
}

/// Runs `clibench bisect`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let metric: Metric = args
        .metric
        .parse()
        .map_err(|_| input_error(format!("unknown metric '{}'", args.metric)))?;
    let spec = spec_source(Some(&args.spec))?;
    let parsed = crate::spec::load(&args.spec).map_err(|error| input_error(error.to_string()))?;
    let (builds, noun) = builds::builds(
        &args.spec,
        &parsed,
        args.repository.as_deref(),
        (&args.good, &args.bad),
    )
    .map_err(|error| {
        if error.is_input() {
            input_error(bench_core::error_chain(&error))
        } else {
            anyhow::Error::new(error)
        }
    })?;
    let out = args.out.clone().unwrap_or_else(|| {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_secs());
        PathBuf::from(format!("clibench-bisect-{now}"))
    });
    say!(
        "clibench bisect: {} {noun}s from {} to {}; following {metric}",
        builds.len(),
        builds[0].label,
        builds[builds.len() - 1].label,
    );
    search(
        &args,
        &parsed.name,
        Measurer {
            spec,
            out,
            builds,
            phases: builds::phases_for(metric),
            step: 0,
        },
        metric,
        noun,
    )
}

/// Searches the measurer's builds, each comparison read from the history store and
/// measured only where the store lacks it; prints the outcome.
fn search(
    args: &Args,
    target: &str,
    measurer: Measurer,
    metric: Metric,
    noun: &str,
) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let mut store = bench_cli::history::location::open_to_write(args.history.as_deref())
        .map(super::history::told_upgrade)
        .map_err(super::drive::open_error)?;
    let facts = bench_proc::HostFacts::read().context("reading the host's facts (the testbed)")?;
    let testbed = Testbed::of_host(&facts).fingerprint();
    let keys = measurer
        .builds
        .iter()
        .map(|build| BuildKey {
            target: target.to_owned(),
            revision: build.revision.clone(),
            testbed: testbed.clone(),
        })
        .collect();
    say!(
        "clibench bisect: measurements of these builds on this testbed ({testbed}) in {} are used, and what is measured is added to it",
        store.path().display()
    );
    let builds = measurer.builds.clone();
    let mut told = Told {
        paired: Paired::new(&mut store, keys, metric, measurer),
        builds: &builds,
        metric,
        step: 0,
    };
    let settings = bisect::Settings {
        pairs: args.trials,
        max_pairs: args.max_trials.max(args.trials),
        budget: args.budget,
    };
    let found = match bisect::bisect(builds.len(), &settings, &mut told) {
        Ok(found) => found,
        Err(PairedError::Measure(Failed(error))) => {
            if error.downcast_ref::<Interrupted>().is_some() {
                return Ok(ExitCode::from(130));
            }
            return Err(error);
        }
        Err(error) => return Err(error.into()),
    };
    let cost = Cost {
        measured: told.paired.measured().len(),
        runs: told.paired.runs(),
        took: started.elapsed(),
    };
    Ok(tell(&found, &builds, (metric, noun), &cost))
}

/// Measures two builds of the range with an `ab` run of interleaved pairs, each run
/// in its own folder, and returns both sides' records.
struct Measurer {
    spec: SpecSource,
    out: PathBuf,
    builds: Vec<Build>,
    phases: Vec<Phase>,
    step: usize,
}

/// The search stops at a Ctrl-C: `None` from a comparison ends it quietly.
#[derive(Debug)]
struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("clibench bisect: interrupted")
    }
}

/// A measurement's failure, as an error type the history library can carry.
#[derive(Debug)]
struct Failed(anyhow::Error);

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Failed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

impl Measurer {
    fn run_ab(&mut self, base: usize, head: usize, pairs: u32) -> anyhow::Result<Vec<Record>> {
        self.step += 1;
        let (base_build, head_build) = (&self.builds[base], &self.builds[head]);
        let out = self.out.join(format!(
            "{:02}-{}-{}-{pairs}",
            self.step, base_build.label, head_build.label
        ));
        say!(
            "clibench bisect: measuring {} (#{base}) and {} (#{head}), {pairs} pairs, in {}",
            base_build.label,
            head_build.label,
            out.display()
        );
        let ab = Ab::new(AbSettings {
            spec: self.spec.clone(),
            out: out.clone(),
            base: vec![base_build.set.parse::<crate::spec::Override>()?],
            head: vec![head_build.set.parse::<crate::spec::Override>()?],
            plan: PlanSettings {
                trials: pairs,
                phases: Some(self.phases.clone()),
                ..PlanSettings::default()
            },
            order: Order::Abba,
            tight: None,
            duet: false,
            auto: None,
        })?;
        if drive("bisect", |execution| ab.runner(execution), &out)?.is_none() {
            return Err(anyhow::Error::msg("interrupted").context(Interrupted));
        }
        // ab's own report of the pair, for whoever looks in the folder.
        compare_sides(&out, (Order::Abba, None), &CompareOptions::default(), None)?;
        SIDES
            .iter()
            .map(|side| {
                ingest::record_of(&out.join(side).join("result.json"), None, "main")
                    .map_err(anyhow::Error::new)
            })
            .collect()
    }
}

impl Measure for Measurer {
    type Error = Failed;

    fn measure(&mut self, base: usize, head: usize, pairs: u32) -> Result<Vec<Record>, Failed> {
        self.run_ab(base, head, pairs).map_err(Failed)
    }
}

/// Says each comparison as the search makes it.
struct Told<'a, 'b> {
    paired: Paired<'a, Measurer>,
    builds: &'b [Build],
    metric: Metric,
    step: usize,
}

impl Comparer for Told<'_, '_> {
    type Error = PairedError<Failed>;

    fn compare(&mut self, base: usize, head: usize, pairs: u32) -> Result<Measured, Self::Error> {
        self.step += 1;
        say!(
            "clibench bisect: step {}: {} (#{base}) vs {} (#{head}), at least {pairs} values a side",
            self.step,
            self.builds[base].label,
            self.builds[head].label,
        );
        let measured = self.paired.compare(base, head, pairs)?;
        say!(
            "clibench bisect: step {}: {} {} from {} value(s) a side",
            self.step,
            self.metric,
            percent(&measured),
            measured.pairs
        );
        Ok(measured)
    }
}

fn percent(m: &Measured) -> String {
    format!(
        "{:+.1}% [{:+.1}%, {:+.1}%]",
        (m.ratio - 1.0) * 100.0,
        (m.low - 1.0) * 100.0,
        (m.high - 1.0) * 100.0
    )
}

/// What a bisection cost.
struct Cost {
    /// Builds measured by this bisection (the others came from the history).
    measured: usize,
    /// `ab` runs made.
    runs: usize,
    took: Duration,
}

/// Prints how the bisection ended and turns it into an exit code: 0 when it named the
/// first bad build, 1 when it could not decide or found no change.
fn tell(
    found: &Bisection,
    builds: &[Build],
    (metric, noun): (Metric, &str),
    cost: &Cost,
) -> ExitCode {
    let mut compared: Vec<usize> = found
        .comparisons
        .iter()
        .flat_map(|&(base, head, _)| [base, head])
        .collect();
    compared.sort_unstable();
    compared.dedup();
    let cost = format!(
        "{} comparison(s) of {} build(s), {} build(s) measured in {} run(s), the rest from the history; {}",
        found.comparisons.len(),
        compared.len(),
        cost.measured,
        cost.runs,
        format_seconds(cost.took.as_secs_f64())
    );
    let ends = || (&builds[0].label, &builds[builds.len() - 1].label);
    match &found.outcome {
        Outcome::FirstBad { index, measured } => {
            outln!(
                "first bad {noun}: {} (#{index}); {metric} {} against {} (#{}); {cost}",
                builds[*index].name,
                percent(measured),
                builds[index - 1].name,
                index - 1
            );
            ExitCode::SUCCESS
        }
        Outcome::NoChange { measured } => {
            let (good, bad) = ends();
            outln!(
                "no change: {metric} {} from {good} to {bad} with {} value(s) a side; {cost}",
                percent(measured),
                measured.pairs
            );
            ExitCode::from(FAILURE)
        }
        Outcome::Undecided { good, bad, at } => {
            let place = at.map_or_else(
                || "the budget ran out".to_owned(),
                |at| format!("{} (#{at}) stayed undecided", builds[at].label),
            );
            outln!(
                "could not decide: the change is after {} (#{good}) and at or before {} (#{bad}); {place}; {cost}",
                builds[*good].label,
                builds[*bad].label,
            );
            ExitCode::from(FAILURE)
        }
    }
}
