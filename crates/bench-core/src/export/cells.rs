//! The cells of a comparison, shared by the renderers for people (text, Markdown,
//! HTML), so that a median, a change or a trial count reads the same in each.
//!
//! The renderers differ only in a few symbols, gathered in a [`Notation`]: a
//! terminal table keeps to ASCII (`-`, `+inf`, `+1.0% .. +2.0%`), a document uses
//! typographic ones (`–`, `+∞`, `+1.0% to +2.0%`). Escaping is the caller's: these
//! cells are plain text.

use crate::compare::{Comparison, Interleaving, MetricComparison, Verdict, VerdictCounts};
use crate::metric::Nature;
use crate::stats::MetricStats;

/// How a comparison's title names one side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SideName<'a> {
    /// By the commit it built.
    Sha(&'a str),
    /// By the overrides it ran with.
    Overrides(&'a str),
    /// As the side that ran the spec without overrides.
    AsItIs,
    /// As the side that ran only the overrides both sides ran with.
    SharedOnly,
}

impl SideName<'_> {
    /// The words for [`SideName::AsItIs`].
    pub(crate) const AS_IT_IS: &'static str = "the spec as it is";
    /// The words for a side whose overrides are all the other side's too (`ab --scenario`
    /// with `--head` only): the title names what differs, not the shared scenario.
    pub(crate) const SHARED_ONLY: &'static str = "the overrides both sides ran with";
}

/// The names of the candidate and the base in a comparison's title: their shas, unless
/// both built the same commit and ran with different overrides (`clibench ab --head
/// measure.env.X=300`), which are then all that tells them apart.
pub(crate) fn side_names<'a>(comparison: &'a Comparison) -> [SideName<'a>; 2] {
    let by_overrides = comparison.base_sha == comparison.candidate_sha
        && comparison.base_overrides != comparison.candidate_overrides;
    let (base_own, candidate_own) =
        match (&comparison.base_overrides, &comparison.candidate_overrides) {
            (Some(base), Some(candidate)) => {
                let (base, candidate) = crate::compare::own_overrides(base, candidate);
                (Some(base), Some(candidate))
            }
            (base, candidate) => (base.as_deref(), candidate.as_deref()),
        };
    let name = |sha: &'a str, overrides: Option<&'a str>| match overrides {
        _ if !by_overrides => SideName::Sha(sha),
        Some("") => SideName::AsItIs,
        Some(overrides) => SideName::Overrides(overrides),
        None => SideName::AsItIs,
    };
    let [candidate, base] = [
        name(&comparison.candidate_sha, candidate_own),
        name(&comparison.base_sha, base_own),
    ];
    // A side left with none of its own after the shared ones ran with the shared ones.
    let shared = base_own != comparison.base_overrides.as_deref();
    let shared_only = |side: SideName<'a>| match side {
        SideName::AsItIs if shared => SideName::SharedOnly,
        other => other,
    };
    [shared_only(candidate), shared_only(base)]
}

/// The largest ratio an interval's end is shown as (`>+1000%` beyond).
const INTERVAL_SHOWN: f64 = 11.0;

/// The symbols a renderer writes for empty cells, infinite changes and intervals.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Notation {
    /// A cell without a value: no median, no interval.
    none: &'static str,
    /// A change from a base of zero.
    infinite: &'static str,
    /// Between the two ends of an interval.
    to: &'static str,
    /// Whether an exact metric's interval reads `exact`; otherwise it shows its
    /// point ratio at both ends, as the terminal table always has.
    exact_word: bool,
}

impl Notation {
    /// A terminal's plain-text table.
    pub(crate) const TERMINAL: Notation = Notation {
        none: "-",
        infinite: "+inf",
        to: " .. ",
        exact_word: false,
    };

    /// Markdown and HTML.
    pub(crate) const DOCUMENT: Notation = Notation {
        none: "–",
        infinite: "+∞",
        to: " to ",
        exact_word: true,
    };

    /// A ratio as a signed change: 1.35 -> `+35.0%`, 0.8 -> `-20.0%`.
    pub(crate) fn percent(self, ratio: f64) -> String {
        // A ratio is finite or, from a base of zero, +infinity.
        if !ratio.is_finite() {
            return self.infinite.to_string();
        }
        let change = (ratio - 1.0) * 100.0;
        // Avoid "-0.0%" for a change that rounds to zero.
        if change.abs() < 0.05 {
            return "0.0%".to_string();
        }
        format!("{change:+.1}%")
    }

    /// The row's relative change (`+35.0%`), or the empty cell for a slope, whose change
    /// is its difference in its unit ([`signed_amount`]): a ratio of slopes near zero says
    /// nothing.
    pub(crate) fn change(self, row: &MetricComparison) -> String {
        if row.slope.is_some() {
            return self.none.to_string();
        }
        self.percent(row.ratio)
    }

