//! What can go wrong with a store, each with the store it happened to.

use super::STORE_VERSION;
use super::db::DbError;
use std::path::PathBuf;

/// The store could not be opened, read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The folder for the default store could not be made.
    #[error("failed to create {path}", path = path.display())]
    CreateDir {
        /// The folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// SQLite failed to open the file.
    #[error("history store {path} failed", path = path.display())]
    Sqlite {
        /// The store.
        path: PathBuf,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
    /// The file was written by a newer clibench, whose layout this one cannot read.
    #[error(
        "history store {path} has layout version {found}, written by a newer clibench \
         (this one reads version {STORE_VERSION}); use that clibench or another --store",
        path = path.display()
    )]
    Newer {
        /// The store.
        path: PathBuf,
        /// Its `user_version`.
        found: i64,
    },
    /// The file is not a history store.
    #[error("{path} is not a clibench history store: {why}", path = path.display())]
    NotAStore {
        /// The file.
        path: PathBuf,
        /// What it is instead.
        why: String,
    },
    /// The file or its folder is not clibench's own (another user's, open to others, a
    /// link), or a store from elsewhere is beyond what clibench reads.
    #[error("refusing to use history store {path}: {why}", path = path.display())]
    Untrusted {
        /// The file or folder.
        path: PathBuf,
        /// Why it is refused.
        why: String,
    },
    /// A PostgreSQL store could not be reached or failed (named by its URL without the
    /// password).
    #[error("history store {store} failed")]
    Postgres {
        /// The store's URL, without its password.
        store: String,
        /// What PostgreSQL or its client said.
        #[source]
        source: postgres::Error,
    },
    /// TLS to a PostgreSQL store could not be set up (its `sslrootcert`, say).
    #[error("history store {store}: TLS: {why}")]
    Tls {
        /// The store's URL, without its password.
        store: String,
        /// What went wrong.
        why: String,
    },
    /// A statement on the store failed.
    #[error("history store {path} failed", path = path.display())]
    Query {
        /// The store.
        path: PathBuf,
        /// What the backend said.
        #[source]
        source: DbError,
    },
    /// A system call on the file or its folder failed.
    #[error("history store {path}", path = path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A row breaks a limit of the format (a store from elsewhere, edited by hand).
    #[error("history store {path}, result {id}: {problem}", path = path.display())]
    Invalid {
        /// The store.
        path: PathBuf,
        /// The row's id.
        id: i64,
        /// What is wrong.
        problem: String,
    },
}
