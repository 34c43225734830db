//! What the history already holds of a build that was just measured: `ab --history`
//! sets each side's new values beside the earlier values of the same build (target,
//! revision with its overrides, testbed) and says whether they agree.
//!
//! Stored values never enter `ab`'s paired test. The pairing is what lets `ab` see a
//! small change on a loaded machine: a side's values of another run differ by that
//! run's own offset, which this project measured at a log-sd of 0.22 for times and 0.06
//! for CPU time on its shared VMs ([`bench_core::Nature::drift_spread`]). The history
//! is used instead to ask whether the machine, or the build, is still what it was: a
//! side that moved against its own history is a warning that a series of these results
//! will show a step which is not the target's change. The comparison allows for that
//! run-to-run offset, so only a move beyond it is called one.

use crate::history::store::record::Record;
use crate::history::store::{Filter, Store, StoreError};
use bench_core::Metric;
use bench_core::stats::{self, Welch, median_of_sorted};
use std::fmt::Write as _;

/// Two-sided level of the intervals: 95%, as `ab`'s.
const LEVEL: f64 = 0.05;

/// Whether a side's new values agree with its build's history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agreement {
    /// Within the history's spread and the run-to-run offset, or below the metric's
    /// practical threshold.
    Consistent,
    /// Beyond both: the machine or the build is not what it was.
    Moved,
    /// Fewer than two values on a side.
    TooFew,
}

impl Agreement {
    /// The word shown.
    pub fn word(self) -> &'static str {
        match self {
            Agreement::Consistent => "consistent",
            Agreement::Moved => "moved",
            Agreement::TooFew => "too few values",
        }
    }
}

/// One metric of a side against its build's history.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricContext {
    /// Which metric of the side this is.
    pub metric: Metric,
    /// The stored values' median, and how many there are.
    pub stored: (f64, usize),
    /// The new values' median, and how many there are.
    pub fresh: (f64, usize),
    /// The change of the new values over the stored ones (a ratio; for a slope, a
    /// difference in its unit) and its 95% interval, with the run-to-run offset.
    pub change: Option<(f64, f64, f64)>,
    /// The verdict.
    pub agreement: Agreement,
}

/// A side's build against its history on this testbed.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildContext {
    /// The build's label (commit or version, and overrides).
    pub label: String,
    /// Earlier results of the build on the same testbed.
    pub results: usize,
    /// Every metric both the new result and the history hold.
    pub metrics: Vec<MetricContext>,
}

impl BuildContext {
    /// The metrics that moved against the history.
    pub fn moved(&self) -> impl Iterator<Item = &MetricContext> {
        self.metrics
            .iter()
            .filter(|m| m.agreement == Agreement::Moved)
    }
}

/// The earlier results of `fresh`'s build (same target, revision and testbed, any
/// branch; `fresh` itself left out when already stored) and each metric's agreement.
pub fn context(store: &Store, fresh: &Record) -> Result<BuildContext, StoreError> {
    let own = fresh.content_hash();
    let earlier: Vec<Record> = store
        .records(&Filter {
            target: Some(fresh.target.clone()),
            branch: None,
            testbed: Some(fresh.testbed.fingerprint()),
        })?
        .into_iter()
        .map(|stored| stored.record)
        .filter(|record| record.revision == fresh.revision && record.content_hash() != own)
        .collect();
    let metrics = fresh
        .samples
        .iter()
        .filter_map(|(&metric, samples)| {
            // A duet's values beside a duet's, values alone beside values alone: a
            // start sharing a CPU is slower, which is the schedule, not the machine.
            let duet = fresh.duet_values(metric);
            let stored: Vec<f64> = earlier
                .iter()
                .filter(|record| record.duet_values(metric) == duet)
                .filter_map(|record| record.samples.get(&metric))
                .flatten()
                .map(|&(_, value)| value)
                .collect();
            if stored.is_empty() {
                return None;
            }
            let fresh: Vec<f64> = samples.iter().map(|&(_, value)| value).collect();
            Some(metric_context(metric, &stored, &fresh))
        })
        .collect();
    Ok(BuildContext {
        label: fresh.label(),
        results: earlier.len(),
        metrics,
    })
}

