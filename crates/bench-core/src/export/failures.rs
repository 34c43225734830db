//! The failures of one or two sides, in the order every exporter lists them: each side's
//! run error, then its failed samples. The exporters only differ in how a line looks.

use crate::compare::FailedSample;
use crate::metric::Metric;

/// One side's failures: its label ("" for a lone result, "base"/"candidate" in a
/// comparison), its run error and its failed samples.
pub(crate) type SideFailures<'a> = (&'a str, &'a Option<String>, &'a Vec<FailedSample>);

/// One failure to list.
pub(crate) enum Failure<'a> {
    /// The side's own error, when its last phase failed.
    Run(&'a str),
    /// Samples of one trial that failed with the same error: one failure (a session
    /// that failed at turn 1 costs all of its 17 metrics, and listing each one repeated
    /// the error and its screen 17 times).
    Samples(FailedSamples<'a>),
}

/// The metrics of one trial that one error cost.
pub(crate) struct FailedSamples<'a> {
    /// The metrics, in the order they were failed.
    pub(crate) metrics: Vec<Metric>,
    /// The trial they were lost in.
    pub(crate) trial: u32,
    /// Why.
    pub(crate) error: &'a str,
}

impl FailedSamples<'_> {
    /// The metrics as `` `turn`, `submit` `` (each with `code`).
    pub(crate) fn metric_list(&self, code: impl Fn(&str) -> String) -> String {
        self.metrics
            .iter()
            .map(|metric| code(&metric.to_string()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// `failed` grouped by trial and error, in the order each group first appears.
pub(crate) fn grouped(failed: &[FailedSample]) -> Vec<FailedSamples<'_>> {
    let mut groups: Vec<FailedSamples<'_>> = Vec::new();
    for sample in failed {
        match groups
            .iter_mut()
            .find(|group| group.trial == sample.trial && group.error == sample.error)
        {
            Some(group) => group.metrics.push(sample.metric),
            None => groups.push(FailedSamples {
                metrics: vec![sample.metric],
                trial: sample.trial,
                error: &sample.error,
            }),
        }
    }
    groups
}

/// Every failure with the prefix its line starts with ("" or "base "); empty when
/// nothing failed, so an exporter writes no section at all.
pub(crate) fn failures<'a>(sides: &[SideFailures<'a>]) -> Vec<(String, Failure<'a>)> {
    let mut lines = Vec::new();
    for &(name, error, failed) in sides {
        let prefix = if name.is_empty() {
            String::new()
        } else {
            format!("{name} ")
        };
        if let Some(error) = error {
            lines.push((prefix.clone(), Failure::Run(error)));
        }
        lines.extend(
            grouped(failed)
                .into_iter()
                .map(|group| (prefix.clone(), Failure::Samples(group))),
        );
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(metric: Metric, trial: u32, error: &str) -> FailedSample {
        FailedSample {
            metric,
            trial,
            error: error.to_owned(),
        }
    }

    #[test]
    fn one_error_of_one_trial_is_one_failure_listing_its_metrics() {
        let samples = [
            failed(Metric::Turn, 0, "turn 1: stopped"),
            failed(Metric::Turn, 1, "turn 2: stopped"),
            failed(Metric::Submit, 0, "turn 1: stopped"),
            failed(Metric::IdleCpu, 0, "the idle window was empty"),
        ];
        let groups: Vec<(String, u32, &str)> = grouped(&samples)
            .iter()
            .map(|g| (g.metric_list(|m| m.to_owned()), g.trial, g.error))
            .collect();
        assert_eq!(
            groups,
            [
                ("turn, submit".to_owned(), 0, "turn 1: stopped"),
                ("turn".to_owned(), 1, "turn 2: stopped"),
                ("idle_cpu".to_owned(), 0, "the idle window was empty"),
            ]
        );
    }
}
