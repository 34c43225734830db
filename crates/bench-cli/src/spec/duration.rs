//! Durations written as strings: "30s", "150ms", "2m", "1.5s".

use serde::{Deserialize, Deserializer};
use std::fmt;

/// A duration from the spec. Dereferences to [`std::time::Duration`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Duration(pub std::time::Duration);

impl Duration {
    /// Whole seconds.
    pub const fn from_secs(seconds: u64) -> Self {
        Duration(std::time::Duration::from_secs(seconds))
    }

    /// Whole milliseconds.
    pub const fn from_millis(millis: u64) -> Self {
        Duration(std::time::Duration::from_millis(millis))
    }
}

impl std::ops::Deref for Duration {
    type Target = std::time::Duration;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let millis = self.0.as_millis();
        if millis.is_multiple_of(1000) {
            write!(f, "{}s", millis / 1000)
        } else {
            write!(f, "{millis}ms")
        }
    }
}

/// Parses "30s", "150ms", "2m", "1.5s", "1h". A bare number is refused: the unit
/// must be written so that "30" is never read as milliseconds by mistake.
pub fn parse(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let invalid = || format!("invalid duration '{text}' (write e.g. \"30s\", \"150ms\", \"2m\")");
    if number.is_empty() || unit.is_empty() {
        return Err(invalid());
    }
    let value: f64 = number.parse().map_err(|_| invalid())?;
    let seconds_per_unit = match unit {
        "ms" => 0.001,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => return Err(invalid()),
    };
    let seconds = value * seconds_per_unit;
    // A day is far longer than any step clibench runs; larger values are typos.
    if !seconds.is_finite() || seconds > 86_400.0 {
        return Err(invalid());
    }
    Ok(std::time::Duration::from_secs_f64(seconds))
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Duration;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a duration string such as \"30s\" or \"150ms\"")
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Duration, E> {
                parse(text).map(Duration).map_err(E::custom)
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::parse;
    use std::time::Duration;

    #[test]
    fn units_are_read() {
        assert_eq!(parse("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse("150ms"), Ok(Duration::from_millis(150)));
        assert_eq!(parse("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse("1h"), Ok(Duration::from_secs(3600)));
    }

    #[test]
    fn bare_numbers_and_unknown_units_are_refused() {
        for text in ["30", "s", "", "30x", "1.2.3s", "-1s", "2d"] {
            assert!(parse(text).is_err(), "{text:?} was accepted");
        }
    }

    #[test]
    fn display_round_trips() {
        assert_eq!(super::Duration::from_millis(1500).to_string(), "1500ms");
        assert_eq!(super::Duration::from_secs(30).to_string(), "30s");
    }
}
