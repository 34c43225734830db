//! Creating a trial user: recorded in the state file before it exists, with a uid that
//! nothing on the machine still has (see [`useradd`]), and a home only it reads.
//!
//! Apart from [`users`](super::users) because creating a user starts the dead-run sweep
//! when the uid ledger is stale ([`staging::sweep_dead_runs`](super::staging::sweep_dead_runs)),
//! and that sweep removes users through `users`: with both in one module, `users` and
//! `staging` used each other.

use crate::pipeline::isolation::leftovers;
use crate::pipeline::isolation::staging::sweep_dead_runs;
use crate::pipeline::isolation::uid_ledger::{LEDGER_DIR, SWEEP_MAX_AGE, UidLedger};
use crate::pipeline::isolation::users::{
    HOMES, NotOurs, UserError, is_root, lookup, mark, name_of, passwd, remove, resolve,
    shadow_command, shadow_tool, user_name,
};
use crate::pipeline::out::folder::NotOwnFolder;
use crate::pipeline::out::state::{State, TrialUser, UserPlan};
use std::path::Path;

/// Creates the trial user (or home) of install `install`, recording it in the state
/// file before it exists. An earlier user of the same install index is removed first,
/// so every install starts in a fresh home.
pub fn create(out: &Path, install: u32) -> Result<TrialUser, UserError> {
    let state = State::load(out)?;
    if let Some(old) = state.user(install).cloned() {
        remove(out, &state.run_id, &old)?;
    }
    let state = State::load(out)?;
    if is_root() {
        let name = user_name(&state.run_id, install);
        let home = Path::new(HOMES).join(&name);
        // Recorded first: a crash between useradd and the next save must not leak the
        // user. No uid is recorded: cleanup looks the name up and checks the mark.
        let plan = UserPlan {
            install,
            name: name.clone(),
            home: home.clone(),
            dedicated: true,
        };
        record_user(out, plan.clone())?;
        if lookup(&name)?.is_some() {
            return Err(UserError::Exists {
                name,
                out: out.to_path_buf(),
            });
        }
        let group = state.group.clone();
        useradd(&name, &home, &mark(&state.run_id), group.as_deref())?;
        let user = resolve(&State::load(out)?, &plan)?;
        make_private(&home, user.identity.uid)?;
        Ok(user)
    } else {
        let uid = rustix::process::getuid().as_raw();
        let home = out.join("homes").join(format!("install-{install}"));
        let plan = UserPlan {
            install,
            name: name_of(uid),
            home: home.clone(),
            dedicated: false,
        };
        record_user(out, plan.clone())?;
        if std::fs::symlink_metadata(&home).is_ok() {
            std::fs::remove_dir_all(&home).map_err(|source| UserError::Io {
                action: "removing the old home",
                path: home.clone(),
                source,
            })?;
        }
        std::fs::create_dir_all(&home).map_err(|source| UserError::Io {
            action: "creating the home",
            path: home.clone(),
            source,
        })?;
        make_private(&home, uid)?;
        resolve(&state, &plan)
    }
}

/// Makes a new home 0700 (useradd and create_dir_all follow the umask, 0755 on Debian):
/// no other local user, nor another run's trial user, reads what the target keeps there.
/// The folder is opened without following a link and must be the user's.
fn make_private(home: &Path, uid: u32) -> Result<(), UserError> {
    use rustix::fs::{Mode, OFlags};
    let io = |source: std::io::Error| UserError::Io {
        action: "making private",
        path: home.to_path_buf(),
        source,
    };
    let fd = rustix::fs::open(
        home,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|errno| io(errno.into()))?;
    let stat = rustix::fs::fstat(&fd).map_err(|errno| io(errno.into()))?;
    if stat.st_uid != uid {
        return Err(NotOurs::HomeFolder {
            home: home.to_path_buf(),
            why: NotOwnFolder::OtherOwner {
                uid: stat.st_uid,
                expected: uid,
            },
        }
        .into());
    }
    rustix::fs::fchmod(&fd, Mode::from_raw_mode(0o700)).map_err(|errno| io(errno.into()))
}

/// Creates the user with an explicit uid that nothing on the machine still has (no file
/// in the shared folders, no process, no IPC object, no key, no home), so that it can
/// never read what an earlier trial user of that uid left; a uid taken meanwhile is
/// skipped. The files are known from the uid ledger, which walks the shared folders only
/// when its last sweep is stale, not on every install; the ledger stays locked until the
/// uid is recorded as handed out, so two runs never pick the same one.
fn useradd(name: &str, home: &Path, comment: &str, group: Option<&str>) -> Result<(), UserError> {
    let mut ledger = UidLedger::open(Path::new(LEDGER_DIR))?;
    let passwd_uids: Vec<u32> = passwd()?.iter().map(|e| e.uid).collect();
    if ledger.is_stale(SWEEP_MAX_AGE) {
        ledger.sweep(&passwd_uids);
        // The hourly sweep also covers dead runs that no run start came to clean up.
        sweep_dead_runs(&mut ledger);
        ledger.save()?;
    }
    let busy = leftovers::busy_uids_without_files(&passwd_uids, Path::new(HOMES));
    let range = bench_proc::uid_range();
    let mut last = String::new();
    for attempt in 0..20 {
        let uid = ledger
            .free_uid(&busy, range.clone(), attempt)
            .ok_or_else(|| UserError::NoFreeUid {
                range: range.clone(),
            })?;
        // Recorded before useradd: a crash after it must not free the uid.
        ledger.hand_out(uid);
        ledger.save()?;
        let mut command = shadow_command("useradd");
        command
            .args(["--create-home", "--home-dir"])
            .arg(home)
            .args(["--shell", "/bin/bash", "--comment", comment])
            .args(["--uid", &uid.to_string()]);
        match group {
            Some(group) => command.args(["--gid", group]),
            None => command.arg("--user-group"),
        };
        let output = shadow_tool(command.arg(name))?;
        if output.status.success() {
            return Ok(());
        }
        // Not created: nothing of this trial ran as the uid (exit 4: someone else has it,
        // which the next look at /etc/passwd shows).
        ledger.take_back(uid);
        ledger.save()?;
        last = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        // Exit 4: the uid was taken between the scan and useradd; try the next one.
        if output.status.code() != Some(4) {
            return Err(UserError::tool_failed("useradd", name, &output));
        }
    }
    Err(UserError::UidsTaken {
        name: name.to_owned(),
        stderr: last,
    })
}

/// Puts `plan` in the state file, replacing any earlier record of its install.
fn record_user(out: &Path, plan: UserPlan) -> Result<(), UserError> {
    State::update(out, |s| {
        s.users.retain(|u| u.install != plan.install);
        s.users.push(plan);
    })?;
    Ok(())
}
