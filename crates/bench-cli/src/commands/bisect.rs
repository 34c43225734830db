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
use bench_cli::history::{Store, git, ingest};
use bench_core::compare::CompareOptions;
use bench_core::units::format_seconds;
use bench_core::{Metric, Phase};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Flags of `clibench bisect`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  clibench bisect spec.toml --good v1.2.0 --bad main --metric cold
  clibench bisect spec.toml --good HEAD~15 --bad HEAD --metric rss --budget 30m

Each step builds two commits of the spec's [source] repository (a local
clone) and compares them with ab's interleaved pairs; see docs/history.md.")]
pub struct Args {
    /// The target's spec (TOML), with a `[source]` whose repository is a local clone.
    spec: PathBuf,
    /// A commit (or any git ref) where the metric was as it should be.
    #[arg(long, value_name = "REF")]
    good: String,
    /// A later commit where it was not; bisect follows its first parents back to --good.
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
    /// Also add every measured side to this history store.
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
    let repository = match &args.repository {
        Some(path) => path.clone(),
        None => spec_repository(&args.spec)?,
    };
    let commits = git::first_parent_range(&repository, &args.good, &args.bad)
        .map_err(|error| input_error(bench_core::error_chain(&error)))?;
    let out = args.out.clone().unwrap_or_else(|| {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_secs());
        PathBuf::from(format!("clibench-bisect-{now}"))
    });
    say!(
        "clibench bisect: {} commits from {} to {} on the first-parent line; following {metric}",
        commits.len(),
        short(&commits[0]),
        short(&commits[commits.len() - 1]),
    );
    let started = Instant::now();
    let mut comparer = AbComparer {
        spec,
        out,
        commits: commits.clone(),
        phases: phases_for(metric),
        metric,
        history: args
            .history
            .as_deref()
            .map(|path| Store::open(path, false))
            .transpose()?,
        step: 0,
    };
    let settings = bisect::Settings {
        pairs: args.trials,
        max_pairs: args.max_trials.max(args.trials),
        budget: args.budget,
    };
    let found = match bisect::bisect(commits.len(), &settings, &mut comparer) {
        Ok(found) => found,
        Err(error) if error.downcast_ref::<Interrupted>().is_some() => {
            return Ok(ExitCode::from(130));
        }
        Err(error) => return Err(error),
    };
    Ok(tell(&found, &commits, metric, started.elapsed()))
}

/// The spec's `source.repository`, relative to the spec's folder when relative.
fn spec_repository(spec: &Path) -> anyhow::Result<PathBuf> {
    let parsed = crate::spec::load(spec).map_err(|error| input_error(error.to_string()))?;
    let source = parsed.source.ok_or_else(|| {
        input_error(format!(
            "{} has no [source]: bisect builds commits of a repository",
            spec.display()
        ))
    })?;
    let path = PathBuf::from(&source.repository);
    let path = if path.is_absolute() {
        path
    } else {
        spec.parent().unwrap_or(Path::new(".")).join(path)
    };
    if !path.is_dir() {
        return Err(input_error(format!(
            "source.repository {} is not a local folder: clone it and give --repository PATH",
            source.repository
        )));
    }
    Ok(path)
}

