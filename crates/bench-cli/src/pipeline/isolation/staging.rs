//! The staging folder: where the source, the build folder and the artifacts live during a
//! run, so that `--out` can be anywhere the caller can write (a 0700 `mktemp -d`, a private
//! home) and stay private to the caller while the trial users still read what they need.
//!
//! As root, the folder is `/var/tmp/clibench-<run id>-<random>`, owned by root with the
//! run's own group (`clibench-<run id>`, every trial user's primary group) and mode 0750:
//! the run's trial users can read it, nobody else can, and nobody but root can write it.
//! Without root it is the same folder with mode 0700 (the trial user is the caller). The
//! group and the folder are recorded in the state file before they are created, and removed
//! at cleanup after checks that they are the ones clibench made.
//!
//! As root they are also recorded, with OUT/ and the process the run lives in, in the uid
//! ledger's runs book before they are created: a run whose OUT/ went away without
//! `clibench cleanup` (a test's temporary folder, a run of single phases given up) leaves
//! no state file to clean them up from, so the next run's start and the ledger's sweep
//! remove them ([`sweep_dead_runs`]), once that process is gone too.

use crate::pipeline::isolation::uid_ledger::{LEDGER_DIR, RunProcess, UidLedger};
use crate::pipeline::out::state::State;
use rustix::fs::{Mode, OFlags};
use std::path::{Path, PathBuf};

