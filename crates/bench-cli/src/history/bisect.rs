//! Bisect's search: the first build in a range whose metric moved like the bad end's.
//!
//! Like Chromium's Pinpoint: the two ends are compared first, to learn the change (its
//! ratio `r`, bad over good); then the range is halved, each step comparing the good
//! end with the middle build, so that every ratio has the ends' denominator. The middle is bad when the comparison's
//! interval rules out "like the good end" (it excludes no change, towards `r`) but not
//! "like the bad end"; good when it rules out "like the bad end" (it lies wholly short of
//! the ends' own interval) but not "like the good end"; when it rules out both (a
//! middle in between, two changes), halfway on a log scale (`√r`) decides; and it is
//! undecided when it rules out neither: an undecided
//! comparison is run again with twice the pairs, up to a maximum, before the search
//! gives up and says where. How two builds are compared is the caller's ([`Comparer`]:
//! `clibench bisect` runs `ab`'s interleaved pairs), so the search is tested without
//! building anything.

use std::time::{Duration, Instant};

/// What comparing two builds found for the metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    /// Median of the head build over median of the base build.
    pub ratio: f64,
    /// The ratio's confidence interval (lower end).
    pub low: f64,
    /// The ratio's confidence interval (upper end).
    pub high: f64,
    /// Pairs (trials per side) it took.
    pub pairs: u32,
}

/// Compares two builds of the range (by index) with `pairs` trials a side.
pub trait Comparer {
    /// The comparison's error.
    type Error;
    /// Compares build `base` with build `head`.
    fn compare(&mut self, base: usize, head: usize, pairs: u32) -> Result<Measured, Self::Error>;
}

/// How the search spends its effort.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Pairs of a first comparison.
    pub pairs: u32,
    /// The most pairs an undecided comparison grows to (doubling).
    pub max_pairs: u32,
    /// Start no comparison after this much time.
    pub budget: Option<Duration>,
}

/// How a bisection ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The first bad build (index into the range) and its comparison with the one before.
    FirstBad {
        /// The first build whose metric moved.
        index: usize,
        /// Build `index - 1` against build `index`.
        measured: Measured,
    },
    /// The two ends do not differ beyond their interval: nothing to look for.
    NoChange {
        /// The ends' comparison with the most pairs.
        measured: Measured,
    },
    /// A comparison stayed undecided at the most pairs, or the budget ran out: the change
    /// lies after `good` and at or before `bad`.
    Undecided {
        /// The last build known good.
        good: usize,
        /// The first build known bad.
        bad: usize,
        /// The build that could not be placed, when one could not.
        at: Option<usize>,
    },
}

/// A bisection's result and every comparison it ran, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Bisection {
    /// How it ended.
    pub outcome: Outcome,
    /// (base, head, what was found) for each comparison run.
    pub comparisons: Vec<(usize, usize, Measured)>,
}

/// Where a comparison places the head build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Good,
    Bad,
    Undecided,
}

/// Where `measured` (the good end against the middle) places the middle, given
/// the ends' comparison `ends`. Asking which of the two hypotheses the interval rules out
/// needs far fewer pairs than asking it to clear the halfway point: an A/A middle at 4
/// pairs read `[-71%, +330%]` against ends of `+784% [+476%, +1258%]`, short of the ends
/// but not of halfway (+180%).
fn side(measured: &Measured, ends: &Measured) -> Side {
    let slower = ends.ratio > 1.0;
    let (unlike_good, unlike_bad) = if slower {
        (measured.low > 1.0, measured.high < ends.low)
    } else {
        (measured.high < 1.0, measured.low > ends.high)
    };
    match (unlike_good, unlike_bad) {
        (true, false) => Side::Bad,
        (false, true) => Side::Good,
        (true, true) if (measured.ratio > ends.ratio.sqrt()) == slower => Side::Bad,
        (true, true) => Side::Good,
        (false, false) => Side::Undecided,
    }
}

