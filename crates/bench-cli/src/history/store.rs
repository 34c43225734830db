//! The store: every record in one SQLite file, or for a team one PostgreSQL database
//! (docs/history.md shows its schema).
//!
//! Every write is one transaction that keeps other writers out (SQLite's `BEGIN
//! IMMEDIATE`, PostgreSQL's advisory lock), and every connection waits for another's
//! lock (up to [`BUSY_TIMEOUT`] on SQLite, [`STATEMENT_TIMEOUT`](server::STATEMENT_TIMEOUT) on PostgreSQL), so
//! writers adding at once all land. The store's layout number (SQLite's `user_version`,
//! PostgreSQL's `clibench_layout`) says which layout it has; a store from a newer
//! clibench is refused rather than misread, and an older file is upgraded in place when
//! opened ([`Store::upgraded`] says so, once). A file store is opened only when it is
//! clibench's own, and another party's store is read as data alone ([`trusted`] says
//! how). The statements are written once for both backends (`db`).

use crate::history::links::RunValues;
use crate::history::store::record::{Record, RecordError, Testbed};
use bench_core::{Metric, Phase};
use db::{Db, Row, int, opt};
use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

mod db;
mod error;
pub mod ingest;
pub mod location;
pub(super) mod record;
pub mod server;
pub mod throwaway;
mod trusted;
pub use db::DbError;
pub use error::StoreError;
pub use trusted::ImportLimits;

/// The store layout this clibench reads and writes (`PRAGMA user_version`): 2 added each
/// result's `run`, the invocation that measured it; 3 its `duet_phases`, the phases
/// whose timed values a duet measured.
pub const STORE_VERSION: i64 = 3;
/// How long an SQLite connection waits for another process's lock before it gives up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// Layout 1 to 2: each result's invocation, unknown (NULL) for the results stored before.
const UPGRADE_1_TO_2: &str = "ALTER TABLE results ADD COLUMN run TEXT;";
/// Layout 2 to 3: the phases whose timed values a duet measured, as a comma-separated
/// list of phase names ('' for none); unknown (NULL) for the results stored before,
/// which series take as measured alone until their result file is added again.
const UPGRADE_2_TO_3: &str = "ALTER TABLE results ADD COLUMN duet_phases TEXT;";

/// An older store this clibench upgraded in place when it opened it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Upgraded {
    /// The layout it had (`user_version`).
    pub from: i64,
    /// The results it held, whose schedule (and, from layout 1, run) is now unknown.
    pub results: u64,
}

impl Upgraded {
    /// What the upgrade did, for a person: a line naming the store.
    pub fn describe(&self, path: &Path) -> String {
        let runs = if self.from < 2 {
            "before runs were recorded (run unknown), so bisect compares them with no \
             other build, and "
        } else {
            ""
        };
        format!(
            "history store {} upgraded from layout {} to {STORE_VERSION}: its {} earlier \
             result(s) were stored {runs}without their schedule: series take them as \
             measured alone, beside `clibench run` results; `clibench history add` of a \
             duet's (`ab`'s) result files again records that they were not",
            path.display(),
            self.from,
            self.results
        )
    }
}

/// A record as stored, with its row id (the order in which it was added).
#[derive(Debug, Clone, PartialEq)]
pub struct Stored {
    /// The row id.
    pub id: i64,
    /// What was measured.
    pub record: Record,
}

/// What adding records did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Added {
    /// Records that were new.
    pub added: usize,
    /// Records the store already held (the same content hash): left as they were.
    pub already: usize,
    /// Of those, records stored without their schedule (before layout 3) that now have it.
    pub learned: usize,
}

impl Added {
    /// For a person: `2 result(s) added, 1 already there`, and how many of those learned
    /// their schedule.
    pub fn summary(&self) -> String {
        let learned = if self.learned > 0 {
            format!(" ({} now with their schedule)", self.learned)
        } else {
            String::new()
        };
        format!(
            "{} result(s) added, {} already there{learned}",
            self.added, self.already
        )
    }
}

