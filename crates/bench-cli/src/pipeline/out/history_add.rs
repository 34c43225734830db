//! `run --history` and `ab --history`: a finished run's results added to a history store,
//! and for `ab`, each side first set against what the store already holds of its build
//! (written to `OUT/history.md`; never pooled into the paired test). Returns the lines
//! to tell; the binary prints them.

use crate::history::ingest::{self, IngestError};
use crate::history::location::OpenError;
use crate::history::{Store, context};
use std::path::{Path, PathBuf};

/// Why the results were not added.
#[derive(Debug, thiserror::Error)]
pub enum HistoryAddError {
    /// The store could not be opened or read.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// A result could not be added.
    #[error(transparent)]
    Ingest(#[from] IngestError),
    /// `OUT/history.md` could not be written.
    #[error("failed to write {}", .path.display())]
    Page {
        /// The page.
        path: PathBuf,
        /// Why.
        #[source]
        source: bench_core::io::WriteError,
    },
}

impl HistoryAddError {
    /// Whether the user named a store this clibench cannot use (exit code 2).
    pub fn is_input(&self) -> bool {
        matches!(self, HistoryAddError::Open(error) if error.is_input())
    }
}

/// Opens the store at `store` (created when missing), with the line that says it was
/// upgraded from an older layout when this open did it (only the open that did it knows).
fn open(store: &Path) -> Result<(Store, Option<String>), HistoryAddError> {
    let store = crate::history::location::open_to_write(Some(store))?;
    let told = store
        .upgraded()
        .map(|upgraded| format!("clibench: {}", upgraded.describe(store.path())));
    Ok((store, told))
}

/// Adds `results` to the store at `store` (created when missing); returns the lines that
/// say how many were added (after one that says the store was upgraded, if it was).
pub fn add_after_run(store: &Path, results: &[PathBuf]) -> Result<Vec<String>, HistoryAddError> {
    let (mut store, told) = open(store)?;
    let added = ingest::add_files(&mut store, results, None, "main")?;
    let mut lines: Vec<String> = told.into_iter().collect();
    lines.push(format!(
        "clibench: history {}: {}",
        store.path().display(),
        added.summary()
    ));
    Ok(lines)
}

/// `ab --history`: each side against what the store already holds of its build on this
/// testbed (a line each, and `OUT/history.md`), then both sides added (a last line).
pub fn add_after_ab(
    store: &Path,
    out: &Path,
    sides: &[(&str, PathBuf)],
) -> Result<Vec<String>, HistoryAddError> {
    let (opened, told) = open(store)?;
    let mut lines: Vec<String> = told.into_iter().collect();
    let mut contexts = Vec::new();
    for (side, path) in sides {
        let record = ingest::record_of(path, None, "main")?;
        let found = context::context(&opened, &record).map_err(OpenError::from)?;
        lines.push(format!(
            "clibench: history: {}",
            context::summary_line(side, &found)
        ));
        contexts.push((*side, found));
    }
    drop(opened);
    let page = out.join("history.md");
    bench_core::io::write_atomic(&page, context::markdown(&contexts).as_bytes())
        .map_err(|source| HistoryAddError::Page { path: page, source })?;
    let paths: Vec<PathBuf> = sides.iter().map(|(_, path)| path.clone()).collect();
    lines.extend(add_after_run(store, &paths)?);
    Ok(lines)
}
