//! A whole comparison: its rows, the sides' errors and facts, and the counts of each
//! verdict every renderer's headline says.

use super::speed_probe::SpeedShift;
use super::{
    CompareOptions, FailedSample, Interleaving, MetricComparison, MissingMetric, ProcessCounts,
    SideFacts, Verdict,
};
use crate::result::{OVERRIDES_KEY, Request};

/// Two sides compared metric by metric.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Comparison {
    /// The base side's sha.
    pub base_sha: String,
    /// The candidate side's sha.
    pub candidate_sha: String,
    /// How the comparison was made.
    pub options: CompareOptions,
    /// Metrics with successful samples on both sides, in metric order.
    pub metrics: Vec<MetricComparison>,
    /// Metrics without successful samples on one or both sides, in metric order.
    pub missing: Vec<MissingMetric>,
    /// The base side's own error, when its last phase failed.
    pub base_error: Option<String>,
    /// The candidate side's own error, when its last phase failed.
    pub candidate_error: Option<String>,
    /// Failed samples of the base side.
    pub base_failures: Vec<FailedSample>,
    /// Failed samples of the candidate side.
    pub candidate_failures: Vec<FailedSample>,
    /// How many processes each side's trials found, per phase that counted them.
    pub process_counts: Vec<ProcessCounts>,
    /// Where and under what load the base side was measured, and with what versions.
    pub base_facts: SideFacts,
    /// The same for the candidate side.
    pub candidate_facts: SideFacts,
    /// Whether the trials were interleaved, which decided the drift allowance.
    pub interleaving: Interleaving,
    /// How many metrics were tested, the family Holm's adjustment is over (for the
    /// metrics not gated on, when [`gated_tested`](Self::gated_tested) is set).
    pub tested: usize,
    /// How many of the gated metrics ([`CompareOptions::gated`](super::CompareOptions::gated))
    /// were tested: their own Holm family; `None` when the comparison gates on none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gated_tested: Option<usize>,
    /// The overrides the base side ran with (`clibench ab --base`, `run --set`), as its
    /// result file's request records them. A [`Side`](crate::Side) does not hold them: whoever loaded
    /// the result files sets them, and the titles name the sides by them when both built
    /// the same commit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_overrides: Option<String>,
    /// The same for the candidate side.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidate_overrides: Option<String>,
    /// Between separate runs, how far the host's speed moved by the trials' speed
    /// probes; `None` for interleaved sides or when a run recorded fewer than two.
    pub speed_shift: Option<SpeedShift>,
}

/// Each side's own overrides (`base`, `candidate`: as a result's `config.overrides`
/// records them, space-separated), after the leading ones both share: `ab --scenario
/// long-session --head X` records the scenario's overrides on both sides, and what tells
/// the sides apart is `X`. The shared part ends where both texts have a space or end.
pub fn own_overrides<'a>(base: &'a str, candidate: &'a str) -> (&'a str, &'a str) {
    let common = base
        .bytes()
        .zip(candidate.bytes())
        .take_while(|(b, c)| b == c)
        .count();
    // The longest shared prefix that ends at an override's end on both sides.
    let ends_here = |text: &str, at: usize| at == text.len() || text.as_bytes()[at] == b' ';
    let shared = (0..=common)
        .rev()
        .find(|&at| ends_here(base, at) && ends_here(candidate, at))
        .unwrap_or(0);
    let own = |text: &'a str| text[shared..].trim_start();
    (own(base), own(candidate))
}

impl Comparison {
    /// The comparison with each side's overrides taken from its result file's request
    /// (`config.overrides`, which `clibench run --set` and `ab` record).
    pub fn with_overrides_of(mut self, base: &Request, candidate: &Request) -> Comparison {
        let overrides = |request: &Request| request.config.get(OVERRIDES_KEY).cloned();
        self.base_overrides = overrides(base);
        self.candidate_overrides = overrides(candidate);
        self
    }

    /// The metrics whose verdict is [`Verdict::Regressed`].
    pub fn regressions(&self) -> impl Iterator<Item = &MetricComparison> {
        self.metrics
            .iter()
            .filter(|row| row.verdict == Verdict::Regressed)
    }

    /// Whether any metric regressed.
    pub fn has_regression(&self) -> bool {
        self.regressions().next().is_some()
    }

    /// The phases whose process counts changed; see [`ProcessCounts::changed`].
    pub fn process_count_changes(&self) -> impl Iterator<Item = &ProcessCounts> {
        self.process_counts.iter().filter(|counts| counts.changed())
    }

    /// How many metrics got each verdict, and how many are missing on a side: what
    /// every renderer's headline says.
    pub fn verdict_counts(&self) -> VerdictCounts {
        let mut counts = VerdictCounts {
            missing: self.missing.len(),
            ..VerdictCounts::default()
        };
        for row in &self.metrics {
            *counts.slot(row.verdict) += 1;
        }
        counts
    }
}

/// How many metrics of a [`Comparison`] got each verdict; see
/// [`Comparison::verdict_counts`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VerdictCounts {
    /// Metrics that got [`Verdict::Regressed`].
    pub regressed: usize,
    /// Metrics that got [`Verdict::Improved`].
    pub improved: usize,
    /// Metrics that got [`Verdict::WithinNoise`].
    pub within_noise: usize,
    /// Metrics that got [`Verdict::Changed`].
    pub changed: usize,
    /// Metrics that got [`Verdict::SingleSample`].
    pub single_sample: usize,
    /// Metrics that got [`Verdict::Unchanged`].
    pub unchanged: usize,
    /// Metrics without a successful sample on one side or both, which got no verdict.
    pub missing: usize,
}

