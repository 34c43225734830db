//! Bisect's search: the first build in a range whose metric moved like the bad end's.
//!
//! Like Chromium's Pinpoint: the two ends are compared first, to learn the change (its
//! ratio `r`, bad over good, and so its direction); then the range is halved, each step
//! comparing the middle build with both ends. The middle is bad when its comparison with
//! the good end rules out "like the good end" (the interval excludes no change, towards
//! `r`) and its comparison with the bad end does not rule out "like the bad end"; good in
//! the mirror case; when both are ruled out (a middle in between, two changes), the larger
//! of the two steps decides; and it is undecided when neither is: an undecided comparison
//! is run again with twice the pairs, up to a maximum, before the search gives up and
//! says where. How two builds are compared is the caller's ([`Comparer`]: `clibench
//! bisect` compares them within the runs that measured both, or through the good end,
//! from the history, and runs `ab`'s interleaved pairs for what it lacks; see
//! [`paired`](super::paired)), so the search is tested without building anything.

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

/// What the search is doing, for a caller that tells a person (the library prints
/// nothing).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Event {
    /// Comparison number `step` (from 1) of `base` with `head`, asking for `pairs`.
    Started {
        /// The comparison's number, from 1.
        step: usize,
        /// The base build (index into the range).
        base: usize,
        /// The head build.
        head: usize,
        /// The pairs asked for.
        pairs: u32,
    },
    /// What comparison `step` found.
    Found {
        /// The comparison's number.
        step: usize,
        /// The change and its interval.
        measured: Measured,
    },
}

/// A [`Comparer`] that tells `tell` each comparison before and after `inner` makes it.
#[derive(Debug)]
pub struct Narrated<C, F> {
    /// The comparer that does the work.
    pub inner: C,
    tell: F,
    step: usize,
}

impl<C: Comparer, F: FnMut(Event)> Narrated<C, F> {
    /// `inner`, told to `tell`.
    pub fn new(inner: C, tell: F) -> Narrated<C, F> {
        Narrated {
            inner,
            tell,
            step: 0,
        }
    }
}

impl<C: Comparer, F: FnMut(Event)> Comparer for Narrated<C, F> {
    type Error = C::Error;

