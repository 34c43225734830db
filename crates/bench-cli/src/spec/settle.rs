//! The `settle` key: a fixed wait (`"1s"`) or a wait until the family's memory is quiet
//! (`"auto"`, `"auto:3s"`, or a table `{ until = "quiet", max = "5s", quiet = "100ms",
//! tolerance = "1%" }`). bench-proc's [`bench_proc::Settle`] parses the string forms, so
//! a spec and the `--settle` flags read the same grammar.

use bench_proc::settle::Quiet;
use serde::{Deserialize, Deserializer};
use std::fmt;

/// A settle from the spec. Dereferences to [`bench_proc::Settle`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settle(pub bench_proc::Settle);

impl Settle {
    /// A fixed settle of whole seconds.
    pub const fn from_secs(seconds: u64) -> Settle {
        Settle(bench_proc::Settle::Fixed(std::time::Duration::from_secs(
            seconds,
        )))
    }
}

impl std::ops::Deref for Settle {
    type Target = bench_proc::Settle;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl fmt::Display for Settle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The table form; `until` names the mode, so that a later one can be added.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    until: Until,
    #[serde(default)]
    max: Option<String>,
    #[serde(default)]
    quiet: Option<String>,
    #[serde(default)]
    tolerance: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
enum Until {
    Quiet,
}

impl Table {
    fn settle(self) -> Result<bench_proc::Settle, bench_proc::settle::ParseError> {
        let Until::Quiet = self.until;
        let mut quiet = Quiet::default();
        for (key, value) in [
            ("max", self.max),
            ("quiet", self.quiet),
            ("tolerance", self.tolerance),
        ] {
            if let Some(value) = value {
                quiet.set(key, &value)?;
            }
        }
        quiet.check().map(bench_proc::Settle::Quiet)
    }
}

impl<'de> Deserialize<'de> for Settle {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Settle;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a duration such as \"1s\" (a fixed settle), \"auto\", \"auto:5s\", or a \
                     table { until = \"quiet\", max = \"5s\", quiet = \"100ms\", tolerance = \"1%\" }",
                )
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Settle, E> {
                text.parse()
                    .map(Settle)
                    .map_err(|error| E::custom(bench_core::error_chain(&error)))
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Settle, A::Error> {
                let table = Table::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                table.settle().map(Settle).map_err(serde::de::Error::custom)
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[derive(Debug, Deserialize)]
    struct Doc {
        settle: Settle,
    }

    fn settle(toml_text: &str) -> Result<bench_proc::Settle, String> {
        toml::from_str::<Doc>(toml_text)
            .map(|doc| doc.settle.0)
            .map_err(|error| error.message().to_owned())
    }

    #[test]
    fn a_duration_is_exactly_that_fixed_settle() {
        assert_eq!(
            settle("settle = \"1s\""),
            Ok(bench_proc::Settle::Fixed(Duration::from_secs(1)))
        );
        assert_eq!(
            settle("settle = \"1500ms\""),
            Ok(bench_proc::Settle::Fixed(Duration::from_millis(1500)))
        );
    }

    #[test]
    fn auto_and_the_table_are_quiet_settles() {
        assert_eq!(
            settle("settle = \"auto\""),
            Ok(bench_proc::Settle::Quiet(Quiet::default()))
        );
        assert_eq!(
            settle(
                "settle = { until = \"quiet\", max = \"3s\", quiet = \"250ms\", tolerance = \"0.5%\" }"
            ),
            Ok(bench_proc::Settle::Quiet(Quiet {
                max: Duration::from_secs(3),
                quiet: Duration::from_millis(250),
                tolerance: 0.005,
                ..Quiet::default()
            }))
        );
        assert_eq!(
            settle("settle = { until = \"quiet\" }"),
            Ok(bench_proc::Settle::Quiet(Quiet::default()))
        );
    }

    #[test]
    fn bad_settles_are_refused_with_the_reason() {
        assert!(
            settle("settle = \"soon\"")
                .unwrap_err()
                .contains("invalid settle")
        );
        assert!(
            settle("settle = 1")
                .unwrap_err()
                .contains("a duration such as")
        );
        assert!(
            settle("settle = { until = \"quiet\", speed = \"1s\" }")
                .unwrap_err()
                .contains("unknown field `speed`")
        );
        assert!(
            settle("settle = { until = \"never\" }")
                .unwrap_err()
                .contains("unknown variant `never`")
        );
        assert!(
            settle("settle = { until = \"quiet\", tolerance = \"2\" }")
                .unwrap_err()
                .contains("not a percentage")
        );
    }
}