    /// The median in its unit, or the empty cell when every sample failed.
    pub(crate) fn median(self, stats: &MetricStats) -> String {
        stats
            .median()
            .map_or(self.none.to_string(), |median| stats.unit.format(median))
    }

    /// The interval of the change; empty for a single sample, which has no spread.
    pub(crate) fn interval(self, row: &MetricComparison) -> String {
        // Three noisy trials judged at Holm's level can reach +10^15%: beyond ten times
        // the base the digits say nothing more than "unbounded".
        let end = |ratio: f64| {
            if ratio.is_finite() && ratio > INTERVAL_SHOWN {
                format!(">+{:.0}%", (INTERVAL_SHOWN - 1.0) * 100.0)
            } else {
                self.percent(ratio)
            }
        };
        if let Some(slope) = &row.slope {
            if row.verdict == Verdict::SingleSample {
                return self.none.to_string();
            }
            let (low, high) = (
                signed(row.unit.format(slope.low), slope.low),
                signed(row.unit.format(slope.high), slope.high),
            );
            let per = row.metric.per_short();
            // Three digits can print both ends of a narrow interval alike (+2.0 MiB to
            // +2.0 MiB): then its centre and half-width say what it is.
            if low == high {
                let half = (slope.high - slope.low) / 2.0;
                return format!("{low} ± {}{per}", row.unit.format(half));
            }
            return format!("{low}{}{high}{per}", self.to);
        }
        match (row.verdict, row.nature) {
            (Verdict::SingleSample, _) => self.none.to_string(),
            // An exact metric's point ratio is all there is.
            (_, Nature::Exact) if self.exact_word => "exact".to_string(),
            _ => format!("{}{}{}", end(row.ci_low), self.to, end(row.ci_high)),
        }
    }

    /// The base's (`candidate` false) or the candidate's value of a row: what the test
    /// compared for a tested metric (the geometric mean), else the median.
    pub(crate) fn side(self, row: &MetricComparison, candidate: bool) -> String {
        let (center, stats) = if candidate {
            (row.candidate_center, &row.candidate)
        } else {
            (row.base_center, &row.base)
        };
        let per = if row.slope.is_some() {
            row.metric.per_short()
        } else {
            ""
        };
        match center {
            Some(center) => format!("{}{per}", stats.unit.format(center)),
            None => format!("{}{per}", self.median(stats)),
        }
    }
}

/// The smallest change the run could have detected, for a noisy metric: `±6%`,
/// `over ±100%` at the cap ([`crate::compare::DETECTABLE_CAP`]), or `none (too few
/// trials)` when a side has one trial (no spread); empty for an exact size, where
/// every byte shows.
pub(crate) fn detectable(row: &MetricComparison) -> Option<String> {
    if let Some(slope) = &row.slope {
        return Some(if slope.detectable.is_finite() {
            format!(
                "±{}{}",
                row.unit.format(slope.detectable),
                row.metric.per_short()
            )
        } else {
            "none (too few trials)".to_string()
        });
    }
    let fraction = row.detectable?;
    Some(
        if fraction >= crate::compare::DETECTABLE_CAP && fraction.is_finite() {
            format!(
                "over ±{}%",
                rounded_percent(crate::compare::DETECTABLE_CAP * 100.0)
            )
        } else if fraction.is_finite() {
            format!("±{}%", rounded_percent(fraction * 100.0))
        } else {
            "none (too few trials)".to_string()
        },
    )
}

/// [`detectable`] with the trials the spread needs for twice the threshold when the
/// run could not detect that and the row has no verdict (`±13% (±6% needs ~31
/// trials)`), for the documents where a person chooses the next run's `--trials`.
pub(crate) fn detectable_and_trials(row: &MetricComparison) -> Option<String> {
    let could = detectable(row)?;
    Some(match trials_needed(row) {
        Some((change, count)) => format!("{could} (±{change}% needs {count} trials)"),
        None => could,
    })
}

/// For a row without a verdict that could not detect twice its threshold: that change
/// as a percentage and the trials a side its spread would need (`("6", "~31")`, or
/// `"over 101"` beyond what a result holds). A row with a verdict has its answer.
pub(crate) fn trials_needed(row: &MetricComparison) -> Option<(String, String)> {
    if row.verdict.is_reported() {
        return None;
    }
    let target = row.trials_for_target?;
    let count = match target.trials {
        Some(trials) => format!("~{trials}"),
        None => format!("over {}", crate::result::MAX_TRIAL + 1),
    };
    Some((rounded_percent(target.change * 100.0), count))
}