/// One metric's new `fresh` values against its `stored` ones.
pub fn metric_context(metric: Metric, stored: &[f64], fresh: &[f64]) -> MetricContext {
    let median = |values: &[f64]| {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        (median_of_sorted(&sorted), sorted.len())
    };
    // A slope is compared by its difference (its values may be 0 or negative), with the
    // metric's threshold as an amount; anything else as a ratio, beyond the drift of a
    // run's own offset.
    let test: Option<Welch> = if metric.is_slope() {
        stats::welch_difference(stored, fresh)
    } else {
        stats::welch_between_runs(stored, fresh, metric.nature().drift_spread())
    };
    let change = test.as_ref().map(|test| {
        if metric.is_slope() {
            let (low, high) = test.difference_interval(LEVEL);
            (test.difference, low, high)
        } else {
            let (low, high) = test.interval(LEVEL);
            (test.estimate(), low, high)
        }
    });
    let agreement = match change {
        None => Agreement::TooFew,
        Some((estimate, low, high)) => {
            let (none, size) = match metric.slope_threshold() {
                Some(threshold) => (0.0, threshold),
                None => (1.0, metric.nature().default_threshold()),
            };
            let beyond = (estimate - none).abs() >= size;
            if (low > none || high < none) && beyond {
                Agreement::Moved
            } else {
                Agreement::Consistent
            }
        }
    };
    MetricContext {
        metric,
        stored: median(stored),
        fresh: median(fresh),
        change,
        agreement,
    }
}

/// A change as text: a ratio as a percentage, a slope's difference in its unit.
fn change_text(metric: Metric, (estimate, low, high): (f64, f64, f64)) -> String {
    if metric.is_slope() {
        let unit = metric.unit();
        let signed = |v: f64| {
            let sign = if v < 0.0 { "-" } else { "+" };
            format!("{sign}{}", unit.format(v.abs()))
        };
        format!("{} [{}, {}]", signed(estimate), signed(low), signed(high))
    } else {
        let percent = |v: f64| format!("{:+.1}%", (v - 1.0) * 100.0);
        format!(
            "{} [{}, {}]",
            percent(estimate),
            percent(low),
            percent(high)
        )
    }
}

/// One line for the terminal: how much history the side's build has and what moved.
pub fn summary_line(side: &str, context: &BuildContext) -> String {
    if context.results == 0 {
        return format!(
            "{side} ({}): new to the history on this testbed",
            context.label
        );
    }
    let moved: Vec<String> = context
        .moved()
        .map(|m| {
            let change = m
                .change
                .map_or_else(String::new, |c| change_text(m.metric, c));
            format!("{} {change}", m.metric)
        })
        .collect();
    let verdict = if moved.is_empty() {
        "no metric moved against it".to_owned()
    } else {
        format!(
            "moved against it (the machine or the build is not what it was): {}",
            moved.join("; ")
        )
    };
    format!(
        "{side} ({}): {} earlier result(s) of this build on this testbed; {verdict}",
        context.label, context.results
    )
}

