//! The rule: a verdict from a change, the metric's nature and its threshold
//! (see the [module documentation](crate::compare)).

use crate::metric::{Direction, Nature};

/// What a comparison concluded about one metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The candidate is worse: the change is there and beyond the threshold.
    Regressed,
    /// The candidate is better: the change is there and beyond the threshold.
    Improved,
    /// An exact size changed by no more than its threshold: reported, never failing.
    Changed,
    /// No change was shown, or it is smaller than the threshold.
    WithinNoise,
    /// A noisy metric with fewer than two samples on a side: no spread to judge by.
    SingleSample,
    /// An exact metric with equal medians.
    Unchanged,
}

impl Verdict {
    /// Every verdict, changes first.
    pub const ALL: [Verdict; 6] = [
        Verdict::Regressed,
        Verdict::Improved,
        Verdict::Changed,
        Verdict::WithinNoise,
        Verdict::SingleSample,
        Verdict::Unchanged,
    ];

    /// The verdict as words for people: `regressed`, `within noise`, `1 sample, no verdict`.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::Changed => "changed",
            Verdict::WithinNoise => "within noise",
            Verdict::SingleSample => "1 sample, no verdict",
            Verdict::Unchanged => "unchanged",
        }
    }

    /// The verdict as written in JSON and CSV: `regressed`, `within_noise`, `single_sample`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::Changed => "changed",
            Verdict::WithinNoise => "within_noise",
            Verdict::SingleSample => "single_sample",
            Verdict::Unchanged => "unchanged",
        }
    }

    /// Whether the verdict says the metric changed beyond its threshold (improved
    /// or regressed).
    pub fn is_change(self) -> bool {
        matches!(self, Verdict::Improved | Verdict::Regressed)
    }

    /// Whether a reader should see the row among the changes: improved, regressed
    /// or an exact size that changed below its threshold.
    pub fn is_reported(self) -> bool {
        self.is_change() || self == Verdict::Changed
    }
}

/// What is known about one metric's change, for [`judge`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    /// The change in the metric's unit.
    pub delta: f64,
    /// The change as a ratio candidate / base: the test's estimate for a tested
    /// metric, the ratio of medians otherwise.
    pub ratio: f64,
    /// The fewer of the two sides' successful samples.
    pub samples: usize,
    /// Whether the family-adjusted test found a change: its interval excludes 1.
    pub significant: bool,
}

/// A practical threshold: a fraction for every metric, and bytes for exact ones.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Threshold {
    /// The relative change that matters (0.03 = 3%).
    pub fraction: f64,
    /// The absolute change that matters for an exact size, in bytes.
    pub bytes: f64,
}

/// The verdict on `change` of a metric of `nature` under `threshold`; the rules
/// are in the [module documentation](mod@crate::compare).
pub fn judge(
    change: Change,
    nature: Nature,
    threshold: Threshold,
    direction: Direction,
) -> Verdict {
    match nature {
        Nature::Exact if change.delta == 0.0 => Verdict::Unchanged,
        Nature::Exact => {
            // The sizes are the same on every trial, so the point ratio is the change.
            match verdict(change.ratio, threshold.fraction, direction) {
                beyond if beyond.is_change() && change.delta.abs() > threshold.bytes => beyond,
                _ => Verdict::Changed,
            }
        }
        _ if change.samples < 2 => Verdict::SingleSample,
        _ if !change.significant => Verdict::WithinNoise,
        _ => verdict(change.ratio, threshold.fraction, direction),
    }
}

/// The verdict for a `ratio` of `candidate / base` beyond the threshold `fraction`,
/// or [`Verdict::WithinNoise`] when it is not beyond it.
pub fn verdict(ratio: f64, fraction: f64, direction: Direction) -> Verdict {
    let larger = ratio > 1.0 + fraction;
    let smaller = ratio < 1.0 - fraction;
    match (direction, larger, smaller) {
        (Direction::LowerIsBetter, true, _) | (Direction::HigherIsBetter, _, true) => {
            Verdict::Regressed
        }
        (Direction::LowerIsBetter, _, true) | (Direction::HigherIsBetter, true, _) => {
            Verdict::Improved
        }
        _ => Verdict::WithinNoise,
    }
}

#[cfg(test)]
mod tests {
    use crate::compare::*;
    use crate::metric::{Direction, Metric};
    use crate::test_support::side;

    #[test]
    fn direction_decides_the_word() {
        let lower = Direction::LowerIsBetter;
        let higher = Direction::HigherIsBetter;
        assert_eq!(verdict(1.5, 0.2, lower), Verdict::Regressed);
        assert_eq!(verdict(1.5, 0.2, higher), Verdict::Improved);
        assert_eq!(verdict(0.5, 0.2, lower), Verdict::Improved);
        assert_eq!(verdict(0.5, 0.2, higher), Verdict::Regressed);
        assert_eq!(verdict(1.1, 0.2, lower), Verdict::WithinNoise);
        // Exactly on the floor is not beyond it.
        assert_eq!(verdict(1.2, 0.2, lower), Verdict::WithinNoise);
        let base = side(
            "b",
            &[(Metric::ReclaimedRss, &[100.0, 101.0, 99.0, 100.0, 102.0])],
        );
        let candidate = side(
            "c",
            &[(Metric::ReclaimedRss, &[50.0, 51.0, 49.0, 50.0, 52.0])],
        );
        let row = &compare(&base, &candidate, &CompareOptions::default()).metrics[0];
        assert_eq!(row.verdict, Verdict::Regressed);
    }
}
