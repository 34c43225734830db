//! Bisect's comparisons from the history: a build already measured on this testbed is
//! never measured again.
//!
//! Each build of the range has a [`BuildKey`]; its pool is every value of the metric the
//! store holds under that key, from this bisection or an earlier one. A comparison of
//! two builds whose pools both hold at least the pairs asked for is read from the store
//! alone; otherwise the caller's [`Measure`] runs the missing pairs (both builds,
//! interleaved, as `ab` does), and what it measured is added to the store before the
//! pools are read again. Like Chromium's Pinpoint, which keeps each change's attempts
//! and compares the two pools, the comparison is Welch's test on the log values of the
//! pools, so a later bisection over the same range only measures what it has not seen.

use super::bisect::{Comparer, Measured};
use super::record::Record;
use super::store::{BuildKey, Store, StoreError};
use bench_core::Metric;
use bench_core::significance;
use std::collections::BTreeSet;

/// Two-sided level of a comparison's interval: 95%, as `ab`'s.
pub const LEVEL: f64 = 0.05;

/// Measures builds `base` and `head` of the range with `pairs` interleaved pairs.
pub trait Measure {
    /// The measurement's error.
    type Error;
    /// The records of both builds as measured; [`Pooled`] adds them to the store.
    fn measure(&mut self, base: usize, head: usize, pairs: u32)
    -> Result<Vec<Record>, Self::Error>;
}

/// A comparison could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PooledError<E: std::error::Error + 'static> {
    /// Measuring failed.
    #[error("failed to measure the builds")]
    Measure(#[source] E),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A build was measured, but the store holds no more of its values than before:
    /// every trial failed, or its results carry another key (target, revision or
    /// testbed) than the one looked up, so the next bisection would measure it again.
    #[error(
        "measured {target} at {revision}, but the history holds no new {metric} values \
         under that build on testbed {testbed} (every trial failed, or the results name \
         another target, build or testbed)"
    )]
    NotStored {
        /// The target looked up.
        target: String,
        /// The build looked up.
        revision: String,
        /// The testbed looked up.
        testbed: String,
        /// The metric.
        metric: Metric,
    },
    /// A pool has fewer than two values after measuring (every trial failed).
    #[error("{revision} has {count} {metric} value(s) in the history: too few to compare")]
    TooFew {
        /// The build.
        revision: String,
        /// The metric.
        metric: Metric,
        /// Its values.
        count: usize,
    },
}

/// A [`Comparer`] that reads both builds' pools from the store and measures only what
/// they lack.
#[derive(Debug)]
pub struct Pooled<'a, M> {
    store: &'a mut Store,
    builds: Vec<BuildKey>,
    metric: Metric,
    measure: M,
    measured: BTreeSet<usize>,
    runs: usize,
}

impl<'a, M: Measure> Pooled<'a, M>
where
    M::Error: std::error::Error + 'static,
{
    /// Compares `builds` (the range, by index) on `metric`, from `store` and `measure`.
    pub fn new(
        store: &'a mut Store,
        builds: Vec<BuildKey>,
        metric: Metric,
        measure: M,
    ) -> Pooled<'a, M> {
        Pooled {
            store,
            builds,
            metric,
            measure,
            measured: BTreeSet::new(),
            runs: 0,
        }
    }

    /// The builds this bisection measured (indices into the range).
    pub fn measured(&self) -> &BTreeSet<usize> {
        &self.measured
    }

    /// How many times it measured (each a run of interleaved pairs of two builds).
    pub fn runs(&self) -> usize {
        self.runs
    }

    /// The measurer, to read what it kept.
    pub fn measurer(&self) -> &M {
        &self.measure
    }

    fn pool(&self, build: usize) -> Result<Vec<f64>, StoreError> {
        self.store.build_values(&self.builds[build], self.metric)
    }
}

impl<M: Measure> Comparer for Pooled<'_, M>
where
    M::Error: std::error::Error + 'static,
{
    type Error = PooledError<M::Error>;

    fn compare(&mut self, base: usize, head: usize, pairs: u32) -> Result<Measured, Self::Error> {
        let (mut base_values, mut head_values) = (self.pool(base)?, self.pool(head)?);
        let have = base_values.len().min(head_values.len());
        if have < pairs as usize {
            let missing = pairs - have as u32;
            let records = self
                .measure
                .measure(base, head, missing.max(2))
                .map_err(PooledError::Measure)?;
            self.store.add(&records)?;
            self.runs += 1;
            self.measured.extend([base, head]);
            let before = [base_values.len(), head_values.len()];
            (base_values, head_values) = (self.pool(base)?, self.pool(head)?);
            // Every measurement must land where the next lookup finds it, or "never
            // measure a build twice" would silently not hold.
            for (build, (count, was)) in [base, head].into_iter().zip(
                [base_values.len(), head_values.len()]
                    .into_iter()
                    .zip(before),
            ) {
                if count <= was {
                    let key = &self.builds[build];
                    return Err(PooledError::NotStored {
                        target: key.target.clone(),
                        revision: key.revision.clone(),
                        testbed: key.testbed.clone(),
                        metric: self.metric,
                    });
                }
            }
        }
        for (build, values) in [(base, &base_values), (head, &head_values)] {
            if values.len() < 2 {
                return Err(PooledError::TooFew {
                    revision: self.builds[build].revision.clone(),
                    metric: self.metric,
                    count: values.len(),
                });
            }
        }
        Ok(measured_of(&base_values, &head_values))
    }
}