/// Which records to read; `None` matches every value.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only this target.
    pub target: Option<String>,
    /// Only this branch.
    pub branch: Option<String>,
    /// Only this testbed fingerprint.
    pub testbed: Option<String>,
}

impl Filter {
    /// The series `record` belongs to: its target, branch and testbed.
    pub fn series_of(record: &Record) -> Filter {
        Filter {
            target: Some(record.target.clone()),
            branch: Some(record.branch.clone()),
            testbed: Some(record.testbed.fingerprint()),
        }
    }
}

/// One build's measurements on one machine: what bisect looks up before it measures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildKey {
    /// The spec's name (`request.config.target`).
    pub target: String,
    /// The build: a commit's full sha, or `PACKAGE@VERSION` for a published version
    /// (`request.sha`, as `run` and `ab` write it).
    pub revision: String,
    /// The testbed's fingerprint ([`Testbed::fingerprint`]).
    pub testbed: String,
}

/// An open history store.
#[derive(Debug)]
pub struct Store {
    /// The file, or a PostgreSQL store's URL without its password.
    path: PathBuf,
    db: RefCell<Db>,
    /// The layout the store has (a store read from elsewhere may be older than
    /// [`STORE_VERSION`]).
    layout: i64,
    /// Set when this open upgraded the store.
    upgraded: Option<Upgraded>,
    /// For a store from elsewhere: when reading it must be done.
    deadline: Option<trusted::Deadline>,
}

/// What failed inside a write: a statement, or what the store was found to be.
enum Failed {
    Db(DbError),
    Store(StoreError),
}

impl From<DbError> for Failed {
    fn from(error: DbError) -> Failed {
        Failed::Db(error)
    }
}

impl From<StoreError> for Failed {
    fn from(error: StoreError) -> Failed {
        Failed::Store(error)
    }
}

/// A records query selecting `$last`, the two columns a layout may lack, after the ones
/// every layout has.
macro_rules! records_select {
    ($last:literal) => {
        concat!(
            "SELECT id, target, branch, revision, version, cpu, cores, memory_bytes, kernel,
             load_average, started_unix_ms, ",
            $last,
            " FROM results
             WHERE (CAST(?1 AS TEXT) IS NULL OR target = ?1)
               AND (CAST(?2 AS TEXT) IS NULL OR branch = ?2)
               AND (CAST(?3 AS TEXT) IS NULL OR testbed = ?3)
             ORDER BY started_unix_ms IS NULL, started_unix_ms, id"
        )
    };
}

/// The columns a record is read from, for each layout: an older store (from elsewhere)
/// lacks the later ones, which read as unknown.
fn records_query(layout: i64) -> &'static str {
    const SELECT: [&str; 3] = [
        records_select!("NULL, NULL"),
        records_select!("run, NULL"),
        records_select!("run, duet_phases"),
    ];
    SELECT[layout.clamp(1, 3) as usize - 1]
}

/// A stored record's row (as [`records_query`] reads it), and its stored schedule.
fn stored_of(row: &Row) -> Result<(Stored, Option<String>), DbError> {
    let text = |column| row.text(column).map(Option::unwrap_or_default);
    let stored = Stored {
        id: row.int(0)?.unwrap_or_default(),
        record: Record {
            target: text(1)?,
            branch: text(2)?,
            revision: text(3)?,
            version: row.text(4)?,
            testbed: Testbed {
                cpu: text(5)?,
                cores: row.int(6)?.unwrap_or_default().clamp(0, u32::MAX.into()) as u32,
                memory_bytes: row.int(7)?.unwrap_or_default().max(0) as u64,
                kernel: text(8)?,
            },
            load_average: row.real(9)?,
            started_unix_ms: row.int(10)?.map(|ms| ms.max(0) as u64),
            run: row.text(11)?,
            duet_phases: None,
            samples: BTreeMap::new(),
        },
    };
    Ok((stored, row.text(12)?))
}

