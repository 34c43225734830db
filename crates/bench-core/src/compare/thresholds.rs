//! The practical thresholds a spec sets per metric (`[compare] noise = { cold = 0.05 }`),
//! carried in the result files so that every comparison of those results uses them:
//! `clibench ab` and `clibench compare` of the same two files give the same verdicts.
//!
//! A run records its spec's thresholds in its request's free-form settings under
//! [`CONFIG_KEY`], as `cold=0.05,warm=0.07` ([`encode`]). A comparison fills in, for
//! every metric the command line did not set, the base's recorded threshold, then the
//! candidate's ([`with_recorded`]): the reference build's policy wins, so a pull
//! request cannot loosen its own gate by editing its spec.
//!
//! ```
//! use bench_core::compare::thresholds::{CONFIG_KEY, encode, with_recorded};
//! use bench_core::compare::CompareOptions;
//! use bench_core::{Metric, Request, Role};
//! use std::collections::BTreeMap;
//!
//! let mut base = Request::new("a", Role::Base);
//! let floors = BTreeMap::from([(Metric::Cold, 0.05)]);
//! base.config.insert(CONFIG_KEY.into(), encode(&floors));
//! let head = Request::new("b", Role::Candidate);
//! let options = with_recorded(CompareOptions::default(), &base, &head).unwrap();
//! assert_eq!(options.floor(Metric::Cold), 0.05);
//! ```

use crate::compare::CompareOptions;
use crate::metric::Metric;
use crate::result::{Request, Role};
use std::collections::BTreeMap;

/// The key of the request's settings (`request.config`) that holds the thresholds.
pub const CONFIG_KEY: &str = "compare_noise";

/// Why recorded thresholds could not be read.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ThresholdsError {
    /// An entry is not `METRIC=FRACTION`.
    #[error("`{entry}` in {CONFIG_KEY} is not METRIC=FRACTION")]
    Entry {
        /// The entry as written.
        entry: String,
    },
    /// The metric is not one clibench knows.
    #[error("{CONFIG_KEY} names an unknown metric `{name}`")]
    Metric {
        /// The name as written.
        name: String,
    },
    /// The value is not a number in `0..1` (for a slope, not an amount of at least 0).
    #[error("{CONFIG_KEY} sets {metric} to `{value}`, which is not {}", expected(*metric))]
    Fraction {
        /// The metric.
        metric: Metric,
        /// The value as written.
        value: String,
    },
}

/// Thresholds one of the two compared results recorded could not be read.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("the {} result's recorded thresholds", role.name())]
pub struct RecordedError {
    /// Which result.
    pub role: Role,
    /// What is wrong with them.
    #[source]
    pub source: ThresholdsError,
}

/// Whether `value` can be `metric`'s threshold: a fraction in `0..1`, or for a slope
/// ([`Metric::is_slope`]), judged by its difference, a finite amount of at least 0 in
/// the metric's unit (`session_growth = 262144` is 256 KiB per turn).
pub fn is_valid(metric: Metric, value: f64) -> bool {
    if metric.is_slope() {
        value.is_finite() && value >= 0.0
    } else {
        (0.0..1.0).contains(&value)
    }
}

/// What [`is_valid`] asks of `metric`'s threshold, in words for an error.
pub fn expected(metric: Metric) -> String {
    if metric.is_slope() {
        format!(
            "an amount of at least 0 in {} (a slope is judged by its difference)",
            metric
                .unit_and_direction()
                .split(',')
                .next()
                .unwrap_or_default()
        )
    } else {
        "a fraction in 0..1 (0.05 means changes within ±5% are noise)".to_string()
    }
}

