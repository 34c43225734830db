//! The uid ledger: which uids clibench may give a new trial user without walking the
//! shared folders on every install, kept under `/var/lib/clibench` (root's, 0700).
//!
//! A uid is free when nothing cheap to look at names it (/etc/passwd, a process, a home,
//! SysV IPC, a key: [`leftovers::busy_uids_without_files`]) and the ledger neither lists
//! it as handed out nor as dirty. Dirty uids are those that owned a file in a shared folder
//! at the last sweep, or whose removal left anything. A sweep walks every shared folder
//! ([`leftovers::shared_folders`] then [`leftovers::owners_in`]); it happens when the
//! ledger is missing, unreadable or older than [`SWEEP_MAX_AGE`].
//!
//! # Retired uids
//! As with systemd's `DynamicUser=`, a uid is not given out again while anything of it may
//! live: something no walk sees (a descriptor held on a file of it, a file in a folder the
//! walk missed) outlives its removal. So a uid given back, clean or not, is *retired*
//! (with when, in `retired.json`), and new trial users get uids never handed out, lowest
//! first. Only when none is left (`UID_MIN..=UID_MAX` of login.defs is about 59,000 uids:
//! years of CI at a few uids a run) does a retired uid come back: the one retired longest
//! ago, once [`QUARANTINE`] has passed since, a sweep ended after it was retired, and that
//! sweep found nothing of it (not dirty). When every uid is handed out, dirty or retired
//! for less than [`QUARANTINE`], allocation fails with "no free uid".
//!
//! Every change happens under an exclusive `flock` of the ledger's lock file, so two runs
//! never hand out the same uid.
//!
//! The same lock guards a second book, `runs.json`: the staging folder and the per-run
//! group of every root run, with the run's OUT/ and the process the run lives in (pid and
//! start time), recorded before they are created. A run whose process is gone and whose
//! OUT/ no longer holds its state file (a test's temporary folder removed, a run of single
//! phases never cleaned up) can never be cleaned up by `clibench cleanup`; its staging
//! folder and group are removed by the next run's start or the next sweep instead (see
//! `staging::sweep_dead_runs`). A separate file, so that an older clibench reading
//! `uids.json` with its unknown-field check still reads it; the processes are kept in a
//! third, `run-processes.json`, for the same reason: an older clibench that met an
//! unknown field in `runs.json` would read it as empty and save it so, forgetting every
//! run (found when two versions ran their tests side by side on one machine).

use super::leftovers;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Where the ledger lives.
pub const LEDGER_DIR: &str = "/var/lib/clibench";
/// How old a sweep may be before the next allocation sweeps again.
pub const SWEEP_MAX_AGE: Duration = Duration::from_secs(3600);
const LEDGER_FILE: &str = "uids.json";
const LOCK_FILE: &str = "uids.lock";
const RUNS_FILE: &str = "runs.json";
const RETIRED_FILE: &str = "retired.json";
const PROCESSES_FILE: &str = "run-processes.json";
const SCHEMA_VERSION: u32 = 1;
const RUNS_SCHEMA_VERSION: u32 = 1;
const RETIRED_SCHEMA_VERSION: u32 = 1;
const PROCESSES_SCHEMA_VERSION: u32 = 1;
/// How long a uid given back stays out of use at least (and then only when no uid that
/// was never handed out is left).
pub const QUARANTINE: Duration = Duration::from_secs(30 * 24 * 3600);

/// The ledger could not be opened, read or written.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// A system call failed.
    #[error("{action} {}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The ledger's folder is not root's own private folder.
    #[error("refusing to use {} as the uid ledger's folder: {why}", path.display())]
    NotOurs {
        /// The folder.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
}

/// What the ledger file holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Book {
    schema_version: u32,
    /// When the last sweep ended (seconds since the epoch); 0: never.
    swept_at_unix_s: u64,
    /// The shared folders the last sweep found.
    shared_folders: BTreeSet<String>,
    /// Uids not to give out until a sweep finds them clean.
    dirty: BTreeSet<u32>,
    /// Uids given to a trial user, with when (seconds since the epoch).
    handed_out: BTreeMap<u32, u64>,
}

