//! Human-readable units: `412 ms`, `1.24 s`, `131.2 MiB`, and the one grammar of
//! durations that specs and command-line flags share (`500ms`, `2s`, `1.5s`, `10m`, `1h`).
//!
//! Values are stored in base units (seconds, bytes) everywhere; these functions
//! are the only place where they are scaled for people.

/// The unit a metric is measured in. Lower is better for every unit clibench records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Seconds of wall-clock or CPU time.
    Seconds,
    /// Bytes of memory or disk.
    Bytes,
    /// A share of one CPU core (CPU seconds per wall second): 0.05 is 5% of a core.
    Share,
}

impl Unit {
    /// Formats a value of this unit for people, e.g. `412 ms` or `131.2 MiB`.
    pub fn format(self, value: f64) -> String {
        match self {
            Unit::Seconds => format_seconds(value),
            Unit::Bytes => format_bytes(value),
            Unit::Share => format_share(value),
        }
    }

    /// The largest value a measurement of this unit can hold: ten million seconds (about
    /// 116 days), an exbibyte (2^60 bytes), ten thousand cores. A result file or a stored
    /// series with more was not measured, and its extremes (1e308) would make the
    /// arithmetic of a summary or a chart overflow.
    pub fn max_measurable(self) -> f64 {
        match self {
            Unit::Seconds => 1e7,
            Unit::Bytes => (1u64 << 60) as f64,
            Unit::Share => 1e4,
        }
    }

    /// Why `value` cannot be a measurement of this unit, or `None` when it can: it must
    /// be finite, non-negative, at most [`Unit::max_measurable`], and zero or a normal
    /// number. No clock, counter or walk clibench reads yields a subnormal (below
    /// 2.2e-308), and one divides into infinity.
    pub fn unmeasurable(self, value: f64) -> Option<String> {
        if !value.is_finite() || value < 0.0 {
            return Some(format!("{value} is not finite and non-negative"));
        }
        if value != 0.0 && !value.is_normal() {
            return Some(format!(
                "{value:e} is subnormal, smaller than any measurement of {}",
                self.symbol()
            ));
        }
        let max = self.max_measurable();
        if value > max {
            return Some(format!(
                "{value:e} is beyond any measurement of {} (at most {max:e})",
                self.symbol()
            ));
        }
        None
    }

    /// The unit's short name as used in CSV headers and JSON (`s`, `bytes`).
    pub fn symbol(self) -> &'static str {
        match self {
            Unit::Seconds => "s",
            Unit::Bytes => "bytes",
            Unit::Share => "cores",
        }
    }
}

/// Formats seconds with three significant digits in the largest fitting unit:
/// `850 ns`, `12.3 µs`, `412 ms`, `1.24 s`, `2m 05s`.
pub fn format_seconds(seconds: f64) -> String {
    if !seconds.is_finite() {
        return seconds.to_string();
    }
    // Choose the unit by the value as it will be shown, so that 999.9996 µs is
    // `1.00 ms` rather than `1000 µs`.
    let magnitude = round_significant(seconds.abs(), 3);
    // No clock clibench reads is finer than a nanosecond: less than half of one is the
    // floating-point residue of a zero (the spread of equal samples), not `0.00 ns`.
    if magnitude < 0.5e-9 {
        return "0 s".to_string();
    }
    if magnitude >= 120.0 {
        let whole = seconds.round() as i64;
        let sign = if whole < 0 { "-" } else { "" };
        let whole = whole.abs();
        return format!("{sign}{}m {:02}s", whole / 60, whole % 60);
    }
    let (scaled, suffix) = if magnitude >= 1.0 || magnitude == 0.0 {
        (seconds, "s")
    } else if magnitude >= 1e-3 {
        (seconds * 1e3, "ms")
    } else if magnitude >= 1e-6 {
        (seconds * 1e6, "µs")
    } else {
        (seconds * 1e9, "ns")
    };
    format!("{} {suffix}", three_significant(scaled))
}

/// Formats a share of one core as a percentage with three significant digits:
/// `0.0312` is `3.12%`, `1.5` is `150%`.
pub fn format_share(share: f64) -> String {
    if !share.is_finite() {
        return share.to_string();
    }
    format!("{}%", three_significant(share * 100.0))
}

/// Formats bytes in binary units with one decimal: `512 B`, `4.0 KiB`, `131.2 MiB`, `1.5 GiB`.
pub fn format_bytes(bytes: f64) -> String {
    if !bytes.is_finite() {
        return bytes.to_string();
    }
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    let magnitude = bytes.abs();
    if magnitude < 1024.0 {
        return format!("{} B", bytes.round() as i64);
    }
    let mut scaled = bytes / 1024.0;
    let mut unit = 0;
    while scaled.abs() >= 1024.0 && unit + 1 < UNITS.len() {
        scaled /= 1024.0;
        unit += 1;
    }
    format!("{scaled:.1} {}", UNITS[unit])
}

/// `value` rounded to `digits` significant digits.
fn round_significant(value: f64, digits: i32) -> f64 {
    if value == 0.0 || !value.is_finite() {
        return value;
    }
    let scale = 10f64.powi(digits - 1 - value.abs().log10().floor() as i32);
    (value * scale).round() / scale
}