/// The thresholds as one setting: `cold=0.05,warm=0.07`, in metric order.
pub fn encode(floors: &BTreeMap<Metric, f64>) -> String {
    floors
        .iter()
        .map(|(metric, fraction)| format!("{metric}={fraction}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The thresholds [`encode`] wrote; the text comes from a result file, which anyone
/// may have edited, so every entry is checked.
pub fn decode(text: &str) -> Result<BTreeMap<Metric, f64>, ThresholdsError> {
    let mut floors = BTreeMap::new();
    for entry in text.split(',').filter(|entry| !entry.trim().is_empty()) {
        let Some((name, value)) = entry.split_once('=') else {
            return Err(ThresholdsError::Entry {
                entry: entry.to_string(),
            });
        };
        let metric: Metric = name.trim().parse().map_err(|_| ThresholdsError::Metric {
            name: name.trim().to_string(),
        })?;
        let fraction = value
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|&fraction| is_valid(metric, fraction))
            .ok_or_else(|| ThresholdsError::Fraction {
                metric,
                value: value.trim().to_string(),
            })?;
        floors.insert(metric, fraction);
    }
    Ok(floors)
}

/// The thresholds `request` recorded; none when it recorded none.
pub fn recorded(request: &Request) -> Result<BTreeMap<Metric, f64>, ThresholdsError> {
    request
        .config
        .get(CONFIG_KEY)
        .map_or_else(|| Ok(BTreeMap::new()), |text| decode(text))
}

/// `options` with `floors` for every metric that has no threshold of its own yet (the
/// command line's `--noise METRIC=FRACTION` wins over a spec's).
pub fn fill_in(mut options: CompareOptions, floors: &BTreeMap<Metric, f64>) -> CompareOptions {
    for (&metric, &fraction) in floors {
        options.floors.entry(metric).or_insert(fraction);
    }
    options
}

/// `options` with the thresholds the two results recorded, for the metrics the
/// options do not set: the base's first, then the candidate's.
pub fn with_recorded(
    options: CompareOptions,
    base: &Request,
    candidate: &Request,
) -> Result<CompareOptions, RecordedError> {
    let of = |request: &Request, role: Role| {
        recorded(request).map_err(|source| RecordedError { role, source })
    };
    let options = fill_in(options, &of(base, Role::Base)?);
    Ok(fill_in(options, &of(candidate, Role::Candidate)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recording(floors: &[(Metric, f64)]) -> Request {
        let mut request = Request::new("x", Role::Base);
        let floors: BTreeMap<Metric, f64> = floors.iter().copied().collect();
        request.config.insert(CONFIG_KEY.into(), encode(&floors));
        request
    }

    #[test]
    fn thresholds_round_trip_through_the_setting() {
        let floors = BTreeMap::from([(Metric::Cold, 0.05), (Metric::Rss, 0.125)]);
        assert_eq!(encode(&floors), "cold=0.05,rss=0.125");
        assert_eq!(decode(&encode(&floors)), Ok(floors));
        assert_eq!(decode(""), Ok(BTreeMap::new()));
    }

    #[test]
    fn an_edited_setting_is_refused_with_what_is_wrong() {
        assert!(matches!(decode("cold"), Err(ThresholdsError::Entry { .. })));
        assert_eq!(
            decode("colder=0.1"),
            Err(ThresholdsError::Metric {
                name: "colder".into()
            })
        );
        for value in ["1.5", "-0.1", "NaN", "x"] {
            assert!(
                matches!(
                    decode(&format!("cold={value}")),
                    Err(ThresholdsError::Fraction { .. })
                ),
                "{value}"
            );
        }
    }

    #[test]
    fn flags_win_then_the_base_then_the_candidate() {
        let flags = CompareOptions::default().with_floor(Metric::Warm, 0.3);
        let base = recording(&[(Metric::Cold, 0.05), (Metric::Warm, 0.07)]);
        let candidate = recording(&[(Metric::Cold, 0.5), (Metric::Pss, 0.04)]);
        let options = with_recorded(flags, &base, &candidate).unwrap();
        assert_eq!(options.floor(Metric::Warm), 0.3);
        assert_eq!(options.floor(Metric::Cold), 0.05);
        assert_eq!(options.floor(Metric::Pss), 0.04);
        assert_eq!(options.floor(Metric::Rss), 0.02);
        // A broken setting names the result it is in.
        let mut broken = Request::new("z", Role::Candidate);
        broken.config.insert(CONFIG_KEY.into(), "cold=2".into());
        let error = with_recorded(CompareOptions::default(), &base, &broken).unwrap_err();
        assert_eq!(error.role, Role::Candidate);
        assert_eq!(
            crate::error_chain(&error),
            "the candidate result's recorded thresholds: compare_noise sets cold to `2`, \
             which is not a fraction in 0..1 (0.05 means changes within ±5% are noise)"
        );
        // A slope's threshold is an amount in its unit, never negative.
        assert_eq!(
            decode("session_growth=262144,lag_growth=0.01"),
            Ok(BTreeMap::from([
                (Metric::SessionGrowth, 262_144.0),
                (Metric::LagGrowth, 0.01)
            ]))
        );
        assert_eq!(
            decode("session_growth=-1").unwrap_err().to_string(),
            "compare_noise sets session_growth to `-1`, which is not an amount of at least 0 \
             in bytes per turn (a slope is judged by its difference)"
        );
        // Results that record nothing leave the options alone.
        let none = Request::new("y", Role::Candidate);
        assert_eq!(
            with_recorded(CompareOptions::default(), &none, &none).unwrap(),
            CompareOptions::default()
        );
    }
}
