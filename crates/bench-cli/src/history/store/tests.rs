use super::*;
use crate::history::store::record::tests::result;
use rusty_fork::rusty_fork_test;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

impl Store {
    fn user_version(&self) -> Result<i64, StoreError> {
        self.db
            .borrow_mut()
            .layout()
            .map_err(|error| self.failed(error))
    }

    /// Writes `records` as a layout-2 clibench did: no schedule column.
    fn insert_as_layout_2(&mut self, records: &[Record]) {
        let Db::Sqlite(connection) = self.db.get_mut() else {
            unreachable!("layout 2 is a file's")
        };
        for record in records {
            let testbed = &record.testbed;
            connection
                .execute(
                    "INSERT INTO results (content_sha256, target, branch, revision, testbed,
                     cpu, cores, memory_bytes, kernel, started_unix_ms, added_unix_ms, run)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 1, ?11)",
                    rusqlite::params![
                        record.content_hash(),
                        record.target,
                        record.branch,
                        record.revision,
                        testbed.fingerprint(),
                        testbed.cpu,
                        testbed.cores,
                        testbed.memory_bytes as i64,
                        testbed.kernel,
                        record.started_unix_ms.map(|ms| ms as i64),
                        record.run,
                    ],
                )
                .unwrap();
        }
    }
}

/// `results` as the store would hand them back, ids in order, on branch `main`.
pub(crate) fn stored(results: &[bench_core::ResultFile]) -> Vec<Stored> {
    results
        .iter()
        .enumerate()
        .map(|(id, result)| Stored {
            id: id as i64,
            record: Record::of(result, None, "main").unwrap(),
        })
        .collect()
}

fn record(sha: &str, started: u64, cold: &[f64]) -> Record {
    Record::of(&result("demo", sha, started, cold), None, "main").unwrap()
}

/// Where a test's stores live: SQLite files in a folder of the test's own, or databases
/// of the test binary's one throwaway PostgreSQL server.
enum Backend {
    Sqlite(tempfile::TempDir, AtomicU32),
    Postgres(&'static throwaway::Throwaway),
}

/// The test binary's PostgreSQL server, started by the first test that asks and
/// stopped when the binary exits.
fn shared_server() -> &'static throwaway::Throwaway {
    static SERVER: OnceLock<throwaway::Throwaway> = OnceLock::new();
    SERVER.get_or_init(|| {
        extern "C" fn stop() {
            // Statics are never dropped: stop the server and remove its folder here.
            if let Some(server) = SERVER.get() {
                // SAFETY: at exit no test thread uses the server any more, and this
                // runs once; dropping in place ends its keeper thread and folder.
                unsafe { std::ptr::drop_in_place(server as *const _ as *mut throwaway::Throwaway) };
            }
        }
        let server = throwaway::Throwaway::start().unwrap();
        // SAFETY: registering a plain extern "C" function.
        unsafe { libc::atexit(stop) };
        server
    })
}

impl Backend {
    fn sqlite() -> Backend {
        Backend::Sqlite(tempfile::tempdir().unwrap(), AtomicU32::new(0))
    }

    /// The PostgreSQL backend, or `None` where no server is installed (a skip, which
    /// fails on CI: CI installs one).
    fn postgres() -> Option<Backend> {
        throwaway::installed().then(|| Backend::Postgres(shared_server()))
    }

    /// A new, empty store's location.
    fn new_store(&self) -> PathBuf {
        match self {
            Backend::Sqlite(dir, count) => dir
                .path()
                .join(format!("h{}.sqlite", count.fetch_add(1, Ordering::Relaxed))),
            Backend::Postgres(server) => PathBuf::from(server.create_database().unwrap()),
        }
    }
}

/// Each test of the history's suite, run on SQLite (in a process of its own: SQLite's
/// caches and the writers' threads add to the test binary's peak RSS, which other tests
/// of it measure) and on PostgreSQL.
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod on_sqlite {
            use rusty_fork::rusty_fork_test;
            $(
                rusty_fork_test! {
                    #[test]
                    fn $name() {
                        super::$name(&super::Backend::sqlite());
                    }
                }
            )*
        }
        mod on_postgres {
            $(
                #[test]
                fn $name() {
                    let Some(backend) = super::Backend::postgres() else {
                        bench_core::skip_test!("no PostgreSQL server (apt-get install postgresql)");
                    };
                    super::$name(&backend);
                }
            )*
        }
    };
}

