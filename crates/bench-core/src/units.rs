//! Human-readable units: `412 ms`, `1.24 s`, `131.2 MiB`.
//!
//! Values are stored in base units (seconds, bytes) everywhere; these functions
//! are the only place where they are scaled for people.

/// The unit a metric is measured in. Lower is better for every unit clibench records.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Seconds of wall-clock or CPU time.
    Seconds,
    /// Bytes of memory or disk.
    Bytes,
}

impl Unit {
    /// Formats a value of this unit for people, e.g. `412 ms` or `131.2 MiB`.
    pub fn format(self, value: f64) -> String {
        match self {
            Unit::Seconds => format_seconds(value),
            Unit::Bytes => format_bytes(value),
        }
    }

    /// The unit's short name as used in CSV headers and JSON (`s`, `bytes`).
    pub fn symbol(self) -> &'static str {
        match self {
            Unit::Seconds => "s",
            Unit::Bytes => "bytes",
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