impl Store {
    /// Opens the store at `path`, creating it (and, when `create_parent`, its folder,
    /// mode 0700) when it does not exist: a file, or a PostgreSQL database when `path` is
    /// a `postgres://` URL ([`Store::open_postgres`]).
    pub fn open(path: &Path, create_parent: bool) -> Result<Store, StoreError> {
        if let Some(url) = path.to_str().filter(|text| server::is_url(text)) {
            return Store::open_postgres(url);
        }
        if create_parent && let Some(parent) = path.parent() {
            use std::os::unix::fs::DirBuilderExt;
            trusted::safe_ancestors(path, path)?;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)
                .map_err(|source| StoreError::CreateDir {
                    path: parent.to_path_buf(),
                    source,
                })?;
        }
        trusted::vet_own(path)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NOFOLLOW
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let sqlite = |source| StoreError::Sqlite {
            path: path.to_path_buf(),
            source,
        };
        let connection = Connection::open_with_flags(path, flags).map_err(sqlite)?;
        connection.busy_timeout(BUSY_TIMEOUT).map_err(sqlite)?;
        trusted::defend(&connection).map_err(sqlite)?;
        Store::ready(path.to_path_buf(), Db::Sqlite(connection))
    }

    /// Opens the PostgreSQL store at `url`, creating its tables when the database has
    /// none; the password comes as `server` says, and never appears in a message.
    pub fn open_postgres(url: &str) -> Result<Store, StoreError> {
        let (client, label) = server::connect(url)?;
        let db = Db::Postgres {
            client: Box::new(client),
            prepared: HashMap::new(),
        };
        Store::ready(PathBuf::from(label), db)
    }

    fn ready(path: PathBuf, db: Db) -> Result<Store, StoreError> {
        let mut store = Store {
            path,
            db: RefCell::new(db),
            layout: STORE_VERSION,
            upgraded: None,
            deadline: None,
        };
        store.upgraded = store.create_schema()?;
        Ok(store)
    }

    /// Reads a store clibench did not make (another machine's, a CI shard's) into
    /// memory, as data alone, within `limits`: its schema must be exactly clibench's.
    pub fn read_foreign(path: &Path, limits: &ImportLimits) -> Result<Store, StoreError> {
        let (connection, layout, deadline) = trusted::read_foreign(path, limits)?;
        Ok(Store {
            path: path.to_path_buf(),
            db: RefCell::new(Db::Sqlite(connection)),
            layout,
            upgraded: None,
            deadline: Some(deadline),
        })
    }

    /// The store's file, or a PostgreSQL store's URL without its password.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether opening the store upgraded it from an older layout (only the open that
    /// did it says so, so a command tells it once).
    pub fn upgraded(&self) -> Option<Upgraded> {
        self.upgraded
    }

    /// The error for a failed statement: past a store's deadline, the deadline.
    fn failed(&self, error: DbError) -> StoreError {
        match (error, &self.deadline) {
            (DbError::Sqlite(source), Some(deadline)) => deadline.error(&self.path, source),
            (DbError::Postgres(source), _) => StoreError::Postgres {
                store: self.path.display().to_string(),
                source,
            },
            (source, _) => StoreError::Query {
                path: self.path.clone(),
                source,
            },
        }
    }

    fn fail(&self, failed: Failed) -> StoreError {
        match failed {
            Failed::Db(error) => self.failed(error),
            Failed::Store(error) => error,
        }
    }

    /// Creates the tables of a new store, or checks an existing store's layout and
    /// upgrades an older one; in one write transaction, so that two processes opening
    /// the same new or old store at once make or upgrade it once.
    fn create_schema(&mut self) -> Result<Option<Upgraded>, StoreError> {
        let path = self.path.clone();
        let outcome = self.db.get_mut().write(|db| -> Result<_, Failed> {
            let found = db.layout()?;
            if found > STORE_VERSION {
                return Err(StoreError::Newer { path, found }.into());
            }
            if found == 0 {
                if db.tables()? > 0 {
                    return Err(StoreError::NotAStore {
                        path,
                        why: "it is a database of other tables".into(),
                    }
                    .into());
                }
                db.create_tables(STORE_VERSION)?;
                return Ok(None);
            }
            if let Some(connection) = db.sqlite() {
                trusted::check_schema(connection, &path, found)?;
            }
            if found == STORE_VERSION {
                return Ok(None);
            }
            // Only a file can be older: PostgreSQL stores began at layout 3.
            let row = db.query_one("SELECT count(*) FROM results", &[])?;
            let results = row.map(|row| row.int(0)).transpose()?.flatten();
            if found < 2 {
                db.batch(UPGRADE_1_TO_2)?;
            }
            db.batch(UPGRADE_2_TO_3)?;
            db.set_layout(STORE_VERSION)?;
            Ok(Some(Upgraded {
                from: found,
                results: results.unwrap_or_default().max(0) as u64,
            }))
        });
        outcome.map_err(|failed| self.fail(failed))
    }

    /// Adds `records` in one transaction; a record the store already holds is left as it
    /// was: the same content, or the same measurement read by another clibench (the same
    /// run's result of the same build on the same testbed, started at the same
    /// millisecond). The second rule is what keeps re-adding a result file a no-op across
    /// versions that read it differently (a duet result kept its solo starts before).
    pub fn add(&mut self, records: &[Record]) -> Result<Added, StoreError> {
        let added_unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_millis() as i64);
        let outcome = self.db.get_mut().write(|db| -> Result<_, DbError> {
            let mut outcome = Added::default();
            for record in records {
                add_one(db, record, added_unix_ms, &mut outcome)?;
            }
            Ok(outcome)
        });
        outcome.map_err(|error| self.failed(error))
    }

    /// The records matching `filter`, in series order: by the first trial's start, then
    /// by the order they were added.
    pub fn records(&self, filter: &Filter) -> Result<Vec<Stored>, StoreError> {
        let mut stored = Vec::new();
        let mut phases = Vec::new();
        let mut index = BTreeMap::new();
        let params = [
            opt(filter.target.clone()),
            opt(filter.branch.clone()),
            opt(filter.testbed.clone()),
        ];
        self.db
            .borrow_mut()
            .query(records_query(self.layout), &params, |row| {
                let (row, list) = stored_of(&row)?;
                index.insert(row.id, stored.len());
                stored.push(row);
                phases.push(list);
                Ok(())
            })
            .map_err(|error| self.failed(error))?;
        for (row, list) in stored.iter_mut().zip(phases) {
            if let Some(list) = list {
                let phases = phases_of(&list).map_err(|name| StoreError::Invalid {
                    path: self.path.clone(),
                    id: row.id,
                    problem: format!("duet_phases names an unknown phase {name:?}"),
                })?;
                row.record.duet_phases = Some(phases);
            }
        }
        self.attach_samples(&mut stored, &index)?;
        for row in &stored {
            row.record
                .validate()
                .map_err(|error| self.invalid(row.id, &error))?;
        }
        Ok(stored)
    }

    fn invalid(&self, id: i64, error: &RecordError) -> StoreError {
        StoreError::Invalid {
            path: self.path.clone(),
            id,
            problem: error.to_string(),
        }
    }

    /// Reads every sample of the records in `index` (row id -> position) into them.
    fn attach_samples(
        &self,
        stored: &mut [Stored],
        index: &BTreeMap<i64, usize>,
    ) -> Result<(), StoreError> {
        let mut problem = None;
        self.db
            .borrow_mut()
            .query(
                "SELECT result_id, metric, trial, value FROM samples
                 ORDER BY result_id, metric, trial",
                &[],
                |row| {
                    let id = row.int(0)?.unwrap_or_default();
                    let Some(&position) = index.get(&id) else {
                        return Ok(());
                    };
                    let name = row.text(1)?.unwrap_or_default();
                    let trial = row.int(2)?.unwrap_or_default();
                    let value = row.real(3)?.unwrap_or_default();
                    let (Ok(metric), Ok(trial)) = (name.parse::<Metric>(), u32::try_from(trial))
                    else {
                        problem.get_or_insert((id, format!("sample {name:?} of trial {trial}")));
                        return Ok(());
                    };
                    stored[position]
                        .record
                        .samples
                        .entry(metric)
                        .or_default()
                        .push((trial, value));
                    Ok(())
                },
            )
            .map_err(|error| self.failed(error))?;
        match problem {
            Some((id, what)) => Err(StoreError::Invalid {
                path: self.path.clone(),
                id,
                problem: format!("unknown metric or trial out of range: {what}"),
            }),
            None => Ok(()),
        }
    }

    /// Adds every record of the store at `other`, read as [`Store::read_foreign`] reads
    /// a file (another machine's, a CI shard's) or from a PostgreSQL store; records this
    /// store already holds are left as they were.
    pub fn import(&mut self, other: &Path, limits: &ImportLimits) -> Result<Added, StoreError> {
        let other = match other.to_str().filter(|text| server::is_url(text)) {
            Some(url) => Store::open_postgres(url)?,
            None => Store::read_foreign(other, limits)?,
        };
        let records: Vec<Record> = other
            .records(&Filter::default())?
            .into_iter()
            .map(|stored| stored.record)
            .collect();
        self.add(&records)
    }

    /// The number of records stored.
    pub fn count(&self) -> Result<u64, StoreError> {
        let row = self
            .db
            .borrow_mut()
            .query_one("SELECT count(*) FROM results", &[])
            .and_then(|row| row.map(|row| row.int(0)).transpose())
            .map_err(|error| self.failed(error))?;
        Ok(row.flatten().unwrap_or_default().max(0) as u64)
    }

    /// Every stored value of `metric` for one build, with its trial number (the records
    /// of `build.target` at `build.revision` measured on testbed `build.testbed`, whatever
    /// their branch), grouped by the run that measured it (in the order the runs were
    /// added); values of an unknown run are left out, since they were measured beside
    /// nothing known. Bisect compares builds only within runs.
    pub fn build_runs(
        &self,
        build: &BuildKey,
        metric: Metric,
    ) -> Result<Vec<RunValues>, StoreError> {
        let mut runs: Vec<RunValues> = Vec::new();
        let params = [
            Value::Text(build.target.clone()),
            Value::Text(build.revision.clone()),
            Value::Text(build.testbed.clone()),
            Value::Text(metric.name().to_owned()),
        ];
        self.db
            .borrow_mut()
            .query(
                "SELECT results.run, samples.trial, samples.value FROM samples
                 JOIN results ON samples.result_id = results.id
                 WHERE results.target = ?1 AND results.revision = ?2 AND results.testbed = ?3
                   AND samples.metric = ?4 AND results.run IS NOT NULL
                 ORDER BY results.id, samples.trial",
                &params,
                |row| {
                    let (Some(run), Some(trial), Some(value)) =
                        (row.text(0)?, row.int(1)?, row.real(2)?)
                    else {
                        return Ok(());
                    };
                    // The same limits a record read back passes (a store edited by hand).
                    let Ok(trial) = u32::try_from(trial) else {
                        return Ok(());
                    };
                    if metric.unit().unmeasurable(value).is_some() {
                        return Ok(());
                    }
                    match runs.iter_mut().find(|known| known.run == run) {
                        Some(known) => known.values.push((trial, value)),
                        None => runs.push(RunValues {
                            run,
                            values: vec![(trial, value)],
                        }),
                    }
                    Ok(())
                },
            )
            .map_err(|error| self.failed(error))?;
        Ok(runs)
    }

    /// The id of the record with `record`'s content, when the store holds it.
    pub fn find(&self, record: &Record) -> Result<Option<i64>, StoreError> {
        self.db
            .borrow_mut()
            .query_one(
                "SELECT id FROM results WHERE content_sha256 = ?1",
                &[Value::Text(record.content_hash())],
            )
            .and_then(|row| row.map(|row| row.int(0)).transpose())
            .map(Option::flatten)
            .map_err(|error| self.failed(error))
    }
}

