//! The small vocabulary both the spec's parser and its checks use: key paths as errors
//! name them (`build[1].timeout`), and what a full commit sha is.

/// One step of a key path: a table key or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Segment {
    /// A table key.
    Key(String),
    /// An array index.
    Index(usize),
}

pub(super) type KeyPath = Vec<Segment>;

/// Renders `measure.ready_pattern`, `build[1].timeout`.
pub(super) fn key_name(path: &[Segment]) -> String {
    let mut out = String::new();
    for segment in path {
        match segment {
            Segment::Key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Index(index) => out.push_str(&format!("[{index}]")),
        }
    }
    out
}

/// Whether `text` is a full 40-character hexadecimal commit sha.
pub(crate) fn is_full_sha(text: &str) -> bool {
    text.len() == 40 && text.chars().all(|ch| ch.is_ascii_hexdigit())
}
