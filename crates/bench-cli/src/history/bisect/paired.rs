//! Bisect's comparisons from the history, within runs only: a build already measured on
//! this testbed is not measured again, and no two builds are compared across runs.
//!
//! Each build of the range has a [`BuildKey`]; the store holds its values grouped by the
//! run (`clibench run` or `ab` invocation) that measured them. Two builds are compared by
//! the runs that measured both (`links::direct`: each run's own ratio, the run's offset
//! cancelled, taken trial by trial where the two builds' trials pair, as a duet's do), or, when no run did, through a third build that one run measured with each
//! (`links::chain`: the two within-run ratios multiplied, their variances added). When
//! neither holds the pairs asked for, the caller's [`Measure`] runs the missing pairs of
//! the two builds in one new run (interleaved, as `ab` does), and what it measured is
//! added to the store before the comparison is read again. A build's raw values from
//! different runs are never paired: on pi, runs' own offsets (the good end's median
//! moved from 1.07 s to 1.39 s between runs) were larger than the 7% change, and pooling
//! named the wrong release.

use crate::history::bisect::search::{Comparer, Measured};
use crate::history::links::{self, Link};
use crate::history::store::record::Record;
use crate::history::store::{BuildKey, Store, StoreError};
use bench_core::Metric;
use std::collections::BTreeSet;

/// The most pairs one `ab` run measures (a result numbers its trials 0 to 100): a
/// comparison asked for more is measured in several runs, each paired within itself.
pub(crate) const MAX_PAIRS_PER_RUN: u32 = bench_core::MAX_TRIAL + 1;

/// Two-sided level of a comparison's interval: 95%, as `ab`'s.
pub(crate) const LEVEL: f64 = 0.05;

/// Measures builds `base` and `head` of the range with `pairs` interleaved pairs, in one
/// run: the records of both must carry the same run identifier.
pub trait Measure {
    /// The measurement's error.
    type Error;
    /// The records of both builds as measured; [`Paired`] adds them to the store.
    fn measure(&mut self, base: usize, head: usize, pairs: u32)
    -> Result<Vec<Record>, Self::Error>;
}

/// A comparison could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PairedError<E: std::error::Error + 'static> {
    /// Measuring failed.
    #[error("failed to measure the builds")]
    Measure(#[source] E),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Two builds were measured, but the store holds no more pairs of them within one
    /// run than before: every trial failed, the results carry no run identifier, or they
    /// carry another key (target, revision or testbed) than the one looked up, so the
    /// next bisection would measure them again.
    #[error(
        "measured {target} at {base} and {head}, but the history holds no new {metric} \
         pairs of them within one run on testbed {testbed} (every trial failed, the \
         results carry no run identifier, or they name another target, build or testbed)"
    )]
    NotStored {
        /// The target looked up.
        target: String,
        /// The base build looked up.
        base: String,
        /// The head build looked up.
        head: String,
        /// The testbed looked up.
        testbed: String,
        /// The metric.
        metric: Metric,
    },
    /// No run holds two values a side of the two builds after measuring.
    #[error("{base} and {head} have no run with two {metric} values of each: too few to compare")]
    TooFew {
        /// The base build.
        base: String,
        /// The head build.
        head: String,
        /// The metric.
        metric: Metric,
    },
}

/// A [`Comparer`] that compares builds within runs, from the store, and measures only
/// what the store lacks.
#[derive(Debug)]
pub struct Paired<'a, M> {
    store: &'a mut Store,
    builds: Vec<BuildKey>,
    metric: Metric,
    measure: M,
    measured: BTreeSet<usize>,
    runs: usize,
}