    fn compare(&mut self, base: usize, head: usize, pairs: u32) -> Result<Measured, C::Error> {
        self.step += 1;
        let step = self.step;
        (self.tell)(Event::Started {
            step,
            base,
            head,
            pairs,
        });
        let measured = self.inner.compare(base, head, pairs)?;
        (self.tell)(Event::Found { step, measured });
        Ok(measured)
    }
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

/// Where the middle lies, from `from_good` (the good end against the middle) and
/// `to_bad` (the middle against the bad end), given the ends' comparison `ends` (its
/// direction). Each question is a test of its own: "like the good end?" of the middle's
/// values against the good end's, "like the bad end?" against the bad end's. (The rule
/// before asked the middle's interval over the good end to lie wholly short of the ends'
/// interval, two intervals that must not overlap, which is a test at about p < 0.006 for
/// equal widths rather than 0.05: pi's 0.70.5 read +1.9% [-2.0%, +6.0%] against ends of
/// +10.1% [+4.9%, +15.4%] and stayed undecided at 20 values a side.)
fn side(from_good: &Measured, to_bad: &Measured, ends: &Measured) -> Side {
    let slower = ends.ratio > 1.0;
    let moved = |m: &Measured| if slower { m.low > 1.0 } else { m.high < 1.0 };
    match (moved(from_good), moved(to_bad)) {
        (true, false) => Side::Bad,
        (false, true) => Side::Good,
        // Unlike both ends (two changes, or one spread over releases): the middle goes
        // with the end it is nearer to on a log scale.
        (true, true) if from_good.ratio.ln().abs() >= to_bad.ratio.ln().abs() => Side::Bad,
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
    let last = count.saturating_sub(1);
    let (mut good, mut bad) = (0, last);
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
            let from_good = run(0, middle, pairs, &mut comparisons)?;
            // And against the bad end: read through the good end (the ends' run and the
            // middle's), so it usually costs no measurement.
            let to_bad = run(middle, last, pairs, &mut comparisons)?;
            match side(&from_good, &to_bad, &ends) {
                Side::Bad => bad = middle,
                Side::Good => good = middle,
                Side::Undecided if pairs < settings.max_pairs => {
                    // From the values it already had: a comparison read from the store
                    // may hold more than was asked, and asking for fewer again would
                    // read the same values to the same end.
                    let held = pairs.max(from_good.pairs).max(to_bad.pairs);
                    pairs = (held * 2).min(settings.max_pairs);
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
    /// ±`spread` around the true ratio, or spans both 1 and the ratio when `fuzzy` names
    /// one of its builds and fewer pairs than it needs.
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
                && (head == index || base == index)
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
            // The ends, four halvings of two comparisons, at most one more for the
            // last pair.
            assert!(found.comparisons.len() <= 10, "{:?}", found.comparisons);
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
        // Every middle against the two ends; only the first bad's own comparison is
        // adjacent.
        let (last, middles) = found.comparisons[1..].split_last().unwrap();
        assert!(
            middles
                .iter()
                .all(|&(base, head, _)| base == 0 || head == 15),
            "{middles:?}"
        );
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

    fn measured(ratio: f64, low: f64, high: f64) -> Measured {
        Measured {
            ratio,
            low,
            high,
            pairs: 20,
        }
    }

    #[test]
    fn a_middle_unlike_the_bad_end_is_good_though_its_interval_meets_the_ends() {
        // pi 0.63.1 to 0.73.1, warm_cpu: ends +10.1% [+4.9%, +15.4%]; 0.70.5 read +1.9%
        // [-2.0%, +6.0%] over the good end, an interval that reaches into the ends' own,
        // and the rule that asked them not to overlap left it undecided at 20 values a
        // side. Against the bad end's values it is clearly short: +8% [+3.5%, +12.7%].
        let ends = measured(1.101, 1.049, 1.154);
        let from_good = measured(1.019, 0.980, 1.060);
        assert_eq!(
            side(&from_good, &measured(1.080, 1.035, 1.127), &ends),
            Side::Good
        );
        // Like the bad end as well as the good one: nothing is ruled out.
        assert_eq!(
            side(&from_good, &measured(1.080, 0.990, 1.170), &ends),
            Side::Undecided
        );
    }

    #[test]
    fn each_end_is_ruled_out_by_its_own_comparison() {
        let ends = measured(8.8, 5.8, 13.6);
        // Moved from the good end, not from the bad end: bad; and the mirror.
        let far = measured(9.0, 1.3, 60.0);
        let near = measured(1.0, 0.5, 2.0);
        assert_eq!(side(&far, &near, &ends), Side::Bad);
        assert_eq!(side(&near, &far, &ends), Side::Good);
        assert_eq!(side(&near, &near, &ends), Side::Undecided);
        // Unlike both ends (two changes): the larger step decides.
        let small = measured(1.5, 1.2, 1.9);
        let large = measured(5.0, 4.0, 6.2);
        assert_eq!(side(&small, &large, &ends), Side::Good);
        assert_eq!(side(&large, &small, &ends), Side::Bad);
        // A faster bad end, mirrored.
        let faster = measured(1.0 / 8.8, 1.0 / 13.6, 1.0 / 5.8);
        let dropped = measured(0.11, 0.02, 0.8);
        let level = measured(0.9, 0.23, 3.4);
        assert_eq!(side(&level, &dropped, &faster), Side::Good);
        assert_eq!(side(&dropped, &level, &faster), Side::Bad);
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
                let held = if head == 7 || base == 7 {
                    pairs.max(16)
                } else {
                    pairs
                };
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
    fn a_good_middle_whose_interval_meets_the_ends_is_placed_by_the_bad_ends_values() {
        // A 10% change measured within ±6%: a good middle's interval over the good end
        // ([0.94, 1.06]) overlaps the ends' ([1.04, 1.16]), so asking the two not to
        // overlap left it undecided at every count of pairs; against the bad end it is
        // plainly 10% short.
        let mut fake = Fake {
            first_bad: 11,
            step: 1.10,
            spread: 0.06,
            fuzzy: None,
        };
        let found = bisect(16, &settings(), &mut fake).unwrap();
        assert!(
            matches!(found.outcome, Outcome::FirstBad { index: 11, .. }),
            "{found:?}"
        );
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
    fn a_narrated_search_tells_each_comparison_before_and_after() {
        let mut events = Vec::new();
        let fake = Fake {
            first_bad: 2,
            step: 1.3,
            spread: 0.05,
            fuzzy: None,
        };
        let mut narrated = Narrated::new(fake, |event| events.push(event));
        let found = bisect(4, &settings(), &mut narrated).unwrap();
        assert!(matches!(found.outcome, Outcome::FirstBad { index: 2, .. }));
        assert_eq!(events.len(), 2 * found.comparisons.len());
        assert_eq!(
            events[0],
            Event::Started {
                step: 1,
                base: 0,
                head: 3,
                pairs: 5
            }
        );
        assert!(matches!(events[1], Event::Found { step: 1, .. }));
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
