//! Trial users: as root, a new Unix user per install; otherwise a fresh home under
//! OUT/ for the current user.
//!
//! A Unix user is acted on only when it is clibench's own: its name is the one clibench
//! gives that install of that run, and its passwd comment (GECOS) field carries clibench's
//! mark with the run id. The uid is never taken from the state file: it is looked up in
//! /etc/passwd each time, and system uids (below `UID_MIN`) are refused.

use crate::pipeline::isolation::uid_ledger::{LEDGER_DIR, LedgerError, UidLedger};
use crate::pipeline::isolation::{leftovers, setid};
use crate::pipeline::out::folder::{NotOwnFolder, is_own_folder};
use crate::pipeline::out::state::{State, TrialUser, UserPlan};
use bench_proc::Identity;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where dedicated users' homes go.
pub(crate) const HOMES: &str = "/home";

/// Whether clibench runs as root (and so creates a Unix user per install).
pub(crate) fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// One line of `/etc/passwd`, the fields clibench needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PasswdEntry {
    /// User name.
    pub name: String,
    /// User id.
    pub uid: u32,
    /// Primary group id.
    pub gid: u32,
    /// The comment (GECOS) field: clibench's mark on its users.
    pub gecos: String,
    /// Home folder.
    pub home: PathBuf,
}

/// Parses `/etc/passwd` text (`name:x:uid:gid:gecos:home:shell`), skipping
/// malformed lines and comments.
pub(crate) fn parse_passwd(text: &str) -> Vec<PasswdEntry> {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            if fields.len() < 7 {
                return None;
            }
            Some(PasswdEntry {
                name: fields[0].to_owned(),
                uid: fields[2].parse().ok()?,
                gid: fields[3].parse().ok()?,
                gecos: fields[4].to_owned(),
                home: PathBuf::from(fields[5]),
            })
        })
        .collect()
}

pub(crate) fn passwd() -> Result<Vec<PasswdEntry>, UserError> {
    let text = std::fs::read_to_string("/etc/passwd").map_err(UserError::Passwd)?;
    Ok(parse_passwd(&text))
}

/// The user record for `name`, when it exists.
pub(crate) fn lookup(name: &str) -> Result<Option<PasswdEntry>, UserError> {
    Ok(passwd()?.into_iter().find(|e| e.name == name))
}

/// The user name of a uid, or `uid<N>` when it has none.
pub(crate) fn name_of(uid: u32) -> String {
    passwd()
        .ok()
        .and_then(|entries| entries.into_iter().find(|e| e.uid == uid))
        .map_or_else(|| format!("uid{uid}"), |e| e.name)
}

/// The user name clibench gives install `install` of run `run_id`.
pub(crate) fn user_name(run_id: &str, install: u32) -> String {
    format!("{}{install}", user_prefix(run_id))
}

/// What the names of run `run_id`'s users start with, before the install number.
fn user_prefix(run_id: &str) -> String {
    format!("clibench-{run_id}-")
}

/// The passwd comment clibench writes on the users of run `run_id`.
pub(crate) fn mark(run_id: &str) -> String {
    format!("clibench run {run_id}")
}

/// Why a user listed in the state file is not acted on.
#[derive(Debug, thiserror::Error)]
pub enum NotOurs {
    /// The name is not one clibench gives in this run.
    #[error("refusing to touch user {name}: clibench names the users of run {run_id} {expected}")]
    Name {
        /// The recorded name.
        name: String,
        /// The run.
        run_id: String,
        /// The name clibench would use.
        expected: String,
    },
    /// The passwd entry does not carry clibench's mark for this run.
    #[error(
        "refusing to touch user {name}: its passwd comment is \"{gecos}\", not clibench's mark \"{mark}\""
    )]
    Mark {
        /// The user.
        name: String,
        /// What /etc/passwd says.
        gecos: String,
        /// What clibench writes.
        mark: String,
    },
    /// A system uid.
    #[error("refusing to touch user {name}: uid {uid} is a system uid (below {min})")]
    SystemUid {
        /// The user.
        name: String,
        /// Its uid.
        uid: u32,
        /// `UID_MIN`.
        min: u32,
    },
    /// The home is not the one clibench created.
    #[error("refusing to remove {home}: {why}")]
    Home {
        /// The home.
        home: PathBuf,
        /// Why.
        why: String,
    },
    /// The home is a symlink, not a folder, or not the trial user's.
    #[error("refusing to remove {home}")]
    HomeFolder {
        /// The home.
        home: PathBuf,
        /// Why.
        #[source]
        why: NotOwnFolder,
    },
}

