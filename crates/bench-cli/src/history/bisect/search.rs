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
//! [`paired`](crate::history::bisect::paired)), so the search is tested without building anything.

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

/// Which way the change bisect looks for goes, bad end over good end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sought {
    /// Either way.
    Any,
    /// The bad end's values are higher (a time that grew, or a rate that fell when
    /// an improvement is sought).
    Higher,
    /// The bad end's values are lower.
    Lower,
}

/// How the search spends its effort.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Which way the change must go: an end that moved the other way is not searched.
    pub sought: Sought,
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
    /// The ends differ, but the other way than [`Settings::sought`]: the bad end is
    /// better (or, seeking an improvement, worse), and a search would name the build
    /// that made it so, as if it were the change asked for.
    OtherWay {
        /// The ends' comparison.
        measured: Measured,
    },
    /// Neighbours placed good and bad whose own comparison does not show the change at
    /// the most pairs, though both placements were made again at the most pairs: the
    /// change lies after `good` and at or before `bad` and has no one build (spread over
    /// several, or too small to see between two).
    Unconfirmed {
        /// The last build placed good.
        good: usize,
        /// The first build placed bad.
        bad: usize,
        /// Build `good` against build `bad`, with the most pairs.
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

/// Whether `measured` rules out "no change" towards the ends' change `ends`.
/// Whether the ends' change (which excludes no change) goes the way `sought`.
fn goes(ends: &Measured, sought: Sought) -> bool {
    match sought {
        Sought::Any => true,
        Sought::Higher => ends.low > 1.0,
        Sought::Lower => ends.high < 1.0,
    }
}

fn moved(measured: &Measured, ends: &Measured) -> bool {
    if ends.ratio > 1.0 {
        measured.low > 1.0
    } else {
        measured.high < 1.0
    }
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
    match (moved(from_good, ends), moved(to_bad, ends)) {
        (true, false) => Side::Bad,
        (false, true) => Side::Good,
        // Unlike both ends (two changes, or one spread over releases): the middle goes
        // with the end it is nearer to on a log scale.
        (true, true) if from_good.ratio.ln().abs() >= to_bad.ratio.ln().abs() => Side::Bad,
        (true, true) => Side::Good,
        (false, false) => Side::Undecided,
    }
}

/// What placing one build came to.
enum Placement {
    /// Good or bad, and whether it took the most pairs to say so.
    Placed(Side, bool),
    /// Undecided at the most pairs.
    Stuck,
    /// The budget ran out first.
    OutOfTime,
}

/// One bisection under way: the comparer, the settings, and every comparison so far.
struct Search<'a, C> {
    comparer: &'a mut C,
    settings: &'a Settings,
    started: Instant,
    last: usize,
    comparisons: Vec<(usize, usize, Measured)>,
}

impl<C: Comparer> Search<'_, C> {
    fn out_of_time(&self) -> bool {
        self.settings
            .budget
            .is_some_and(|budget| self.started.elapsed() >= budget)
    }

    fn run(&mut self, base: usize, head: usize, pairs: u32) -> Result<Measured, C::Error> {
        let measured = self.comparer.compare(base, head, pairs)?;
        self.comparisons.push((base, head, measured));
        Ok(measured)
    }

    /// The next number of pairs after a comparison that held `held`; `None` at the most.
    /// From the values it held, not from what was asked: a comparison read from the store
    /// may hold more than was asked, and asking for fewer again would read the same values
    /// to the same end.
    fn more_pairs(&self, held: u32) -> Option<u32> {
        (held < self.settings.max_pairs).then(|| (held * 2).min(self.settings.max_pairs))
    }

    /// The ends compared, with more pairs while their interval holds "no change"; `Err`
    /// with the comparison holding the most pairs when it never excluded it.
    fn ends(&mut self) -> Result<Result<Measured, Measured>, C::Error> {
        let mut pairs = self.settings.pairs.max(2);
        loop {
            let measured = self.run(0, self.last, pairs)?;
            if measured.low > 1.0 || measured.high < 1.0 {
                return Ok(Ok(measured));
            }
            match self.more_pairs(pairs.max(measured.pairs)) {
                Some(more) if !self.out_of_time() => pairs = more,
                _ => return Ok(Err(measured)),
            }
        }
    }

    /// Places `middle`, starting at `pairs` and doubling while undecided.
    fn place(
        &mut self,
        middle: usize,
        mut pairs: u32,
        ends: &Measured,
    ) -> Result<Placement, C::Error> {
        loop {
            if self.out_of_time() {
                return Ok(Placement::OutOfTime);
            }
            // Against the good end, the base of the ends' ratio: a middle's ratio over
            // the last good build is over another denominator, and on session_growth
            // (good values near 0) an outlier in that build's values made a bad middle
            // read ×5.8 against ends of ×54, short of halfway: the search went wrong.
            let from_good = self.run(0, middle, pairs)?;
            // And against the bad end: read through the good end (the ends' run and the
            // middle's), so it usually costs no measurement.
            let to_bad = self.run(middle, self.last, pairs)?;
            let held = pairs.max(from_good.pairs).max(to_bad.pairs);
            let more = self.more_pairs(held);
            match side(&from_good, &to_bad, ends) {
                Side::Undecided => match more {
                    Some(more) => pairs = more,
                    None => return Ok(Placement::Stuck),
                },
                placed => return Ok(Placement::Placed(placed, more.is_none())),
            }
        }
    }

    /// Neighbours `good` and `bad` compared, with more pairs while the comparison does not
    /// show the ends' change: the last comparison made.
    fn confirm(&mut self, good: usize, bad: usize, ends: &Measured) -> Result<Measured, C::Error> {
        let mut pairs = self.settings.pairs.max(2);
        loop {
            // Already run when a step compared exactly these two, as the first step of
            // a range whose good end is build 0 does.
            let known = self
                .comparisons
                .iter()
                .rev()
                .find(|&&(base, head, m)| (base, head) == (good, bad) && m.pairs >= pairs)
                .map(|&(_, _, measured)| measured);
            let measured = match known {
                Some(measured) => measured,
                None => self.run(good, bad, pairs)?,
            };
            if moved(&measured, ends) || self.out_of_time() {
                return Ok(measured);
            }
            match self.more_pairs(pairs.max(measured.pairs)) {
                Some(more) => pairs = more,
                None => return Ok(measured),
            }
        }
    }
}

