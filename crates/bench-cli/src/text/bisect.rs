//! What `clibench bisect` tells a person: the range, each step as the search makes it,
//! each `ab` run it starts, and how it ended with what it cost. The binary prints these
//! lines; they are built here so that they are tested as text.

use bench_cli::history::bisect::builds::Build;
use bench_cli::history::bisect::search::{Bisection, Event, Measured, Outcome};
use bench_core::Metric;
use bench_core::units::format_seconds;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The output folder when none is given: `clibench-bisect-<unix time>`.
pub fn default_out() -> PathBuf {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    PathBuf::from(format!("clibench-bisect-{now}"))
}

/// A comparison's change and its interval: `+7.0% [+2.1%, +12.1%]`.
pub(crate) fn percent(m: &Measured) -> String {
    format!(
        "{:+.1}% [{:+.1}%, {:+.1}%]",
        (m.ratio - 1.0) * 100.0,
        (m.low - 1.0) * 100.0,
        (m.high - 1.0) * 100.0
    )
}

/// The first line: how many builds, from which to which, on which metric.
pub fn range_line(builds: &[Build], noun: &str, metric: Metric) -> String {
    let (first, last) = match (builds.first(), builds.last()) {
        (Some(first), Some(last)) => (first.label.as_str(), last.label.as_str()),
        _ => ("?", "?"),
    };
    format!(
        "clibench bisect: {} {noun}s from {first} to {last}; following {metric}",
        builds.len()
    )
}

/// Which store is read and added to, on which testbed.
pub fn store_line(testbed: &str, store: &Path) -> String {
    format!(
        "clibench bisect: measurements of these builds on this testbed ({testbed}) in {} \
         are used (compared within the runs that measured them), and what is measured is \
         added to it",
        store.display()
    )
}

/// A comparison the search asks for.
pub(crate) fn step_started_line(
    step: usize,
    builds: &[Build],
    (base, head): (usize, usize),
    pairs: u32,
) -> String {
    format!(
        "clibench bisect: step {step}: {} (#{base}) vs {} (#{head}), at least {pairs} pairs",
        builds[base].label, builds[head].label,
    )
}

/// The line for one event of the search, as it happens.
pub fn event_line(event: Event, builds: &[Build], metric: Metric) -> String {
    match event {
        Event::Started {
            step,
            base,
            head,
            pairs,
        } => step_started_line(step, builds, (base, head), pairs),
        Event::Found { step, measured } => step_found_line(step, metric, &measured),
    }
}

/// What comparison `step` found.
pub(crate) fn step_found_line(step: usize, metric: Metric, measured: &Measured) -> String {
    format!(
        "clibench bisect: step {step}: {metric} {} from {} pair(s) within runs",
        percent(measured),
        measured.pairs
    )
}

/// An `ab` run the search starts, how (a duet, or ABBA order), and where.
pub fn measuring_line(
    builds: &[Build],
    (base, head): (usize, usize),
    (pairs, duet): (u32, bool),
    out: &Path,
) -> String {
    let schedule = if duet {
        "as a duet (both at once on one CPU)"
    } else {
        "in ABBA order"
    };
    format!(
        "clibench bisect: measuring {} (#{base}) and {} (#{head}), {pairs} pairs {schedule}, in {}",
        builds[base].label,
        builds[head].label,
        out.display()
    )
}

/// The folder of step `step`'s `ab` run under `out`: `NN-BASE-HEAD-PAIRS`.
pub fn step_folder(
    out: &Path,
    step: usize,
    builds: &[Build],
    (base, head): (usize, usize),
    pairs: u32,
) -> std::path::PathBuf {
    out.join(format!(
        "{step:02}-{}-{}-{pairs}",
        builds[base].label, builds[head].label
    ))
}

/// What a bisection cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cost {
    /// Builds measured by this bisection (the others came from the history).
    pub measured: usize,
    /// `ab` runs made.
    pub runs: usize,
    /// How long it took.
    pub took: Duration,
}