/// What `retired.json` holds: the uids given back, with when. A file of its own, so that
/// an older clibench, which rejects unknown fields in `uids.json`, still reads that one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RetiredBook {
    schema_version: u32,
    /// Uid to when it was given back (seconds since the epoch).
    retired: BTreeMap<u32, u64>,
}

/// What `runs.json` holds: the root runs whose staging folder or group may exist.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunBook {
    schema_version: u32,
    /// By run id.
    runs: BTreeMap<String, RunRecord>,
}

/// A process named by its pid and start time: together they name one process, whatever
/// pid reuse happens later.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunProcess {
    /// Its process id, which alone may name a later process once it is reused.
    pub pid: u32,
    /// Its start time (clock ticks after boot, field 22 of `/proc/PID/stat`).
    pub start_ticks: u64,
}

/// What `run-processes.json` holds: the process each recorded run lives in (the
/// `clibench run`, or the last `clibench phase` run on its own), by run id. While it
/// lives, the run is alive, whatever became of OUT/'s path. Runs recorded by an older
/// clibench have none.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProcessBook {
    schema_version: u32,
    /// By run id.
    processes: BTreeMap<String, RunProcess>,
}

/// What a root run created outside its OUT/, recorded before it is created.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRecord {
    /// The run's OUT/, absolute: once the run's process is gone (or for a run recorded
    /// without one), its state file there says whether the run may go on (a run of single
    /// phases).
    pub out: PathBuf,
    /// The staging folder.
    #[serde(default)]
    pub stage: Option<PathBuf>,
    /// The per-run group.
    #[serde(default)]
    pub group: Option<String>,
}

/// The ledger, locked for this process until dropped.
#[derive(Debug)]
pub struct UidLedger {
    dir: PathBuf,
    // Holds the flock; released when dropped.
    _lock: File,
    book: Book,
    runs: RunBook,
    retired: RetiredBook,
    processes: ProcessBook,
}