impl<'a, M: Measure> Paired<'a, M>
where
    M::Error: std::error::Error + 'static,
{
    /// Compares `builds` (the range, by index) on `metric`, from `store` and `measure`.
    pub fn new(
        store: &'a mut Store,
        builds: Vec<BuildKey>,
        metric: Metric,
        measure: M,
    ) -> Paired<'a, M> {
        Paired {
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

    fn runs_of(&self, build: usize) -> Result<Vec<links::RunValues>, StoreError> {
        self.store.build_runs(&self.builds[build], self.metric)
    }

    /// The best comparison of `base` with `head` the store holds: within the runs that
    /// measured both, or through one other build of the range; the one resting on the
    /// most pairs (then the narrower). Also the direct link's pairs.
    fn best(&self, base: usize, head: usize) -> Result<(Option<Link>, u32), StoreError> {
        let all: Vec<Vec<links::RunValues>> = (0..self.builds.len())
            .map(|build| self.runs_of(build))
            .collect::<Result<_, _>>()?;
        let direct = links::direct(&all[base], &all[head]);
        let mut best = direct;
        for pivot in (0..self.builds.len()).filter(|&b| b != base && b != head) {
            let (Some(first), Some(second)) = (
                links::direct(&all[base], &all[pivot]),
                links::direct(&all[pivot], &all[head]),
            ) else {
                continue;
            };
            let Some(chained) = links::chain(&first, &second) else {
                continue;
            };
            let better = best.is_none_or(|known: Link| {
                (chained.pairs, -chained.test.standard_error)
                    > (known.pairs, -known.test.standard_error)
            });
            if better {
                best = Some(chained);
            }
        }
        Ok((best, direct.map_or(0, |link| link.pairs)))
    }
}

impl<M: Measure> Comparer for Paired<'_, M>
where
    M::Error: std::error::Error + 'static,
{
    type Error = PairedError<M::Error>;

    fn compare(&mut self, base: usize, head: usize, pairs: u32) -> Result<Measured, Self::Error> {
        let (mut best, mut direct_pairs) = self.best(base, head)?;
        while best.is_none_or(|link| link.pairs < pairs) {
            // Measured together, in one new run: the missing pairs of the direct link
            // (more than a run holds take more runs, each paired within itself).
            let missing = pairs
                .saturating_sub(direct_pairs)
                .clamp(2, MAX_PAIRS_PER_RUN);
            let records = self
                .measure
                .measure(base, head, missing)
                .map_err(PairedError::Measure)?;
            self.store.add(&records)?;
            self.runs += 1;
            self.measured.extend([base, head]);
            let (again, direct_again) = self.best(base, head)?;
            // Every measurement must land where the next lookup finds it, or "never
            // measure a build twice" would silently not hold.
            if direct_again <= direct_pairs {
                let key = |build: usize| self.builds[build].clone();
                return Err(PairedError::NotStored {
                    target: key(base).target,
                    base: key(base).revision,
                    head: key(head).revision,
                    testbed: key(base).testbed,
                    metric: self.metric,
                });
            }
            best = again;
            direct_pairs = direct_again;
        }
        let Some(link) = best else {
            return Err(PairedError::TooFew {
                base: self.builds[base].revision.clone(),
                head: self.builds[head].revision.clone(),
                metric: self.metric,
            });
        };
        Ok(measured_of(&link))
    }
}

/// A link as bisect reads it: the ratio head over base and its 95% interval.
pub(crate) fn measured_of(link: &Link) -> Measured {
    let (low, high) = link.test.interval(LEVEL);
    Measured {
        ratio: link.test.estimate(),
        low,
        high,
        pairs: link.pairs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::bisect::search::{self as bisect, Outcome, Settings};
    use crate::history::store::record::tests::result;
    use bench_core::rng::SplitMix64;
    use rusty_fork::rusty_fork_test;

    /// Builds from `first_bad` on start `step` times slower; each call is one run,
    /// with the next of `offsets` (cycled) as its own offset on both builds, and a
    /// little deterministic spread; it counts what it measured.
    struct Fake {
        revisions: Vec<String>,
        first_bad: usize,
        step: f64,
        offsets: Vec<f64>,
        /// When set, each trial's two values (base's and head's of one run) share a
        /// load factor of log-sd 0.3 drawn from it, and each has its own spread of 2%.
        load: Option<SplitMix64>,
        calls: Vec<(usize, usize, u32)>,
        clock: u64,
    }

    impl Fake {
        fn new(revisions: &[String], first_bad: usize, clock: u64) -> Fake {
            Fake {
                revisions: revisions.to_vec(),
                first_bad,
                step: 1.3,
                offsets: vec![1.0],
                load: None,
                calls: Vec::new(),
                clock,
            }
        }
    }

    #[derive(Debug, thiserror::Error)]
    #[error("never")]
    struct Never;

    impl Measure for Fake {
        type Error = Never;
        fn measure(&mut self, base: usize, head: usize, pairs: u32) -> Result<Vec<Record>, Never> {
            let offset = self.offsets[self.calls.len() % self.offsets.len()];
            self.calls.push((base, head, pairs));
            let run = format!("run{:04}", self.clock);
            let loads: Vec<f64> = match &mut self.load {
                Some(rng) => (0..pairs)
                    .map(|_| (0.3 * rng.next_normal()).exp())
                    .collect(),
                None => vec![1.0; pairs as usize],
            };
            let mut records = Vec::new();
            for build in [base, head] {
                self.clock += 1;
                let level = if build >= self.first_bad {
                    self.step
                } else {
                    1.0
                };
                let values: Vec<f64> = (0..pairs)
                    .map(|i| {
                        let own = match &mut self.load {
                            Some(rng) => (0.02 * rng.next_normal()).exp(),
                            None => 1.0 + 0.01 * f64::from(i % 3),
                        };
                        0.4 * offset * level * loads[i as usize] * own
                    })
                    .collect();
                let mut file = result("demo", &self.revisions[build], self.clock, &values);
                file.request.invocation_id = Some(run.clone());
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
            sought: crate::history::bisect::search::Sought::Any,
            pairs: 4,
            max_pairs: 16,
            budget: None,
        }
    }

    /// Bisects 16 builds whose metric steps by +7% at build 11, measured by a fake
    /// that `vary` sets up: the first bad build named, its change, and the runs.
    fn first_bad_of_sixteen(
        vary: impl FnOnce(&mut Fake),
    ) -> (usize, Measured, Vec<(usize, usize, u32)>) {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("h.sqlite"), false).unwrap();
        let revisions: Vec<String> = (0..16).map(|i| format!("rev{i:02}")).collect();
        let mut fake = Fake::new(&revisions, 11, 0);
        fake.step = 1.07;
        vary(&mut fake);
        let mut paired = Paired::new(
            &mut store,
            keys(&revisions, &fixed_testbed()),
            Metric::Cold,
            fake,
        );
        let found = bisect::bisect(16, &settings(), &mut paired).unwrap();
        let Outcome::FirstBad { index, measured } = found.outcome else {
            panic!("{found:?}");
        };
        (index, measured, paired.measurer().calls.clone())
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
                let fake = Fake::new(&revisions, 11, 1000 * named.len() as u64);
                let mut paired =
                    Paired::new(&mut store, keys(&revisions, &fixed_testbed()), Metric::Cold, fake);
                let found = bisect::bisect(16, &settings(), &mut paired).unwrap();
                let Outcome::FirstBad { index, .. } = found.outcome else {
                    panic!("{found:?}");
                };
                named.push(index);
                calls.push(paired.measurer().calls.clone());
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
            let fake = Fake::new(&revisions, 2, 0);
            let mut paired =
                Paired::new(&mut store, keys(&revisions, &fixed_testbed()), Metric::Cold, fake);
            paired.compare(0, 1, 4).unwrap();
            paired.compare(0, 1, 4).unwrap();
            let measured = paired.compare(1, 2, 4).unwrap();
            assert_eq!(paired.measurer().calls, [(0, 1, 4), (1, 2, 4)]);
            assert!(measured.low > 1.2, "{measured:?}");
            // More pairs asked of a known comparison measure only the missing ones.
            paired.compare(1, 2, 10).unwrap();
            assert_eq!(paired.measurer().calls[2], (1, 2, 6));
            // More than one run holds are measured in two.
            paired.compare(1, 2, 160).unwrap();
            assert_eq!(paired.measurer().calls[3..], [(1, 2, 101), (1, 2, 49)]);
        }

        #[test]
        fn runs_whose_offsets_exceed_the_change_still_name_the_first_bad_build() {
            // pi 0.63.1 to 0.73.1 on warm_cpu as measured: a 7% change, while the good
            // end's median moved by up to 30% from one run to the next. Pooling each
            // build's values across runs named 0.68.1 (+26.4%, one run's offset against
            // another's); within each run the change is plain.
            let (index, measured, calls) = first_bad_of_sixteen(|fake| {
                fake.offsets = vec![1.0, 1.30, 0.80, 1.25, 0.85, 1.20, 0.75, 1.35];
            });
            assert_eq!(index, 11, "{measured:?}");
            // Its change against the build before, reached through the good end: the
            // change itself, not a run's offset.
            assert!((measured.ratio - 1.07).abs() < 0.01, "{measured:?}");
            assert!(measured.low > 1.0 && measured.high < 1.15, "{measured:?}");
            // Every run paired a middle with the good end (or measured the ends).
            assert!(calls.iter().all(|&(base, _, _)| base == 0), "{calls:?}");
        }

        #[test]
        fn a_load_shared_by_each_pair_and_six_times_the_change_still_names_the_first_bad_build() {
            // As a duet measures: each trial's two builds share the machine's load of
            // that moment (log-sd 0.3), each value its own 2%, and the change is +7%.
            // Paired trial by trial the load cancels; the difference of the runs' mean
            // logs (before pairing) would leave it in, at about the change's size with
            // 16 pairs, and decide nothing.
            let (index, measured, _) = first_bad_of_sixteen(|fake| {
                fake.load = Some(SplitMix64::new(34));
            });
            assert_eq!(index, 11, "{measured:?}");
            assert!(measured.low > 1.0 && measured.high < 1.15, "{measured:?}");
        }

        #[test]
        fn measurements_on_another_testbed_are_not_used_and_are_said_to_be_missing() {
            let dir = tempfile::tempdir().unwrap();
            let mut store = Store::open(&dir.path().join("h.sqlite"), false).unwrap();
            let revisions: Vec<String> = (0..2).map(|i| format!("rev{i}")).collect();
            let fake = Fake::new(&revisions, 1, 0);
            let mut paired =
                Paired::new(&mut store, keys(&revisions, "000000000000"), Metric::Cold, fake);
            let error = paired.compare(0, 1, 4).unwrap_err();
            assert!(matches!(error, PairedError::NotStored { .. }), "{error}");
        }
    }
}
