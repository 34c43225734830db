//! What the store trusts: only files it made, and of another party's store only data.
//!
//! clibench runs as root beside hostile users, and in CI it imports stores that jobs
//! running a pull request's code wrote. So:
//! - A store it writes or reads as its own is a plain file of the effective user that no
//!   one else can write, in a folder of that user closed to others, whose ancestors no
//!   one else can rename (the rule of `--out`): no other user can hand it a database, a
//!   journal to roll back, or swap a folder between the check and SQLite's open. A new
//!   store is created exclusively before SQLite opens it.
//! - A store from elsewhere (`history import`) is read into memory from one descriptor
//!   (no journal, WAL or lock file of its folder is looked at), is refused unless its
//!   schema is exactly clibench's tables and indexes, its rows are bounded, and every
//!   statement on it stops at a deadline.
//! - Every connection runs in SQLite's defensive mode with views, triggers and the
//!   functions of an untrusted schema switched off.

use super::{STORE_VERSION, StoreError};
use rusqlite::Connection;
use rusqlite::config::DbConfig;
use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::time::{Duration, Instant};

/// The files SQLite keeps beside a store, which must be clibench's own too.
const SIDE_FILES: [&str; 3] = ["-journal", "-wal", "-shm"];

/// The bounds a store from elsewhere is read within.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportLimits {
    /// The largest file read (the whole file is read into memory).
    pub max_bytes: u64,
    /// The most results it may hold.
    pub max_results: u64,
    /// The most samples it may hold.
    pub max_samples: u64,
    /// How long reading it may take, every statement included.
    pub deadline: Duration,
}

impl Default for ImportLimits {
    /// 1 GiB, 200,000 results, 20 million samples (a team's years of history fit many
    /// times over), and two minutes.
    fn default() -> ImportLimits {
        ImportLimits {
            max_bytes: 1 << 30,
            max_results: 200_000,
            max_samples: 20_000_000,
            deadline: Duration::from_secs(120),
        }
    }
}

fn untrusted(path: &Path, why: impl Into<String>) -> StoreError {
    StoreError::Untrusted {
        path: path.to_path_buf(),
        why: why.into(),
    }
}

fn io(path: &Path, source: impl Into<std::io::Error>) -> StoreError {
    StoreError::Io {
        path: path.to_path_buf(),
        source: source.into(),
    }
}

fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Checks that the store at `path` is clibench's own to open (see the module's doc),
/// creating it empty and exclusively when it does not exist yet.
pub(super) fn vet_own(path: &Path) -> Result<(), StoreError> {
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| untrusted(path, "it names no file"))?;
    let dir = own_folder(folder, path)?;
    let created = match rustix::fs::openat(
        &dir,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o644),
    ) {
        Ok(_) => true,
        Err(Errno::EXIST) => false,
        Err(errno) => return Err(io(path, errno)),
    };
    if !created {
        own_file(&dir, name, path)?;
    }
    for suffix in SIDE_FILES {
        let mut side = name.to_os_string();
        side.push(suffix);
        match rustix::fs::statat(
            &dir,
            side.as_os_str(),
            rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
        ) {
            Err(Errno::NOENT) => {}
            Err(errno) => return Err(io(&folder.join(&side), errno)),
            Ok(_) => own_file(&dir, &side, &folder.join(&side))?,
        }
    }
    Ok(())
}

/// Opens `folder`, the folder of the store at `store` (never through a link), and checks
/// it is the effective user's, closed to others, and that no other user can rename it or
/// any folder above it.
fn own_folder(folder: &Path, store: &Path) -> Result<OwnedFd, StoreError> {
    let dir = rustix::fs::open(
        folder,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|errno| match errno {
        Errno::LOOP | Errno::NOTDIR => untrusted(
            store,
            format!(
                "its folder {} is a symlink or not a folder",
                folder.display()
            ),
        ),
        other => io(folder, other),
    })?;
    let stat = rustix::fs::fstat(&dir).map_err(|errno| io(folder, errno))?;
    if stat.st_uid != euid() {
        return Err(untrusted(
            store,
            format!(
                "its folder {} belongs to uid {}, not to the user running clibench \
                 (uid {}); keep the store in a folder of your own",
                folder.display(),
                stat.st_uid,
                euid()
            ),
        ));
    }
    if stat.st_mode & 0o002 != 0 {
        return Err(untrusted(
            store,
            format!(
                "every user can write into its folder {} (mode {:o}), and SQLite keeps \
                 its journal beside the store; keep the store in a folder of your own",
                folder.display(),
                stat.st_mode & 0o7777
            ),
        ));
    }
    safe_ancestors(folder, store)?;
    Ok(dir)
}

