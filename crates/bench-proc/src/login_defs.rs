//! The range of ordinary users' uids, as `/etc/login.defs` sets it for
//! useradd(8) and the other shadow-utils tools.

use std::ops::RangeInclusive;

/// What shadow-utils uses when login.defs does not set `UID_MIN`.
const DEFAULT_UID_MIN: u32 = 1000;
/// What shadow-utils uses when login.defs does not set `UID_MAX`.
const DEFAULT_UID_MAX: u32 = 60000;

/// `UID_MIN..=UID_MAX` of `/etc/login.defs` (see [`parse_uid_range`]); the
/// defaults, 1000 to 60000, when the file cannot be read.
pub fn uid_range() -> RangeInclusive<u32> {
    parse_uid_range(&std::fs::read_to_string("/etc/login.defs").unwrap_or_default())
}

/// `UID_MIN..=UID_MAX` of a login.defs text, read the way shadow-utils reads it
/// (`def_load` in its `lib/getdef.c`): a line whose first non-blank character is
/// `#` is a comment; a key is the line's first word, its value the rest of the
/// line after blanks and double quotes, up to the next double quote; a key set
/// twice takes the last value; a value that is not a whole number (decimal,
/// `0x` hexadecimal or `0` octal, as `strtoul` with base 0 reads it) gives the
/// default, even when an earlier line set the key well.
///
/// The defaults are 1000 and 60000. The range never starts at 0 (a `UID_MIN` of
/// 0 would make root an ordinary user) and never ends before it starts.
pub fn parse_uid_range(login_defs: &str) -> RangeInclusive<u32> {
    let min = number(value(login_defs, "UID_MIN"))
        .unwrap_or(DEFAULT_UID_MIN)
        .max(1);
    let max = number(value(login_defs, "UID_MAX"))
        .unwrap_or(DEFAULT_UID_MAX)
        .max(min);
    min..=max
}

/// The last value given to `key`, as shadow-utils splits a line.
fn value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let blank = [' ', '\t'];
    // The last assignment wins: look from the end.
    text.lines().rev().find_map(|line| {
        let line = line.trim_end().trim_start_matches(blank);
        if line.is_empty() || line.starts_with('#') {
            return None;
        }
        // A key alone on its line sets nothing.
        let (name, rest) = line.split_once(blank)?;
        let rest = rest.trim_start_matches([' ', '\t', '"']);
        let value = rest.split('"').next().unwrap_or_default();
        (name == key).then_some(value)
    })
}

/// A whole unsigned number as `strtoul(value, &end, 0)` reads it with `*end == 0`
/// required: decimal, `0x`/`0X` hexadecimal, `0` octal.
fn number(value: Option<&str>) -> Option<u32> {
    let value = value?;
    let (digits, radix) = if let Some(hex) = value
        .strip_prefix("0x")
        .or_else(|| value.strip_prefix("0X"))
    {
        (hex, 16)
    } else if value.len() > 1 && value.starts_with('0') {
        (&value[1..], 8)
    } else {
        (value, 10)
    };
    // from_str_radix accepts a sign; a uid bound written with one is not trusted.
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u32::from_str_radix(digits, radix).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A login.defs as a distribution ships it, then an administrator's later
    /// lines that set the keys again.
    const REPEATED: &str = include_str!("fixtures/login.defs.repeated");

    #[test]
    fn the_last_assignment_of_a_repeated_key_wins() {
        assert_eq!(parse_uid_range(REPEATED), 2000..=3000);
    }

    #[test]
    fn comments_blank_lines_and_quotes_are_read_as_shadow_utils_reads_them() {
        assert_eq!(parse_uid_range(""), 1000..=60000);
        assert_eq!(
            parse_uid_range("# UID_MIN 5\n   # UID_MAX 6\n\nUID_MIN\t\t 2000\nUID_MAX \"3000\"\n"),
            2000..=3000
        );
        // A key alone on its line sets nothing; one that is a prefix of another is
        // another key.
        assert_eq!(
            parse_uid_range("UID_MIN 1500\nUID_MIN\nSYS_UID_MIN 5\nUID_MINIMUM 7\n"),
            1500..=60000
        );
        // Leading blanks before the key are allowed.
        assert_eq!(*parse_uid_range("  \tUID_MIN 1200").start(), 1200);
    }

    #[test]
    fn a_value_that_is_not_a_whole_number_gives_the_default() {
        // strtoul reads 0x and leading-0 octal; shadow-utils wants the whole value.
        assert_eq!(
            parse_uid_range("UID_MIN 0x7d0\nUID_MAX 0135270"),
            2000..=47800
        );
        // A trailing comment is part of the value, which then does not parse, and
        // the last line wins even over an earlier good one.
        assert_eq!(
            *parse_uid_range("UID_MIN 1500\nUID_MIN 2000 # site").start(),
            1000
        );
        assert_eq!(*parse_uid_range("UID_MIN -5").start(), 1000);
        assert_eq!(*parse_uid_range("UID_MIN lots").start(), 1000);
    }

    #[test]
    fn the_range_never_holds_root_and_never_ends_before_it_starts() {
        assert_eq!(*parse_uid_range("UID_MIN 0").start(), 1);
        assert_eq!(parse_uid_range("UID_MIN 5000\nUID_MAX 10"), 5000..=5000);
    }
}
