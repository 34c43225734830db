//! Trial users: as root, a new Unix user per install; otherwise a fresh home under
//! OUT/ for the current user.

use super::state::{State, UserRecord};
use anyhow::{Context, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where dedicated users' homes go.
const HOMES: &str = "/home";

/// Whether clibench runs as root (and so creates a Unix user per install).
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// One line of `/etc/passwd`, the fields clibench needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PasswdEntry {
    /// User name.
    pub name: String,
    /// User id.
    pub uid: u32,
    /// Primary group id.
    pub gid: u32,
    /// Home folder.
    pub home: PathBuf,
}

/// Parses `/etc/passwd` text (`name:x:uid:gid:gecos:home:shell`), skipping
/// malformed lines and comments.
pub fn parse_passwd(text: &str) -> Vec<PasswdEntry> {
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
                home: PathBuf::from(fields[5]),
            })
        })
        .collect()
}

fn passwd() -> anyhow::Result<Vec<PasswdEntry>> {
    let text = std::fs::read_to_string("/etc/passwd").context("reading /etc/passwd")?;
    Ok(parse_passwd(&text))
}

/// The user record for `name`, when it exists.
pub fn lookup(name: &str) -> anyhow::Result<Option<PasswdEntry>> {
    Ok(passwd()?.into_iter().find(|e| e.name == name))
}

/// The user name of a uid, or `uid<N>` when it has none.
pub(super) fn name_of(uid: u32) -> String {
    passwd()
        .ok()
        .and_then(|entries| entries.into_iter().find(|e| e.uid == uid))
        .map_or_else(|| format!("uid{uid}"), |e| e.name)
}

/// The user name clibench gives install `install` of run `run_id`.
pub fn user_name(run_id: &str, install: u32) -> String {
    format!("clibench-{run_id}-{install}")
}

/// Creates the trial user (or home) of install `install`, recording it in the state
/// file before it exists. An earlier user of the same install index is removed first,
/// so every install starts in a fresh home.
pub fn create(out: &Path, install: u32) -> anyhow::Result<UserRecord> {
    let state = State::load(out)?;
    if let Some(old) = state.user(install).cloned() {
        remove(out, &old)?;
    }
    let record = if is_root() {
        let name = user_name(&state.run_id, install);
        let home = Path::new(HOMES).join(&name);
        // Recorded first: a crash between useradd and the save must not leak the user.
        let planned = UserRecord {
            install,
            name: name.clone(),
            uid: 0,
            gid: 0,
            home: home.clone(),
            dedicated: true,
        };
        record_user(out, planned)?;
        if lookup(&name)?.is_some() {
            bail!(
                "user {name} already exists; run `clibench cleanup --out {}` first",
                out.display()
            );
        }
        let output = shadow_tool(
            Command::new("useradd")
                .args(["--create-home", "--home-dir"])
                .arg(&home)
                .args(["--shell", "/bin/bash", "--user-group", &name]),
        )?;
        if !output.status.success() {
            bail!(
                "useradd {name} failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        let entry = lookup(&name)?
            .with_context(|| format!("useradd succeeded but {name} is not in /etc/passwd"))?;
        let record = UserRecord {
            install,
            name,
            uid: entry.uid,
            gid: entry.gid,
            home: entry.home,
            dedicated: true,
        };
        record_user(out, record.clone())?;
        record
    } else {
        let uid = rustix::process::getuid().as_raw();
        let gid = rustix::process::getgid().as_raw();
        let home = out.join("homes").join(format!("install-{install}"));
        let record = UserRecord {
            install,
            name: name_of(uid),
            uid,
            gid,
            home: home.clone(),
            dedicated: false,
        };
        record_user(out, record.clone())?;
        if home.exists() {
            std::fs::remove_dir_all(&home)
                .with_context(|| format!("removing the old home {}", home.display()))?;
        }
        std::fs::create_dir_all(&home)
            .with_context(|| format!("creating the home {}", home.display()))?;
        record
    };
    Ok(record)
}

/// Puts `record` in the state file, replacing any earlier record of its install.
fn record_user(out: &Path, record: UserRecord) -> anyhow::Result<()> {
    State::update(out, |s| {
        s.users.retain(|u| u.install != record.install);
        s.users.push(record);
    })
}

/// Runs useradd or userdel, retrying while another process holds the lock on
/// /etc/passwd (parallel tests and runs create users at the same time).
fn shadow_tool(command: &mut Command) -> anyhow::Result<std::process::Output> {
    let program = command.get_program().to_string_lossy().into_owned();
    for _ in 0..50 {
        let output = command
            .output()
            .with_context(|| format!("running {program}"))?;
        let busy = String::from_utf8_lossy(&output.stderr).contains("lock");
        if output.status.success() || !busy {
            return Ok(output);
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    bail!("{program} could not lock the user database for 5 s")
}

/// Stops the user's processes, deletes the user (or its home under OUT/) and drops it
/// from the state file.
pub fn remove(out: &Path, user: &UserRecord) -> anyhow::Result<()> {
    super::exec::stop_user(user)?;
    if user.dedicated {
        if lookup(&user.name)?.is_some() {
            let output = shadow_tool(Command::new("userdel").args(["--remove", &user.name]))?;
            // userdel exits 12 when only the home could not be removed; the user is gone.
            if !output.status.success() && output.status.code() != Some(12) {
                bail!(
                    "userdel {} failed ({}): {}",
                    user.name,
                    output.status,
                    String::from_utf8_lossy(&output.stderr).trim()
                );
            }
        }
        if user.home.exists() && user.home.starts_with(HOMES) {
            std::fs::remove_dir_all(&user.home)
                .with_context(|| format!("removing {}", user.home.display()))?;
        }
    } else if user.home.exists() {
        std::fs::remove_dir_all(&user.home)
            .with_context(|| format!("removing {}", user.home.display()))?;
    }
    State::update(out, |s| s.users.retain(|u| u.install != user.install))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
                home: "/home/clibench-abc-0".into(),
            }
        );
    }

    #[test]
    fn user_names_fit_the_useradd_limit() {
        assert!(user_name("abcdef", 100).len() <= 32);
    }
}
