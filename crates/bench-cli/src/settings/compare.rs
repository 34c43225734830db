//! A comparison's thresholds and drift: `--noise` and `--drift` as `clibench compare` and
//! `clibench ab` take them, and [`compare_options`], the one function both build their
//! [`CompareOptions`] with.

use super::SettingsError;
use bench_core::compare::CompareOptions;
use bench_core::compare::thresholds::{RecordedError, recorded};
use bench_core::{Metric, Nature, Request, Role};
use std::collections::BTreeMap;
use std::str::FromStr;

/// A `--noise` or `--drift` value that cannot be read; the message says why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct FlagValueError {
    message: String,
}

impl FlagValueError {
    pub(super) fn new(message: impl Into<String>) -> FlagValueError {
        FlagValueError {
            message: message.into(),
        }
    }
}

/// One `--noise` value: the global floor or one metric's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Noise {
    /// Every timing, CPU and memory metric's threshold, a fraction in `0..1`.
    Global(f64),
    /// One metric's threshold: a fraction, or a slope's amount in its unit.
    Metric(Metric, f64),
}

impl FromStr for Noise {
    type Err = FlagValueError;

    fn from_str(text: &str) -> Result<Noise, FlagValueError> {
        let fraction = |text: &str| -> Result<f64, FlagValueError> {
            let noise: f64 = text
                .parse()
                .map_err(|_| FlagValueError::new(format!("`{text}` is not a number")))?;
            if !(0.0..1.0).contains(&noise) {
                return Err(FlagValueError::new(format!(
                    "{noise} is outside 0..1 (0.2 means changes within ±20% are noise)"
                )));
            }
            Ok(noise)
        };
        let Some((metric, value)) = text.split_once('=') else {
            return Ok(Noise::Global(fraction(text)?));
        };
        let metric: Metric = metric
            .trim()
            .parse()
            .map_err(|error| FlagValueError::new(format!("{error}")))?;
        if !metric.is_slope() {
            return Ok(Noise::Metric(metric, fraction(value.trim())?));
        }
        // A slope's threshold is an amount in its unit, not a fraction.
        let amount: f64 = value
            .trim()
            .parse()
            .map_err(|_| FlagValueError::new(format!("`{}` is not a number", value.trim())))?;
        if !bench_core::compare::thresholds::is_valid(metric, amount) {
            return Err(FlagValueError::new(format!(
                "{metric}={amount} is not {}",
                bench_core::compare::thresholds::expected(metric)
            )));
        }
        Ok(Noise::Metric(metric, amount))
    }
}

/// One `--drift` value: every kind's spread, or one kind's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Drift {
    kind: Option<Nature>,
    spread: f64,
}

impl FromStr for Drift {
    type Err = FlagValueError;

    fn from_str(text: &str) -> Result<Drift, FlagValueError> {
        let spread = |text: &str| -> Result<f64, FlagValueError> {
            let spread: f64 = text
                .parse()
                .map_err(|_| FlagValueError::new(format!("`{text}` is not a number")))?;
            if !(0.0..=1.0).contains(&spread) {
                return Err(FlagValueError::new(format!(
                    "{spread} is outside 0..1 (0.1: one run is typically 10% slower or faster than another)"
                )));
            }
            Ok(spread)
        };
        let Some((kind, value)) = text.split_once('=') else {
            return Ok(Drift {
                kind: None,
                spread: spread(text)?,
            });
        };
        let kind = match kind.trim() {
            "timing" => Nature::Timing,
            "cpu" => Nature::Cpu,
            "memory" => Nature::Memory,
            other => {
                return Err(FlagValueError::new(format!(
                    "`{other}` is not a kind of metric with drift: timing, cpu or memory"
                )));
            }
        };
        Ok(Drift {
            kind: Some(kind),
            spread: spread(value.trim())?,
        })
    }
}

/// The threshold flags of a comparison, as given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThresholdFlags {
    /// Every `--noise`: at most one global floor, at most one floor per metric.
    pub noise: Vec<Noise>,
    /// Every `--drift`: each kind set at most once.
    pub drift: Vec<Drift>,
}

/// The comparison options from the flags, then `floors` (a spec's `[compare] noise`, or
/// what the results recorded of it) for every metric the flags did not set: the flags
/// win. `clibench compare` and `clibench ab` both build their options here.
pub fn compare_options(
    flags: &ThresholdFlags,
    floors: &BTreeMap<Metric, f64>,
) -> Result<CompareOptions, SettingsError> {
    let options = with_drift(with_noise(&flags.noise)?, &flags.drift)?;
    Ok(bench_core::compare::thresholds::fill_in(options, floors))
}

impl ThresholdFlags {
    /// Checks the flags alone, before any file is read, so that a usage error is told
    /// before a file's.
    pub fn check(&self) -> Result<(), SettingsError> {
        compare_options(self, &BTreeMap::new()).map(|_| ())
    }
}

/// The floors the two results recorded of their spec's `[compare] noise`: the base's,
/// then the candidate's for the metrics the base's do not set.
pub fn recorded_floors(
    base: &Request,
    candidate: &Request,
) -> Result<BTreeMap<Metric, f64>, SettingsError> {
    let of = |request: &Request, role: Role| {
        recorded(request).map_err(|source| RecordedError { role, source })
    };
    let mut floors = of(base, Role::Base)?;
    for (metric, floor) in of(candidate, Role::Candidate)? {
        floors.entry(metric).or_insert(floor);
    }
    Ok(floors)
}

