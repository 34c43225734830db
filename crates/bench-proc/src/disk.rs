//! Disk footprint: apparent size of a directory tree, as
//! `du --apparent-size --summarize --block-size=1 --exclude=PATTERN...` counts it.

use std::collections::HashSet;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The exclusions for an agent's home directory: caches, logs, session data and the
/// scratch workspace are not part of the install (they grow with use, not with the build).
pub const DEFAULT_EXCLUDES: &[&str] = &[
    ".cache",
    ".npm",
    "*.log",
    "sessions",
    "session-artifacts",
    "workspace",
];

/// Why a size could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum DiskError {
    /// An entry could not be read (the root missing, or a directory unreadable).
    #[error("failed to read {}", path.display())]
    Read {
        /// The entry.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

/// Apparent size in bytes of `path` and everything under it: the sum of
/// `st_size` of every file, directory and symlink (the link itself; links are
/// never followed), each hard-linked inode counted once. An entry below `path`
/// whose name matches one of `excludes` (shell wildcards `*`, `?`, `[...]`) is
/// skipped with everything under it, as `du --exclude` does; a pattern with a
/// `/` matches a trailing part of the path instead. An entry that disappears
/// during the walk is skipped.
pub fn disk_usage(path: &Path, excludes: &[&str]) -> Result<u64, DiskError> {
    let read = |path: &Path| {
        std::fs::symlink_metadata(path).map_err(|source| DiskError::Read {
            path: path.to_path_buf(),
            source,
        })
    };
    let root = read(path)?;
    let mut seen: HashSet<(u64, u64)> = HashSet::new();
    let mut total = 0u64;
    let mut pending: Vec<(PathBuf, std::fs::Metadata)> = vec![(path.to_path_buf(), root)];
    while let Some((entry, meta)) = pending.pop() {
        if meta.nlink() > 1 && !meta.is_dir() && !seen.insert((meta.dev(), meta.ino())) {
            continue;
        }
        total += meta.len();
        if !meta.is_dir() {
            continue;
        }
        let children = match std::fs::read_dir(&entry) {
            Ok(children) => children,
            Err(error) if error.kind() == io::ErrorKind::NotFound => continue,
            Err(source) => {
                return Err(DiskError::Read {
                    path: entry,
                    source,
                });
            }
        };
        for child in children {
            let child = child.map_err(|source| DiskError::Read {
                path: entry.clone(),
                source,
            })?;
            let child_path = child.path();
            if excluded(&child_path, excludes) {
                continue;
            }
            match std::fs::symlink_metadata(&child_path) {
                Ok(meta) => pending.push((child_path, meta)),
                Err(error) if error.kind() == io::ErrorKind::NotFound => {}
                Err(source) => {
                    return Err(DiskError::Read {
                        path: child_path,
                        source,
                    });
                }
            }
        }
    }
    Ok(total)
}

/// gnulib's unanchored exclusion: the pattern matches the whole path or any
/// part of it that follows a `/`; for a pattern without `/` that is the name.
fn excluded(path: &Path, excludes: &[&str]) -> bool {
    let text = path.to_string_lossy();
    excludes.iter().any(|pattern| {
        wildcard_match(pattern.as_bytes(), text.as_bytes())
            || text
                .match_indices('/')
                .any(|(index, _)| wildcard_match(pattern.as_bytes(), &text.as_bytes()[index + 1..]))
    })
}

/// `fnmatch(3)` without flags: `*` and `?` match any byte (a `/` too), `[...]`
/// a set or range (`[!...]` / `[^...]` negated), `\` quotes the next byte.
pub fn wildcard_match(pattern: &[u8], text: &[u8]) -> bool {
    // Iterative matching with one backtrack point for the last `*`.
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        let step = match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, t));
                p += 1;
                continue;
            }
            Some(b'?') => Some(p + 1),
            Some(b'[') => match_class(pattern, p, text[t]),
            Some(b'\\') if p + 1 < pattern.len() => (pattern[p + 1] == text[t]).then_some(p + 2),
            Some(&byte) => (byte == text[t]).then_some(p + 1),
            None => None,
        };
        match step {
            Some(next) => {
                p = next;
                t += 1;
            }
            None => match star {
                Some((star_p, star_t)) => {
                    p = star_p + 1;
                    t = star_t + 1;
                    star = Some((star_p, star_t + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&b| b == b'*')
}

/// Matches `byte` against the class starting at `pattern[open] == b'['`;
/// returns the index after the class on a match. An unclosed `[` is literal.
fn match_class(pattern: &[u8], open: usize, byte: u8) -> Option<usize> {
    let mut i = open + 1;
    let negated = matches!(pattern.get(i), Some(b'!' | b'^'));
    if negated {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while let Some(&c) = pattern.get(i) {
        if c == b']' && !first {
            return (matched != negated).then_some(i + 1);
        }
        first = false;
        if pattern.get(i + 1) == Some(&b'-') && pattern.get(i + 2).is_some_and(|&e| e != b']') {
            matched |= (c..=pattern[i + 2]).contains(&byte);
            i += 3;
        } else {
            matched |= c == byte;
            i += 1;
        }
    }
    (byte == b'[').then_some(open + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn wildcards_follow_fnmatch() {
        assert!(wildcard_match(b"*.log", b"install.log"));
        assert!(!wildcard_match(b"*.log", b"install.log.gz"));
        assert!(wildcard_match(b"sessions", b"sessions"));
        assert!(!wildcard_match(b"sessions", b"sessions2"));
        assert!(wildcard_match(b"a?c", b"abc"));
        assert!(wildcard_match(b"[a-c]x", b"bx"));
        assert!(!wildcard_match(b"[!a-c]x", b"bx"));
        assert!(wildcard_match(b"*", b"a/b"));
        assert!(wildcard_match(b"\\*", b"*"));
        assert!(!wildcard_match(b"\\*", b"a"));
        assert!(wildcard_match(b"a*b*c", b"aXbYbZc"));
        assert!(wildcard_match(b"[", b"["));
    }

    #[test]
    fn exclusion_matches_names_and_trailing_paths() {
        assert!(excluded(Path::new("/home/u/.npm"), &[".npm"]));
        assert!(excluded(Path::new("/home/u/a/debug.log"), &["*.log"]));
        assert!(!excluded(Path::new("/home/u/.npmrc"), &[".npm"]));
        assert!(excluded(Path::new("/home/u/a/b"), &["a/b"]));
    }

    #[test]
    fn apparent_size_counts_hard_links_once_and_skips_excludes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("home");
        fs::create_dir_all(root.join("bin")).unwrap();
        fs::create_dir_all(root.join(".cache/deep")).unwrap();
        fs::write(root.join("bin/tool"), vec![7u8; 10_000]).unwrap();
        fs::hard_link(root.join("bin/tool"), root.join("tool-link")).unwrap();
        fs::write(root.join("run.log"), vec![1u8; 5_000]).unwrap();
        fs::write(root.join(".cache/deep/blob"), vec![1u8; 50_000]).unwrap();
        std::os::unix::fs::symlink("/usr", root.join("usr-link")).unwrap();
        let size = |p: &Path| fs::symlink_metadata(p).unwrap().len();
        let expected =
            size(&root) + size(&root.join("bin")) + 10_000 + size(&root.join("usr-link"));
        assert_eq!(disk_usage(&root, &[".cache", "*.log"]).unwrap(), expected);
    }

    #[test]
    fn missing_root_is_an_error() {
        let error = disk_usage(Path::new("/nonexistent/clibench"), &[]).unwrap_err();
        assert_eq!(error.to_string(), "failed to read /nonexistent/clibench");
    }
}
