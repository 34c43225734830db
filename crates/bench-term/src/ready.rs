//! When a program counts as ready: the modes of [`crate::Terminal::ready`].

use regex::Regex;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// How [`crate::Terminal::ready`] decides that a person could start typing.
#[derive(Debug, Clone)]
pub enum ReadyMode {
    /// For full-screen programs: wait for raw mode (ICANON and ECHO off), then
    /// type a random probe every 20 ms (erasing the previous one with DEL) until
    /// one appears on the screen outside a synchronized update; then erase it and
    /// wait until it is gone and the cursor is back, leaving the program clean.
    /// A probe only counts if, when it is seen, the terminal is still in raw mode
    /// and the program alive: in cooked mode the kernel echoes it, so probe mode
    /// erases it and waits for raw mode again; a program that died is an exit error.
    Probe,
    /// Ready when the screen text (rows joined by `\n`) matches. Built by
    /// [`ready_regex`] it is multi-line: `^` and `$` match at every row's start and end.
    Pattern(Regex),
    /// Ready at the first frame: a line with at least 3 letters or digits.
    FirstFrame,
    /// Ready when the screen stayed unchanged for this long; the ready time is
    /// the moment of the last change.
    Stable(Duration),
    /// Ready when the program exits, as `waitid` sees it (a pidfd becoming readable,
    /// so no polling period is added): hyperfine's measurement, in a terminal. Its
    /// exit status is kept ([`crate::Terminal::exit_status`]).
    Exit,
}

impl fmt::Display for ReadyMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadyMode::Probe => f.write_str("probe"),
            ReadyMode::Pattern(regex) => write!(f, "pattern:{}", regex.as_str()),
            ReadyMode::FirstFrame => f.write_str("first-frame"),
            ReadyMode::Stable(quiet) => write!(f, "stable:{}ms", quiet.as_millis()),
            ReadyMode::Exit => f.write_str("exit"),
        }
    }
}

/// A ready mode or a duration that does not parse.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ParseError {
    /// Not one of the known modes.
    #[error(
        "unknown ready mode {0:?} (expected probe, pattern:REGEX, first-frame, stable:DURATION or exit)"
    )]
    UnknownMode(String),
    /// The regular expression of `pattern:` is invalid.
    #[error("invalid ready pattern: {0}")]
    Pattern(String),
    /// The duration of `stable:` (or a flag's) is not one.
    #[error(transparent)]
    Duration(#[from] bench_core::units::DurationError),
}

/// A pattern that reads the screen: ready patterns, `--ready-require` and `--ready-reject`.
///
/// Multi-line, as users read a screen: `^> $` is a row that is exactly `> `, not the top of
/// the screen (which `\A` still says). `(?-m)` at the start turns it off.
pub fn ready_regex(pattern: &str) -> Result<Regex, regex::Error> {
    regex::RegexBuilder::new(pattern).multi_line(true).build()
}

impl FromStr for ReadyMode {
    type Err = ParseError;

    /// Parses `probe`, `pattern:REGEX`, `first-frame`, `stable:DURATION` or `exit`.
    fn from_str(text: &str) -> Result<ReadyMode, ParseError> {
        if let Some(pattern) = text.strip_prefix("pattern:") {
            return ready_regex(pattern)
                .map(ReadyMode::Pattern)
                .map_err(|e| ParseError::Pattern(e.to_string()));
        }
        if let Some(duration) = text.strip_prefix("stable:") {
            return Ok(ReadyMode::Stable(bench_core::units::parse_duration(
                duration,
            )?));
        }
        match text {
            "probe" => Ok(ReadyMode::Probe),
            "first-frame" => Ok(ReadyMode::FirstFrame),
            "exit" => Ok(ReadyMode::Exit),
            _ => Err(ParseError::UnknownMode(text.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caret_in_a_ready_pattern_anchors_at_every_row() {
        let ReadyMode::Pattern(regex) = "pattern:^> $".parse().unwrap() else {
            panic!("a pattern mode");
        };
        assert!(regex.is_match("Welcome to the REPL\n> "));
        assert!(!ready_regex(r"\A> $").unwrap().is_match("Welcome\n> "));
    }

    #[test]
    fn modes_parse_and_print_back() {
        for text in [
            "probe",
            "first-frame",
            "pattern:^>>> $",
            "stable:250ms",
            "exit",
        ] {
            assert_eq!(text.parse::<ReadyMode>().unwrap().to_string(), text);
        }
        assert!(
            matches!("stable:1.5s".parse(), Ok(ReadyMode::Stable(d)) if d == Duration::from_millis(1500))
        );
    }

    #[test]
    fn bad_modes_say_what_is_expected() {
        assert_eq!(
            "ready".parse::<ReadyMode>().unwrap_err(),
            ParseError::UnknownMode("ready".into())
        );
        assert!(matches!(
            "pattern:(".parse::<ReadyMode>(),
            Err(ParseError::Pattern(_))
        ));
        assert_eq!(
            "stable:soon".parse::<ReadyMode>().unwrap_err(),
            ParseError::Duration(bench_core::units::DurationError::Invalid("soon".into()))
        );
    }
}