/// The sides' contexts as Markdown (`history.md` beside `comparison.md`).
pub fn markdown(sides: &[(&str, BuildContext)]) -> String {
    let mut text = String::from(
        "# Each side against its build's history\n\n\
         Each side's new values against the values the history store holds of the same \
         build (target, revision and overrides) on this testbed, from earlier runs. They \
         never enter the paired comparison: a run's own offset differs from another's \
         (the interval allows for it), so only a move beyond it says that the machine or \
         the build is not what it was.\n",
    );
    for (side, context) in sides {
        let _ = write!(text, "\n## {side}: {}\n\n", context.label);
        if context.results == 0 {
            text.push_str("New to the history on this testbed.\n");
            continue;
        }
        let _ = writeln!(
            text,
            "{} earlier result(s).\n\n\
             | metric | history | n | this run | n | change [95% interval] | |\n\
             | --- | ---: | ---: | ---: | ---: | --- | --- |",
            context.results
        );
        for m in &context.metrics {
            let unit = m.metric.unit();
            let _ = writeln!(
                text,
                "| {} | {} | {} | {} | {} | {} | {} |",
                m.metric,
                unit.format(m.stored.0),
                m.stored.1,
                unit.format(m.fresh.0),
                m.fresh.1,
                m.change
                    .map_or_else(|| "-".to_owned(), |c| change_text(m.metric, c)),
                m.agreement.word()
            );
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusty_fork::rusty_fork_test;

    const STORED: [f64; 10] = [0.40, 0.41, 0.39, 0.40, 0.42, 0.40, 0.38, 0.41, 0.40, 0.39];

    rusty_fork_test! {
        // SQLite's caches add to the test binary's peak RSS, which other tests of it
        // measure: this one runs in a process of its own.
        #[test]
        fn a_duet_side_is_set_beside_earlier_duets_only() {
            use crate::history::store::record::tests::{duet_result, result};
            let dir = tempfile::tempdir().unwrap();
            let mut store = Store::open(&dir.path().join("h.sqlite"), false).unwrap();
            // The demo's cold start alone, about 0.12 s, from `clibench run`.
            let alone = Record::of(&result("demo", "abc", 1, &[0.12, 0.121, 0.119]), None, "main")
                .unwrap();
            store.add(&[alone]).unwrap();
            // The same build in a duet, slower by the schedule: nothing earlier to compare.
            let duet = Record::of(&duet_result("demo", "abc", 2, &[0.12, 0.185, 0.186, 0.184]), None, "main")
                .unwrap();
            let context_of = |store: &Store| context(store, &duet).unwrap();
            assert!(context_of(&store).metrics.is_empty());
            let earlier = duet_result("demo", "abc", 3, &[0.12, 0.183, 0.187, 0.185]);
            store.add(&[Record::of(&earlier, None, "main").unwrap()]).unwrap();
            let found = context_of(&store);
            assert_eq!(found.metrics.len(), 1);
            assert_eq!(found.metrics[0].stored.1, 3);
            assert_eq!(found.metrics[0].agreement, Agreement::Consistent);
        }
    }

    #[test]
    fn a_side_like_its_history_is_consistent() {
        let checked = metric_context(Metric::Cold, &STORED, &[0.41, 0.40, 0.42, 0.39, 0.40]);
        assert_eq!(checked.agreement, Agreement::Consistent);
        assert_eq!(checked.stored.1, 10);
    }

    #[test]
    fn a_side_far_beyond_the_run_to_run_offset_moved() {
        // Twice as slow: beyond the offset a run has of its own (log-sd 0.22 for times).
        let checked = metric_context(Metric::Cold, &STORED, &[0.80, 0.82, 0.79, 0.81]);
        assert_eq!(checked.agreement, Agreement::Moved);
    }

    #[test]
    fn a_small_shift_within_the_run_to_run_offset_is_not_called_a_move() {
        // +10% with no spread at all is certain within one run, but another run's offset
        // alone is often that large.
        let checked = metric_context(Metric::Cold, &[0.40; 10], &[0.44; 5]);
        assert_eq!(checked.agreement, Agreement::Consistent);
    }

    #[test]
    fn one_value_a_side_is_too_few() {
        let checked = metric_context(Metric::Cold, &[0.4], &[0.9]);
        assert_eq!(checked.agreement, Agreement::TooFew);
    }

    #[test]
    fn the_page_names_each_side_and_what_moved() {
        let context = |results, fresh: &[f64]| BuildContext {
            label: "abc123".into(),
            results,
            metrics: vec![metric_context(Metric::Cold, &STORED, fresh)],
        };
        let page = markdown(&[
            ("base", context(3, &[0.80, 0.82, 0.79, 0.81])),
            ("head", context(0, &[0.4])),
        ]);
        insta::assert_snapshot!(page);
        assert!(summary_line("base", &context(3, &[0.8, 0.82])).contains("moved"));
        assert_eq!(
            summary_line("head", &context(0, &[0.4])),
            "head (abc123): new to the history on this testbed"
        );
    }
}