/// Bisects the builds `0..count` (0 known good, `count - 1` known bad).
pub fn bisect<C: Comparer>(
    count: usize,
    settings: &Settings,
    comparer: &mut C,
) -> Result<Bisection, C::Error> {
    let started = Instant::now();
    let out_of_time = || {
        settings
            .budget
            .is_some_and(|budget| started.elapsed() >= budget)
    };
    let mut comparisons = Vec::new();
    let (mut good, mut bad) = (0, count.saturating_sub(1));
    let mut run = |base: usize, head: usize, pairs: u32, comparisons: &mut Vec<_>| {
        let measured = comparer.compare(base, head, pairs)?;
        comparisons.push((base, head, measured));
        Ok::<Measured, C::Error>(measured)
    };
    // The ends: is there a change, and which way?
    let mut pairs = settings.pairs.max(2);
    let ends = loop {
        let measured = run(good, bad, pairs, &mut comparisons)?;
        if measured.low > 1.0 || measured.high < 1.0 {
            break measured;
        }
        if pairs.max(measured.pairs) >= settings.max_pairs || out_of_time() {
            return Ok(Bisection {
                outcome: Outcome::NoChange { measured },
                comparisons,
            });
        }
        pairs = (pairs.max(measured.pairs) * 2).min(settings.max_pairs);
    };
    while bad - good > 1 {
        let middle = good + (bad - good) / 2;
        let mut pairs = settings.pairs.max(2);
        loop {
            if out_of_time() {
                return Ok(Bisection {
                    outcome: Outcome::Undecided {
                        good,
                        bad,
                        at: None,
                    },
                    comparisons,
                });
            }
            // Against the good end, the base of the ends' ratio: a middle's ratio over
            // the last good build is over another denominator, and on session_growth
            // (good values near 0) an outlier in that build's values made a bad middle
            // read ×5.8 against ends of ×54, short of halfway: the search went wrong.
            let measured = run(0, middle, pairs, &mut comparisons)?;
            match side(&measured, &ends) {
                Side::Bad => bad = middle,
                Side::Good => good = middle,
                Side::Undecided if pairs < settings.max_pairs => {
                    // From the values it already had: a comparison read from the store
                    // may hold more than was asked, and asking for fewer again would
                    // read the same values to the same end.
                    pairs = (pairs.max(measured.pairs) * 2).min(settings.max_pairs);
                    continue;
                }
                Side::Undecided => {
                    return Ok(Bisection {
                        outcome: Outcome::Undecided {
                            good,
                            bad,
                            at: Some(middle),
                        },
                        comparisons,
                    });
                }
            }
            break;
        }
    }
    // The first bad build's own comparison with the one before: already run when the
    // last step compared exactly these two, else run now.
    let measured = match comparisons
        .iter()
        .rev()
        .find(|(base, head, _)| (*base, *head) == (good, bad))
    {
        Some(&(_, _, measured)) => measured,
        None => run(good, bad, settings.pairs.max(2), &mut comparisons)?,
    };
    Ok(Bisection {
        outcome: Outcome::FirstBad {
            index: bad,
            measured,
        },
        comparisons,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds from `first_bad` on are `step` times slower; a comparison's interval is
    /// ±`spread` around the true ratio, or spans 1 to the ratio when `fuzzy` says so.
    struct Fake {
        first_bad: usize,
        step: f64,
        spread: f64,
        fuzzy: Option<(usize, u32)>,
    }

    impl Comparer for Fake {
        type Error = std::convert::Infallible;
        fn compare(
            &mut self,
            base: usize,
            head: usize,
            pairs: u32,
        ) -> Result<Measured, Self::Error> {
            let level = |i: usize| if i >= self.first_bad { self.step } else { 1.0 };
            let ratio = level(head) / level(base);
            if let Some((index, below)) = self.fuzzy
                && head == index
                && pairs < below
            {
                return Ok(Measured {
                    ratio,
                    low: 0.9,
                    high: 1.5,
                    pairs,
                });
            }
            Ok(Measured {
                ratio,
                low: ratio - self.spread,
                high: ratio + self.spread,
                pairs,
            })
        }
    }

    fn settings() -> Settings {
        Settings {
            pairs: 5,
            max_pairs: 20,
            budget: None,
        }
    }

    #[test]
    fn the_first_slow_build_is_named_with_its_change() {
        for first_bad in 1..16 {
            let mut fake = Fake {
                first_bad,
                step: 1.3,
                spread: 0.05,
                fuzzy: None,
            };
            let found = bisect(16, &settings(), &mut fake).unwrap();
            let Outcome::FirstBad { index, measured } = found.outcome else {
                panic!("{found:?}");
            };
            assert_eq!(index, first_bad);
            assert!((measured.ratio - 1.3).abs() < 1e-9);
            // The ends, four halvings, at most one more for the last pair.
            assert!(found.comparisons.len() <= 6, "{:?}", found.comparisons);
        }
    }

    /// The leak bisection of 16 demo commits as it was measured (session_growth, leak
    /// from #11, good values near 0): build 7's values held an outlier, so its mean was
    /// about 6 times build 0's, and any ratio over build 7 was on another scale.
    struct OutlierAtSeven;

    impl Comparer for OutlierAtSeven {
        type Error = std::convert::Infallible;
        fn compare(
            &mut self,
            base: usize,
            head: usize,
            pairs: u32,
        ) -> Result<Measured, Self::Error> {
            let over = |ratio: f64, low: f64, high: f64| Measured {
                ratio,
                low,
                high,
                pairs,
            };
            let leaks = |i: usize| i >= 11;
            Ok(match (base, leaks(base), leaks(head)) {
                (_, true, true) => over(1.0, 0.9, 1.1),
                (7, false, true) => over(5.8, 3.1, 8.6),
                (_, false, true) => over(45.0, 38.0, 52.0),
                (7, false, false) => over(0.9, 0.5, 1.3),
                (_, false, false) if head == 7 => over(2.0, 0.3, 6.0),
                (_, false, false) => over(1.0, 0.6, 1.4),
                (_, true, false) => over(0.02, 0.01, 0.03),
            })
        }
    }

    #[test]
    fn a_middle_is_compared_with_the_good_end_whose_ratio_the_ends_share() {
        // Over build 7 the leaking #11 read ×5.8, short of halfway to the ends' ×54
        // (×7.3): comparing each middle with the last good build named #15.
        let settings = Settings {
            pairs: 3,
            max_pairs: 12,
            budget: None,
        };
        let ends = |_: usize, _: usize, pairs| Measured {
            ratio: 54.0,
            low: 48.0,
            high: 58.0,
            pairs,
        };
        struct WithEnds<F>(OutlierAtSeven, F);
        impl<F: Fn(usize, usize, u32) -> Measured> Comparer for WithEnds<F> {
            type Error = std::convert::Infallible;
            fn compare(
                &mut self,
                base: usize,
                head: usize,
                pairs: u32,
            ) -> Result<Measured, Self::Error> {
                if (base, head) == (0, 15) {
                    return Ok((self.1)(base, head, pairs));
                }
                self.0.compare(base, head, pairs)
            }
        }
        let found = bisect(16, &settings, &mut WithEnds(OutlierAtSeven, ends)).unwrap();
        assert!(
            matches!(found.outcome, Outcome::FirstBad { index: 11, .. }),
            "{found:?}"
        );
        // Every middle against build 0; only the first bad's own comparison is adjacent.
        let (last, middles) = found.comparisons[1..].split_last().unwrap();
        assert!(middles.iter().all(|&(base, _, _)| base == 0), "{middles:?}");
        assert_eq!((last.0, last.1), (10, 11));
    }

    #[test]
    fn an_undecided_step_gets_more_pairs_before_the_search_moves() {
        let mut fake = Fake {
            first_bad: 11,
            step: 1.3,
            spread: 0.05,
            fuzzy: Some((7, 20)),
        };
        let found = bisect(16, &settings(), &mut fake).unwrap();
        let at_seven: Vec<u32> = found
            .comparisons
            .iter()
            .filter(|(_, head, _)| *head == 7)
            .map(|(_, _, m)| m.pairs)
            .collect();
        assert_eq!(at_seven, [5, 10, 20]);
        assert!(matches!(found.outcome, Outcome::FirstBad { index: 11, .. }));
    }

    #[test]
    fn a_wide_interval_short_of_the_ends_change_places_the_middle() {
        // Ends of ×8.8 known within [×5.8, ×13.6]; a middle like the good end read
        // [×0.29, ×4.3]: short of the ends' change, though not of halfway (×2.97).
        let ends = Measured {
            ratio: 8.8,
            low: 5.8,
            high: 13.6,
            pairs: 4,
        };
        let middle = |ratio: f64, low: f64, high: f64| Measured {
            ratio,
            low,
            high,
            pairs: 4,
        };
        assert_eq!(side(&middle(1.1, 0.29, 4.3), &ends), Side::Good);
        assert_eq!(side(&middle(9.0, 1.3, 60.0), &ends), Side::Bad);
        assert_eq!(side(&middle(1.1, 0.29, 7.0), &ends), Side::Undecided);
        // Unlike both ends (two changes): halfway decides.
        assert_eq!(side(&middle(2.0, 1.5, 2.5), &ends), Side::Good);
        assert_eq!(side(&middle(4.0, 3.5, 4.5), &ends), Side::Bad);
        // A faster bad end, mirrored.
        let faster = Measured {
            ratio: 1.0 / 8.8,
            low: 1.0 / 13.6,
            high: 1.0 / 5.8,
            pairs: 4,
        };
        assert_eq!(side(&middle(0.9, 0.23, 3.4), &faster), Side::Good);
        assert_eq!(side(&middle(0.11, 0.02, 0.8), &faster), Side::Bad);
    }

    #[test]
    fn a_comparison_that_held_more_values_than_asked_doubles_from_what_it_held() {
        // A store that already holds 16 values a side of build 7 answers a request for 5
        // with 16: the next request is 32, not 10 (which would read the same 16 again).
        struct Held(Fake);
        impl Comparer for Held {
            type Error = std::convert::Infallible;
            fn compare(
                &mut self,
                base: usize,
                head: usize,
                pairs: u32,
            ) -> Result<Measured, Self::Error> {
                let held = if head == 7 { pairs.max(16) } else { pairs };
                let mut measured = self.0.compare(base, head, held)?;
                measured.pairs = held;
                Ok(measured)
            }
        }
        let mut held = Held(Fake {
            first_bad: 11,
            step: 1.3,
            spread: 0.05,
            fuzzy: Some((7, 32)),
        });
        let settings = Settings {
            pairs: 5,
            max_pairs: 40,
            budget: None,
        };
        let found = bisect(16, &settings, &mut held).unwrap();
        let at_seven: Vec<u32> = found
            .comparisons
            .iter()
            .filter(|(_, head, _)| *head == 7)
            .map(|(_, _, m)| m.pairs)
            .collect();
        assert_eq!(at_seven, [16, 32]);
        assert!(matches!(found.outcome, Outcome::FirstBad { index: 11, .. }));
    }

    #[test]
    fn a_step_undecided_at_the_most_pairs_says_where() {
        let mut fake = Fake {
            first_bad: 11,
            step: 1.3,
            spread: 0.05,
            fuzzy: Some((7, 1000)),
        };
        let found = bisect(16, &settings(), &mut fake).unwrap();
        assert_eq!(
            found.outcome,
            Outcome::Undecided {
                good: 0,
                bad: 15,
                at: Some(7)
            }
        );
    }

    #[test]
    fn ends_without_a_change_say_so() {
        let mut fake = Fake {
            first_bad: 99,
            step: 1.3,
            spread: 0.05,
            fuzzy: None,
        };
        let found = bisect(16, &settings(), &mut fake).unwrap();
        assert!(
            matches!(found.outcome, Outcome::NoChange { .. }),
            "{found:?}"
        );
        // The ends were given every chance: 5, 10 and 20 pairs.
        assert_eq!(found.comparisons.len(), 3);
    }

    #[test]
    fn a_faster_bad_end_is_bisected_too() {
        let mut fake = Fake {
            first_bad: 4,
            step: 0.7,
            spread: 0.05,
            fuzzy: None,
        };
        let found = bisect(9, &settings(), &mut fake).unwrap();
        assert!(
            matches!(found.outcome, Outcome::FirstBad { index: 4, .. }),
            "{found:?}"
        );
    }
}
