//! Removing what a run created: the users (their processes first, then what their uid
//! left in the shared folders and SysV IPC), the homes, temporary folders, the staging
//! folder and the per-run group, and servers left running by a phase that was killed.
//! `clibench run` calls [`cleanup`] at the end and on Ctrl-C; `clibench cleanup` calls
//! [`cleanup_with`] after a crash or a run of single phases.
//!
//! Only a state file clibench wrote is read, and only what is verifiably clibench's is
//! removed: users by name and passwd mark, homes owned by their user, folders owned by the
//! effective user inside OUT/ (or the recorded staging folder). Anything else is refused
//! and named in the error.

use crate::pipeline::file_error::FileError;
use crate::pipeline::isolation::command;
use crate::pipeline::out::state::{STATE_FILE, ServerRecord, State};
use crate::pipeline::{isolation::staging, isolation::users, out::folder};
use bench_core::error_chain;
use bench_proc::Selector;
use std::path::{Path, PathBuf};

/// Cleanup could not finish.
#[derive(Debug, thiserror::Error)]
pub enum CleanupError {
    /// The state file could not be read or written.
    #[error(transparent)]
    State(#[from] crate::pipeline::out::state::StateError),
    /// The state file could not be removed.
    #[error(transparent)]
    Out(#[from] folder::OutError),
    /// Some of what the run created is left, or was refused: each with why.
    #[error("cleanup was incomplete: {}", problems.join("; "))]
    Incomplete {
        /// What is left and why, one entry each.
        problems: Vec<String>,
    },
}

/// What cleanup did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CleanupReport {
    /// Unix users removed (with their homes).
    pub removed_users: Vec<String>,
    /// Users kept because of `--keep-users` (their processes were still stopped).
    pub kept_users: Vec<String>,
    /// Folders removed.
    pub removed_folders: Vec<String>,
    /// Server processes stopped.
    pub stopped_servers: Vec<u32>,
}

impl CleanupReport {
    /// What was removed, stopped and kept, a line each, as `clibench cleanup` tells it.
    pub fn lines(&self) -> Vec<String> {
        let removed = self
            .removed_users
            .iter()
            .map(|name| format!("removed {name}"));
        let kept = self.kept_users.iter().map(|name| format!("kept {name}"));
        let folders = self.removed_folders.iter().map(|f| format!("removed {f}"));
        let servers =
            (self.stopped_servers.iter()).map(|pid| format!("stopped server process {pid}"));
        removed.chain(kept).chain(folders).chain(servers).collect()
    }
}

/// The folders of `out` that hold a run's state: `out` itself, or, for an `ab` folder,
/// its sides `base/` and `head/` (each a run of its own); none when nothing is recorded.
pub fn run_folders(out: &Path) -> Vec<PathBuf> {
    if State::exists(out) {
        return vec![out.to_path_buf()];
    }
    ["base", "head"]
        .into_iter()
        .map(|side| out.join(side))
        .filter(|side| State::exists(side))
        .collect()
}

/// Cleans up `out`, keeping users when the run asked for `--keep-users`.
pub(crate) fn cleanup(out: &Path) -> Result<CleanupReport, CleanupError> {
    cleanup_with(out, None)
}

/// Cleans up `out`; `keep_users` overrides what the run recorded. Everything that can be
/// removed is; the error then lists what could not be, or was refused, and why.
pub fn cleanup_with(out: &Path, keep_users: Option<bool>) -> Result<CleanupReport, CleanupError> {
    let mut report = CleanupReport::default();
    if !State::exists(out) {
        return Ok(report);
    }
    let mut state = State::load(out)?;
    let keep = keep_users.unwrap_or(state.keep_users);
    let mut errors = Vec::new();

    let own = std::process::id();
    for server in std::mem::take(&mut state.servers) {
        if server.pid != own && is_clibench(server.pid) && is_same_process(&server) {
            match bench_proc::stop(&Selector::Tree(server.pid), command::STOP_GRACE) {
                Ok(_) => report.stopped_servers.push(server.pid),
                Err(error) => errors.push(format!(
                    "stopping server process {}: {}",
                    server.pid,
                    error_chain(&error)
                )),
            }
        }
    }
    state.save(out)?;

    for plan in state.users.clone() {
        if keep {
            let stopped = users::resolve(&state, &plan)
                .and_then(|user| command::stop_user(&user).map_err(users::UserError::from));
            if let Err(error) = stopped {
                errors.push(format!(
                    "stopping the processes of {}: {}",
                    plan.name,
                    error_chain(&error)
                ));
            }
            report.kept_users.push(plan.name.clone());
            continue;
        }
        match users::remove(out, &state.run_id, &plan) {
            Ok(removal) => {
                if plan.dedicated && removal.deleted_user {
                    report.removed_users.push(plan.name.clone());
                } else if !plan.dedicated {
                    report.removed_folders.push(plan.home.display().to_string());
                }
                for left in removal.left {
                    errors.push(format!("{} left {left}", plan.name));
                }
            }
            Err(error) => errors.push(format!("removing {}: {}", plan.name, error_chain(&error))),
        }
    }

    let mut state = State::load(out)?;
    for folder in std::mem::take(&mut state.folders) {
        match remove_own_folder(out, &folder) {
            Ok(true) => report.removed_folders.push(folder.display().to_string()),
            Ok(false) => {}
            Err(error) => errors.push(error_chain(&error)),
        }
    }
    if !keep {
        match staging::remove(&mut state) {
            Ok(removed) => report.removed_folders.extend(removed),
            Err(error) => errors.push(error_chain(&error)),
        }
    }
    if state.users.is_empty()
        && state.folders.is_empty()
        && state.servers.is_empty()
        && state.stage.is_none()
        && state.group.is_none()
    {
        folder::remove_file(out, STATE_FILE)?;
    } else {
        state.save(out)?;
    }
    if !errors.is_empty() {
        return Err(CleanupError::Incomplete { problems: errors });
    }
    Ok(report)
}

/// Why a recorded temporary folder was not removed.
#[derive(Debug, thiserror::Error)]
enum FolderError {
    /// A symlink, not a folder, or another user's: not clibench's.
    #[error("refusing to remove {}", path.display())]
    NotOwn {
        /// The recorded folder.
        path: PathBuf,
        /// Why.
        #[source]
        why: folder::NotOwnFolder,
    },
    /// A folder of ours, but not inside OUT/.
    #[error("refusing to remove {}: it is not inside {}", path.display(), out.display())]
    Outside {
        /// The recorded folder.
        path: PathBuf,
        /// OUT/, absolute.
        out: PathBuf,
    },
    /// Resolving OUT/ or removing the folder failed.
    #[error(transparent)]
    File(#[from] FileError),
}

/// Removes a recorded temporary folder when it is clibench's: inside OUT/, a real folder
/// (not a symlink) of the effective user. `Ok(false)`: it is already gone.
fn remove_own_folder(out: &Path, folder: &Path) -> Result<bool, FolderError> {
    let own = folder::is_own_folder(folder, folder::euid()).map_err(|why| FolderError::NotOwn {
        path: folder.to_path_buf(),
        why,
    })?;
    if !own {
        return Ok(false);
    }
    let out = &std::path::absolute(out)
        .map_err(FileError::doing(format!("resolving {}", out.display())))?;
    let inside = folder.starts_with(out)
        && folder.strip_prefix(out).is_ok_and(|rest| {
            rest.components()
                .all(|c| matches!(c, std::path::Component::Normal(_)))
        });
    if !inside {
        return Err(FolderError::Outside {
            path: folder.to_path_buf(),
            out: out.clone(),
        });
    }
    std::fs::remove_dir_all(folder)
        .map_err(FileError::doing(format!("removing {}", folder.display())))?;
    Ok(true)
}

/// Whether the recorded server's pid still names the process that was recorded: the
/// same start time (records without one, from older state files, are trusted on the
/// binary check alone).
fn is_same_process(server: &ServerRecord) -> bool {
    match server.start_ticks {
        Some(recorded) => crate::pipeline::out::state::start_ticks(server.pid) == Some(recorded),
        None => true,
    }
}

/// Whether `pid` still runs a clibench binary (so a reused pid is never stopped).
fn is_clibench(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
        let program = cmdline.split(|b| *b == 0).next().unwrap_or_default();
        Path::new(std::str::from_utf8(program).unwrap_or_default())
            .file_name()
            .is_some_and(|name| name == "clibench")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cleanup_report_tells_users_kept_folders_and_servers_in_that_order() {
        let report = CleanupReport {
            removed_users: vec!["cb1".to_owned()],
            kept_users: vec!["cb2".to_owned()],
            removed_folders: vec!["/var/tmp/x".to_owned()],
            stopped_servers: vec![42],
        };
        assert_eq!(
            report.lines(),
            [
                "removed cb1",
                "kept cb2",
                "removed /var/tmp/x",
                "stopped server process 42"
            ]
        );
    }

    #[test]
    fn a_server_record_names_one_process_by_pid_and_start_time() {
        let pid = std::process::id();
        let record = |start_ticks| ServerRecord {
            pid,
            start_ticks,
            url: "http://127.0.0.1:1/".to_owned(),
        };
        let ticks = crate::pipeline::out::state::start_ticks(pid).expect("our own start time");
        assert!(is_same_process(&record(Some(ticks))));
        // The same pid with another start time is a different process: a reused pid.
        assert!(!is_same_process(&record(Some(ticks + 1))));
        assert!(
            is_same_process(&record(None)),
            "older state files are trusted"
        );
    }

    #[test]
    fn only_folders_of_clibench_inside_out_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir_all(out.join("build-home/x")).unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, out.join("link")).unwrap();
        for folder in [elsewhere.clone(), out.join("../elsewhere")] {
            let error = remove_own_folder(&out, &folder).unwrap_err();
            assert!(matches!(error, FolderError::Outside { .. }), "{error}");
        }
        let error = remove_own_folder(&out, &out.join("link")).unwrap_err();
        assert_eq!(
            error_chain(&error),
            format!(
                "refusing to remove {}: it is a symlink or not a folder",
                out.join("link").display()
            )
        );
        assert!(elsewhere.is_dir());
        assert!(remove_own_folder(&out, &out.join("build-home")).unwrap());
        assert!(!out.join("build-home").exists());
        assert!(!remove_own_folder(&out, &out.join("build-home")).unwrap());
    }
}