/// Adds one record inside [`Store::add`]'s transaction, counting what it did.
fn add_one(
    db: &mut Db,
    record: &Record,
    added_unix_ms: i64,
    outcome: &mut Added,
) -> Result<(), DbError> {
    let testbed = &record.testbed;
    let duet_phases = record.duet_phases.as_ref().map(phase_list);
    // Each is needed up to three times below: the SHA-256 of the record's JSON and of
    // the testbed's facts, computed once.
    let (hash, fingerprint) = (record.content_hash(), testbed.fingerprint());
    let started = record.started_unix_ms.map(|ms| ms as i64);
    let same_measurement = match (&record.run, started) {
        (Some(run), Some(started)) if !run.is_empty() => db
            .query_one(
                "SELECT 1 FROM results WHERE run = ?1 AND started_unix_ms = ?2
                 AND target = ?3 AND revision = ?4 AND testbed = ?5 LIMIT 1",
                &[
                    Value::Text(run.clone()),
                    int(started),
                    Value::Text(record.target.clone()),
                    Value::Text(record.revision.clone()),
                    Value::Text(fingerprint.clone()),
                ],
            )?
            .is_some(),
        _ => false,
    };
    let inserted = if same_measurement {
        None
    } else {
        db.query_one(
            "INSERT INTO results (content_sha256, target, branch, revision, version, testbed,
             cpu, cores, memory_bytes, kernel, load_average, started_unix_ms, added_unix_ms,
             run, duet_phases)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
             ON CONFLICT DO NOTHING RETURNING id",
            &[
                Value::Text(hash.clone()),
                Value::Text(record.target.clone()),
                Value::Text(record.branch.clone()),
                Value::Text(record.revision.clone()),
                opt(record.version.clone()),
                Value::Text(fingerprint.clone()),
                Value::Text(testbed.cpu.clone()),
                int(testbed.cores),
                int(testbed.memory_bytes.min(i64::MAX as u64) as i64),
                Value::Text(testbed.kernel.clone()),
                opt(record.load_average),
                opt(started),
                int(added_unix_ms),
                opt(record.run.clone()),
                opt(duet_phases.clone()),
            ],
        )?
        .map(|row| row.int(0))
        .transpose()?
        .flatten()
    };
    let Some(id) = inserted else {
        outcome.already += 1;
        // A result stored before its schedule was recorded learns it when added again:
        // the same measurement (as above) or the same content.
        if let Some(phases) = duet_phases {
            outcome.learned += db.execute(
                "UPDATE results SET duet_phases = ?1 WHERE duet_phases IS NULL
                 AND (content_sha256 = ?2 OR (run = ?3 AND started_unix_ms = ?4
                 AND target = ?5 AND revision = ?6 AND testbed = ?7))",
                &[
                    Value::Text(phases),
                    Value::Text(hash),
                    opt(record.run.clone()),
                    opt(started),
                    Value::Text(record.target.clone()),
                    Value::Text(record.revision.clone()),
                    Value::Text(fingerprint),
                ],
            )? as usize;
        }
        return Ok(());
    };
    outcome.added += 1;
    for (metric, values) in &record.samples {
        for &(trial, value) in values {
            db.execute(
                "INSERT INTO samples (result_id, metric, trial, value) VALUES (?1, ?2, ?3, ?4)",
                &[
                    int(id),
                    Value::Text(metric.name().to_owned()),
                    int(trial),
                    Value::Real(value),
                ],
            )?;
        }
    }
    Ok(())
}

/// Phases as the store keeps them: their names, comma-separated, in order.
fn phase_list(phases: &BTreeSet<Phase>) -> String {
    let names: Vec<&str> = phases.iter().map(|phase| phase.name()).collect();
    names.join(",")
}

/// The phases of a stored list (empty: none); `Err` with the first name that is no
/// phase (a store edited by hand: a newer clibench's phase comes with a newer layout).
fn phases_of(list: &str) -> Result<BTreeSet<Phase>, String> {
    list.split(',')
        .filter(|name| !name.is_empty())
        .map(|name| name.parse::<Phase>().map_err(|_| name.to_owned()))
        .collect()
}

#[cfg(test)]
pub(crate) mod tests;
