//! `clibench bisect`: the first commit between a good and a bad one that made a metric
//! move, each step an `ab` comparison of two builds. The search, the comparisons within
//! runs and every line it tells are the history library's; this file parses the flags,
//! runs each step's `ab` (progress, Ctrl-C) and prints.

use super::drive::{drive, spec_source};
use crate::exit::{FAILURE, input_chain_if, input_error};
use crate::pipeline::SpecSource;
use crate::pipeline::orchestration::ab::{Ab, compare_sides};
use crate::text::bisect::{self as text, Cost};
use anyhow::Context;
use bench_cli::history::bisect::ab as bisect_ab;
use bench_cli::history::bisect::builds::{self, Build};
use bench_cli::history::bisect::paired::{Measure, Paired, PairedError};
use bench_cli::history::bisect::search::{self as bisect, Event, Narrated};
use bench_cli::history::{BuildKey, Record, Testbed};
use bench_core::compare::CompareOptions;
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
    #[arg(long, value_name = "M", value_parser = crate::settings::metric)]
    metric: Metric,
    /// Pairs of a first comparison (each side's trials).
    #[arg(long, default_value_t = 5, value_name = "N", value_parser = super::trial_count)]
    trials: u32,
    /// The most pairs an undecided comparison grows to, doubling (up to 1000: more than
    /// 101 are measured in several runs, each paired within itself).
    #[arg(long, default_value_t = 20, value_name = "N", value_parser = crate::settings::pair_count)]
    max_trials: u32,
    /// Start no comparison after this much time (`30m`, `2h`).
    #[arg(long, value_parser = crate::settings::duration, value_name = "DURATION")]
    budget: Option<Duration>,
    /// The git repository to list commits in [default: the spec's source.repository].
    #[arg(long, value_name = "PATH")]
    repository: Option<PathBuf>,
    /// Output folder: one `ab` folder per comparison [default: clibench-bisect-<unix time>].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Search for the first build that made the metric better (--bad is then the
    /// better end), instead of the first that made it worse. Without it, ends where the
    /// bad one is better are refused: nothing regressed.
    #[arg(long)]
    improvement: bool,
    /// The history store: builds it already holds measurements of on this testbed are
    /// not measured again, and every measurement is added to it [default: the history's
    /// default store, see `clibench history --help`].
    #[arg(long, value_name = "PATH|URL", value_parser = crate::settings::store)]
    history: Option<PathBuf>,
}

/// Runs `clibench bisect`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let metric = args.metric;
    let spec = spec_source(Some(&args.spec))?;
    let parsed = crate::spec::load(&args.spec).map_err(|error| input_error(error.to_string()))?;
    let (builds, noun) = builds::builds(
        &args.spec,
        &parsed,
        args.repository.as_deref(),
        (&args.good, &args.bad),
    )
    .map_err(|error| input_chain_if(error.is_input(), error))?;
    let out = args.out.clone().unwrap_or_else(text::default_out);
    say!("{}", text::range_line(&builds, noun, metric));
    search(
        &args,
        &parsed.name,
        Measurer {
            spec,
            out,
            builds,
            phases: builds::phases_for(metric),
            metric,
            step: 0,
        },
        (metric, noun),
    )
}

/// Searches the measurer's builds, each comparison read from the history store within
/// runs and measured only where the store lacks it; prints the outcome.
fn search(
    args: &Args,
    target: &str,
    measurer: Measurer,
    (metric, noun): (Metric, &str),
) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let mut store = super::drive::open_store(args.history.as_deref(), true)?;
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
    say!("{}", text::store_line(&testbed, store.path()));
    let builds = measurer.builds.clone();
    let tell = |event: Event| say!("{}", text::event_line(event, &builds, metric));
    let mut comparer = Narrated::new(Paired::new(&mut store, keys, metric, measurer), tell);
    // Worse is higher for a time or a size, lower for a rate that higher is better for.
    let worse_is_higher = metric.direction() == bench_core::Direction::LowerIsBetter;
    let sought = if worse_is_higher != args.improvement {
        bisect::Sought::Higher
    } else {
        bisect::Sought::Lower
    };
    let settings = bisect::Settings {
        sought,
        pairs: args.trials,
        max_pairs: args.max_trials.max(args.trials),
        budget: args.budget,
    };
    let found = match bisect::bisect(builds.len(), &settings, &mut comparer) {
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
        measured: comparer.inner.measured().len(),
        runs: comparer.inner.runs(),
        took: started.elapsed(),
    };
    outln!(
        "{}",
        text::outcome_line(&found, &builds, (metric, noun, args.improvement), &cost)
    );
    Ok(if text::named_first_bad(&found) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(FAILURE)
    })
}

/// Measures two builds of the range with an `ab` run of interleaved pairs, each run
/// in its own folder, and returns both sides' records.
struct Measurer {
    spec: SpecSource,
    out: PathBuf,
    builds: Vec<Build>,
    phases: Vec<Phase>,
    metric: Metric,
    step: usize,
}

/// The search stops at a Ctrl-C: `None` from a comparison ends it quietly.
#[derive(Debug, thiserror::Error)]
#[error("clibench bisect: interrupted")]
struct Interrupted;

/// A measurement's failure, as an error type the history library can carry (the search
/// hands it back whole: its chain is the anyhow error's).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Failed(anyhow::Error);

impl Measurer {
    fn run_ab(&mut self, base: usize, head: usize, pairs: u32) -> anyhow::Result<Vec<Record>> {
        self.step += 1;
        let sides = (base, head);
        let out = text::step_folder(&self.out, self.step, &self.builds, sides, pairs);
        let settings = bisect_ab::settings(
            &self.spec,
            &out,
            (&self.builds[base], &self.builds[head]),
            (pairs, self.metric),
            &self.phases,
        )?;
        say!(
            "{}",
            text::measuring_line(&self.builds, sides, (pairs, settings.duet), &out)
        );
        let schedule = (settings.order, settings.tight);
        let ab = Ab::new(settings)?;
        if drive("bisect", |execution| ab.runner(execution), &out)?.is_none() {
            return Err(anyhow::Error::msg("interrupted").context(Interrupted));
        }
        // ab's own report of the pair, for whoever looks in the folder.
        compare_sides(&out, schedule, &CompareOptions::default(), None)?;
        Ok(bisect_ab::records(&out)?)
    }
}

impl Measure for Measurer {
    type Error = Failed;

    fn measure(&mut self, base: usize, head: usize, pairs: u32) -> Result<Vec<Record>, Failed> {
        self.run_ab(base, head, pairs).map_err(Failed)
    }
}