fn now_unix_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl UidLedger {
    /// Opens and locks the ledger in `dir` (created 0700 when missing; it must be a real
    /// folder of ours that no one else can write). A missing or unreadable ledger file
    /// reads as empty and never swept, which makes the next allocation sweep.
    pub fn open(dir: &Path) -> Result<UidLedger, LedgerError> {
        let io = |action, path: &Path| {
            let path = path.to_path_buf();
            move |source| LedgerError::Io {
                action,
                path,
                source,
            }
        };
        match std::fs::DirBuilder::new().mode(0o700).create(dir) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(error) => return Err(io("creating", dir)(error)),
        }
        let meta = std::fs::symlink_metadata(dir).map_err(io("looking at", dir))?;
        let own = rustix::process::geteuid().as_raw();
        let why = if !meta.is_dir() {
            Some("it is a symlink or not a folder".to_owned())
        } else if meta.uid() != own {
            Some(format!("it belongs to uid {}", meta.uid()))
        } else if meta.mode() & 0o022 != 0 {
            Some(format!(
                "others can write it (mode {:o})",
                meta.mode() & 0o7777
            ))
        } else {
            None
        };
        if let Some(why) = why {
            return Err(LedgerError::NotOurs {
                path: dir.to_path_buf(),
                why,
            });
        }
        let lock_path = dir.join(LOCK_FILE);
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            // The folder is root's 0700, so only root could plant a link; not followed anyway.
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&lock_path)
            .map_err(io("opening", &lock_path))?;
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|errno| io("locking", &lock_path)(errno.into()))?;
        let book = std::fs::read_to_string(dir.join(LEDGER_FILE))
            .ok()
            .and_then(|text| serde_json::from_str::<Book>(&text).ok())
            .filter(|book| book.schema_version == SCHEMA_VERSION)
            .unwrap_or_default();
        // An unreadable runs book forgets what it listed: those folders and groups stay
        // (nothing else shows they are clibench's), which is the safe side.
        let runs = std::fs::read_to_string(dir.join(RUNS_FILE))
            .ok()
            .and_then(|text| serde_json::from_str::<RunBook>(&text).ok())
            .filter(|runs| runs.schema_version == RUNS_SCHEMA_VERSION)
            .unwrap_or_default();
        // Only root can write this folder; a book it cannot read forgets the retirements,
        // and the uids never handed out still come first.
        let retired = std::fs::read_to_string(dir.join(RETIRED_FILE))
            .ok()
            .and_then(|text| serde_json::from_str::<RetiredBook>(&text).ok())
            .filter(|retired| retired.schema_version == RETIRED_SCHEMA_VERSION)
            .unwrap_or_default();
        // Unreadable: the runs are judged by their state files alone, as before.
        let processes = std::fs::read_to_string(dir.join(PROCESSES_FILE))
            .ok()
            .and_then(|text| serde_json::from_str::<ProcessBook>(&text).ok())
            .filter(|processes| processes.schema_version == PROCESSES_SCHEMA_VERSION)
            .unwrap_or_default();
        Ok(UidLedger {
            dir: dir.to_path_buf(),
            _lock: lock,
            book,
            runs,
            retired,
            processes,
        })
    }

    /// Writes the ledger, the runs book, the retired uids and the runs' processes: each a
    /// new file under an unguessable name, renamed into place.
    pub fn save(&mut self) -> Result<(), LedgerError> {
        self.book.schema_version = SCHEMA_VERSION;
        self.runs.schema_version = RUNS_SCHEMA_VERSION;
        self.retired.schema_version = RETIRED_SCHEMA_VERSION;
        self.processes.schema_version = PROCESSES_SCHEMA_VERSION;
        // Runs an older clibench forgot (it does not know this file) go here too.
        let runs = &self.runs.runs;
        self.processes
            .processes
            .retain(|run_id, _| runs.contains_key(run_id));
        let book = serde_json::to_string_pretty(&self.book);
        let runs = serde_json::to_string_pretty(&self.runs);
        let retired = serde_json::to_string_pretty(&self.retired);
        let processes = serde_json::to_string_pretty(&self.processes);
        // Retirements first: a crash between two writes must not free a uid. Processes
        // before the runs they belong to: a run is never recorded without its process.
        self.write(RETIRED_FILE, retired)?;
        self.write(LEDGER_FILE, book)?;
        self.write(PROCESSES_FILE, processes)?;
        self.write(RUNS_FILE, runs)
    }

    fn write(&self, name: &str, text: serde_json::Result<String>) -> Result<(), LedgerError> {
        let path = self.dir.join(name);
        let io = |action| {
            let path = path.clone();
            move |source| LedgerError::Io {
                action,
                path,
                source,
            }
        };
        let mut file =
            tempfile::NamedTempFile::new_in(&self.dir).map_err(io("creating next to"))?;
        let text = text.map_err(|e| io("writing")(e.into()))?;
        file.write_all(text.as_bytes()).map_err(io("writing"))?;
        file.persist(&path).map_err(|e| io("replacing")(e.error))?;
        Ok(())
    }

    /// Whether the last sweep is missing or older than `max_age`.
    pub fn is_stale(&self, max_age: Duration) -> bool {
        self.book.swept_at_unix_s == 0
            || now_unix_s().saturating_sub(self.book.swept_at_unix_s) > max_age.as_secs()
    }

    /// Walks every shared folder: the uids owning anything there become dirty (except
    /// those handed out, which are in use), the others clean. A uid handed out longer than
    /// [`SWEEP_MAX_AGE`] ago that `passwd` no longer lists and that owns nothing was given
    /// to a run that died before creating its user (or whose user someone else removed):
    /// it is retired.
    pub fn sweep(&mut self, passwd: &[u32]) {
        self.sweep_folders(passwd, leftovers::shared_folders());
    }

    /// [`UidLedger::sweep`] over these shared folders.
    fn sweep_folders(&mut self, passwd: &[u32], folders: BTreeSet<String>) {
        let folder_list: Vec<&String> = folders.iter().collect();
        let owners = leftovers::owners_in(&folder_list);
        let now = now_unix_s();
        let retired = &mut self.retired.retired;
        self.book.handed_out.retain(|uid, since| {
            let keep = passwd.contains(uid)
                || owners.contains(uid)
                || now.saturating_sub(*since) <= SWEEP_MAX_AGE.as_secs();
            if !keep {
                retired.insert(*uid, now);
            }
            keep
        });
        self.book.dirty = owners
            .into_iter()
            .filter(|uid| !self.book.handed_out.contains_key(uid))
            .collect();
        self.book.shared_folders = folders;
        self.book.swept_at_unix_s = now_unix_s();
    }

    /// The `skip`-th free uid of `range`: first those never handed out (lowest first),
    /// then the retired ones that may come back (retired longest ago first; see the
    /// module's doc). None is in `busy`, dirty or handed out.
    pub fn free_uid(
        &self,
        busy: &BTreeSet<u32>,
        range: std::ops::RangeInclusive<u32>,
        skip: usize,
    ) -> Option<u32> {
        let usable = |uid: &u32| {
            !busy.contains(uid)
                && !self.book.dirty.contains(uid)
                && !self.book.handed_out.contains_key(uid)
        };
        let retired = &self.retired.retired;
        let never = range
            .clone()
            .filter(|uid| usable(uid) && !retired.contains_key(uid));
        let mut never_count = 0;
        for uid in never {
            if never_count == skip {
                return Some(uid);
            }
            never_count += 1;
        }
        let now = now_unix_s();
        let mut back: Vec<(u64, u32)> = retired
            .iter()
            .filter(|&(uid, &at)| {
                range.contains(uid)
                    && usable(uid)
                    && now.saturating_sub(at) >= QUARANTINE.as_secs()
                    && self.book.swept_at_unix_s > at
            })
            .map(|(&uid, &at)| (at, uid))
            .collect();
        back.sort_unstable();
        back.get(skip - never_count).map(|&(_, uid)| uid)
    }

    /// Records that `uid` was given to a trial user.
    pub fn hand_out(&mut self, uid: u32) {
        self.book.handed_out.insert(uid, now_unix_s());
    }

    /// Records that `uid` was not given after all: the user was never created, so nothing
    /// ran as it (its earlier retirement, if any, stays as it was).
    pub fn take_back(&mut self, uid: u32) {
        self.book.handed_out.remove(&uid);
    }

    /// Records that the trial user of `uid` is gone: retired either way (see the module's
    /// doc), and dirty until a sweep finds it clean when its removal left anything.
    pub fn give_back(&mut self, uid: u32, clean: bool) {
        self.book.handed_out.remove(&uid);
        self.retired.retired.insert(uid, now_unix_s());
        if clean {
            self.book.dirty.remove(&uid);
        } else {
            self.book.dirty.insert(uid);
        }
    }

    /// Records (or adds to the record of) what root run `run_id` of `out`, living in
    /// `process`, creates outside OUT/: call before creating it, and save.
    pub fn record_run(
        &mut self,
        run_id: &str,
        out: &Path,
        process: Option<RunProcess>,
        stage: Option<&Path>,
        group: Option<&str>,
    ) {
        let record = self.runs.runs.entry(run_id.to_owned()).or_default();
        record.out = out.to_path_buf();
        if let Some(process) = process {
            self.processes.processes.insert(run_id.to_owned(), process);
        }
        if let Some(stage) = stage {
            record.stage = Some(stage.to_path_buf());
        }
        if let Some(group) = group {
            record.group = Some(group.to_owned());
        }
    }

    /// Records that run `run_id` now lives in `process` (a later `clibench phase` run on
    /// its own). Returns whether its record changed (then save); a run not recorded
    /// stays so.
    pub fn move_run(&mut self, run_id: &str, process: RunProcess) -> bool {
        if !self.runs.runs.contains_key(run_id) || self.run_process(run_id) == Some(process) {
            return false;
        }
        self.processes.processes.insert(run_id.to_owned(), process);
        true
    }

    /// The process run `run_id` lives in, when recorded.
    pub fn run_process(&self, run_id: &str) -> Option<RunProcess> {
        self.processes.processes.get(run_id).copied()
    }

    /// Forgets run `run_id` (its staging folder and group are gone).
    pub fn forget_run(&mut self, run_id: &str) {
        self.runs.runs.remove(run_id);
        self.processes.processes.remove(run_id);
    }

    /// The recorded runs, by run id.
    pub fn runs(&self) -> &BTreeMap<String, RunRecord> {
        &self.runs.runs
    }

    /// Whether `uid` is dirty.
    #[cfg(test)]
    pub fn is_dirty(&self, uid: u32) -> bool {
        self.book.dirty.contains(&uid)
    }

    /// The folders a removal covers: those of the last sweep and those known at once
    /// ([`leftovers::quick_shared_folders`]).
    pub fn shared_folders(&self) -> BTreeSet<String> {
        let mut folders = self.book.shared_folders.clone();
        folders.extend(leftovers::quick_shared_folders());
        folders
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uid_given_back_clean_is_not_free_again_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let ledger_dir = dir.path().join("ledger");
        let mut ledger = UidLedger::open(&ledger_dir).unwrap();
        assert!(ledger.is_stale(SWEEP_MAX_AGE));
        let busy = BTreeSet::from([1000]);
        assert_eq!(ledger.free_uid(&busy, 1000..=1005, 0), Some(1001));
        ledger.hand_out(1001);
        ledger.give_back(1002, false);
        assert_eq!(ledger.free_uid(&busy, 1000..=1005, 0), Some(1003));
        ledger.save().unwrap();
        drop(ledger);
        let mut again = UidLedger::open(&ledger_dir).unwrap();
        assert_eq!(again.free_uid(&busy, 1000..=1005, 0), Some(1003));
        again.give_back(1001, true);
        again.give_back(1002, true);
        // Even after a sweep that found nothing of them: uids never handed out come first.
        again.sweep_folders(&[], BTreeSet::new());
        assert_eq!(again.free_uid(&busy, 1000..=1005, 0), Some(1003));
        assert_eq!(again.free_uid(&busy, 1000..=1005, 2), Some(1005));
        assert_eq!(again.free_uid(&busy, 1000..=1005, 3), None);
        // A uid handed out and never created (useradd failed) was never used.
        again.hand_out(1003);
        again.take_back(1003);
        assert_eq!(again.free_uid(&busy, 1000..=1005, 0), Some(1003));
        again.save().unwrap();
        drop(again);
        let reread = UidLedger::open(&ledger_dir).unwrap();
        assert_eq!(reread.free_uid(&busy, 1000..=1005, 3), None);
    }

    #[test]
    fn a_retired_uid_comes_back_only_past_its_quarantine_after_a_clean_sweep_oldest_first() {
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = UidLedger::open(&dir.path().join("ledger")).unwrap();
        let none = BTreeSet::new();
        let now = now_unix_s();
        let days = |n: u64| now - n * 24 * 3600;
        ledger.retired.retired =
            BTreeMap::from([(2000, days(31)), (2001, days(40)), (2002, days(1))]);
        // Past the quarantine, but no sweep since they were retired.
        ledger.book.swept_at_unix_s = days(45);
        assert_eq!(ledger.free_uid(&none, 2000..=2002, 0), None);
        ledger.book.swept_at_unix_s = days(35);
        assert_eq!(ledger.free_uid(&none, 2000..=2002, 0), Some(2001));
        assert_eq!(ledger.free_uid(&none, 2000..=2002, 1), None);
        ledger.sweep_folders(&[], BTreeSet::new());
        assert_eq!(ledger.free_uid(&none, 2000..=2002, 0), Some(2001));
        assert_eq!(ledger.free_uid(&none, 2000..=2002, 1), Some(2000));
        // 2002 is still in quarantine.
        assert_eq!(ledger.free_uid(&none, 2000..=2002, 2), None);
        // A dirty or busy one is not free, however old its retirement.
        ledger.book.dirty.insert(2001);
        assert_eq!(ledger.free_uid(&none, 2000..=2002, 0), Some(2000));
        assert_eq!(
            ledger.free_uid(&BTreeSet::from([2000]), 2000..=2002, 0),
            None
        );
    }

    #[test]
    fn a_uid_handed_out_to_a_run_that_died_is_retired_by_the_sweep() {
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = UidLedger::open(&dir.path().join("ledger")).unwrap();
        ledger
            .book
            .handed_out
            .insert(3000, now_unix_s() - 2 * SWEEP_MAX_AGE.as_secs());
        ledger.sweep_folders(&[], BTreeSet::new());
        assert!(!ledger.book.handed_out.contains_key(&3000));
        assert!(ledger.retired.retired.contains_key(&3000));
        assert_eq!(ledger.free_uid(&BTreeSet::new(), 3000..=3000, 0), None);
    }

    #[test]
    fn runs_json_stays_readable_by_an_older_clibench_and_the_process_is_kept_apart() {
        let dir = tempfile::tempdir().unwrap();
        let ledger_dir = dir.path().join("ledger");
        let mut ledger = UidLedger::open(&ledger_dir).unwrap();
        let process = RunProcess {
            pid: 42,
            start_ticks: 7,
        };
        ledger.record_run("abcdef", Path::new("/srv/out"), Some(process), None, None);
        ledger.record_run("fedcba", Path::new("/srv/other"), None, None, None);
        ledger.save().unwrap();
        drop(ledger);
        // runs.json is what clibench wrote before processes were recorded: an older one,
        // which rejects unknown fields, reads it.
        let text = std::fs::read_to_string(ledger_dir.join(RUNS_FILE)).unwrap();
        let runs: RunBook = serde_json::from_str(&text).unwrap();
        assert!(!text.contains("pid"), "{text}");
        assert_eq!(runs.runs.len(), 2);
        let mut ledger = UidLedger::open(&ledger_dir).unwrap();
        assert_eq!(ledger.run_process("abcdef"), Some(process));
        assert_eq!(ledger.run_process("fedcba"), None);
        let moved = RunProcess {
            pid: 43,
            start_ticks: 8,
        };
        assert!(ledger.move_run("fedcba", moved));
        assert!(!ledger.move_run("fedcba", moved));
        assert!(!ledger.move_run("000000", moved), "a run not recorded");
        assert_eq!(ledger.run_process("000000"), None);
        // An older clibench forgot "abcdef" (it rewrites runs.json only): its process goes
        // at the next save.
        ledger.runs.runs.remove("abcdef");
        ledger.save().unwrap();
        drop(ledger);
        let ledger = UidLedger::open(&ledger_dir).unwrap();
        assert_eq!(ledger.run_process("abcdef"), None);
        assert_eq!(ledger.run_process("fedcba"), Some(moved));
    }

    #[test]
    fn a_ledger_folder_others_can_write_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::os::unix::fs::PermissionsExt::from_mode(0o777))
            .unwrap();
        assert!(matches!(
            UidLedger::open(&open),
            Err(LedgerError::NotOurs { .. })
        ));
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path(), &link).unwrap();
        assert!(matches!(
            UidLedger::open(&link),
            Err(LedgerError::NotOurs { .. })
        ));
    }

    #[test]
    fn a_sweep_marks_a_uid_owning_a_file_in_a_shared_folder_dirty() {
        if !rustix::process::geteuid().is_root() {
            eprintln!(
                "SKIPPED a_sweep_marks_a_uid_owning_a_file_in_a_shared_folder_dirty: needs root"
            );
            return;
        }
        let uid = 4_100_000 + std::process::id() % 100_000;
        let file = tempfile::NamedTempFile::new_in("/var/tmp").unwrap();
        std::os::unix::fs::chown(file.path(), Some(uid), Some(uid)).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = UidLedger::open(&dir.path().join("ledger")).unwrap();
        // The discovery of the shared folders has its own test (in leftovers).
        let folders = BTreeSet::from(["/var/tmp".to_owned()]);
        ledger.sweep_folders(&[], folders.clone());
        assert!(ledger.is_dirty(uid));
        assert!(ledger.shared_folders().contains("/var/tmp"));
        assert_eq!(ledger.free_uid(&BTreeSet::new(), uid..=uid, 0), None);
        drop(file);
        ledger.sweep_folders(&[], folders);
        assert!(!ledger.is_dirty(uid));
    }
}