/// The last line: the first bad build with its change against the one before (the
/// first improved one with `improvement`), no change, ends that moved the other way, or
/// where it could not decide; then what it cost.
pub fn outcome_line(
    found: &Bisection,
    builds: &[Build],
    (metric, noun, improvement): (Metric, &str, bool),
    cost: &Cost,
) -> String {
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
    let label = |index: usize| builds.get(index).map_or("?", |b| b.label.as_str());
    match &found.outcome {
        Outcome::FirstBad { index, measured } => {
            let before = index.saturating_sub(1);
            let first = if improvement { "improved" } else { "bad" };
            format!(
                "first {first} {noun}: {} (#{index}); {metric} {} against {} (#{before}); {cost}",
                builds.get(*index).map_or("?", |b| b.name.as_str()),
                percent(measured),
                builds.get(before).map_or("?", |b| b.name.as_str()),
            )
        }
        Outcome::NoChange { measured } => format!(
            "no change: {metric} {} from {} to {} with {} pair(s); {cost}",
            percent(measured),
            label(0),
            label(builds.len().saturating_sub(1)),
            measured.pairs
        ),
        Outcome::OtherWay { measured } => {
            let (is, pass) = if improvement {
                (
                    "worse",
                    "without --improvement to find the first build that made it so",
                )
            } else {
                (
                    "better",
                    "--improvement to find the first build that made it so",
                )
            };
            format!(
                "the bad end is {is}: {metric} {} from {} to {} with {} pair(s) ({}); no build named (pass {pass}); {cost}",
                percent(measured),
                label(0),
                label(builds.len().saturating_sub(1)),
                measured.pairs,
                match metric.direction() {
                    bench_core::Direction::LowerIsBetter => "lower is better",
                    bench_core::Direction::HigherIsBetter => "higher is better",
                }
            )
        }
        Outcome::Unconfirmed {
            good,
            bad,
            measured,
        } => format!(
            "could not name one build: the change is after {} (#{good}) and at or before {} (#{bad}), but {metric} reads {} between the two with {} pair(s), and both stayed where they were placed at the most pairs (a change spread over builds, or too small to see between two); {cost}",
            label(*good),
            label(*bad),
            percent(measured),
            measured.pairs
        ),
        Outcome::Undecided { good, bad, at } => {
            let place = at.map_or_else(
                || "the budget ran out".to_owned(),
                |at| format!("{} (#{at}) stayed undecided", label(at)),
            );
            format!(
                "could not decide: the change is after {} (#{good}) and at or before {} (#{bad}); {place}; {cost}",
                label(*good),
                label(*bad),
            )
        }
    }
}

/// Whether the bisection named the first bad build (what exit status 0 means).
pub fn named_first_bad(found: &Bisection) -> bool {
    matches!(found.outcome, Outcome::FirstBad { .. })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builds() -> Vec<Build> {
        (0..4)
            .map(|i| Build {
                label: format!("0.{i}.0"),
                name: format!("0.{i}.0"),
                set: format!("version=0.{i}.0"),
                revision: format!("pkg@0.{i}.0"),
            })
            .collect()
    }

    fn measured(ratio: f64, low: f64, high: f64, pairs: u32) -> Measured {
        Measured {
            ratio,
            low,
            high,
            pairs,
        }
    }

    fn cost() -> Cost {
        Cost {
            measured: 3,
            runs: 4,
            took: Duration::from_secs(754),
        }
    }

    #[test]
    fn each_ending_is_told_with_its_change_and_cost() {
        let ends = measured(1.08, 1.02, 1.14, 20);
        let comparisons = vec![
            (0, 3, ends),
            (0, 1, measured(1.0, 0.96, 1.04, 20)),
            (0, 2, measured(1.07, 1.03, 1.11, 20)),
        ];
        let endings = [
            Outcome::FirstBad {
                index: 2,
                measured: measured(1.07, 1.01, 1.13, 20),
            },
            // Ends whose interval holds no change, as bisect's "no change" always has.
            Outcome::NoChange {
                measured: measured(1.03, 0.98, 1.08, 20),
            },
            Outcome::OtherWay {
                measured: measured(0.88, 0.85, 0.91, 5),
            },
            Outcome::Unconfirmed {
                good: 1,
                bad: 2,
                measured: measured(1.02, 0.97, 1.07, 20),
            },
            Outcome::Undecided {
                good: 0,
                bad: 3,
                at: Some(1),
            },
            Outcome::Undecided {
                good: 1,
                bad: 3,
                at: None,
            },
        ];
        let text: Vec<String> = endings
            .into_iter()
            .map(|outcome| {
                let found = Bisection {
                    outcome,
                    comparisons: comparisons.clone(),
                };
                outcome_line(
                    &found,
                    &builds(),
                    (Metric::WarmCpu, "version", false),
                    &cost(),
                )
            })
            .collect();
        insta::assert_snapshot!(text.join("\n"));
    }

    #[test]
    fn steps_and_runs_are_told_with_their_builds() {
        let builds = builds();
        let text = [
            range_line(&builds, "version", Metric::WarmCpu),
            store_line("41f027fd42d9", Path::new("h.sqlite")),
            step_started_line(2, &builds, (0, 2), 10),
            measuring_line(
                &builds,
                (0, 2),
                (10, true),
                &step_folder(Path::new("out"), 3, &builds, (0, 2), 10),
            ),
            measuring_line(
                &builds,
                (0, 2),
                (10, false),
                &step_folder(Path::new("out"), 4, &builds, (0, 2), 10),
            ),
            step_found_line(2, Metric::WarmCpu, &measured(1.054, 0.981, 1.133, 10)),
        ];
        insta::assert_snapshot!(text.join("\n"));
    }

    #[test]
    fn only_a_named_build_is_a_success() {
        let named = Bisection {
            outcome: Outcome::FirstBad {
                index: 1,
                measured: measured(1.1, 1.05, 1.15, 4),
            },
            comparisons: Vec::new(),
        };
        assert!(named_first_bad(&named));
        let stuck = Bisection {
            outcome: Outcome::Undecided {
                good: 0,
                bad: 1,
                at: None,
            },
            comparisons: Vec::new(),
        };
        assert!(!named_first_bad(&stuck));
    }
}