/// Checks that no other user can move `below` away: each folder above it that exists
/// belongs to root or the effective user, and is writable by no one else unless sticky.
/// Run before the default store's folders are made, too, so that clibench makes nothing
/// in another user's folder (`sudo` keeps the caller's `HOME`).
pub(super) fn safe_ancestors(below: &Path, store: &Path) -> Result<(), StoreError> {
    let absolute = std::path::absolute(below).map_err(|error| io(below, error))?;
    for ancestor in absolute.ancestors().skip(1) {
        let meta = match std::fs::symlink_metadata(ancestor) {
            Ok(meta) => meta,
            // Not made yet: what is above it decides.
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(error) => return Err(io(ancestor, error)),
        };
        let (uid, mode) = (
            std::os::unix::fs::MetadataExt::uid(&meta),
            std::os::unix::fs::MetadataExt::mode(&meta),
        );
        // Only its owner (root or us) may rename what is in a folder, unless it is sticky.
        let others_rename = mode & 0o022 != 0 && mode & 0o1000 == 0;
        if (uid != 0 && uid != euid()) || others_rename {
            return Err(untrusted(
                store,
                format!(
                    "{} above its folder belongs to uid {uid} (mode {:o}), so another user \
                     could move the folder away; keep the store in a folder of your own",
                    ancestor.display(),
                    mode & 0o7777
                ),
            ));
        }
    }
    Ok(())
}

/// Checks that `name` in `dir` is a plain file of the effective user that neither its
/// group nor others can write.
fn own_file(dir: &OwnedFd, name: &std::ffi::OsStr, path: &Path) -> Result<(), StoreError> {
    // NONBLOCK: a FIFO planted here must not hang clibench; it is refused below.
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|errno| match errno {
        Errno::LOOP => untrusted(path, "it is a symlink"),
        other => io(path, other),
    })?;
    let stat = rustix::fs::fstat(&fd).map_err(|errno| io(path, errno))?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(untrusted(path, "it is not a plain file"));
    }
    if stat.st_uid != euid() {
        return Err(untrusted(
            path,
            format!(
                "clibench did not make it: it belongs to uid {}, not to the user running \
                 clibench (uid {})",
                stat.st_uid,
                euid()
            ),
        ));
    }
    if stat.st_mode & 0o022 != 0 {
        return Err(untrusted(
            path,
            format!(
                "other users can write it (mode {:o})",
                stat.st_mode & 0o7777
            ),
        ));
    }
    Ok(())
}

/// Switches on SQLite's defensive mode and off what a hostile schema could run: views,
/// triggers and the SQL functions of an untrusted schema.
pub(super) fn defend(connection: &Connection) -> rusqlite::Result<()> {
    connection.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
    connection.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
    connection.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_VIEW, false)?;
    connection.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER, false)?;
    Ok(())
}

/// The columns of `results` in each layout, in order.
fn result_columns(layout: i64) -> Vec<&'static str> {
    let mut columns = vec![
        "id",
        "content_sha256",
        "target",
        "branch",
        "revision",
        "version",
        "testbed",
        "cpu",
        "cores",
        "memory_bytes",
        "kernel",
        "load_average",
        "started_unix_ms",
        "added_unix_ms",
    ];
    if layout >= 2 {
        columns.push("run");
    }
    if layout >= 3 {
        columns.push("duet_phases");
    }
    columns
}

const SAMPLE_COLUMNS: [&str; 4] = ["result_id", "metric", "trial", "value"];

/// The schema objects of a store: its two tables, its index, and the indexes SQLite
/// makes for their keys.
const OBJECTS: [(&str, &str); 5] = [
    ("table", "results"),
    ("table", "samples"),
    ("index", "results_series"),
    ("index", "sqlite_autoindex_results_1"),
    ("index", "sqlite_autoindex_samples_1"),
];

/// Checks that a store of layout `layout` holds exactly clibench's tables, columns and
/// indexes: no view, trigger, virtual table or generated column that reading it could run.
pub(super) fn check_schema(
    connection: &Connection,
    path: &Path,
    layout: i64,
) -> Result<(), StoreError> {
    let sqlite = |source| StoreError::Sqlite {
        path: path.to_path_buf(),
        source,
    };
    let refuse = |why: String| StoreError::NotAStore {
        path: path.to_path_buf(),
        why,
    };
    let mut objects = connection
        .prepare("SELECT type, name, sql FROM sqlite_master")
        .map_err(sqlite)?;
    let rows = objects
        .query_map([], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, Option<String>>(2)?,
            ))
        })
        .map_err(sqlite)?;
    for row in rows {
        let (kind, name, sql) = row.map_err(sqlite)?;
        if !OBJECTS.contains(&(kind.as_str(), name.as_str())) {
            return Err(refuse(format!(
                "it holds a {kind} {name:?}, which no clibench store has"
            )));
        }
        if kind == "table" && sql.is_some_and(|sql| sql.to_ascii_uppercase().contains("VIRTUAL")) {
            return Err(refuse(format!("its table {name:?} is virtual")));
        }
    }
    let expected = result_columns(layout);
    for (table, expected) in [("results", &expected[..]), ("samples", &SAMPLE_COLUMNS[..])] {
        let mut info = connection
            .prepare("SELECT name, hidden FROM pragma_table_xinfo(?1)")
            .map_err(sqlite)?;
        let columns: Vec<(String, i64)> = info
            .query_map([table], |row| Ok((row.get(0)?, row.get(1)?)))
            .map_err(sqlite)?
            .collect::<Result<_, _>>()
            .map_err(sqlite)?;
        let names: Vec<&str> = columns.iter().map(|(name, _)| name.as_str()).collect();
        if names != expected {
            return Err(refuse(format!(
                "its table {table} has the columns {names:?}, not layout {layout}'s {expected:?}"
            )));
        }
        if columns.iter().any(|(_, hidden)| *hidden != 0) {
            return Err(refuse(format!("its table {table} has generated columns")));
        }
    }
    Ok(())
}