/// The phases a metric needs: prepare and install build and install it, then its own.
fn phases_for(metric: Metric) -> Vec<Phase> {
    let own = metric.phase();
    let mut phases = vec![Phase::Prepare];
    if own != Phase::Prepare {
        phases.push(Phase::Install);
    }
    if !phases.contains(&own) {
        phases.push(own);
    }
    phases
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

/// Each comparison is an `ab` run of two commits in its own folder.
struct AbComparer {
    spec: SpecSource,
    out: PathBuf,
    commits: Vec<String>,
    phases: Vec<Phase>,
    metric: Metric,
    history: Option<Store>,
    step: usize,
}

/// The search stops at a Ctrl-C: `None` from a comparison ends it quietly.
#[derive(Debug)]
struct Interrupted;

impl AbComparer {
    fn run_ab(&mut self, base: usize, head: usize, pairs: u32) -> anyhow::Result<Option<Measured>> {
        self.step += 1;
        let (base_sha, head_sha) = (&self.commits[base], &self.commits[head]);
        let out = self.out.join(format!(
            "{:02}-{}-{}-{pairs}",
            self.step,
            short(base_sha),
            short(head_sha)
        ));
        say!(
            "clibench bisect: step {}: {} (#{base}) vs {} (#{head}), {pairs} pairs, in {}",
            self.step,
            short(base_sha),
            short(head_sha),
            out.display()
        );
        let commit = |sha: &str| format!("source.commit={sha}").parse::<crate::spec::Override>();
        let ab = Ab::new(AbSettings {
            spec: self.spec.clone(),
            out: out.clone(),
            base: vec![commit(base_sha)?],
            head: vec![commit(head_sha)?],
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
            return Ok(None);
        }
        let found = compare_sides(&out, (Order::Abba, None), &CompareOptions::default(), None)?;
        if let Some(store) = &mut self.history {
            let sides = SIDES.map(|side| out.join(side).join("result.json"));
            ingest::add_files(store, &sides, None, "main")?;
        }
        let row = found
            .comparison
            .metrics
            .iter()
            .find(|row| row.metric == self.metric)
            .with_context(|| {
                format!(
                    "{} was not measured on both sides (see {})",
                    self.metric,
                    out.display()
                )
            })?;
        say!(
            "clibench bisect: step {}: {} {:+.1}% [{:+.1}%, {:+.1}%]",
            self.step,
            self.metric,
            (row.ratio - 1.0) * 100.0,
            (row.ci_low - 1.0) * 100.0,
            (row.ci_high - 1.0) * 100.0
        );
        Ok(Some(Measured {
            ratio: row.ratio,
            low: row.ci_low,
            high: row.ci_high,
            pairs,
        }))
    }
}

impl Comparer for AbComparer {
    type Error = anyhow::Error;

    fn compare(&mut self, base: usize, head: usize, pairs: u32) -> anyhow::Result<Measured> {
        self.run_ab(base, head, pairs)?
            .ok_or_else(|| anyhow::Error::msg("interrupted").context(Interrupted))
    }
}

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("clibench bisect: interrupted")
    }
}

/// Prints how the bisection ended and turns it into an exit code: 0 when it named the
/// first bad commit, 1 when it could not decide or found no change.
fn tell(found: &Bisection, commits: &[String], metric: Metric, took: Duration) -> ExitCode {
    let mut builds: Vec<usize> = found
        .comparisons
        .iter()
        .flat_map(|&(base, head, _)| [base, head])
        .collect();
    builds.sort_unstable();
    builds.dedup();
    let cost = format!(
        "{} comparison(s) of {} build(s) in {}",
        found.comparisons.len(),
        builds.len(),
        format_seconds(took.as_secs_f64())
    );
    let percent = |m: &Measured| {
        format!(
            "{:+.1}% [{:+.1}%, {:+.1}%]",
            (m.ratio - 1.0) * 100.0,
            (m.low - 1.0) * 100.0,
            (m.high - 1.0) * 100.0
        )
    };
    match &found.outcome {
        Outcome::FirstBad { index, measured } => {
            outln!(
                "first bad commit: {} (#{index}); {metric} {} against {} (#{}); {cost}",
                commits[*index],
                percent(measured),
                commits[index - 1],
                index - 1
            );
            ExitCode::SUCCESS
        }
        Outcome::NoChange { measured } => {
            outln!(
                "no change: {metric} {} from {} to {} at {} pairs; {cost}",
                percent(measured),
                short(&commits[0]),
                short(&commits[commits.len() - 1]),
                measured.pairs
            );
            ExitCode::from(FAILURE)
        }
        Outcome::Undecided { good, bad, at } => {
            let place = at.map_or_else(
                || "the budget ran out".to_owned(),
                |at| format!("{} (#{at}) stayed undecided", short(&commits[at])),
            );
            outln!(
                "could not decide: the change is after {} (#{good}) and at or before {} (#{bad}); {place}; {cost}",
                short(&commits[*good]),
                short(&commits[*bad]),
            );
            ExitCode::from(FAILURE)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_metric_gets_the_phases_that_build_install_and_measure_it() {
        assert_eq!(
            phases_for(Metric::Cold),
            [Phase::Prepare, Phase::Install, Phase::Measure]
        );
        for metric in Metric::ALL {
            let phases = phases_for(metric);
            assert_eq!(phases[0], Phase::Prepare);
            assert_eq!(phases.last(), Some(&metric.phase()));
        }
    }
}
