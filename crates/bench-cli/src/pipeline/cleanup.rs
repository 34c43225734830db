//! Removing what a run created: the users (their processes first), the homes under
//! OUT/, temporary folders, and servers left running by a phase that was killed.
//! `clibench run` calls [`cleanup`] at the end and on Ctrl-C; `clibench cleanup`
//! (hidden) calls [`cleanup_with`] after a crash.

use super::exec;
use super::state::{STATE_FILE, ServerRecord, State};
use super::users;
use anyhow::Context;
use bench_proc::Selector;
use std::path::Path;

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

/// Cleans up `out`, keeping users when the run asked for `--keep-users`.
pub fn cleanup(out: &Path) -> anyhow::Result<CleanupReport> {
    cleanup_with(out, None)
}

/// Cleans up `out`; `keep_users` overrides what the run recorded.
pub fn cleanup_with(out: &Path, keep_users: Option<bool>) -> anyhow::Result<CleanupReport> {
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
            match bench_proc::stop(&Selector::Tree(server.pid), exec::STOP_GRACE) {
                Ok(_) => report.stopped_servers.push(server.pid),
                Err(error) => {
                    errors.push(format!("stopping server process {}: {error}", server.pid))
                }
            }
        }
    }
    state.save(out)?;

    for user in state.users.clone() {
        if keep {
            if let Err(error) = exec::stop_user(&user) {
                errors.push(format!(
                    "stopping the processes of {}: {error:#}",
                    user.name
                ));
            }
            report.kept_users.push(user.name.clone());
            continue;
        }
        match users::remove(out, &user) {
            Ok(()) if user.dedicated => report.removed_users.push(user.name.clone()),
            Ok(()) => report.removed_folders.push(user.home.display().to_string()),
            Err(error) => errors.push(format!("removing {}: {error:#}", user.name)),
        }
    }

    let mut state = State::load(out)?;
    for folder in std::mem::take(&mut state.folders) {
        match std::fs::remove_dir_all(&folder) {
            Ok(()) => report.removed_folders.push(folder.display().to_string()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => {
                errors.push(format!("removing {}: {error}", folder.display()));
                state.folders.push(folder);
            }
        }
    }
    if state.users.is_empty() && state.folders.is_empty() && state.servers.is_empty() {
        let path = out.join(STATE_FILE);
        std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
    } else {
        state.save(out)?;
    }
    if !errors.is_empty() {
        anyhow::bail!("cleanup was incomplete: {}", errors.join("; "));
    }
    Ok(report)
}

/// Whether the recorded server's pid still names the process that was recorded: the
/// same start time (records without one, from older state files, are trusted on the
/// binary check alone).
fn is_same_process(server: &ServerRecord) -> bool {
    match server.start_ticks {
        Some(recorded) => super::state::start_ticks(server.pid) == Some(recorded),
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
    fn a_server_record_names_one_process_by_pid_and_start_time() {
        let pid = std::process::id();
        let record = |start_ticks| ServerRecord {
            pid,
            start_ticks,
            url: "http://127.0.0.1:1/".to_owned(),
        };
        let ticks = super::super::state::start_ticks(pid).expect("our own start time");
        assert!(is_same_process(&record(Some(ticks))));
        // The same pid with another start time is a different process: a reused pid.
        assert!(!is_same_process(&record(Some(ticks + 1))));
        assert!(
            is_same_process(&record(None)),
            "older state files are trusted"
        );
    }
}