/// A runtime fact for people: values of keys that end in `_bytes` (`memory_bytes`,
/// `home_before_install_bytes`) are byte counts and are shown with binary units
/// (`23.5 GiB`); every other value is returned as it is.
pub fn format_fact(key: &str, value: &str) -> String {
    if key.ends_with("_bytes")
        && let Ok(bytes) = value.trim().parse::<u64>()
    {
        return format_bytes(bytes as f64);
    }
    value.to_string()
}

fn three_significant(value: f64) -> String {
    let magnitude = round_significant(value.abs(), 3);
    if magnitude >= 100.0 || magnitude == 0.0 {
        format!("{value:.0}")
    } else if magnitude >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_pick_the_largest_fitting_unit() {
        assert_eq!(format_seconds(0.412), "412 ms");
        assert_eq!(format_seconds(1.2449), "1.24 s");
        assert_eq!(format_seconds(0.0000123), "12.3 µs");
        assert_eq!(format_seconds(0.00000085), "850 ns");
        assert_eq!(format_seconds(0.0), "0 s");
        assert_eq!(format_seconds(1.7e-18), "0 s");
        assert_eq!(format_seconds(-3e-12), "0 s");
        assert_eq!(format_seconds(1e-9), "1.00 ns");
        assert_eq!(format_seconds(125.0), "2m 05s");
    }

    #[test]
    fn a_value_that_rounds_up_takes_the_next_unit() {
        // 0.000308 - 0.000309 in floating point.
        assert_eq!(format_seconds(-9.9999999999997e-7), "-1.00 µs");
        assert_eq!(format_seconds(0.99999), "1.00 s");
        assert_eq!(format_seconds(0.0009996), "1.00 ms");
        assert_eq!(format_seconds(0.000999), "999 µs");
        assert_eq!(format_seconds(0.03 - 0.02), "10.0 ms");
    }

    #[test]
    fn bytes_use_binary_units_with_one_decimal() {
        assert_eq!(format_bytes(512.0), "512 B");
        assert_eq!(format_bytes(4096.0), "4.0 KiB");
        assert_eq!(format_bytes(131.2 * 1024.0 * 1024.0), "131.2 MiB");
        assert_eq!(format_bytes(1.5 * 1024.0 * 1024.0 * 1024.0), "1.5 GiB");
        assert_eq!(format_bytes(-2048.0), "-2.0 KiB");
    }

    #[test]
    fn byte_facts_get_units_and_other_facts_stay() {
        assert_eq!(format_fact("memory_bytes", "25276059648"), "23.5 GiB");
        assert_eq!(format_fact("home_before_install_bytes", "4096"), "4.0 KiB");
        assert_eq!(format_fact("cores", "8"), "8");
        assert_eq!(format_fact("memory_bytes", "unknown"), "unknown");
    }
}

/// The longest duration [`parse_duration`] accepts: one day. Longer is a typo, and adding
/// a huge duration to an `Instant` would overflow.
pub const MAX_DURATION: std::time::Duration = std::time::Duration::from_secs(86_400);

/// Why a duration was refused by [`parse_duration`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// Not a number followed by one of the units.
    #[error("invalid duration {0:?} (write a number and a unit: 500ms, 2s, 1.5s, 10m or 1h)")]
    Invalid(String),
    /// Longer than [`MAX_DURATION`].
    #[error("duration {0:?} is out of range (at most 24h, e.g. 30s or 10m)")]
    OutOfRange(String),
}

/// Parses a duration: a decimal number and a unit, `ms`, `s`, `m` or `h` (`500ms`, `2s`,
/// `1.5s`, `10m`, `1h`), at most a day. A bare number is refused, so that `30` is never
/// read in the wrong unit; so are signs and exponents. Specs and flags both use it.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, DurationError> {
    let invalid = || DurationError::Invalid(text.to_owned());
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    if number.is_empty() || number.matches('.').count() > 1 {
        return Err(invalid());
    }
    let seconds_per_unit = match unit {
        "ms" => 0.001,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => return Err(invalid()),
    };
    let value: f64 = number.parse().map_err(|_| invalid())?;
    let seconds = value * seconds_per_unit;
    if !seconds.is_finite() || seconds > MAX_DURATION.as_secs_f64() {
        return Err(DurationError::OutOfRange(text.to_owned()));
    }
    std::time::Duration::try_from_secs_f64(seconds).map_err(|_| invalid())
}

#[cfg(test)]
mod duration_tests {
    use super::{DurationError, parse_duration};
    use std::time::Duration;

    #[test]
    fn every_unit_is_read() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("150ms"), Ok(Duration::from_millis(150)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration(" 24h "), Ok(Duration::from_secs(86_400)));
    }

    #[test]
    fn bare_numbers_signs_exponents_and_unknown_units_are_refused() {
        for text in [
            "30", "s", "", "30x", "1.2.3s", "-1s", "+1s", "2d", "1e3s", "1 s",
        ] {
            assert_eq!(
                parse_duration(text),
                Err(DurationError::Invalid(text.to_owned())),
                "{text:?}"
            );
        }
    }

    #[test]
    fn more_than_a_day_is_out_of_range_not_a_panic() {
        for text in [
            "25h",
            "9999999999999999999s",
            "99999999999999999999999999999999999h",
        ] {
            assert_eq!(
                parse_duration(text),
                Err(DurationError::OutOfRange(text.to_owned())),
                "{text:?}"
            );
        }
    }
}
