//! Durations written as strings in specs and scripts: "30s", "150ms", "2m", "1.5s", read
//! with the one duration grammar, [`crate::units::parse_duration`].

use serde::{Deserialize, Deserializer};
use std::fmt;

/// A duration from a spec or a model script. Dereferences to [`std::time::Duration`].
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

/// Parses a duration: the grammar flags use too, [`crate::units::parse_duration`].
pub fn parse(text: &str) -> Result<std::time::Duration, crate::units::DurationError> {
    crate::units::parse_duration(text)
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Duration;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a duration string such as \"30s\", \"150ms\" or \"10m\"")
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
    #[test]
    fn display_round_trips() {
        assert_eq!(super::Duration::from_millis(1500).to_string(), "1500ms");
        assert_eq!(super::Duration::from_secs(30).to_string(), "30s");
        assert_eq!(
            super::parse("1500ms").map(super::Duration),
            Ok(super::Duration::from_millis(1500))
        );
    }
}
