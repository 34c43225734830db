//! The store: one SQLite file holding every record (docs/history.md shows its schema).
//!
//! Every write is one `BEGIN IMMEDIATE` transaction and every connection waits up to
//! [`BUSY_TIMEOUT`] for another's lock, so two processes adding at once both land.
//! `PRAGMA user_version` says which layout a file has; a file from a newer clibench is
//! refused rather than misread, and a file of an older layout is upgraded in place when
//! opened to write ([`Store::upgraded`] says so, once). A store is opened only when it is
//! clibench's own, and another party's store is read as data alone
//! ([`trusted`](self::trusted) says how).

use super::links::RunValues;
use super::record::{Record, RecordError, Testbed};
use bench_core::{Metric, Phase};
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

mod trusted;
pub use trusted::ImportLimits;

/// The store layout this clibench reads and writes (`PRAGMA user_version`): 2 added each
/// result's `run`, the invocation that measured it; 3 its `duet_phases`, the phases
/// whose timed values a duet measured.
pub const STORE_VERSION: i64 = 3;
/// How long a connection waits for another process's lock before it gives up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

const SCHEMA: &str = "
CREATE TABLE results (
    id INTEGER PRIMARY KEY,
    content_sha256 TEXT NOT NULL UNIQUE,
    target TEXT NOT NULL,
    branch TEXT NOT NULL,
    revision TEXT NOT NULL,
    version TEXT,
    testbed TEXT NOT NULL,
    cpu TEXT NOT NULL,
    cores INTEGER NOT NULL,
    memory_bytes INTEGER NOT NULL,
    kernel TEXT NOT NULL,
    load_average REAL,
    started_unix_ms INTEGER,
    added_unix_ms INTEGER NOT NULL,
    run TEXT,
    duet_phases TEXT
);
CREATE INDEX results_series ON results (target, branch, testbed, started_unix_ms);
CREATE TABLE samples (
    result_id INTEGER NOT NULL REFERENCES results (id),
    metric TEXT NOT NULL,
    trial INTEGER NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (result_id, metric, trial)
) WITHOUT ROWID;
";

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
    /// SQLite failed on the file.
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
    path: PathBuf,
    connection: Connection,
    /// The layout the file has (a read-only store may be older than [`STORE_VERSION`]).
    layout: i64,
    /// Set when this open upgraded the file.
    upgraded: Option<Upgraded>,
    /// For a store from elsewhere: when reading it must be done.
    deadline: Option<trusted::Deadline>,
}

impl Store {
    /// Opens the store at `path`, creating it (and, when `create_parent`, its folder,
    /// mode 0700) when it does not exist.
    pub fn open(path: &Path, create_parent: bool) -> Result<Store, StoreError> {
        if create_parent && let Some(parent) = path.parent() {
            use std::os::unix::fs::DirBuilderExt;
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
        let mut store = Store::connect(path, flags)?;
        store.create_schema()?;
        Ok(store)
    }

    /// Reads a store clibench did not make (another machine's, a CI shard's) into
    /// memory, as data alone, within `limits`: its schema must be exactly clibench's.
    pub fn read_foreign(path: &Path, limits: &ImportLimits) -> Result<Store, StoreError> {
        let (connection, layout, deadline) = trusted::read_foreign(path, limits)?;
        Ok(Store {
            path: path.to_path_buf(),
            connection,
            layout,
            upgraded: None,
            deadline: Some(deadline),
        })
    }

    fn connect(path: &Path, flags: OpenFlags) -> Result<Store, StoreError> {
        let sqlite = |source| StoreError::Sqlite {
            path: path.to_path_buf(),
            source,
        };
        let connection = Connection::open_with_flags(path, flags).map_err(sqlite)?;
        connection.busy_timeout(BUSY_TIMEOUT).map_err(sqlite)?;
        trusted::defend(&connection).map_err(sqlite)?;
        Ok(Store {
            path: path.to_path_buf(),
            connection,
            layout: STORE_VERSION,
            upgraded: None,
            deadline: None,
        })
    }

    /// The store's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether opening the store upgraded it from an older layout (only the open that
    /// did it says so, so a command tells it once).
    pub fn upgraded(&self) -> Option<Upgraded> {
        self.upgraded
    }

    fn sqlite(&self) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        |source| match &self.deadline {
            Some(deadline) => deadline.error(&self.path, source),
            None => StoreError::Sqlite {
                path: self.path.clone(),
                source,
            },
        }
    }

