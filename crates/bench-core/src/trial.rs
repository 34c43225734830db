//! Recording samples into a [`Side`] and deciding whether a trial failed.

use crate::metric::{Metric, Phase};
use crate::result::{MAX_ERROR_CHARS, Observation, Side, truncate_chars};

/// What one measurement produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Sample {
    /// A value in the metric's unit (seconds or bytes).
    Value(f64),
    /// Why the measurement failed.
    Error(String),
}

/// Records `sample` as `metric`'s sample for `trial`, replacing any earlier
/// sample of that trial (a retried phase overwrites its own trial only).
///
/// The side stays valid: an error is cut to 4,000 characters, and a value that is
/// not finite and non-negative is recorded as an error saying so. A trial above
/// [`MAX_TRIAL`](crate::MAX_TRIAL) is recorded as given, and saving the result then fails with its path.
pub fn record(side: &mut Side, metric: Metric, trial: u32, sample: Sample) {
    let observation = match sample {
        Sample::Value(value) if value.is_finite() && value >= 0.0 => {
            Observation::value(trial, value)
        }
        Sample::Value(value) => Observation::error(
            trial,
            format!("measured an invalid value {value} (must be finite and non-negative)"),
        ),
        Sample::Error(error) => Observation::error(trial, truncate_chars(error, MAX_ERROR_CHARS)),
    };
    let samples = side.metrics.entry(metric).or_default();
    samples.retain(|sample| sample.trial != trial);
    samples.push(observation);
}

/// Why `trial` of `phase` failed, empty when it succeeded. The rules, so that a trial
/// fails for a cause and the cause is said first:
///
/// - The phase's metrics are considered, `disk` only on trial 0 (it is measured once).
/// - The side's own error comes first, then every errored sample of this trial as
///   `metric: error`; metrics that failed with the same error share one entry,
///   `metric, other: error`.
/// - When there are none, each of the phase's metrics with no sample for this trial
///   gives `metric: measurement missing`.
pub fn trial_errors(side: &Side, phase: Phase, trial: u32) -> Vec<String> {
    trial_errors_without(side, phase, trial, &[])
}