/// A percentage for a threshold or a detectable change: whole percent from 10%
/// up, one decimal below (`±6.3%`, `±25%`).
fn rounded_percent(value: f64) -> String {
    if value >= 10.0 {
        format!("{value:.0}")
    } else {
        trimmed_percent(value)
    }
}

/// The rule a comparison's verdicts followed, in one sentence for a footer:
/// family level, thresholds and what is special about this comparison.
pub(crate) fn rule(comparison: &Comparison) -> String {
    let options = &comparison.options;
    let drift = comparison.interleaving != Interleaving::Interleaved;
    let nature_threshold = |nature: Nature| {
        let fraction = match options.noise {
            Some(noise) if nature != Nature::Exact => noise,
            _ => nature.default_threshold(),
        };
        trimmed_percent(fraction * 100.0)
    };
    let mut thresholds = format!(
        "timing and CPU ±{}%, memory ±{}%",
        nature_threshold(Nature::Timing),
        nature_threshold(Nature::Memory)
    );
    let own: Vec<String> = options
        .floors
        .keys()
        .filter(|metric| !metric.is_slope())
        .map(|&metric| {
            format!(
                "{metric} ±{}%",
                trimmed_percent(options.floor(metric) * 100.0)
            )
        })
        .collect();
    if !own.is_empty() {
        thresholds.push_str(&format!(" ({})", own.join(", ")));
    }
    // Slopes are judged by their difference in their unit: their thresholds are amounts.
    let slopes: Vec<String> = comparison
        .metrics
        .iter()
        .filter_map(|row| {
            let slope = row.slope.as_ref()?;
            Some(format!(
                "{} {}{}",
                row.metric,
                row.unit.format(slope.threshold),
                row.metric.per_short()
            ))
        })
        .collect();
    if !slopes.is_empty() {
        thresholds.push_str(&format!(
            "; slopes by their difference, beyond {}",
            slopes.join(", ")
        ));
    }
    // Interleaved trials are tested pair by pair where every trial has its partner.
    let test = if drift {
        "Welch's t-test on the logs"
    } else {
        "a t-test on the logs (paired trial by trial, else Welch's)"
    };
    let drift = if drift {
        let spread = |nature| format!("{:.3}", options.drift.of(nature));
        let source = match comparison.speed_shift {
            Some(shift) => format!(
                "; the hosts' speed probes moved {:+.1}% between the runs",
                shift.change() * 100.0
            ),
            None => "; no speed probes on both sides".to_string(),
        };
        format!(
            " (the drift between separate runs is in the test as variance: a run's offset \
             spreads {} for timing, {} for CPU, {} for memory{source})",
            spread(Nature::Timing),
            spread(Nature::Cpu),
            spread(Nature::Memory),
        )
    } else {
        String::new()
    };
    let family = match (comparison.gated_tested, &options.gated) {
        (Some(gated), Some(names)) => {
            let names: Vec<String> = names.iter().map(ToString::to_string).collect();
            format!(
                "over the {} gated on ({}); the others' over all {}",
                plural(gated, "tested metric", "tested metrics"),
                names.join(", "),
                plural(comparison.tested, "tested metric", "tested metrics"),
            )
        }
        _ => format!(
            "over {}",
            plural(comparison.tested, "tested metric", "tested metrics")
        ),
    };
    format!(
        "a change counts when the interval of {test}{drift} excludes no change and its \
         estimate exceeds {thresholds}; each interval is at the level Holm's procedure \
         judged its metric at ({family}, a family false-alarm rate of {}%); sizes are \
         exact: every byte is reported, beyond {} and {}% it counts",
        trimmed_percent(options.alpha * 100.0),
        crate::units::Unit::Bytes.format(options.exact_bytes),
        nature_threshold(Nature::Exact),
    )
}

/// Why a comparison of sides that were not interleaved says so.
pub(crate) fn not_interleaved(interleaving: Interleaving) -> &'static str {
    match interleaving {
        Interleaving::Unknown => {
            "the results do not record when their trials ran, so they are taken as separate \
             runs: drift between runs looks like a change, so the test counts it as variance \
             (--drift sets it)"
        }
        _ => {
            "the sides were not interleaved (separate runs, or ab --sequential): drift between \
             the runs looks like a change, so the test counts it as variance (--drift sets it); \
             `clibench ab` interleaves"
        }
    }
}

/// The absolute change in the metric's unit, signed: `+175 ms`, `-39.2 MiB`, `0 B`; a
/// slope's with what it is per (`+2.00 MiB/turn`), as its change is read in it.
pub(crate) fn signed_amount(row: &MetricComparison) -> String {
    let text = signed(row.unit.format(row.delta), row.delta);
    if row.slope.is_some() {
        format!("{text}{}", row.metric.per_short())
    } else {
        text
    }
}

