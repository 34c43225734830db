//! Result files into the store: what `history add` and `run`/`ab --history` do.

use crate::history::store::record::{Record, RecordError};
use crate::history::store::{Added, Store, StoreError};
use bench_core::LoadError;
use bench_core::ResultFile;
use std::path::{Path, PathBuf};

/// A result file could not be added.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// The file is not a valid result file.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The result cannot be stored as it is (no target, a bad text).
    #[error("cannot keep the result {path}", path = path.display())]
    Record {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: RecordError,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The record of the result file at `path`.
pub fn record_of(path: &Path, target: Option<&str>, branch: &str) -> Result<Record, IngestError> {
    let result = ResultFile::load(path)?;
    Record::of(&result, target, branch).map_err(|source| IngestError::Record {
        path: path.to_path_buf(),
        source,
    })
}

/// Adds the result files at `paths` to `store` in one transaction: every file is read
/// and checked first, so a bad file adds nothing.
pub fn add_files(
    store: &mut Store,
    paths: &[PathBuf],
    target: Option<&str>,
    branch: &str,
) -> Result<Added, IngestError> {
    let records = paths
        .iter()
        .map(|path| record_of(path, target, branch))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(store.add(&records)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::store::record::tests::result;
    use rusty_fork::rusty_fork_test;

    rusty_fork_test! {
        // SQLite's caches and the writers' threads add to the test binary's
        // peak RSS, which other tests of it measure (the capped output
        // in pipeline::isolation::command): each runs in a process of its own.
        #[test]
        fn a_bad_file_among_good_ones_adds_nothing() {
            let dir = tempfile::tempdir().unwrap();
            let good = dir.path().join("good.json");
            result("demo", "abc", 1, &[0.3]).save(&good).unwrap();
            let bad = dir.path().join("bad.json");
            std::fs::write(&bad, "{}").unwrap();
            let mut store = Store::open(&dir.path().join("h.sqlite"), false).unwrap();
            assert!(add_files(&mut store, &[good.clone(), bad], None, "main").is_err());
            assert_eq!(store.count().unwrap(), 0);
            assert_eq!(
                add_files(&mut store, &[good], None, "main").unwrap().added,
                1
            );
        }
    }
}