fn with_noise(noise: &[Noise]) -> Result<CompareOptions, SettingsError> {
    let mut options = CompareOptions::default();
    let mut global = None;
    for &value in noise {
        match value {
            Noise::Global(fraction) => {
                if global.replace(fraction).is_some() {
                    return Err(SettingsError::NoiseTwice);
                }
                options.noise = Some(fraction);
            }
            Noise::Metric(metric, fraction) => {
                if options.floors.contains_key(&metric) {
                    return Err(SettingsError::MetricNoiseTwice { metric });
                }
                options = options.with_floor(metric, fraction);
            }
        }
    }
    Ok(options)
}

fn with_drift(
    mut options: CompareOptions,
    drift: &[Drift],
) -> Result<CompareOptions, SettingsError> {
    for value in drift {
        let kinds = match value.kind {
            Some(kind) => vec![kind],
            None => vec![Nature::Timing, Nature::Cpu, Nature::Memory],
        };
        for kind in kinds {
            let slot = match kind {
                Nature::Timing => &mut options.drift.timing,
                Nature::Cpu => &mut options.drift.cpu,
                _ => &mut options.drift.memory,
            };
            if slot.replace(value.spread).is_some() {
                return Err(SettingsError::DriftTwice { kind: kind.name() });
            }
        }
    }
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(text: &str) -> Result<Noise, String> {
        text.parse()
            .map_err(|error: FlagValueError| error.to_string())
    }

    fn drift(text: &str) -> Result<Drift, String> {
        text.parse()
            .map_err(|error: FlagValueError| error.to_string())
    }

    fn with(noise: &[Noise], drift: &[Drift]) -> Result<CompareOptions, SettingsError> {
        let flags = ThresholdFlags {
            noise: noise.to_vec(),
            drift: drift.to_vec(),
        };
        compare_options(&flags, &BTreeMap::new())
    }

    #[test]
    fn drift_sets_every_kind_or_one_and_each_once() {
        let all = with(&[], &[drift("0.05").unwrap()]).unwrap();
        assert_eq!(all.drift.of(Nature::Timing), 0.05);
        assert_eq!(all.drift.of(Nature::Memory), 0.05);
        assert_eq!(all.drift.of(Nature::Exact), 0.0);
        let one = with(&[], &[drift("cpu=0.01").unwrap()]).unwrap();
        assert_eq!(one.drift.of(Nature::Cpu), 0.01);
        assert_eq!(one.drift.of(Nature::Timing), Nature::Timing.drift_spread());
        let twice = [drift("0.1").unwrap(), drift("timing=0.2").unwrap()];
        let error = with(&[], &twice).unwrap_err();
        assert!(error.to_string().contains("timing spread twice"), "{error}");
        assert!(
            drift("bundle=0.1")
                .unwrap_err()
                .contains("timing, cpu or memory")
        );
        assert!(drift("2").unwrap_err().contains("outside 0..1"));
    }

    #[test]
    fn noise_must_be_a_fraction_below_one() {
        assert_eq!(noise("0.1"), Ok(Noise::Global(0.1)));
        assert_eq!(noise("0"), Ok(Noise::Global(0.0)));
        assert!(noise("1").unwrap_err().contains("outside 0..1"));
        assert!(noise("-0.1").is_err());
        assert!(noise("NaN").is_err());
        assert!(noise("twenty").unwrap_err().contains("not a number"));
    }

    #[test]
    fn noise_takes_one_metric_floor_as_metric_equals_fraction() {
        assert_eq!(noise("cold=0.05"), Ok(Noise::Metric(Metric::Cold, 0.05)));
        assert!(
            noise("colder=0.05")
                .unwrap_err()
                .contains("unknown metric `colder`")
        );
        assert!(noise("cold=2").unwrap_err().contains("outside 0..1"));
        // A slope's threshold is an amount in its unit, and a global fraction is not one.
        assert_eq!(
            noise("session_growth=1048576"),
            Ok(Noise::Metric(Metric::SessionGrowth, 1_048_576.0))
        );
        assert!(
            noise("lag_growth=-1")
                .unwrap_err()
                .contains("not an amount of at least 0")
        );
        let global = with(&[Noise::Global(0.1)], &[]).unwrap();
        assert_eq!(
            global.slope_threshold(Metric::SessionGrowth),
            Some(262_144.0)
        );
        let set = with(
            &[
                Noise::Metric(Metric::Cold, 0.05),
                Noise::Global(0.1),
                Noise::Metric(Metric::Disk, 0.01),
            ],
            &[],
        )
        .unwrap();
        assert_eq!(set.noise, Some(0.1));
        assert_eq!(set.floor(Metric::Cold), 0.05);
        assert_eq!(set.floor(Metric::Disk), 0.01);
        assert_eq!(set.floor(Metric::Warm), 0.1);
        assert_eq!(with(&[], &[]).unwrap().noise, None);
        assert_eq!(with(&[], &[]).unwrap().floor(Metric::Cold), 0.03);
        assert!(with(&[Noise::Global(0.1), Noise::Global(0.2)], &[]).is_err());
        assert!(
            with(
                &[
                    Noise::Metric(Metric::Cold, 0.1),
                    Noise::Metric(Metric::Cold, 0.2)
                ],
                &[]
            )
            .is_err()
        );
    }

    #[test]
    fn the_specs_floors_fill_in_what_the_flags_did_not_set() {
        let flags = ThresholdFlags {
            noise: vec![Noise::Metric(Metric::Warm, 0.3)],
            drift: Vec::new(),
        };
        let floors = BTreeMap::from([(Metric::Cold, 0.05), (Metric::Warm, 0.07)]);
        let options = compare_options(&flags, &floors).unwrap();
        assert_eq!(options.floor(Metric::Cold), 0.05);
        assert_eq!(
            options.floor(Metric::Warm),
            0.3,
            "the flag wins over the spec"
        );
        assert_eq!(options.floor(Metric::Rss), 0.02);
    }
}