on_both_backends!(
    adding_the_same_result_twice_keeps_one,
    a_result_read_again_by_a_clibench_that_keeps_other_trials_is_not_added_twice,
    records_come_back_with_every_trial_in_start_order,
    a_store_from_a_newer_clibench_is_refused,
    a_stored_schedule_naming_no_phase_is_refused_with_its_row,
    import_copies_a_store_whole_in_either_direction,
    eight_writers_adding_at_once_keep_every_result_once,
    a_writer_that_dies_mid_add_leaves_the_store_whole,
    bisect_finds_a_builds_values_by_run,
);

fn adding_the_same_result_twice_keeps_one(backend: &Backend) {
    let mut store = Store::open(&backend.new_store(), false).unwrap();
    let first = store.add(&[record("a", 1, &[0.3, 0.2])]).unwrap();
    let again = store.add(&[record("a", 1, &[0.3, 0.2])]).unwrap();
    assert_eq!((first.added, first.already, first.learned), (1, 0, 0));
    assert_eq!((again.added, again.already, again.learned), (0, 1, 0));
    assert_eq!(store.count().unwrap(), 1);
}

fn a_result_read_again_by_a_clibench_that_keeps_other_trials_is_not_added_twice(backend: &Backend) {
    let mut store = Store::open(&backend.new_store(), false).unwrap();
    let mut as_read_before = record("a", 1, &[0.3, 0.2, 0.25]);
    as_read_before.run = Some("run-1".into());
    let mut as_read_now = as_read_before.clone();
    // A newer clibench keeps fewer of the same result's trials (a duet's solo starts):
    // another content, the same measurement.
    as_read_now
        .samples
        .values_mut()
        .for_each(|values| values.truncate(2));
    assert_ne!(as_read_before.content_hash(), as_read_now.content_hash());
    store.add(&[as_read_before.clone()]).unwrap();
    let again = store.add(&[as_read_now]).unwrap();
    assert_eq!((again.added, again.already), (0, 1));
    // Another run of the same build at the same moment is another measurement.
    let mut other_run = as_read_before;
    other_run.run = Some("run-2".into());
    assert_eq!(store.add(&[other_run]).unwrap().added, 1);
    assert_eq!(store.count().unwrap(), 2);
}

fn records_come_back_with_every_trial_in_start_order(backend: &Backend) {
    let mut store = Store::open(&backend.new_store(), false).unwrap();
    store
        .add(&[
            record("late", 20, &[0.5, 0.4, 0.6]),
            record("early", 10, &[0.3]),
        ])
        .unwrap();
    let stored = store.records(&Filter::default()).unwrap();
    let revisions: Vec<&str> = stored.iter().map(|s| s.record.revision.as_str()).collect();
    assert_eq!(revisions, ["early", "late"]);
    assert_eq!(stored[1].record, record("late", 20, &[0.5, 0.4, 0.6]));
    let early = Filter {
        target: Some("demo".into()),
        branch: Some("main".into()),
        testbed: Some(stored[0].record.testbed.fingerprint()),
    };
    assert_eq!(store.records(&early).unwrap().len(), 2);
    assert_eq!(store.find(&stored[0].record).unwrap(), Some(stored[0].id));
}

fn a_store_from_a_newer_clibench_is_refused(backend: &Backend) {
    let place = backend.new_store();
    let store = Store::open(&place, false).unwrap();
    store.db.borrow_mut().set_layout(STORE_VERSION + 1).unwrap();
    drop(store);
    let error = Store::open(&place, false).unwrap_err();
    assert!(
        matches!(error, StoreError::Newer { found, .. } if found == STORE_VERSION + 1),
        "{error}"
    );
    assert!(error.to_string().contains("written by a newer clibench"));
}

fn a_stored_schedule_naming_no_phase_is_refused_with_its_row(backend: &Backend) {
    let place = backend.new_store();
    let mut store = Store::open(&place, false).unwrap();
    store.add(&[record("a", 1, &[0.3])]).unwrap();
    assert_eq!(
        store.records(&Filter::default()).unwrap()[0]
            .record
            .duet_phases,
        Some(BTreeSet::new())
    );
    store
        .db
        .borrow_mut()
        .batch("UPDATE results SET duet_phases = 'measure,warp'")
        .unwrap();
    let error = store.records(&Filter::default()).unwrap_err().to_string();
    assert!(error.contains("unknown phase \"warp\""), "{error}");
    assert!(
        error.contains(&store.path().display().to_string()),
        "{error}"
    );
}

