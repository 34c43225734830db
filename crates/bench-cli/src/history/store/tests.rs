use super::*;
use crate::history::record::tests::result;
use rusty_fork::rusty_fork_test;

impl Store {
    fn user_version(&self) -> Result<i64, StoreError> {
        self.connection
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .map_err(self.sqlite())
    }

    /// Writes `records` as a layout-2 clibench did: no schedule column.
    fn insert_as_layout_2(&mut self, records: &[Record]) {
        for record in records {
            let testbed = &record.testbed;
            self.connection
                .execute(
                    "INSERT INTO results (content_sha256, target, branch, revision, testbed,
                     cpu, cores, memory_bytes, kernel, started_unix_ms, added_unix_ms, run)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 1, ?11)",
                    params![
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

rusty_fork_test! {
    // SQLite's caches and the writers' threads add to the test binary's
    // peak RSS, which other tests of it measure (the capped output
    // in pipeline::isolation::command): each runs in a process of its own.
    #[test]
    fn adding_the_same_result_twice_keeps_one() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("h.sqlite"), false).unwrap();
        let first = store.add(&[record("a", 1, &[0.3, 0.2])]).unwrap();
        let again = store.add(&[record("a", 1, &[0.3, 0.2])]).unwrap();
        assert_eq!(
            first,
            Added {
                added: 1,
                already: 0,
                learned: 0
            }
        );
        assert_eq!(
            again,
            Added {
                added: 0,
                already: 1,
                learned: 0
            }
        );
        assert_eq!(store.count().unwrap(), 1);
    }

    #[test]
    fn a_result_read_again_by_a_clibench_that_keeps_other_trials_is_not_added_twice() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("h.sqlite"), false).unwrap();
        let mut as_read_before = record("a", 1, &[0.3, 0.2, 0.25]);
        as_read_before.run = Some("run-1".into());
        let mut as_read_now = as_read_before.clone();
        // A newer clibench keeps fewer of the same result's trials (a duet's solo
        // starts): another content, the same measurement.
        as_read_now.samples.values_mut().for_each(|values| values.truncate(2));
        assert_ne!(as_read_before.content_hash(), as_read_now.content_hash());
        store.add(&[as_read_before.clone()]).unwrap();
        let again = store.add(&[as_read_now]).unwrap();
        assert_eq!(again, Added { added: 0, already: 1, learned: 0 });
        // Another run of the same build at the same moment is another measurement.
        let mut other_run = as_read_before;
        other_run.run = Some("run-2".into());
        assert_eq!(store.add(&[other_run]).unwrap(), Added { added: 1, already: 0, learned: 0 });
        assert_eq!(store.count().unwrap(), 2);
    }

    #[test]
    fn records_come_back_with_every_trial_in_start_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("h.sqlite"), false).unwrap();
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
    }

    #[test]
    fn a_store_from_a_newer_clibench_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        drop(Store::open(&path, false).unwrap());
        Connection::open(&path)
            .unwrap()
            .execute_batch(&format!("PRAGMA user_version = {};", STORE_VERSION + 1))
            .unwrap();
        let error = Store::open(&path, false).unwrap_err();
        assert!(
            matches!(error, StoreError::Newer { found, .. } if found == STORE_VERSION + 1),
            "{error}"
        );
        assert!(error.to_string().contains("written by a newer clibench"));
    }

    #[test]
    fn a_layout_1_store_is_upgraded_in_place_once_with_its_runs_unknown() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        // A store as clibench wrote it before runs were recorded.
        let old = Connection::open(&path).unwrap();
        old.execute_batch(&SCHEMA.replace(",\n    run TEXT,\n    duet_phases TEXT", ""))
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
        use crate::history::record::tests::duet_result;
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
        old.execute_batch(&SCHEMA.replace(",\n    duet_phases TEXT", ""))
            .unwrap();
        old.execute_batch("PRAGMA user_version = 2;").unwrap();
        drop(old);
        {
            let mut writer = Store::connect(&path, OpenFlags::SQLITE_OPEN_READ_WRITE).unwrap();
            writer.layout = 2;
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
    fn a_stored_schedule_naming_no_phase_is_refused_with_its_row() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        let mut store = Store::open(&path, false).unwrap();
        store.add(&[record("a", 1, &[0.3])]).unwrap();
        assert_eq!(
            store.records(&Filter::default()).unwrap()[0].record.duet_phases,
            Some(BTreeSet::new())
        );
        store
            .connection
            .execute("UPDATE results SET duet_phases = 'measure,warp'", [])
            .unwrap();
        let error = store.records(&Filter::default()).unwrap_err().to_string();
        assert!(error.contains("unknown phase \"warp\""), "{error}");
        assert!(error.contains("h.sqlite"), "{error}");
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

    #[test]
    fn import_merges_and_skips_what_is_already_there() {
        let dir = tempfile::tempdir().unwrap();
        let mut one = Store::open(&dir.path().join("one.sqlite"), false).unwrap();
        let mut two = Store::open(&dir.path().join("two.sqlite"), false).unwrap();
        one.add(&[record("a", 1, &[0.3]), record("b", 2, &[0.4])])
            .unwrap();
        two.add(&[record("b", 2, &[0.4]), record("c", 3, &[0.5])])
            .unwrap();
        let outcome = one
            .import(&dir.path().join("two.sqlite"), &ImportLimits::default())
            .unwrap();
        assert_eq!(
            outcome,
            Added {
                added: 1,
                already: 1,
                learned: 0
            }
        );
        assert_eq!(one.count().unwrap(), 3);
    }

    #[test]
    fn two_processes_adding_at_once_lose_nothing() {
        // Threads with their own connections take the same file locks as processes.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        drop(Store::open(&path, false).unwrap());
        let writers: Vec<_> = (0..4)
            .map(|writer| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let mut store = Store::open(&path, false).unwrap();
                    for i in 0..25 {
                        let started = writer * 100 + i;
                        store
                            .add(&[record(&format!("r{started}"), started, &[0.1])])
                            .unwrap();
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.join().unwrap();
        }
        assert_eq!(Store::open(&path, false).unwrap().count().unwrap(), 100);
    }
}