/// A trial user could not be made, found or removed.
#[derive(Debug, thiserror::Error)]
pub enum UserError {
    /// The user or home is not clibench's own.
    #[error(transparent)]
    NotOurs(#[from] NotOurs),
    /// /etc/passwd could not be read.
    #[error("reading /etc/passwd")]
    Passwd(#[source] std::io::Error),
    /// The state file names a user that does not exist.
    #[error("the trial user {name} does not exist")]
    Missing {
        /// The user.
        name: String,
    },
    /// The user clibench is about to create already exists.
    #[error("user {name} already exists; run `clibench cleanup --out {}` first", out.display())]
    Exists {
        /// The user.
        name: String,
        /// The output folder.
        out: PathBuf,
    },
    /// A home could not be made, resolved or removed.
    #[error("{action} {}", path.display())]
    Io {
        /// "creating the home", "removing".
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Every normal uid is in use, or was given back too recently to be given again.
    #[error(
        "no free uid left in {range:?}: every uid is in use, owns files, or was given back less than {} days ago",
        crate::pipeline::isolation::uid_ledger::QUARANTINE.as_secs() / 86_400
    )]
    NoFreeUid {
        /// `UID_MIN..=UID_MAX`.
        range: std::ops::RangeInclusive<u32>,
    },
    /// Every free uid was taken before useradd could use it.
    #[error("useradd {name} found no free uid: {stderr}")]
    UidsTaken {
        /// The user.
        name: String,
        /// useradd's last complaint.
        stderr: String,
    },
    /// A shadow tool (`useradd`, `userdel`, `groupadd`, `groupdel`) could not be run.
    #[error("running {program}")]
    Run {
        /// The tool.
        program: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Another process held the user database's lock throughout.
    #[error("{program} could not lock the user database for 5 s")]
    Locked {
        /// The tool.
        program: String,
    },
    /// A shadow tool failed.
    #[error("{tool} {name} failed ({status}): {stderr}")]
    ToolFailed {
        /// `useradd`, `userdel`, `groupadd` or `groupdel`.
        tool: &'static str,
        /// The user or group.
        name: String,
        /// Its exit status.
        status: std::process::ExitStatus,
        /// What it said.
        stderr: String,
    },
    /// The state file could not be read or written.
    #[error(transparent)]
    State(#[from] crate::pipeline::out::state::StateError),
    /// The user's processes could not be stopped.
    #[error(transparent)]
    Stop(#[from] super::command::StopError),
    /// The uid ledger could not be used.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

impl UserError {
    /// A shadow tool's failure, with what it said on stderr.
    pub(crate) fn tool_failed(
        tool: &'static str,
        name: &str,
        output: &std::process::Output,
    ) -> UserError {
        UserError::ToolFailed {
            tool,
            name: name.to_owned(),
            status: output.status,
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        }
    }
}

/// The passwd entry of a planned dedicated user, when it exists and is clibench's own for
/// run `run_id`; `Ok(None)` when no such user exists (never created, or already removed).
pub(crate) fn entry_if_ours(
    run_id: &str,
    plan: &UserPlan,
) -> Result<Option<PasswdEntry>, UserError> {
    let expected = user_name(run_id, plan.install);
    if plan.name != expected {
        return Err(NotOurs::Name {
            name: plan.name.clone(),
            run_id: run_id.to_owned(),
            expected,
        }
        .into());
    }
    let Some(entry) = lookup(&plan.name)? else {
        return Ok(None);
    };
    if entry.gecos != mark(run_id) {
        return Err(NotOurs::Mark {
            name: entry.name,
            gecos: entry.gecos,
            mark: mark(run_id),
        }
        .into());
    }
    let min = *bench_proc::uid_range().start();
    if entry.uid < min {
        return Err(NotOurs::SystemUid {
            name: entry.name,
            uid: entry.uid,
            min,
        }
        .into());
    }
    Ok(Some(entry))
}

/// The user a phase runs as: the plan with its ids from /etc/passwd (a dedicated user must
/// exist and be clibench's own).
pub(crate) fn resolve(state: &State, plan: &UserPlan) -> Result<TrialUser, UserError> {
    if !plan.dedicated {
        return Ok(TrialUser::new(plan, Identity::current()));
    }
    // Looked up by the plan's name, so the entry's name is the plan's.
    let entry = entry_if_ours(&state.run_id, plan)?.ok_or_else(|| UserError::Missing {
        name: plan.name.clone(),
    })?;
    Ok(TrialUser::new(plan, Identity::new(entry.uid, entry.gid)))
}

/// One of the shadow tools (`useradd`, `userdel`, `groupadd`, `groupdel`), from the
/// system's own folders rather than PATH: running as root, a PATH folder that someone else
/// can write must not choose the program, and a PATH without /usr/sbin (`env PATH=…`, a
/// cron job) must not make every install fail with "No such file or directory".
pub(crate) fn shadow_command(tool: &str) -> Command {
    const SYSTEM_FOLDERS: [&str; 4] = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"];
    let program = SYSTEM_FOLDERS
        .iter()
        .map(|folder| Path::new(folder).join(tool))
        .find(|path| path.is_file())
        .unwrap_or_else(|| PathBuf::from(tool));
    Command::new(program)
}

/// Runs useradd or userdel, retrying while another process holds the lock on
/// /etc/passwd (parallel tests and runs create users at the same time).
pub(crate) fn shadow_tool(command: &mut Command) -> Result<std::process::Output, UserError> {
    let program = command.get_program().to_string_lossy().into_owned();
    for _ in 0..50 {
        let output = command.output().map_err(|source| UserError::Run {
            program: program.clone(),
            source,
        })?;
        let busy = String::from_utf8_lossy(&output.stderr).contains("lock");
        if output.status.success() || !busy {
            return Ok(output);
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    Err(UserError::Locked { program })
}

/// What removing one planned user did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Removal {
    /// The Unix user existed and was deleted.
    pub deleted_user: bool,
    /// What of the uid's leftovers (shared folders, IPC) could not be removed.
    pub left: Vec<String>,
}

/// Stops the user's processes, removes what its uid left in the shared folders and its
/// IPC objects, deletes the user and the home clibench created (or the home under OUT/),
/// and drops it from the state file. A user or home that is not clibench's own is refused
/// (and dropped from the state, so that cleanup can finish) with the reason.
pub(crate) fn remove(out: &Path, run_id: &str, plan: &UserPlan) -> Result<Removal, UserError> {
    let mut removal = Removal::default();
    let outcome = if plan.dedicated {
        remove_dedicated(run_id, plan, &mut removal, None)
    } else {
        remove_own_home(out, plan)
    };
    // A refusal is final (the entry is not clibench's), so the record goes either way;
    // a failure to remove clibench's own user keeps it for the next cleanup.
    let refused = matches!(outcome, Err(UserError::NotOurs(_)));
    if outcome.is_ok() || refused {
        State::update(out, |s| s.users.retain(|u| u.install != plan.install))?;
    }
    outcome.map(|()| removal)
}

/// Removes the trial users of run `run_id`, which is dead (its OUT/ and state file are
/// gone, so no `clibench cleanup` can name them): every passwd entry named as one of the
/// run's installs is removed as cleanup removes it, after the same checks (name, mark,
/// uid, home), using `ledger`, which the caller holds locked. Returns the names removed;
/// the first user that could not be removed stops the sweep of this run, so its record
/// (and its group, which the user still needs) stays for the next sweep.
pub(crate) fn remove_users_of_dead_run(
    ledger: &mut UidLedger,
    run_id: &str,
) -> Result<Vec<String>, UserError> {
    let prefix = user_prefix(run_id);
    let mut removed = Vec::new();
    for entry in passwd()? {
        let Some(install) = entry
            .name
            .strip_prefix(prefix.as_str())
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let plan = UserPlan {
            install,
            name: entry.name.clone(),
            home: Path::new(HOMES).join(&entry.name),
            dedicated: true,
        };
        let mut removal = Removal::default();
        match remove_dedicated(run_id, &plan, &mut removal, Some(&mut *ledger)) {
            Ok(()) => removed.push(entry.name),
            // Not clibench's (a look-alike name): never touched, and no reason to keep
            // the record.
            Err(UserError::NotOurs(_)) => {}
            Err(error) => return Err(error),
        }
    }
    Ok(removed)
}

/// Removes a dedicated user; `held` is the ledger when the caller already holds its lock
/// (a second `open` in this process would wait on the caller's own lock for ever).
fn remove_dedicated(
    run_id: &str,
    plan: &UserPlan,
    removal: &mut Removal,
    mut held: Option<&mut UidLedger>,
) -> Result<(), UserError> {
    let Some(entry) = entry_if_ours(run_id, plan)? else {
        // Never created (or already deleted): a home at that path is not clibench's to
        // remove, since nothing shows it made it.
        return Ok(());
    };
    let user = TrialUser::new(plan, Identity::new(entry.uid, entry.gid));
    // Read under the lock, worked on without it: other runs' installs need the ledger.
    let folders: Vec<String> = match held.as_deref() {
        Some(ledger) => ledger.shared_folders(),
        None => UidLedger::open(Path::new(LEDGER_DIR))?.shared_folders(),
    }
    .into_iter()
    .collect();
    // Setuid and setgid files first, before the stop: a local user who ran one would be
    // the uid again after it, and in the next trial with that uid. The home too, until
    // userdel removes it.
    let mut setid_folders = folders.clone();
    setid_folders.push(plan.home.display().to_string());
    removal
        .left
        .extend(leftovers::remove_setid_files_of(entry.uid, &setid_folders));
    if let Err(error) = super::command::stop_user(&user) {
        give_back(held.as_deref_mut(), entry.uid, false)?;
        return Err(error.into());
    }
    // Those no folder lists any more (unlinked by the trial) but some process holds open
    // lose their bits through that process's descriptor: after the stop, when no process
    // of the uid can set them again, nor inflate the number of descriptors to look at.
    // The home's again too: until the stop the trial could make a new setuid file there
    // (which userdel unlinks).
    removal
        .left
        .extend(setid::strip_held_files_of(entry.uid, Path::new("/proc")));
    removal.left.extend(leftovers::remove_setid_files_of(
        entry.uid,
        &[plan.home.display().to_string()],
    ));
    let leftovers = leftovers::remove_owned_by(entry.uid, &folders);
    removal.left.extend(leftovers.left);
    if let Err(error) = bench_proc::clear_keyrings(entry.uid) {
        removal.left.push(bench_core::error_chain(&error));
    }
    let home_ok = check_home(plan, &entry)?;
    // userdel --remove deletes the passwd home, checked above to be the one clibench
    // created; without that check the home is left where it is.
    let mut command = shadow_command("userdel");
    if home_ok {
        command.arg("--remove");
    }
    let output = shadow_tool(command.arg(&entry.name))?;
    // userdel exits 12 when only the home could not be removed; the user is gone.
    if !output.status.success() && output.status.code() != Some(12) {
        return Err(UserError::tool_failed("userdel", &entry.name, &output));
    }
    removal.deleted_user = true;
    // What userdel left of the home, when it is still the user's folder; checked again,
    // since the user's processes could have replaced it until they were stopped.
    if home_ok && matches!(is_own_folder(&plan.home, entry.uid), Ok(true)) {
        std::fs::remove_dir_all(&plan.home).map_err(|source| UserError::Io {
            action: "removing",
            path: plan.home.clone(),
            source,
        })?;
    }
    removal.left.extend(remaining_traces(entry.uid));
    give_back(held, entry.uid, removal.left.is_empty())?;
    Ok(())
}

/// What is left of `uid` once its user is removed: processes, IPC objects, keys. The
/// kernel drops invalidated keys from a work queue, so keys get a moment to go.
fn remaining_traces(uid: u32) -> Vec<String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    loop {
        let traces = leftovers::traces_of(uid);
        if traces.is_empty() || std::time::Instant::now() >= deadline {
            return traces;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Records in the ledger that the uid's user is gone, clean or not: in `held` (saved by
/// its holder) or in the ledger opened for this.
fn give_back(held: Option<&mut UidLedger>, uid: u32, clean: bool) -> Result<(), UserError> {
    match held {
        Some(ledger) => ledger.give_back(uid, clean),
        None => {
            let mut ledger = UidLedger::open(Path::new(LEDGER_DIR))?;
            ledger.give_back(uid, clean);
            ledger.save()?;
        }
    }
    Ok(())
}

/// Whether the home is the one clibench created for this user: the recorded path under
/// /home, the same as /etc/passwd's, a real folder (not a symlink) owned by the uid. A home
/// that is missing is fine (nothing to remove); any other mismatch is refused.
fn check_home(plan: &UserPlan, entry: &PasswdEntry) -> Result<bool, UserError> {
    if entry.home != plan.home || !plan.home.starts_with(HOMES) {
        return Err(NotOurs::Home {
            home: plan.home.clone(),
            why: format!(
                "/etc/passwd gives {} the home {}, not the one clibench created",
                entry.name,
                entry.home.display()
            ),
        }
        .into());
    }
    home_folder(&plan.home, entry.uid)
}

/// Whether `home` is a real folder of `uid` (`Ok(false)`: it is gone); anything else at
/// that path is refused, and is not clibench's to remove.
fn home_folder(home: &Path, uid: u32) -> Result<bool, UserError> {
    match is_own_folder(home, uid) {
        Ok(own) => Ok(own),
        Err(NotOwnFolder::Io(source)) => Err(UserError::Io {
            action: "looking at",
            path: home.to_path_buf(),
            source,
        }),
        Err(why) => Err(NotOurs::HomeFolder {
            home: home.to_path_buf(),
            why,
        }
        .into()),
    }
}

/// The home of a non-root run: a folder under OUT/homes that clibench made.
fn remove_own_home(out: &Path, plan: &UserPlan) -> Result<(), UserError> {
    // Phases record absolute paths; `clibench cleanup --out` may be given a relative one.
    let homes = std::path::absolute(out)
        .map_err(|source| UserError::Io {
            action: "resolving",
            path: out.to_path_buf(),
            source,
        })?
        .join("homes");
    if plan.home.parent() != Some(homes.as_path()) {
        return Err(NotOurs::Home {
            home: plan.home.clone(),
            why: format!("it is not under {}", homes.display()),
        }
        .into());
    }
    let user = TrialUser::new(plan, Identity::current());
    super::command::stop_user(&user)?;
    if !home_folder(&plan.home, user.identity.uid)? {
        return Ok(());
    }
    std::fs::remove_dir_all(&plan.home).map_err(|source| UserError::Io {
        action: "removing",
        path: plan.home.clone(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shadow_tools_come_from_the_system_folders_not_path() {
        let command = shadow_command("useradd");
        let program = Path::new(command.get_program());
        if !Path::new("/usr/sbin/useradd").is_file() && !Path::new("/sbin/useradd").is_file() {
            bench_core::skip_test!("no useradd in /usr/sbin or /sbin on this machine");
        }
        assert!(program.is_absolute(), "{program:?}");
        assert!(program.starts_with("/usr/sbin") || program.starts_with("/sbin"));
    }

    #[test]
    fn passwd_lines_are_parsed_and_junk_skipped() {
        let text = "root:x:0:0:root:/root:/bin/bash\n# comment\nbroken:line\n\
                    clibench-abc-0:x:1001:1002::/home/clibench-abc-0:/bin/bash\n";
        let entries = parse_passwd(text);
        assert_eq!(entries.len(), 2);
        assert_eq!(
            entries[1],
            PasswdEntry {
                name: "clibench-abc-0".into(),
                uid: 1001,
                gid: 1002,
                gecos: String::new(),
                home: "/home/clibench-abc-0".into(),
            }
        );
    }

    #[test]
    fn user_names_fit_the_useradd_limit() {
        assert!(user_name("abcdef", 100).len() <= 32);
    }

    #[test]
    fn a_home_is_the_users_only_when_it_is_a_real_folder_of_its_uid() {
        let dir = tempfile::tempdir().unwrap();
        let uid = rustix::process::geteuid().as_raw();
        let home = dir.path().join("home");
        std::fs::create_dir(&home).unwrap();
        assert!(home_folder(&home, uid).unwrap());
        assert!(!home_folder(&dir.path().join("gone"), uid).unwrap());
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&home, &link).unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "").unwrap();
        for planted in [&link, &file] {
            let error = home_folder(planted, uid).unwrap_err();
            assert!(
                matches!(
                    error,
                    UserError::NotOurs(NotOurs::HomeFolder {
                        why: NotOwnFolder::NotAFolder,
                        ..
                    })
                ),
                "{planted:?}: {error}"
            );
        }
        // Our folder is not the home of a trial user with another uid.
        let other = uid.wrapping_add(1);
        let error = home_folder(&home, other).unwrap_err();
        assert!(matches!(error, UserError::NotOurs(_)), "{error}");
        assert_eq!(
            bench_core::error_chain(&error),
            format!(
                "refusing to remove {}: it belongs to uid {uid}, not uid {other}, so clibench did not make it",
                home.display()
            )
        );
        assert!(home.is_dir());
    }

    #[test]
    fn a_home_other_than_the_one_clibench_created_is_refused() {
        let plan = UserPlan {
            install: 0,
            name: user_name("abcdef", 0),
            home: Path::new(HOMES).join(user_name("abcdef", 0)),
            dedicated: true,
        };
        let entry = |home: &str| PasswdEntry {
            name: plan.name.clone(),
            uid: 60001,
            gid: 60001,
            gecos: mark("abcdef"),
            home: home.into(),
        };
        let error = check_home(&plan, &entry("/root")).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("/etc/passwd gives clibench-abcdef-0 the home /root"),
            "{error}"
        );
        // The same path in both, but not under /home.
        let outside = UserPlan {
            home: "/root".into(),
            ..plan.clone()
        };
        assert!(matches!(
            check_home(&outside, &entry("/root")),
            Err(UserError::NotOurs(NotOurs::Home { .. }))
        ));
    }

    #[test]
    fn a_planned_user_with_a_foreign_name_is_refused() {
        let plan = UserPlan {
            install: 0,
            name: "root".into(),
            home: "/root".into(),
            dedicated: true,
        };
        let error = entry_if_ours("abcdef", &plan).unwrap_err();
        assert!(
            error.to_string().contains("refusing to touch user root"),
            "{error}"
        );
    }
}
