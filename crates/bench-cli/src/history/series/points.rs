//! A metric's series: one point per stored result, per target, branch, testbed and
//! schedule (a duet's values or values measured alone).

use crate::history::store::Stored;
use crate::history::store::record::Testbed;
use bench_core::Metric;
use bench_core::stats::median_of_sorted;
use std::collections::BTreeMap;

/// One result's value of a metric: the median of its trials and an interval for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The stored record's id.
    pub id: i64,
    /// The build: version, or the revision's first 12 characters.
    pub label: String,
    /// The full revision (commit or build identifier).
    pub revision: String,
    /// When the first trial started, milliseconds since the Unix epoch.
    pub started_unix_ms: Option<u64>,
    /// The 1-minute load average when it started.
    pub load_average: Option<f64>,
    /// Successful trials.
    pub n: usize,
    /// The median of the trials, in the metric's base unit.
    pub median: f64,
    /// The interval for the median ([`median_interval`]).
    pub low: f64,
    /// See `low`.
    pub high: f64,
}

/// A metric on one target, branch and testbed, in series order.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// What the series follows.
    pub metric: Metric,
    /// The measured program, as its results' `config.target` names it.
    pub target: String,
    /// The git branch its builds were on (`main` unless the results said otherwise).
    pub branch: String,
    /// The testbed's facts.
    pub testbed: Testbed,
    /// Whether the points are a duet's values (`ab`'s default schedule: each start
    /// shared a CPU with another build's), which are slower than values measured alone
    /// and never share a series with them.
    pub duet: bool,
    /// The points, oldest first.
    pub points: Vec<Point>,
}

impl Series {
    /// The testbed's short name.
    pub fn fingerprint(&self) -> String {
        self.testbed.fingerprint()
    }

    /// The points' medians.
    pub fn medians(&self) -> Vec<f64> {
        self.points.iter().map(|point| point.median).collect()
    }
}

/// Every series of `metric` among `stored` (already in series order), one per target,
/// branch, testbed and schedule: testbeds are never mixed, nor a duet's values with
/// values measured alone (the demo's cold start: 0.185 s in a duet, 0.12 s alone).
pub fn series(stored: &[Stored], metric: Metric) -> Vec<Series> {
    type Key = (String, String, Testbed, bool);
    let mut by_key: BTreeMap<Key, Vec<Point>> = BTreeMap::new();
    for row in stored {
        let record = &row.record;
        let Some(samples) = record.samples.get(&metric) else {
            continue;
        };
        let mut values: Vec<f64> = samples.iter().map(|&(_, value)| value).collect();
        if values.is_empty() {
            continue;
        }
        values.sort_by(f64::total_cmp);
        let (low, high) = median_interval(&values);
        by_key
            .entry((
                record.target.clone(),
                record.branch.clone(),
                record.testbed.clone(),
                record.duet_values(metric),
            ))
            .or_default()
            .push(Point {
                id: row.id,
                label: record.label(),
                revision: record.revision.clone(),
                started_unix_ms: record.started_unix_ms,
                load_average: record.load_average,
                n: values.len(),
                median: median_of_sorted(&values),
                low,
                high,
            });
    }
    by_key
        .into_iter()
        .map(|((target, branch, testbed, duet), points)| Series {
            metric,
            target,
            branch,
            testbed,
            duet,
            points,
        })
        .collect()
}

/// A distribution-free interval for the median of `sorted` values: the order
/// statistics x(k) and x(n+1-k) with the largest k whose binomial coverage is still at
/// least 95%. Below 6 values no such k exists and the interval is the whole range,
/// whose coverage is 1 - 2^(1-n) (75% for 3 trials); docs/history.md says so.
pub fn median_interval(sorted: &[f64]) -> (f64, f64) {
    let n = sorted.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    // P(Binomial(n, 1/2) < k) for k = 1, 2, ...: the chance the median lies below x(k).
    let mut k = 0;
    let mut below = 0.0;
    let mut term = 0.5f64.powi(n as i32);
    for i in 0..n {
        below += term;
        // Both tails together must stay at or under 5%.
        if 2.0 * below > 0.05 {
            break;
        }
        k = i + 1;
        term *= (n - i) as f64 / (i + 1) as f64;
    }
    let k = k.max(1);
    (sorted[k - 1], sorted[n - k])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::store::record::tests::result;
    use crate::history::store::tests::stored;

    #[test]
    fn a_few_trials_give_their_whole_range() {
        assert_eq!(median_interval(&[1.0, 2.0, 3.0]), (1.0, 3.0));
    }

    #[test]
    fn many_trials_give_an_interval_inside_the_range() {
        let values: Vec<f64> = (0..20).map(f64::from).collect();
        // n = 20: k = 6 is the largest with two tails of at most 5% (2 x 2.07%).
        assert_eq!(median_interval(&values), (5.0, 14.0));
    }

    #[test]
    fn testbeds_are_never_mixed_in_one_series() {
        let a = result("demo", "a", 1, &[0.3]);
        let mut b = result("demo", "b", 2, &[0.4]);
        b.side.runtime.insert("cpu".into(), "Other CPU".into());
        let series = series(&stored(&[a, b]), Metric::Cold);
        assert_eq!(series.len(), 2);
        assert!(series.iter().all(|s| s.points.len() == 1));
    }

    #[test]
    fn a_duets_values_and_values_measured_alone_are_two_series() {
        use crate::history::store::record::tests::duet_result;
        let rows = stored(&[
            result("demo", "a", 1, &[0.12, 0.12]),
            duet_result("demo", "b", 2, &[0.12, 0.185]),
            result("demo", "c", 3, &[0.12, 0.12]),
        ]);
        let series = series(&rows, Metric::Cold);
        let kinds: Vec<(bool, usize)> = series.iter().map(|s| (s.duet, s.points.len())).collect();
        assert_eq!(kinds, [(false, 2), (true, 1)]);
    }
}