/// `text` (a formatted `value`) with a `+` when the value is positive.
fn signed(text: String, value: f64) -> String {
    if value > 0.0 {
        format!("+{text}")
    } else {
        text
    }
}

/// Successful samples, and the failed ones when there are any: `5`, `4 (1 failed)`.
pub(crate) fn trials(stats: &MetricStats) -> String {
    if stats.errored == 0 {
        stats.n().to_string()
    } else {
        format!("{} ({} failed)", stats.n(), stats.errored)
    }
}

/// A row's trials, base / candidate: `5 / 5`; for a row tested on duet pairs, the pairs
/// and base's trials alone that its base is from: `5 / 5 pairs, 3 alone`.
pub(crate) fn row_trials(row: &MetricComparison) -> String {
    let sides = format!("{} / {}", trials(&row.base), trials(&row.candidate));
    match row.alone {
        Some(alone) => format!("{sides} pairs, {} alone", alone.alone_trials),
        None => sides,
    }
}

/// What one side has of a metric missing on a side: `not measured`, `no successful
/// sample (3 failed)` or `40.5 ms over 5 trials`.
pub(crate) fn presence(stats: Option<&MetricStats>) -> String {
    match stats {
        None => "not measured".to_string(),
        Some(stats) => match stats.median() {
            None => format!("no successful sample ({} failed)", stats.errored),
            Some(median) => format!(
                "{} over {}",
                stats.unit.format(median),
                plural(stats.n(), "trial", "trials")
            ),
        },
    }
}

/// A percentage with one decimal, without a trailing `.0`: 20 -> `20`, 12.5 -> `12.5`.
pub(crate) fn trimmed_percent(value: f64) -> String {
    let text = format!("{value:.1}");
    text.strip_suffix(".0").unwrap_or(&text).to_string()
}

/// `1 trial`, `2 trials`.
pub(crate) fn plural(count: usize, one: &str, many: &str) -> String {
    if count == 1 {
        format!("1 {one}")
    } else {
        format!("{count} {many}")
    }
}

/// The parts of a document's headline: the regressions and improvements always,
/// then each other verdict that some metric got, then the metrics missing on a
/// side. The first part is the regressions, which a renderer may emphasize.
pub(crate) fn headline(counts: &VerdictCounts) -> Vec<String> {
    let mut parts = vec![
        format!("{} {}", counts.regressed, Verdict::Regressed.word()),
        format!("{} {}", counts.improved, Verdict::Improved.word()),
    ];
    for verdict in [Verdict::Changed, Verdict::WithinNoise, Verdict::Unchanged] {
        let count = counts.of(verdict);
        if count > 0 {
            parts.push(format!("{count} {}", verdict.word()));
        }
    }
    if counts.single_sample > 0 {
        parts.push(format!(
            "{} with a single sample",
            plural(counts.single_sample, "metric", "metrics")
        ));
    }
    if counts.missing > 0 {
        parts.push(format!("{} missing on a side", counts.missing));
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_signed_percentages_in_either_notation() {
        for notation in [Notation::TERMINAL, Notation::DOCUMENT] {
            assert_eq!(notation.percent(1.35), "+35.0%");
            assert_eq!(notation.percent(0.8), "-20.0%");
            assert_eq!(notation.percent(1.0), "0.0%");
            assert_eq!(notation.percent(0.99999), "0.0%");
        }
        assert_eq!(Notation::TERMINAL.percent(f64::INFINITY), "+inf");
        assert_eq!(Notation::DOCUMENT.percent(f64::INFINITY), "+∞");
    }

    #[test]
    fn percentages_drop_a_trailing_zero_decimal() {
        assert_eq!(trimmed_percent(20.0), "20");
        assert_eq!(trimmed_percent(12.5), "12.5");
        assert_eq!(trimmed_percent(0.04), "0");
    }

    #[test]
    fn headline_always_names_regressions_and_improvements() {
        let none = headline(&VerdictCounts::default());
        assert_eq!(none, ["0 regressed", "0 improved"]);
        let some = headline(&VerdictCounts {
            regressed: 2,
            improved: 0,
            changed: 1,
            within_noise: 3,
            single_sample: 1,
            unchanged: 4,
            missing: 2,
        });
        assert_eq!(
            some,
            [
                "2 regressed",
                "0 improved",
                "1 changed",
                "3 within noise",
                "4 unchanged",
                "1 metric with a single sample",
                "2 missing on a side"
            ]
        );
    }
}
