//! The artifacts' checksum file and the name patterns of a spec: what prepare writes and
//! install checks, kept apart from both phases.

use crate::pipeline::file_error::FileError;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

/// The checksum file written next to the artifacts.
pub(crate) const SUMS: &str = "SHA256SUMS";

/// Matches a file name against a pattern with `*` and `?`: the same matcher as the
/// spec's disk exclusions, so one glob means one thing throughout a spec.
pub(crate) fn wildcard(pattern: &str, name: &str) -> bool {
    bench_proc::wildcard_match(pattern.as_bytes(), name.as_bytes())
}

/// The SHA-256 of a file, in lowercase hex.
pub(crate) fn sha256_file(path: &Path) -> Result<String, FileError> {
    let mut file = std::fs::File::open(path)
        .map_err(FileError::doing(format!("opening {}", path.display())))?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher)
        .map_err(FileError::doing(format!("reading {}", path.display())))?;
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// A line of `SHA256SUMS` that is not `HASH  NAME`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: expected 'HASH  NAME'")]
pub struct SumsError {
    /// The line, counted from 1.
    pub line: usize,
}

/// Parses `SHA256SUMS` (`HEX  NAME` or `HEX *NAME` per line).
pub(crate) fn parse_sums(text: &str) -> Result<BTreeMap<String, String>, SumsError> {
    let mut sums = BTreeMap::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let wrong = SumsError { line: number + 1 };
        let (hex, name) = line.split_once(' ').ok_or(wrong)?;
        let name = name.trim_start_matches(' ').trim_start_matches('*');
        if hex.len() != 64 || !hex.chars().all(|c| c.is_ascii_hexdigit()) || name.is_empty() {
            return Err(wrong);
        }
        sums.insert(name.to_owned(), hex.to_ascii_lowercase());
    }
    Ok(sums)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_parse_both_separators() {
        let hex = "a".repeat(64);
        let sums = parse_sums(&format!("{hex}  one.tgz\n{hex} *two.tgz\n")).unwrap();
        assert_eq!(sums.len(), 2);
        assert_eq!(sums["two.tgz"], hex);
        assert!(parse_sums("zz one\n").is_err());
    }

    #[test]
    fn a_wrong_sums_line_is_named() {
        let hex = "a".repeat(64);
        let error = parse_sums(&format!("{hex}  one.tgz\n\n{hex}\n")).unwrap_err();
        assert_eq!(error, SumsError { line: 3 });
        assert_eq!(error.to_string(), "line 3: expected 'HASH  NAME'");
        assert_eq!(
            parse_sums(&format!("{hex}  \n")).unwrap_err(),
            SumsError { line: 1 }
        );
    }
}
