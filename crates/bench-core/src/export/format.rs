//! Choosing an exporter by name.

use crate::compare::Comparison;
use crate::report::Report;
use std::fmt;
use std::str::FromStr;

/// An export format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// GitHub-flavoured Markdown.
    Markdown,
    /// Pretty-printed JSON.
    Json,
    /// Comma-separated values with a header row.
    Csv,
}

impl Format {
    /// Every format.
    pub const ALL: [Format; 3] = [Format::Markdown, Format::Json, Format::Csv];

    /// `markdown`, `json` or `csv`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Markdown => "markdown",
            Format::Json => "json",
            Format::Csv => "csv",
        }
    }

    /// `report` in this format.
    pub fn report(self, report: &Report) -> String {
        match self {
            Format::Markdown => super::markdown::report(report),
            Format::Json => super::json::report(report),
            Format::Csv => super::csv::report(report),
        }
    }

    /// `comparison` in this format.
    pub fn comparison(self, comparison: &Comparison) -> String {
        match self {
            Format::Markdown => super::markdown::comparison(comparison),
            Format::Json => super::json::comparison(comparison),
            Format::Csv => super::csv::comparison(comparison),
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A format name that is not `markdown`, `json` or `csv`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format `{0}` (expected markdown, json or csv)")]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|format| format.name() == name)
            .ok_or_else(|| UnknownFormat(name.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        for format in Format::ALL {
            assert_eq!(format.name().parse::<Format>(), Ok(format));
        }
        assert_eq!(
            "html".parse::<Format>().unwrap_err().to_string(),
            "unknown format `html` (expected markdown, json or csv)"
        );
    }
}