/// Welch's test of two pools: the ratio of their geometric means (head over base, on
/// logs when every value is positive) and its 95% interval.
pub fn measured_of(base: &[f64], head: &[f64]) -> Measured {
    let pairs = base.len().min(head.len()) as u32;
    match significance::welch(base, head) {
        Some(test) => {
            let (low, high) = test.interval(LEVEL);
            Measured {
                ratio: test.estimate(),
                low,
                high,
                pairs,
            }
        }
        // Fewer than two finite values a side: no interval, so nothing is ruled out.
        None => Measured {
            ratio: 1.0,
            low: 0.0,
            high: f64::INFINITY,
            pairs,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::bisect::{self, Outcome, Settings};
    use crate::history::record::tests::result;
    use rusty_fork::rusty_fork_test;

    /// Builds from `first_bad` on start 30% slower; each call measures both builds
    /// with a little deterministic spread and counts what it measured.
    struct Fake {
        revisions: Vec<String>,
        first_bad: usize,
        calls: Vec<(usize, usize, u32)>,
        clock: u64,
    }

    #[derive(Debug, thiserror::Error)]
    #[error("never")]
    struct Never;

    impl Measure for Fake {
        type Error = Never;
        fn measure(&mut self, base: usize, head: usize, pairs: u32) -> Result<Vec<Record>, Never> {
            self.calls.push((base, head, pairs));
            let mut records = Vec::new();
            for build in [base, head] {
                self.clock += 1;
                let level = if build >= self.first_bad { 1.3 } else { 1.0 };
                let values: Vec<f64> = (0..pairs)
                    .map(|i| 0.4 * level * (1.0 + 0.01 * f64::from(i % 3)))
                    .collect();
                let file = result("demo", &self.revisions[build], self.clock, &values);
                records.push(Record::of(&file, None, "main").unwrap());
            }
            Ok(records)
        }
    }

    fn keys(revisions: &[String], testbed: &str) -> Vec<BuildKey> {
        revisions
            .iter()
            .map(|revision| BuildKey {
                target: "demo".into(),
                revision: revision.clone(),
                testbed: testbed.into(),
            })
            .collect()
    }

    fn fixed_testbed() -> String {
        Record::of(&result("demo", "x", 1, &[0.1]), None, "main")
            .unwrap()
            .testbed
            .fingerprint()
    }

    fn settings() -> Settings {
        Settings {
            pairs: 4,
            max_pairs: 16,
            budget: None,
        }
    }

    rusty_fork_test! {
        // SQLite's caches add to the test binary's peak RSS, which other tests of it
        // measure: each runs in a process of its own, as the store's tests do.
        #[test]
        fn a_second_bisect_over_the_same_range_measures_nothing_and_names_the_same_build() {
            let dir = tempfile::tempdir().unwrap();
            let mut store = Store::open(&dir.path().join("h.sqlite"), false).unwrap();
            let revisions: Vec<String> = (0..16).map(|i| format!("rev{i:02}")).collect();
            let mut named = Vec::new();
            let mut calls = Vec::new();
            for _ in 0..2 {
                let fake = Fake {
                    revisions: revisions.clone(),
                    first_bad: 11,
                    calls: Vec::new(),
                    clock: 1000 * named.len() as u64,
                };
                let mut pooled =
                    Pooled::new(&mut store, keys(&revisions, &fixed_testbed()), Metric::Cold, fake);
                let found = bisect::bisect(16, &settings(), &mut pooled).unwrap();
                let Outcome::FirstBad { index, .. } = found.outcome else {
                    panic!("{found:?}");
                };
                named.push(index);
                calls.push(pooled.measurer().calls.clone());
            }
            assert_eq!(named, [11, 11]);
            // The first measured the ends and each middle; the second nothing at all.
            assert!(calls[0].len() >= 4, "{:?}", calls[0]);
            assert_eq!(calls[1], []);
        }

        #[test]
        fn a_build_known_on_this_testbed_is_not_measured_again_for_a_new_neighbour() {
            let dir = tempfile::tempdir().unwrap();
            let mut store = Store::open(&dir.path().join("h.sqlite"), false).unwrap();
            let revisions: Vec<String> = (0..3).map(|i| format!("rev{i}")).collect();
            let fake = Fake {
                revisions: revisions.clone(),
                first_bad: 2,
                calls: Vec::new(),
                clock: 0,
            };
            let mut pooled =
                Pooled::new(&mut store, keys(&revisions, &fixed_testbed()), Metric::Cold, fake);
            pooled.compare(0, 1, 4).unwrap();
            pooled.compare(0, 1, 4).unwrap();
            let measured = pooled.compare(1, 2, 4).unwrap();
            assert_eq!(pooled.measurer().calls, [(0, 1, 4), (1, 2, 4)]);
            assert!(measured.low > 1.2, "{measured:?}");
            // More pairs asked of a known comparison measure only the missing ones.
            pooled.compare(1, 2, 10).unwrap();
            assert_eq!(pooled.measurer().calls[2], (1, 2, 6));
        }

        #[test]
        fn measurements_on_another_testbed_are_not_used_and_are_said_to_be_missing() {
            let dir = tempfile::tempdir().unwrap();
            let mut store = Store::open(&dir.path().join("h.sqlite"), false).unwrap();
            let revisions: Vec<String> = (0..2).map(|i| format!("rev{i}")).collect();
            let fake = Fake {
                revisions: revisions.clone(),
                first_bad: 1,
                calls: Vec::new(),
                clock: 0,
            };
            let mut pooled =
                Pooled::new(&mut store, keys(&revisions, "000000000000"), Metric::Cold, fake);
            let error = pooled.compare(0, 1, 4).unwrap_err();
            assert!(matches!(error, PooledError::NotStored { .. }), "{error}");
        }
    }
}