impl VerdictCounts {
    /// How many metrics got `verdict`.
    pub fn of(&self, verdict: Verdict) -> usize {
        match verdict {
            Verdict::Regressed => self.regressed,
            Verdict::Improved => self.improved,
            Verdict::WithinNoise => self.within_noise,
            Verdict::Changed => self.changed,
            Verdict::SingleSample => self.single_sample,
            Verdict::Unchanged => self.unchanged,
        }
    }

    fn slot(&mut self, verdict: Verdict) -> &mut usize {
        match verdict {
            Verdict::Regressed => &mut self.regressed,
            Verdict::Improved => &mut self.improved,
            Verdict::WithinNoise => &mut self.within_noise,
            Verdict::Changed => &mut self.changed,
            Verdict::SingleSample => &mut self.single_sample,
            Verdict::Unchanged => &mut self.unchanged,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::compare::*;
    use crate::metric::Metric;
    use crate::result::Role;
    use crate::test_support::side;
    use crate::trial::{Sample, record};

    #[test]
    fn a_scenario_both_sides_ran_is_left_out_of_their_own_overrides() {
        let scenario = "model.script={ turns = [{ text = \"a b\" }] } session.turns=100";
        let base = scenario.to_string();
        let head = format!("{scenario} measure.env.LEAK=1");
        assert_eq!(own_overrides(&base, &head), ("", "measure.env.LEAK=1"));
        // Shared text that ends inside an override is not shared.
        assert_eq!(
            own_overrides("session.turns=10", "session.turns=100"),
            ("session.turns=10", "session.turns=100")
        );
        assert_eq!(own_overrides("a=1 b=2", "a=1 b=3"), ("b=2", "b=3"));
        assert_eq!(own_overrides("", "a=1"), ("", "a=1"));
    }

    #[test]
    fn verdict_counts_count_each_verdict_and_the_missing_metrics() {
        let base = side(
            "b",
            &[
                (Metric::Cold, &[0.40, 0.41, 0.42, 0.40, 0.43]),
                (Metric::Warm, &[0.20, 0.22, 0.21, 0.20, 0.21]),
                (Metric::Rss, &[100.0, 102.0, 101.0, 99.0, 100.0]),
                (Metric::Pss, &[90.0, 91.0, 92.0, 90.0, 91.0]),
                (Metric::Install, &[12.0]),
                (Metric::Disk, &[1000.0]),
                (Metric::Bundle, &[500.0]),
                (Metric::Keystroke, &[0.01, 0.011]),
            ],
        );
        let candidate = side(
            "c",
            &[
                (Metric::Cold, &[0.60, 0.62, 0.61, 0.63, 0.60]),
                (Metric::Warm, &[0.30, 0.31, 0.32, 0.30, 0.31]),
                (Metric::Rss, &[60.0, 61.0, 59.0, 62.0, 60.0]),
                (Metric::Pss, &[91.0, 90.0, 92.0, 91.0, 90.0]),
                (Metric::Install, &[12.5]),
                (Metric::Disk, &[1000.0]),
                (Metric::Bundle, &[600.0]),
            ],
        );
        let comparison = compare(
            &base,
            &candidate,
            &CompareOptions {
                interleaving: Some(Interleaving::Interleaved),
                ..CompareOptions::default()
            },
        );
        let counts = comparison.verdict_counts();
        assert_eq!(comparison.tested, 4, "cold, warm, rss, pss");
        // bundle grew by 100 bytes: reported as changed, not a regression.
        assert_eq!(
            counts,
            VerdictCounts {
                regressed: 2,
                improved: 1,
                changed: 1,
                within_noise: 1,
                single_sample: 1,
                unchanged: 1,
                missing: 1,
            }
        );
        // `of` agrees with the rows it summarizes, for every verdict.
        for verdict in Verdict::ALL {
            let rows = comparison
                .metrics
                .iter()
                .filter(|row| row.verdict == verdict)
                .count();
            assert_eq!(counts.of(verdict), rows, "{verdict:?}");
        }
    }

    #[test]
    fn metrics_missing_on_a_side_are_listed() {
        let mut base = side("b", &[(Metric::Cold, &[1.0]), (Metric::UiSteps, &[2.0])]);
        let mut candidate = side("c", &[(Metric::Cold, &[1.0]), (Metric::Keystroke, &[0.01])]);
        record(&mut base, Metric::Pss, 0, Sample::Value(5.0));
        record(
            &mut candidate,
            Metric::Pss,
            0,
            Sample::Error("unreadable".into()),
        );
        let comparison = compare(&base, &candidate, &CompareOptions::default());
        assert_eq!(comparison.metrics.len(), 1);
        let missing: Vec<_> = comparison
            .missing
            .iter()
            .map(|m| (m.metric, m.missing_on()))
            .collect();
        assert_eq!(
            missing,
            [
                (Metric::Pss, vec![Role::Candidate]),
                (Metric::UiSteps, vec![Role::Candidate]),
                (Metric::Keystroke, vec![Role::Base]),
            ]
        );
        assert_eq!(comparison.candidate_failures[0].error, "unreadable");
    }
}