fn import_copies_a_store_whole_in_either_direction(backend: &Backend) {
    // One store of this backend and one SQLite file: a team moves its file history
    // into PostgreSQL once, and can take it back.
    let files = tempfile::tempdir().unwrap();
    let file = files.path().join("cache.sqlite");
    let mut here = Store::open(&backend.new_store(), false).unwrap();
    let mut there = Store::open(&file, false).unwrap();
    let mut runs = record("b", 2, &[0.4, 0.41]);
    runs.run = Some("0123456789abcdef".into());
    here.add(&[record("a", 1, &[0.3]), runs.clone()]).unwrap();
    there.add(&[runs, record("c", 3, &[0.5])]).unwrap();
    let limits = ImportLimits::default();
    let into_here = here.import(&file, &limits).unwrap();
    assert_eq!((into_here.added, into_here.already), (1, 1));
    let into_there = there.import(here.path(), &limits);
    // A PostgreSQL store is named by its URL; a file store by its path.
    let into_there = match into_there {
        Ok(added) => added,
        Err(error) => panic!("{error}"),
    };
    assert_eq!((into_there.added, into_there.already), (1, 2));
    let hashes = |store: &Store| -> BTreeSet<String> {
        let stored = store.records(&Filter::default()).unwrap();
        stored.iter().map(|s| s.record.content_hash()).collect()
    };
    assert_eq!(hashes(&here), hashes(&there));
    assert_eq!(hashes(&here).len(), 3);
}