/// Bisects the builds `0..count` (0 known good, `count - 1` known bad).
///
/// Each build between is placed good or bad by its comparisons with the two ends, and
/// the search narrows until a good and a bad build are neighbours. Their own comparison
/// must then show the change, or the search names nothing: a placement made at few pairs
/// can be a false alarm (the demo's 1.5 s step under a load of 5 placed the build before
/// it bad at 2 pairs, and the named build read +17.2% [-49.5%, +172.1%] against its
/// predecessor, an interval holding no change). So neighbours that do not differ at the
/// most pairs have their placements made again, each at the most pairs, and the search
/// goes on from what they say; when both placements stand, the change has no one build
/// (it is spread over several, or too small to see between two) and the search says so.
pub fn bisect<C: Comparer>(
    count: usize,
    settings: &Settings,
    comparer: &mut C,
) -> Result<Bisection, C::Error> {
    let last = count.saturating_sub(1);
    let mut search = Search {
        comparer,
        settings,
        started: Instant::now(),
        last,
        comparisons: Vec::new(),
    };
    let ends = match search.ends()? {
        Ok(ends) if !goes(&ends, settings.sought) => {
            return Ok(Bisection {
                outcome: Outcome::OtherWay { measured: ends },
                comparisons: search.comparisons,
            });
        }
        Ok(ends) => ends,
        Err(measured) => {
            return Ok(Bisection {
                outcome: Outcome::NoChange { measured },
                comparisons: search.comparisons,
            });
        }
    };
    // Every build placed so far; the search lies between the highest good and the lowest
    // bad. Placements only narrow the range, so every good one lies below every bad one,
    // and placing one of the two bounds again keeps it so.
    let (mut goods, mut bads) = (vec![0], vec![last]);
    // Builds placed at the most pairs (the ends are given): placed again, they would read
    // the same values to the same end.
    let mut settled = vec![0, last];
    let ending = |outcome, search: Search<'_, C>| Bisection {
        outcome,
        comparisons: search.comparisons,
    };
    let bounds = |goods: &[usize], bads: &[usize]| {
        let good = goods.iter().copied().max().unwrap_or(0);
        (good, bads.iter().copied().min().unwrap_or(last))
    };
    loop {
        let (good, bad) = bounds(&goods, &bads);
        let (build, pairs) = if bad - good > 1 {
            (good + (bad - good) / 2, settings.pairs.max(2))
        } else {
            let measured = search.confirm(good, bad, &ends)?;
            if moved(&measured, &ends) {
                return Ok(ending(
                    Outcome::FirstBad {
                        index: bad,
                        measured,
                    },
                    search,
                ));
            }
            if search.out_of_time() {
                let outcome = Outcome::Undecided {
                    good,
                    bad,
                    at: None,
                };
                return Ok(ending(outcome, search));
            }
            // The bad bound first: a false alarm in its comparison with the good end
            // is what moves a bad bound below the change.
            let Some(again) = [bad, good].into_iter().find(|b| !settled.contains(b)) else {
                return Ok(ending(
                    Outcome::Unconfirmed {
                        good,
                        bad,
                        measured,
                    },
                    search,
                ));
            };
            goods.retain(|&b| b != again);
            bads.retain(|&b| b != again);
            (again, settings.max_pairs)
        };
        match search.place(build, pairs, &ends)? {
            Placement::Placed(placed, at_most) => {
                if at_most {
                    settled.push(build);
                }
                match placed {
                    Side::Bad => bads.push(build),
                    _ => goods.push(build),
                }
            }
            // Between the bounds as they stand: without `build` when it was a bound
            // placed again.
            Placement::Stuck => {
                let (good, bad) = bounds(&goods, &bads);
                let outcome = Outcome::Undecided {
                    good,
                    bad,
                    at: Some(build),
                };
                return Ok(ending(outcome, search));
            }
            Placement::OutOfTime => {
                let (good, bad) = bounds(&goods, &bads);
                let outcome = Outcome::Undecided {
                    good,
                    bad,
                    at: None,
                };
                return Ok(ending(outcome, search));
            }
        }
    }
}

#[cfg(test)]
mod tests;