/// The staging folder or the run's group could not be made or removed.
#[derive(Debug, thiserror::Error)]
pub enum StagingError {
    /// Neither staging base exists.
    #[error("neither /var/tmp nor /tmp exists for the staging folder")]
    NoBase,
    /// Ten random names were all taken.
    #[error("could not create a staging folder under {}", base.display())]
    NoFreeName {
        /// The base folder.
        base: PathBuf,
    },
    /// A file-system call on the staging folder or /etc/group failed.
    #[error("{action} {}", path.display())]
    Io {
        /// "creating the staging folder", "giving the run's group".
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The recorded folder is not the staging folder clibench made; it is left alone.
    #[error("refusing to remove {}", path.display())]
    RefusedFolder {
        /// The recorded folder.
        path: PathBuf,
        /// Why it is not clibench's.
        #[source]
        why: NotTheStage,
    },
    /// The recorded group is not the one clibench names for this run; it is left alone.
    #[error("refusing to delete group {name}: it is not the group clibench names for this run")]
    RefusedGroup {
        /// The recorded group.
        name: String,
    },
    /// groupadd succeeded, yet the group is not there.
    #[error("groupadd succeeded but {name} is not in /etc/group")]
    GroupMissing {
        /// The group.
        name: String,
    },
    /// groupadd or groupdel failed.
    #[error(transparent)]
    Group(#[from] crate::pipeline::isolation::users::UserError),
    /// The state file could not be read or written.
    #[error(transparent)]
    State(#[from] crate::pipeline::out::state::StateError),
    /// The uid ledger (which records the folder and group of root runs) failed.
    #[error(transparent)]
    Ledger(#[from] crate::pipeline::isolation::uid_ledger::LedgerError),
}

/// Why a recorded staging folder is not the one clibench made for this run.
#[derive(Debug, thiserror::Error)]
pub enum NotTheStage {
    /// A symlink, not a folder, or a folder of another user.
    #[error(transparent)]
    NotOwn(#[from] crate::pipeline::out::folder::NotOwnFolder),
    /// A folder of ours, but not where or named as this run's staging folder.
    #[error("it is not a staging folder clibench names for this run")]
    Elsewhere,
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> StagingError {
    let path = path.to_path_buf();
    move |source| StagingError::Io {
        action,
        path,
        source,
    }
}

/// Where staging folders are made (the first that exists).
const BASES: [&str; 2] = ["/var/tmp", "/tmp"];

/// The per-run group's name.
pub fn group_name(run_id: &str) -> String {
    format!("clibench-{run_id}")
}

/// The staging folder's name prefix for a run.
fn prefix(run_id: &str) -> String {
    format!("clibench-{run_id}-")
}

/// The run's staging folder, created (with its group, as root) on first use.
pub fn ensure(out: &Path) -> Result<PathBuf, StagingError> {
    // Saved at once: the names below carry the run id, which must be the one recorded.
    let state = State::update(out, |s| s.clone())?;
    let is_root = crate::pipeline::isolation::users::is_root();
    let out_abs = std::path::absolute(out).map_err(io_error("resolving", out))?;
    let process = run_process(&out_abs);
    if let Some(stage) = &state.stage
        && matches!(check(&state.run_id, stage), Ok(true))
    {
        // A later phase run on its own: the run lives in this process now. A phase that
        // `clibench run` started finds the run's process recorded already.
        if is_root
            && let Some(process) = process
            && process.pid == std::process::id()
        {
            let mut ledger = UidLedger::open(Path::new(LEDGER_DIR))?;
            if ledger.move_run(&state.run_id, process) {
                ledger.save()?;
            }
        }
        return Ok(stage.clone());
    }
    // As root, what this run makes outside OUT/ is recorded with OUT/ in the ledger, held
    // until the folder exists; a start is also when the leftovers of dead runs go.
    let mut ledger = if is_root {
        let mut ledger = UidLedger::open(Path::new(LEDGER_DIR))?;
        if !sweep_dead_runs(&mut ledger).is_empty() {
            // Saved at once: the uids of removed users are free again, whatever follows.
            ledger.save()?;
        }
        Some(ledger)
    } else {
        None
    };
    let gid = match ledger.as_mut() {
        Some(ledger) => Some(ensure_group(out, &out_abs, process, &state, ledger)?),
        None => None,
    };
    let base = BASES
        .iter()
        .map(Path::new)
        .find(|base| base.is_dir())
        .ok_or(StagingError::NoBase)?;
    for _ in 0..10 {
        let stage = base.join(format!("{}{}", prefix(&state.run_id), random_hex(6)?));
        // Recorded before it exists, so that a crash right after mkdir leaks nothing.
        State::update(out, |s| s.stage = Some(stage.clone()))?;
        if let Some(ledger) = ledger.as_mut() {
            ledger.record_run(&state.run_id, &out_abs, process, Some(&stage), None);
            ledger.save()?;
        }
        match rustix::fs::mkdir(&stage, Mode::from_raw_mode(0o700)) {
            Ok(()) => {}
            // Someone else's (a neighbour may pre-create names in /var/tmp): another name.
            Err(rustix::io::Errno::EXIST) => continue,
            Err(errno) => {
                return Err(io_error("creating the staging folder", &stage)(
                    errno.into(),
                ));
            }
        }
        let fd = rustix::fs::open(
            &stage,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|errno| io_error("opening", &stage)(errno.into()))?;
        if let Some(gid) = gid {
            rustix::fs::fchown(&fd, None, Some(rustix::fs::Gid::from_raw(gid)))
                .map_err(|errno| io_error("giving the run's group", &stage)(errno.into()))?;
            rustix::fs::fchmod(&fd, Mode::from_raw_mode(0o750))
                .map_err(|errno| io_error("opening to the run's group", &stage)(errno.into()))?;
        }
        return Ok(stage);
    }
    Err(StagingError::NoFreeName {
        base: base.to_path_buf(),
    })
}

/// Creates the run's group (recorded first, in the state file and the ledger) and returns
/// its gid.
fn ensure_group(
    out: &Path,
    out_abs: &Path,
    process: Option<RunProcess>,
    state: &State,
    ledger: &mut UidLedger,
) -> Result<u32, StagingError> {
    let name = group_name(&state.run_id);
    if state.group.as_deref() != Some(name.as_str()) {
        State::update(out, |s| s.group = Some(name.clone()))?;
    }
    if let Some(gid) = gid_of(&name)? {
        return Ok(gid);
    }
    ledger.record_run(&state.run_id, out_abs, process, None, Some(&name));
    ledger.save()?;
    let output = crate::pipeline::isolation::users::shadow_tool(
        crate::pipeline::isolation::users::shadow_command("groupadd").arg(&name),
    )?;
    if !output.status.success() {
        return Err(crate::pipeline::isolation::users::UserError::tool_failed(
            "groupadd", &name, &output,
        )
        .into());
    }
    gid_of(&name)?.ok_or(StagingError::GroupMissing { name })
}

/// The gid of group `name` from /etc/group.
fn gid_of(name: &str) -> Result<Option<u32>, StagingError> {
    let text = std::fs::read_to_string("/etc/group")
        .map_err(io_error("reading", Path::new("/etc/group")))?;
    Ok(text.lines().find_map(|line| {
        let mut fields = line.split(':');
        (fields.next()? == name).then(|| fields.nth(1)?.parse().ok())?
    }))
}

/// Whether `stage` is the staging folder clibench made for run `run_id`: under a staging
/// base, named for the run, a real folder (not a symlink) of the effective user.
/// `Ok(false)`: it does not exist.
fn check(run_id: &str, stage: &Path) -> Result<bool, NotTheStage> {
    if !crate::pipeline::out::folder::is_own_folder(stage, crate::pipeline::out::folder::euid())? {
        return Ok(false);
    }
    let named = stage
        .file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| name.starts_with(&prefix(run_id)));
    let based = stage
        .parent()
        .is_some_and(|parent| BASES.iter().any(|base| parent == Path::new(base)));
    if !named || !based {
        return Err(NotTheStage::Elsewhere);
    }
    Ok(true)
}

/// Removes the staging folder and, once no trial user is left, the run's group. Returns
/// what was removed; the state is updated in `state` (the caller saves it).
pub fn remove(state: &mut State) -> Result<Vec<String>, StagingError> {
    let removed = remove_made(state)?;
    if state.stage.is_none()
        && state.group.is_none()
        && crate::pipeline::isolation::users::is_root()
    {
        // Best effort: a record whose folder and group are gone is dropped by the next
        // sweep anyway, so a ledger that cannot be opened now loses nothing.
        if let Ok(mut ledger) = UidLedger::open(Path::new(LEDGER_DIR)) {
            ledger.forget_run(&state.run_id);
            let _ = ledger.save();
        }
    }
    Ok(removed)
}

/// [`remove`] without touching the ledger (which the sweep holds locked).
fn remove_made(state: &mut State) -> Result<Vec<String>, StagingError> {
    let mut removed = Vec::new();
    if let Some(stage) = state.stage.clone() {
        match check(&state.run_id, &stage) {
            Ok(false) => {}
            Ok(true) => {
                std::fs::remove_dir_all(&stage).map_err(io_error("removing", &stage))?;
                removed.push(stage.display().to_string());
            }
            Err(why) => {
                state.stage = None;
                return Err(StagingError::RefusedFolder { path: stage, why });
            }
        }
        state.stage = None;
    }
    if let Some(group) = state.group.clone()
        && state.users.is_empty()
    {
        if group != group_name(&state.run_id) {
            state.group = None;
            return Err(StagingError::RefusedGroup { name: group });
        }
        if gid_of(&group)?.is_some() {
            let output = crate::pipeline::isolation::users::shadow_tool(
                crate::pipeline::isolation::users::shadow_command("groupdel").arg(&group),
            )?;
            if !output.status.success() {
                return Err(crate::pipeline::isolation::users::UserError::tool_failed(
                    "groupdel", &group, &output,
                )
                .into());
            }
        }
        state.group = None;
    }
    Ok(removed)
}

/// Removes the trial users, staging folder and group of every recorded run that is dead
/// (see [`is_alive`]), after the same checks as cleanup's: each user is named for one of
/// the run's installs and carries its mark, the folder is a real folder of root's under a
/// staging base named for that run, the group is the one named for it. A record is
/// dropped once all are gone; what cannot be removed yet stays recorded for the next
/// sweep. Returns what was removed. The caller saves the ledger.
pub fn sweep_dead_runs(ledger: &mut UidLedger) -> Vec<String> {
    let mut removed = Vec::new();
    let mut gone = Vec::new();
    let runs = ledger.runs().clone();
    for (run_id, record) in &runs {
        if is_alive(run_id, &record.out, ledger.run_process(run_id)) {
            continue;
        }
        // Its trial users first: the group cannot go while it is some user's primary
        // group. A user that could not be removed keeps the whole record.
        match crate::pipeline::isolation::users::remove_users_of_dead_run(ledger, run_id) {
            Ok(users) => removed.extend(users.into_iter().map(|name| format!("user {name}"))),
            Err(_) => continue,
        }
        let mut state = State {
            run_id: run_id.clone(),
            stage: record.stage.clone(),
            group: record.group.clone(),
            ..State::default()
        };
        // A refused folder or group is never touched; the record goes, as cleanup drops
        // what it refuses from the state file.
        let refused = match remove_made(&mut state) {
            Ok(done) => {
                removed.extend(done);
                false
            }
            Err(StagingError::RefusedFolder { .. } | StagingError::RefusedGroup { .. }) => true,
            Err(_) => false,
        };
        if refused || (state.stage.is_none() && state.group.is_none()) {
            gone.push(run_id.clone());
        }
    }
    for run_id in gone {
        ledger.forget_run(&run_id);
    }
    removed
}

/// The process run `out` lives in: the holder of OUT/'s lock when that is the parent of
/// this process (the `clibench run` that started this phase), else this process (a
/// `clibench run` itself, or a phase run on its own). `None`: its start time could not
/// be read.
fn run_process(out: &Path) -> Option<RunProcess> {
    let own = std::process::id();
    let parent = u32::try_from(rustix::process::Pid::as_raw(rustix::process::getppid())).ok();
    let holder =
        crate::pipeline::out::folder::read_trusted(out, crate::pipeline::out::folder::LOCK)
            .ok()
            .flatten()
            .and_then(|bytes| String::from_utf8(bytes).ok()?.trim().parse::<u32>().ok());
    let pid = match holder {
        Some(holder) if Some(holder) == parent => holder,
        _ => own,
    };
    let start_ticks = crate::pipeline::out::state::start_ticks(pid)?;
    Some(RunProcess { pid, start_ticks })
}

/// Whether run `run_id`, recorded with `out` and living in `process`, may still use its
/// staging folder, group and trial users: that process is still there (the same pid with
/// the same start time), or, once it is gone or for a run recorded without one, OUT/
/// still holds a state file of this run (a run of single phases between two phases). The
/// process decides first because OUT/'s path is not the run's to keep: another user can
/// rename a parent folder of OUT/. A state file that cannot be read (not clibench's, a
/// transient error) counts as alive: keeping a folder is the safe side.
fn is_alive(run_id: &str, out: &Path, process: Option<RunProcess>) -> bool {
    if let Some(process) = process
        && crate::pipeline::out::state::start_ticks(process.pid) == Some(process.start_ticks)
    {
        return true;
    }
    match std::fs::symlink_metadata(out.join(crate::pipeline::out::state::STATE_FILE)) {
        Err(error)
            if matches!(
                error.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            false
        }
        Err(_) => true,
        // A state file that vanished between the two looks loads with a fresh run id: dead.
        Ok(_) => State::load(out).map_or(true, |state| state.run_id == run_id),
    }
}

/// `n` random bytes as hex.
fn random_hex(n: usize) -> Result<String, StagingError> {
    use std::io::Read;
    let mut bytes = vec![0u8; n];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(io_error("reading", Path::new("/dev/urandom")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::out::folder::NotOwnFolder;

    #[test]
    fn a_recorded_stage_elsewhere_is_not_trusted() {
        let state = State {
            run_id: "abcdef".into(),
            ..State::default()
        };
        let elsewhere_error =
            |path: &Path| matches!(check(&state.run_id, path), Err(NotTheStage::Elsewhere));
        // Real folders of ours, but not where or named as this run's stage.
        let elsewhere = tempfile::tempdir().unwrap();
        assert!(elsewhere_error(elsewhere.path()));
        let other_run = tempfile::Builder::new()
            .prefix("clibench-000000-")
            .tempdir_in("/tmp")
            .unwrap();
        assert!(elsewhere_error(other_run.path()));
        let nested = tempfile::Builder::new()
            .prefix("clibench-abcdef-")
            .tempdir_in(elsewhere.path())
            .unwrap();
        assert!(elsewhere_error(nested.path()));
        let ours = tempfile::Builder::new()
            .prefix("clibench-abcdef-")
            .tempdir_in("/tmp")
            .unwrap();
        assert!(matches!(check(&state.run_id, ours.path()), Ok(true)));
        // A symlink named like ours is refused; a stage already gone is not an error.
        let link = Path::new("/tmp").join(format!("clibench-abcdef-link{}", std::process::id()));
        std::os::unix::fs::symlink(ours.path(), &link).unwrap();
        let refused = check(&state.run_id, &link);
        std::fs::remove_file(&link).unwrap();
        let refused = refused.unwrap_err();
        assert!(
            matches!(refused, NotTheStage::NotOwn(NotOwnFolder::NotAFolder)),
            "{refused}"
        );
        assert_eq!(refused.to_string(), "it is a symlink or not a folder");
        assert!(matches!(
            check(&state.run_id, Path::new("/tmp/clibench-abcdef-gone")),
            Ok(false)
        ));
    }

    #[test]
    fn a_run_whose_out_was_renamed_away_is_not_swept_while_its_process_lives() {
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = UidLedger::open(&dir.path().join("ledger")).unwrap();
        // A run id no other test uses, as its stage names it.
        let run_id = format!("{:06x}", (std::process::id() ^ 0x5a5a5a) & 0xff_ffff);
        let stage = tempfile::Builder::new()
            .prefix(&prefix(&run_id))
            .tempdir_in("/var/tmp")
            .unwrap();
        // A neighbour renamed a parent folder of OUT/: no state file at the recorded path.
        let renamed_away = dir.path().join("neighbours/out");
        let own = std::process::id();
        let alive = RunProcess {
            pid: own,
            start_ticks: crate::pipeline::out::state::start_ticks(own).unwrap(),
        };
        ledger.record_run(
            &run_id,
            &renamed_away,
            Some(alive),
            Some(stage.path()),
            None,
        );
        assert!(sweep_dead_runs(&mut ledger).is_empty());
        assert!(
            stage.path().is_dir(),
            "the live run's staging folder was removed"
        );
        assert!(ledger.runs().contains_key(&run_id));
        // The same pid started at another time is another process: the run is dead.
        let reused = RunProcess {
            start_ticks: alive.start_ticks + 1,
            ..alive
        };
        assert!(ledger.move_run(&run_id, reused));
        let removed = sweep_dead_runs(&mut ledger);
        assert_eq!(removed, [stage.path().display().to_string()]);
        assert!(!stage.path().exists());
        assert!(!ledger.runs().contains_key(&run_id));
    }

    #[test]
    fn a_record_without_a_process_is_alive_while_its_state_file_is_there() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let state = State::update(&out, |s| s.clone()).unwrap();
        assert!(is_alive(&state.run_id, &out, None));
        assert!(!is_alive("000000", &out, None), "another run's state file");
        std::fs::remove_file(out.join(crate::pipeline::out::state::STATE_FILE)).unwrap();
        assert!(!is_alive(&state.run_id, &out, None));
    }

    #[test]
    fn a_refused_stage_is_named_with_its_reason_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = State {
            run_id: "abcdef".into(),
            stage: Some(dir.path().to_path_buf()),
            ..State::default()
        };
        let error = remove(&mut state).unwrap_err();
        assert!(matches!(
            error,
            StagingError::RefusedFolder {
                why: NotTheStage::Elsewhere,
                ..
            }
        ));
        assert_eq!(
            bench_core::error_chain(&error),
            format!(
                "refusing to remove {}: it is not a staging folder clibench names for this run",
                dir.path().display()
            )
        );
        // Left alone, and no longer recorded.
        assert!(dir.path().is_dir());
        assert_eq!(state.stage, None);
    }
}