fn eight_writers_adding_at_once_keep_every_result_once(backend: &Backend) {
    // Threads with their own connections take the same locks as processes. Each adds
    // 100 results of its own and the same 20 that every other adds too, at once.
    let place = backend.new_store();
    drop(Store::open(&place, false).unwrap());
    let writers: Vec<_> = (0..8u64)
        .map(|writer| {
            let place = place.clone();
            std::thread::spawn(move || {
                let mut store = Store::open(&place, false).unwrap();
                for i in 0..100 {
                    let started = writer * 1000 + i;
                    store
                        .add(&[record(&format!("r{started}"), started, &[0.1])])
                        .unwrap();
                    if i % 5 == 0 {
                        let shared = 100_000 + i / 5;
                        store
                            .add(&[record(&format!("s{shared}"), shared, &[0.2])])
                            .unwrap();
                    }
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    let store = Store::open(&place, false).unwrap();
    assert_eq!(store.count().unwrap(), 820);
    let stored = store.records(&Filter::default()).unwrap();
    let distinct: BTreeSet<&str> = stored.iter().map(|s| s.record.revision.as_str()).collect();
    assert_eq!(distinct.len(), 820, "no result twice");
}

fn a_writer_that_dies_mid_add_leaves_the_store_whole(backend: &Backend) {
    let place = backend.new_store();
    let mut store = Store::open(&place, false).unwrap();
    store.add(&[record("a", 1, &[0.3])]).unwrap();
    // A writer whose connection ends inside its transaction (killed): its result's row
    // went in, its samples did not, and nothing was committed.
    let mut dying = Store::open(&place, false).unwrap();
    let db = dying.db.get_mut();
    db.begin_write().unwrap();
    db.batch(
        "INSERT INTO results (content_sha256, target, branch, revision, testbed, cpu, cores,
         memory_bytes, kernel, added_unix_ms) VALUES ('x', 'demo', 'main', 'half', 't', 'c', 1,
         1, 'k', 1)",
    )
    .unwrap();
    drop(dying);
    let stored = store.records(&Filter::default()).unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].record, record("a", 1, &[0.3]));
    store.add(&[record("b", 2, &[0.4])]).unwrap();
    assert_eq!(store.count().unwrap(), 2);
}

fn bisect_finds_a_builds_values_by_run(backend: &Backend) {
    let mut store = Store::open(&backend.new_store(), false).unwrap();
    let mut first = record("abc", 1, &[0.3, 0.31]);
    first.run = Some("run-1".into());
    let mut second = record("abc", 2, &[0.32]);
    second.run = Some("run-2".into());
    store
        .add(&[first.clone(), second, record("abc", 3, &[0.9])])
        .unwrap();
    let build = BuildKey {
        target: "demo".into(),
        revision: "abc".into(),
        testbed: first.testbed.fingerprint(),
    };
    let runs = store.build_runs(&build, Metric::Cold).unwrap();
    let found: Vec<(&str, Vec<(u32, f64)>)> = runs
        .iter()
        .map(|run| (run.run.as_str(), run.values.clone()))
        .collect();
    assert_eq!(
        found,
        [
            ("run-1", vec![(0, 0.3), (1, 0.31)]),
            ("run-2", vec![(0, 0.32)])
        ]
    );
}

rusty_fork_test! {
    // The layouts before 3 and the file's own rules: SQLite's alone.

    #[test]
    fn a_layout_1_store_is_upgraded_in_place_once_with_its_runs_unknown() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        // A store as clibench wrote it before runs were recorded.
        let old = Connection::open(&path).unwrap();
        old.execute_batch(&db::SQLITE_TABLES.replace(",\n    run TEXT,\n    duet_phases TEXT", ""))
            .unwrap();
        old.execute_batch("PRAGMA user_version = 1;").unwrap();
        old.execute(
            "INSERT INTO results (content_sha256, target, branch, revision, testbed, cpu,
             cores, memory_bytes, kernel, started_unix_ms, added_unix_ms)
             VALUES ('h', 'demo', 'main', 'abc', 't', 'cpu', 2, 1, 'k', 1, 1)",
            [],
        )
        .unwrap();
        old.execute(
            "INSERT INTO samples (result_id, metric, trial, value) VALUES (1, 'cold', 0, 0.3)",
            [],
        )
        .unwrap();
        drop(old);
        // Read-only (to import), it is read as it is and left alone.
        let read = Store::read_foreign(&path, &ImportLimits::default()).unwrap();
        assert_eq!(read.records(&Filter::default()).unwrap()[0].record.run, None);
        assert_eq!(read.upgraded(), None);
        drop(read);
        let mut store = Store::open(&path, false).unwrap();
        assert_eq!(
            store.upgraded(),
            Some(Upgraded {
                from: 1,
                results: 1
            })
        );
        assert_eq!(store.user_version().unwrap(), STORE_VERSION);
        let mut paired = record("def", 2, &[0.4]);
        paired.run = Some("0123456789abcdef".into());
        store.add(&[paired]).unwrap();
        let runs: Vec<Option<String>> = store
            .records(&Filter::default())
            .unwrap()
            .into_iter()
            .map(|stored| stored.record.run)
            .collect();
        assert_eq!(runs, [None, Some("0123456789abcdef".to_owned())]);
        drop(store);
        // Said once: the next open finds the current layout.
        assert_eq!(Store::open(&path, false).unwrap().upgraded(), None);
    }

    #[test]
    fn a_layout_2_store_learns_a_duets_schedule_when_its_result_is_added_again() {
        use crate::history::store::record::tests::duet_result;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        // A store as clibench wrote it before schedules were recorded, holding one
        // side of a duet (its run known) and a result without a run.
        let mut duet = Record::of(&duet_result("demo", "abc", 1, &[0.12, 0.185]), None, "main")
            .unwrap();
        duet.run = Some("0123456789abcdef".into());
        let unrun = Record::of(&duet_result("demo", "def", 2, &[0.12, 0.19]), None, "main")
            .unwrap();
        let old = Connection::open(&path).unwrap();
        old.execute_batch(&db::SQLITE_TABLES.replace(",\n    duet_phases TEXT", ""))
            .unwrap();
        old.execute_batch("PRAGMA user_version = 2;").unwrap();
        drop(old);
        {
            let mut writer = Store {
                path: path.clone(),
                db: RefCell::new(Db::Sqlite(Connection::open(&path).unwrap())),
                layout: 2,
                upgraded: None,
                deadline: None,
            };
            let mut unknown = [duet.clone(), unrun.clone()];
            for record in &mut unknown {
                record.duet_phases = None;
            }
            writer.insert_as_layout_2(&unknown);
        }
        let mut store = Store::open(&path, false).unwrap();
        assert_eq!(
            store.upgraded(),
            Some(Upgraded {
                from: 2,
                results: 2
            })
        );
        let message = store.upgraded().unwrap().describe(&path);
        assert!(message.contains("history add"), "{message}");
        assert!(!message.contains("run unknown"), "{message}");
        let schedules = |store: &Store| -> Vec<Option<BTreeSet<Phase>>> {
            let stored = store.records(&Filter::default()).unwrap();
            stored.into_iter().map(|s| s.record.duet_phases).collect()
        };
        // Unknown: a series takes it as measured alone.
        assert_eq!(schedules(&store), [None, None]);
        // Added again (the same measurement; the same content), each learns it and
        // nothing is added.
        let again = store.add(&[duet, unrun]).unwrap();
        assert_eq!((again.added, again.already, again.learned), (0, 2, 2));
        assert_eq!(again.summary(), "0 result(s) added, 2 already there (2 now with their schedule)");
        let measure = Some(BTreeSet::from([Phase::Measure]));
        assert_eq!(schedules(&store), [measure.clone(), measure]);
    }

    #[test]
    fn another_database_is_not_taken_for_a_store() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("other.sqlite");
        Connection::open(&path)
            .unwrap()
            .execute_batch("CREATE TABLE t (x);")
            .unwrap();
        assert!(matches!(
            Store::open(&path, false).unwrap_err(),
            StoreError::NotAStore { .. }
        ));
    }

    #[test]
    fn a_symbolic_link_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere.sqlite");
        let link = dir.path().join("h.sqlite");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(Store::open(&link, false).is_err());
        assert!(!target.exists());
    }

}
