use super::super::{Filter, Store, StoreError};
use super::*;
use crate::history::store::record::Record;
use crate::history::store::record::tests::result;
use rusty_fork::rusty_fork_test;
use std::os::unix::fs::PermissionsExt;

fn record(sha: &str, started: u64, cold: &[f64]) -> Record {
    Record::of(&result("demo", sha, started, cold), None, "main").unwrap()
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A store with `records` at `path`, as clibench writes one.
fn store_with(path: &Path, records: &[Record]) {
    Store::open(path, false).unwrap().add(records).unwrap();
}

fn refusal(error: StoreError) -> String {
    assert!(
        matches!(
            error,
            StoreError::Untrusted { .. } | StoreError::NotAStore { .. }
        ),
        "{error}"
    );
    error.to_string()
}

/// An SQLite file at `path` made by `sql` (another party's, whatever it holds).
fn crafted(path: &Path, sql: &str) {
    Connection::open(path).unwrap().execute_batch(sql).unwrap();
}

/// clibench's layout-3 tables, as a hostile shard copies them before adding its own.
const TABLES: &str = "
CREATE TABLE results (id INTEGER PRIMARY KEY, content_sha256 TEXT NOT NULL UNIQUE,
    target TEXT NOT NULL, branch TEXT NOT NULL, revision TEXT NOT NULL, version TEXT,
    testbed TEXT NOT NULL, cpu TEXT NOT NULL, cores INTEGER NOT NULL,
    memory_bytes INTEGER NOT NULL, kernel TEXT NOT NULL, load_average REAL,
    started_unix_ms INTEGER, added_unix_ms INTEGER NOT NULL, run TEXT, duet_phases TEXT);
CREATE TABLE samples (result_id INTEGER NOT NULL, metric TEXT NOT NULL,
    trial INTEGER NOT NULL, value REAL NOT NULL, PRIMARY KEY (result_id, metric, trial))
    WITHOUT ROWID;
PRAGMA user_version = 3;
";

rusty_fork_test! {
    // SQLite's caches add to the test binary's peak RSS, which other tests of it
    // measure: each runs in a process of its own, as the store's other tests do.

    #[test]
    fn another_users_file_at_the_store_path_is_refused_and_left_as_it_was() {
        if euid() != 0 {
            bench_core::skip_test!("making a file of another user needs root");
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.db");
        std::fs::write(&path, b"").unwrap();
        chmod(&path, 0o666);
        rustix::fs::chown(&path, Some(rustix::fs::Uid::from_raw(65534)), None).unwrap();
        let error = refusal(Store::open(&path, false).unwrap_err());
        assert!(error.contains("it belongs to uid 65534"), "{error}");
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0, "nothing was written");
        // Its journal, planted beside a store of ours, is refused the same way.
        let ours = dir.path().join("ours.db");
        store_with(&ours, &[record("a", 1, &[0.3])]);
        let journal = dir.path().join("ours.db-journal");
        std::fs::write(&journal, b"hot").unwrap();
        rustix::fs::chown(&journal, Some(rustix::fs::Uid::from_raw(65534)), None).unwrap();
        let error = refusal(Store::open(&ours, false).unwrap_err());
        assert!(error.contains("ours.db-journal"), "{error}");
    }

    #[test]
    fn a_store_in_a_folder_every_user_can_write_into_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let shared = dir.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        chmod(&shared, 0o1777);
        let path = shared.join("h.db");
        let error = refusal(Store::open(&path, false).unwrap_err());
        assert!(error.contains("every user can write into its folder"), "{error}");
        assert!(error.contains("history store") && error.contains("h.db"), "{error}");
        assert!(!path.exists(), "no store was made there");
    }

    #[test]
    fn a_store_others_can_write_or_a_fifo_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.db");
        store_with(&path, &[record("a", 1, &[0.3])]);
        chmod(&path, 0o666);
        let error = refusal(Store::open(&path, false).unwrap_err());
        assert!(error.contains("other users can write it (mode 666)"), "{error}");
        let fifo = dir.path().join("fifo.db");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let error = refusal(Store::open(&fifo, false).unwrap_err());
        assert!(error.contains("not a plain file"), "{error}");
        let error = refusal(Store::read_foreign(&fifo, &ImportLimits::default()).unwrap_err());
        assert!(error.contains("not a plain file"), "{error}");
    }

    #[test]
    fn a_folder_others_can_move_is_refused() {
        if euid() != 0 {
            bench_core::skip_test!("a folder of another user needs root");
        }
        // Our own folder, inside one that another user owns: they could rename ours
        // away and put theirs in its place between the check and SQLite's open.
        let dir = tempfile::tempdir().unwrap();
        let theirs = dir.path().join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        rustix::fs::chown(&theirs, Some(rustix::fs::Uid::from_raw(65534)), None).unwrap();
        let ours = theirs.join("ours");
        std::fs::create_dir(&ours).unwrap();
        chmod(&ours, 0o700);
        let error = refusal(Store::open(&ours.join("h.db"), false).unwrap_err());
        assert!(error.contains("above its folder belongs to uid 65534"), "{error}");
        // The default store under another user's home (sudo keeps HOME): refused before
        // any of its folders is made there.
        let default = theirs.join(".local/share/clibench/history.sqlite");
        let error = refusal(Store::open(&default, true).unwrap_err());
        assert!(error.contains("above its folder belongs to uid 65534"), "{error}");
        assert!(!theirs.join(".local").exists(), "nothing made in their folder");
    }

    #[test]
    fn a_shard_of_endless_views_is_refused_at_once() {
        // The round-4 attack: `results` and `samples` as views over a recursive CTE
        // that never ends, with clibench's columns and layout.
        let dir = tempfile::tempdir().unwrap();
        let shard = dir.path().join("shard.sqlite");
        crafted(&shard, "
            CREATE VIEW results AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n)
              SELECT i AS id, 'h' || i AS content_sha256, 'demo' AS target, 'main' AS branch,
                'abc' AS revision, NULL AS version, 't' AS testbed, 'cpu' AS cpu, 2 AS cores,
                1 AS memory_bytes, 'k' AS kernel, NULL AS load_average, i AS started_unix_ms,
                1 AS added_unix_ms, NULL AS run, NULL AS duet_phases FROM n;
            CREATE VIEW samples AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n)
              SELECT i AS result_id, 'cold' AS metric, 0 AS trial, 0.3 AS value FROM n;
            PRAGMA user_version = 3;");
        let dest = dir.path().join("h.db");
        let mut store = Store::open(&dest, false).unwrap();
        let error = refusal(store.import(&shard, &ImportLimits::default()).unwrap_err());
        assert!(error.contains("shard.sqlite"), "{error}");
        assert!(error.contains("it holds a view \"results\""), "{error}");
        assert_eq!(store.count().unwrap(), 0);
    }

    #[test]
    fn a_shard_with_a_trigger_or_a_generated_column_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let trigger = dir.path().join("trigger.sqlite");
        crafted(&trigger, &format!("{TABLES}
            CREATE TRIGGER t AFTER INSERT ON samples BEGIN DELETE FROM results; END;"));
        let error = refusal(Store::read_foreign(&trigger, &ImportLimits::default()).unwrap_err());
        assert!(error.contains("it holds a trigger \"t\""), "{error}");
        let generated = dir.path().join("generated.sqlite");
        crafted(&generated, &TABLES.replace(
            "value REAL NOT NULL,",
            "value REAL NOT NULL, v2 REAL GENERATED ALWAYS AS (value * 2),",
        ));
        let error = refusal(Store::read_foreign(&generated, &ImportLimits::default()).unwrap_err());
        assert!(error.contains("its table samples has the columns"), "{error}");
        // The same views in a store of our own are refused when it is opened.
        let own = dir.path().join("own.sqlite");
        crafted(&own, &format!("{TABLES} CREATE VIEW v AS SELECT 1;"));
        let error = refusal(Store::open(&own, false).unwrap_err());
        assert!(error.contains("it holds a view \"v\""), "{error}");
    }

    #[test]
    fn a_shard_beyond_the_bounds_or_the_deadline_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let shard = dir.path().join("shard.sqlite");
        let records: Vec<Record> = (0..50)
            .map(|n| record(&format!("r{n}"), n, &[0.3; 40]))
            .collect();
        store_with(&shard, &records);
        let limits = ImportLimits::default();
        let few = ImportLimits { max_results: 49, ..limits };
        let error = refusal(Store::read_foreign(&shard, &few).unwrap_err());
        assert!(error.contains("it holds 50 results, more than the 49"), "{error}");
        let small = ImportLimits { max_bytes: 1024, ..limits };
        let error = refusal(Store::read_foreign(&shard, &small).unwrap_err());
        assert!(error.contains("more than the 1024 clibench imports"), "{error}");
        // Counting 2,000 samples takes more than the thousand steps between two looks
        // at the clock, so a deadline already passed stops it.
        let none = ImportLimits { deadline: Duration::ZERO, ..limits };
        let error = refusal(Store::read_foreign(&shard, &none).unwrap_err());
        assert!(error.contains("reading it took longer than 0s"), "{error}");
        // Within the bounds, every record comes across.
        let read = Store::read_foreign(&shard, &limits).unwrap();
        assert_eq!(read.records(&Filter::default()).unwrap().len(), 50);
    }

    #[test]
    fn a_store_in_wal_mode_is_read_from_its_pages() {
        let dir = tempfile::tempdir().unwrap();
        let shard = dir.path().join("shard.sqlite");
        store_with(&shard, &[record("a", 1, &[0.3])]);
        let connection = Connection::open(&shard).unwrap();
        connection.execute_batch("PRAGMA journal_mode = WAL;").unwrap();
        drop(connection);
        let read = Store::read_foreign(&shard, &ImportLimits::default()).unwrap();
        assert_eq!(read.records(&Filter::default()).unwrap().len(), 1);
    }
}