    /// Creates the tables of a new store, or checks an existing store's version. Inside
    /// one immediate transaction, so two processes creating the same store at once do
    /// not both run the schema.
    fn create_schema(&mut self) -> Result<(), StoreError> {
        let path = self.path.clone();
        let sqlite = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let transaction = self
            .connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sqlite)?;
        let found: i64 = transaction
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .map_err(sqlite)?;
        if found > STORE_VERSION {
            return Err(StoreError::Newer { path, found });
        }
        if found > 0 {
            trusted::check_schema(&transaction, &path, found)?;
        }
        if found == 0 {
            let tables: i64 = transaction
                .query_row("SELECT count(*) FROM sqlite_master", [], |row| row.get(0))
                .map_err(sqlite)?;
            if tables > 0 {
                return Err(StoreError::NotAStore {
                    path,
                    why: "it is an SQLite database of other tables".into(),
                });
            }
            transaction.execute_batch(SCHEMA).map_err(sqlite)?;
            transaction
                .execute_batch(&format!("PRAGMA user_version = {STORE_VERSION};"))
                .map_err(sqlite)?;
        } else if found < STORE_VERSION {
            // In the same immediate transaction as the check: two processes opening an
            // old store at once upgrade it once.
            let results: i64 = transaction
                .query_row("SELECT count(*) FROM results", [], |row| row.get(0))
                .map_err(sqlite)?;
            if found < 2 {
                transaction.execute_batch(UPGRADE_1_TO_2).map_err(sqlite)?;
            }
            transaction.execute_batch(UPGRADE_2_TO_3).map_err(sqlite)?;
            transaction
                .execute_batch(&format!("PRAGMA user_version = {STORE_VERSION};"))
                .map_err(sqlite)?;
            self.upgraded = Some(Upgraded {
                from: found,
                results: results.max(0) as u64,
            });
        }
        transaction.commit().map_err(sqlite)
    }

    /// Adds `records` in one transaction; a record the store already holds is left as it
    /// was: the same content, or the same measurement read by another clibench (the same
    /// run's result of the same build on the same testbed, started at the same
    /// millisecond). The second rule is what keeps re-adding a result file a no-op across
    /// versions that read it differently (a duet result kept its solo starts before).
    pub fn add(&mut self, records: &[Record]) -> Result<Added, StoreError> {
        let path = self.path.clone();
        let sqlite = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let added_unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_millis() as i64);
        let transaction = self
            .connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sqlite)?;
        let mut outcome = Added::default();
        {
            let mut insert = transaction
                .prepare_cached(
                    "INSERT OR IGNORE INTO results (content_sha256, target, branch, revision,
                     version, testbed, cpu, cores, memory_bytes, kernel, load_average,
                     started_unix_ms, added_unix_ms, run, duet_phases)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
                )
                .map_err(sqlite)?;
            let mut sample = transaction
                .prepare_cached(
                    "INSERT INTO samples (result_id, metric, trial, value) VALUES (?1, ?2, ?3, ?4)",
                )
                .map_err(sqlite)?;
            let mut measured = transaction
                .prepare_cached(
                    "SELECT 1 FROM results WHERE run = ?1 AND started_unix_ms = ?2
                     AND target = ?3 AND revision = ?4 AND testbed = ?5 LIMIT 1",
                )
                .map_err(sqlite)?;
            // A result stored before its schedule was recorded learns it when added
            // again: the same measurement (as above) or the same content.
            let mut learn_schedule = transaction
                .prepare_cached(
                    "UPDATE results SET duet_phases = ?1 WHERE duet_phases IS NULL
                     AND (content_sha256 = ?2 OR (run = ?3 AND started_unix_ms = ?4
                     AND target = ?5 AND revision = ?6 AND testbed = ?7))",
                )
                .map_err(sqlite)?;
            for record in records {
                let testbed = &record.testbed;
                let duet_phases = record.duet_phases.as_ref().map(phase_list);
                // Each is needed up to three times below: the SHA-256 of the record's JSON
                // and of the testbed's facts, computed once.
                let (hash, fingerprint) = (record.content_hash(), testbed.fingerprint());
                let same_measurement = match (&record.run, record.started_unix_ms) {
                    (Some(run), Some(started)) if !run.is_empty() => measured
                        .exists(params![
                            run,
                            started as i64,
                            record.target,
                            record.revision,
                            fingerprint
                        ])
                        .map_err(sqlite)?,
                    _ => false,
                };
                let mut already = || -> Result<(), StoreError> {
                    outcome.already += 1;
                    if let Some(phases) = &duet_phases {
                        outcome.learned += learn_schedule
                            .execute(params![
                                phases,
                                hash,
                                record.run,
                                record.started_unix_ms.map(|ms| ms as i64),
                                record.target,
                                record.revision,
                                fingerprint
                            ])
                            .map_err(sqlite)?;
                    }
                    Ok(())
                };
                if same_measurement {
                    already()?;
                    continue;
                }
                let inserted = insert
                    .execute(params![
                        hash,
                        record.target,
                        record.branch,
                        record.revision,
                        record.version,
                        fingerprint,
                        testbed.cpu,
                        testbed.cores,
                        testbed.memory_bytes as i64,
                        testbed.kernel,
                        record.load_average,
                        record.started_unix_ms.map(|ms| ms as i64),
                        added_unix_ms,
                        record.run,
                        duet_phases,
                    ])
                    .map_err(sqlite)?;
                if inserted == 0 {
                    already()?;
                    continue;
                }
                outcome.added += 1;
                let id = transaction.last_insert_rowid();
                for (metric, values) in &record.samples {
                    for &(trial, value) in values {
                        sample
                            .execute(params![id, metric.name(), trial, value])
                            .map_err(sqlite)?;
                    }
                }
            }
        }
        transaction.commit().map_err(sqlite)?;
        Ok(outcome)
    }

    /// The records matching `filter`, in series order: by the first trial's start, then
    /// by the order they were added.
    pub fn records(&self, filter: &Filter) -> Result<Vec<Stored>, StoreError> {
        // An older store (read-only, to import) lacks the later columns: unknown.
        let run = if self.layout >= 2 { "run" } else { "NULL" };
        let duet_phases = if self.layout >= 3 {
            "duet_phases"
        } else {
            "NULL"
        };
        let mut results = self
            .connection
            .prepare(&format!(
                "SELECT id, target, branch, revision, version, cpu, cores, memory_bytes,
                 kernel, load_average, started_unix_ms, {run}, {duet_phases} FROM results
                 WHERE (?1 IS NULL OR target = ?1) AND (?2 IS NULL OR branch = ?2)
                   AND (?3 IS NULL OR testbed = ?3)
                 ORDER BY started_unix_ms IS NULL, started_unix_ms, id"
            ))
            .map_err(self.sqlite())?;
        let rows = results
            .query_map(
                params![filter.target, filter.branch, filter.testbed],
                |row| {
                    let phases: Option<String> = row.get(12)?;
                    let stored = Stored {
                        id: row.get(0)?,
                        record: Record {
                            target: row.get(1)?,
                            branch: row.get(2)?,
                            revision: row.get(3)?,
                            version: row.get(4)?,
                            testbed: Testbed {
                                cpu: row.get(5)?,
                                cores: row.get(6)?,
                                memory_bytes: row.get::<_, i64>(7)?.max(0) as u64,
                                kernel: row.get(8)?,
                            },
                            load_average: row.get(9)?,
                            started_unix_ms: row
                                .get::<_, Option<i64>>(10)?
                                .map(|ms| ms.max(0) as u64),
                            run: row.get(11)?,
                            duet_phases: None,
                            samples: BTreeMap::new(),
                        },
                    };
                    Ok((stored, phases))
                },
            )
            .map_err(self.sqlite())?;
        let mut stored = Vec::new();
        let mut index = BTreeMap::new();
        for row in rows {
            let (mut row, phases) = row.map_err(self.sqlite())?;
            if let Some(list) = phases {
                let phases = phases_of(&list).map_err(|name| StoreError::Invalid {
                    path: self.path.clone(),
                    id: row.id,
                    problem: format!("duet_phases names an unknown phase {name:?}"),
                })?;
                row.record.duet_phases = Some(phases);
            }
            index.insert(row.id, stored.len());
            stored.push(row);
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
        let mut samples = self
            .connection
            .prepare("SELECT result_id, metric, trial, value FROM samples ORDER BY result_id, metric, trial")
            .map_err(self.sqlite())?;
        let mut rows = samples.query([]).map_err(self.sqlite())?;
        while let Some(row) = rows.next().map_err(self.sqlite())? {
            let id: i64 = row.get(0).map_err(self.sqlite())?;
            let Some(&position) = index.get(&id) else {
                continue;
            };
            let name: String = row.get(1).map_err(self.sqlite())?;
            let metric: Metric = name.parse().map_err(|_| StoreError::Invalid {
                path: self.path.clone(),
                id,
                problem: format!("unknown metric {name:?}"),
            })?;
            let trial: i64 = row.get(2).map_err(self.sqlite())?;
            let value: f64 = row.get(3).map_err(self.sqlite())?;
            let trial = u32::try_from(trial).map_err(|_| StoreError::Invalid {
                path: self.path.clone(),
                id,
                problem: format!("trial {trial} out of range"),
            })?;
            stored[position]
                .record
                .samples
                .entry(metric)
                .or_default()
                .push((trial, value));
        }
        Ok(())
    }

    /// Adds every record of the store at `other` (another machine's, a CI shard's),
    /// read as [`Store::read_foreign`] reads it; records this store already holds are
    /// left as they were.
    pub fn import(&mut self, other: &Path, limits: &ImportLimits) -> Result<Added, StoreError> {
        let other = Store::read_foreign(other, limits)?;
        let records: Vec<Record> = other
            .records(&Filter::default())?
            .into_iter()
            .map(|stored| stored.record)
            .collect();
        self.add(&records)
    }

    /// The number of records stored.
    pub fn count(&self) -> Result<u64, StoreError> {
        self.connection
            .query_row("SELECT count(*) FROM results", [], |row| {
                row.get::<_, i64>(0)
            })
            .map(|count| count.max(0) as u64)
            .map_err(self.sqlite())
    }

    /// Every stored value of `metric` for one build, with its trial number (the records
    /// of `build.target` at `build.revision` measured on testbed `build.testbed`, whatever
    /// their branch), grouped by the run that measured it (in the order the runs were added); values of an
    /// unknown run are left out, since they were measured beside nothing known. Bisect
    /// compares builds only within runs.
    pub fn build_runs(
        &self,
        build: &BuildKey,
        metric: Metric,
    ) -> Result<Vec<RunValues>, StoreError> {
        let mut values = self
            .connection
            .prepare_cached(
                "SELECT results.run, samples.trial, samples.value FROM samples
                 JOIN results ON samples.result_id = results.id
                 WHERE results.target = ?1 AND results.revision = ?2 AND results.testbed = ?3
                   AND samples.metric = ?4 AND results.run IS NOT NULL
                 ORDER BY results.id, samples.trial",
            )
            .map_err(self.sqlite())?;
        let rows = values
            .query_map(
                params![build.target, build.revision, build.testbed, metric.name()],
                |row| {
                    Ok((
                        row.get::<_, String>(0)?,
                        row.get::<_, i64>(1)?,
                        row.get::<_, f64>(2)?,
                    ))
                },
            )
            .map_err(self.sqlite())?;
        let mut runs: Vec<RunValues> = Vec::new();
        for row in rows {
            let (run, trial, value) = row.map_err(self.sqlite())?;
            // The same limits a record read back passes (a store edited by hand).
            let Ok(trial) = u32::try_from(trial) else {
                continue;
            };
            if metric.unit().unmeasurable(value).is_some() {
                continue;
            }
            match runs.iter_mut().find(|known| known.run == run) {
                Some(known) => known.values.push((trial, value)),
                None => runs.push(RunValues {
                    run,
                    values: vec![(trial, value)],
                }),
            }
        }
        Ok(runs)
    }

    /// The id of the record with `record`'s content, when the store holds it.
    pub fn find(&self, record: &Record) -> Result<Option<i64>, StoreError> {
        self.connection
            .query_row(
                "SELECT id FROM results WHERE content_sha256 = ?1",
                [record.content_hash()],
                |row| row.get(0),
            )
            .optional()
            .map_err(self.sqlite())
    }
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