/// The moment by which reading a store from elsewhere must be done.
#[derive(Debug, Clone, Copy)]
pub(super) struct Deadline {
    started: Instant,
    limit: Duration,
}

impl Deadline {
    fn passed(&self) -> bool {
        self.started.elapsed() > self.limit
    }

    /// What SQLite's `source` means: the deadline, once it has passed (SQLite says only
    /// "interrupted"), else itself.
    pub(super) fn error(&self, path: &Path, source: rusqlite::Error) -> StoreError {
        if self.passed() {
            untrusted(
                path,
                format!("reading it took longer than {}s", self.limit.as_secs()),
            )
        } else {
            StoreError::Sqlite {
                path: path.to_path_buf(),
                source,
            }
        }
    }
}

/// Reads the store at `path`, which clibench did not make, into a read-only database in
/// memory, within `limits`; returns the connection, its layout and the deadline every
/// later statement on it keeps.
pub(super) fn read_foreign(
    path: &Path,
    limits: &ImportLimits,
) -> Result<(Connection, i64, Deadline), StoreError> {
    let bytes = read_bounded(path, limits.max_bytes)?;
    let sqlite = |source| StoreError::Sqlite {
        path: path.to_path_buf(),
        source,
    };
    let mut connection = Connection::open_in_memory().map_err(sqlite)?;
    defend(&connection).map_err(sqlite)?;
    connection
        .deserialize_read_exact(rusqlite::MAIN_DB, &bytes[..], bytes.len(), true)
        .map_err(sqlite)?;
    drop(bytes);
    let deadline = Deadline {
        started: Instant::now(),
        limit: limits.deadline,
    };
    // SQLite calls this every thousand steps of a statement; true interrupts it.
    connection.progress_handler(1000, Some(move || deadline.passed()));
    let layout: i64 = connection
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(|source| deadline.error(path, source))?;
    if layout == 0 {
        return Err(StoreError::NotAStore {
            path: path.to_path_buf(),
            why: "it has no clibench layout version".into(),
        });
    }
    if layout > STORE_VERSION {
        return Err(StoreError::Newer {
            path: path.to_path_buf(),
            found: layout,
        });
    }
    check_schema(&connection, path, layout)?;
    // count(column) reads every row, as an import will: the deadline sees the real work.
    for (table, column, most) in [
        ("results", "id", limits.max_results),
        ("samples", "value", limits.max_samples),
    ] {
        let count: i64 = connection
            .query_row(&format!("SELECT count({column}) FROM {table}"), [], |row| {
                row.get(0)
            })
            .map_err(|source| deadline.error(path, source))?;
        if count.max(0) as u64 > most {
            return Err(untrusted(
                path,
                format!("it holds {count} {table}, more than the {most} clibench imports"),
            ));
        }
    }
    Ok((connection, layout, deadline))
}

/// The bytes of the file at `path`: a plain file (a FIFO or device is refused, never
/// waited on) of at most `max_bytes`, read from one descriptor.
fn read_bounded(path: &Path, max_bytes: u64) -> Result<Vec<u8>, StoreError> {
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|errno| io(path, errno))?;
    let stat = rustix::fs::fstat(&fd).map_err(|errno| io(path, errno))?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(untrusted(path, "it is not a plain file"));
    }
    let size = stat.st_size.max(0) as u64;
    if size > max_bytes {
        return Err(untrusted(
            path,
            format!("it is {size} bytes, more than the {max_bytes} clibench imports"),
        ));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    std::fs::File::from(fd)
        .take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| io(path, error))?;
    if bytes.len() as u64 > max_bytes {
        return Err(untrusted(path, "it grew while it was read"));
    }
    if !bytes.starts_with(b"SQLite format 3\0") || bytes.len() < 100 {
        return Err(StoreError::NotAStore {
            path: path.to_path_buf(),
            why: "it is not an SQLite database".into(),
        });
    }
    // Bytes 18 and 19 say WAL (2) or rollback (1); a database in memory has no WAL, and
    // the pages in the file are all that is read of it either way.
    if bytes[18] == 2 && bytes[19] == 2 {
        bytes[18] = 1;
        bytes[19] = 1;
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests;