/// [`trial_errors`] for a target that has no `absent` metrics at all (no artifacts, so no
/// `bundle`; nothing to install, so no `install` time): their absence is no failure.
pub fn trial_errors_without(
    side: &Side,
    phase: Phase,
    trial: u32,
    absent: &[Metric],
) -> Vec<String> {
    let samples_of = |metric: Metric| {
        side.metrics
            .get(&metric)
            .into_iter()
            .flatten()
            .filter(move |sample| sample.trial == trial)
    };
    // A metric recorded only on request fails its trial when it was asked for (it has a
    // sample) and failed; it is never missing.
    let requested = Metric::ALL
        .into_iter()
        .filter(|m| m.phase() == phase && m.on_request() && samples_of(*m).next().is_some());
    let metrics: Vec<Metric> = phase
        .metrics()
        .chain(requested)
        .filter(|&metric| metric != Metric::Disk || trial == 0)
        .filter(|metric| !absent.contains(metric))
        .collect();
    let mut errors: Vec<String> = side.error.iter().cloned().collect();
    // One failure is often recorded under every metric it prevented (a session turn that
    // failed leaves each turn metric without a value): it is said once, naming them all.
    let mut failures: Vec<(Vec<Metric>, &str)> = Vec::new();
    for &metric in &metrics {
        for sample in samples_of(metric) {
            if let Some(error) = &sample.error {
                match failures
                    .iter_mut()
                    .find(|(_, said)| *said == error.as_str())
                {
                    Some((named, _)) => named.push(metric),
                    None => failures.push((vec![metric], error)),
                }
            }
        }
    }
    for (named, error) in failures {
        let named: Vec<String> = named.iter().map(Metric::to_string).collect();
        errors.push(format!("{}: {error}", named.join(", ")));
    }
    if errors.is_empty() {
        for &metric in &metrics {
            if samples_of(metric).next().is_none() {
                errors.push(format!("{metric}: measurement missing"));
            }
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_metric_the_target_cannot_have_is_not_missing() {
        let side = Side::new("a");
        assert_eq!(
            trial_errors(&side, Phase::Prepare, 0),
            ["bundle: measurement missing"]
        );
        assert!(trial_errors_without(&side, Phase::Prepare, 0, &[Metric::Bundle]).is_empty());
    }

    #[test]
    fn a_metric_recorded_on_request_fails_the_trial_only_when_asked_for_and_failed() {
        let mut side = Side::new("a");
        for metric in Phase::Session.metrics() {
            record(&mut side, metric, 0, Sample::Value(1.0));
        }
        // No paste asked for: nothing is missing.
        assert!(trial_errors(&side, Phase::Session, 0).is_empty());
        record(&mut side, Metric::PasteCpu, 0, Sample::Value(0.5));
        record(
            &mut side,
            Metric::PasteAccept,
            0,
            Sample::Error("no echo".into()),
        );
        assert_eq!(
            trial_errors(&side, Phase::Session, 0),
            ["paste_accept: no echo"]
        );
    }

    #[test]
    fn one_failure_recorded_under_several_metrics_is_said_once() {
        let mut side = Side::new("a");
        let failed = "turn 1 timed out after 30 s waiting for the screen to match";
        record(&mut side, Metric::Cold, 0, Sample::Error(failed.into()));
        record(&mut side, Metric::ColdCpu, 0, Sample::Error(failed.into()));
        record(&mut side, Metric::Rss, 0, Sample::Error("other".into()));
        let errors = trial_errors(&side, Phase::Measure, 0);
        assert_eq!(
            errors,
            [format!("cold, cold_cpu: {failed}"), "rss: other".to_owned()]
        );
    }

    #[test]
    fn record_replaces_only_that_trials_sample() {
        let mut side = Side::new("a");
        record(&mut side, Metric::Cold, 0, Sample::Value(1.0));
        record(&mut side, Metric::Cold, 1, Sample::Value(2.0));
        record(
            &mut side,
            Metric::Cold,
            0,
            Sample::Error("retry failed".into()),
        );
        record(&mut side, Metric::Cold, 0, Sample::Value(3.0));
        let cold = &side.metrics[&Metric::Cold];
        assert_eq!(
            cold,
            &[Observation::value(1, 2.0), Observation::value(0, 3.0)]
        );
        assert_eq!(side.values(Metric::Cold), vec![3.0, 2.0]);
    }

    #[test]
    fn record_keeps_the_side_valid() {
        let mut side = Side::new("a");
        record(&mut side, Metric::Rss, 0, Sample::Value(f64::NAN));
        record(&mut side, Metric::Rss, 1, Sample::Value(-1.0));
        record(
            &mut side,
            Metric::Pss,
            0,
            Sample::Error("é".repeat(MAX_ERROR_CHARS + 100)),
        );
        let rss = &side.metrics[&Metric::Rss];
        assert!(
            rss[0]
                .error
                .as_deref()
                .unwrap()
                .contains("invalid value NaN")
        );
        assert!(
            rss[1]
                .error
                .as_deref()
                .unwrap()
                .contains("invalid value -1")
        );
        let pss = side.metrics[&Metric::Pss][0].error.as_deref().unwrap();
        assert_eq!(pss.chars().count(), MAX_ERROR_CHARS);
    }

    #[test]
    fn side_error_comes_first_then_errored_samples() {
        let mut side = Side::new("a");
        side.set_error("warm settle: timed out");
        record(&mut side, Metric::Cold, 1, Sample::Value(0.4));
        record(
            &mut side,
            Metric::Rss,
            1,
            Sample::Error("no processes".into()),
        );
        record(
            &mut side,
            Metric::Rss,
            0,
            Sample::Error("other trial".into()),
        );
        record(
            &mut side,
            Metric::KernelRss,
            1,
            Sample::Error("other phase".into()),
        );
        assert_eq!(
            trial_errors(&side, Phase::Measure, 1),
            ["warm settle: timed out", "rss: no processes"]
        );
    }

    #[test]
    fn missing_measurements_are_named_only_without_errors() {
        let mut side = Side::new("a");
        for metric in [
            Metric::Cold,
            Metric::Warm,
            Metric::ColdCpu,
            Metric::WarmCpu,
            Metric::Rss,
        ] {
            record(&mut side, metric, 1, Sample::Value(1.0));
        }
        // Disk is measured on trial 0 only, so trial 1 does not miss it.
        assert_eq!(
            trial_errors(&side, Phase::Measure, 1),
            ["pss: measurement missing"]
        );
        assert_eq!(
            trial_errors(&side, Phase::Measure, 0),
            [
                "disk: measurement missing",
                "cold: measurement missing",
                "warm: measurement missing",
                "cold_cpu: measurement missing",
                "warm_cpu: measurement missing",
                "rss: measurement missing",
                "pss: measurement missing"
            ]
        );
        record(&mut side, Metric::Pss, 1, Sample::Value(1.0));
        assert!(trial_errors(&side, Phase::Measure, 1).is_empty());
    }

    #[test]
    fn disk_errors_count_on_trial_zero() {
        let mut side = Side::new("a");
        record(
            &mut side,
            Metric::Disk,
            0,
            Sample::Error("du failed".into()),
        );
        assert_eq!(trial_errors(&side, Phase::Measure, 0), ["disk: du failed"]);
        record(&mut side, Metric::Bundle, 0, Sample::Value(10.0));
        assert!(trial_errors(&side, Phase::Prepare, 0).is_empty());
    }
}
