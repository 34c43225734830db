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

use super::state::State;
use anyhow::{Context, bail};
use rustix::fs::{Mode, OFlags};
use std::path::{Path, PathBuf};

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
pub fn ensure(out: &Path) -> anyhow::Result<PathBuf> {
    // Saved at once: the names below carry the run id, which must be the one recorded.
    let state = State::update(out, |s| s.clone())?;
    if let Some(stage) = &state.stage
        && check(&state, stage) == Ok(true)
    {
        return Ok(stage.clone());
    }
    let gid = if super::users::is_root() {
        Some(ensure_group(out, &state)?)
    } else {
        None
    };
    let base = BASES
        .iter()
        .map(Path::new)
        .find(|base| base.is_dir())
        .context("neither /var/tmp nor /tmp exists for the staging folder")?;
    for _ in 0..10 {
        let stage = base.join(format!("{}{}", prefix(&state.run_id), random_hex(6)?));
        // Recorded before it exists, so that a crash right after mkdir leaks nothing.
        State::update(out, |s| s.stage = Some(stage.clone()))?;
        match rustix::fs::mkdir(&stage, Mode::from_raw_mode(0o700)) {
            Ok(()) => {}
            // Someone else's (a neighbour may pre-create names in /var/tmp): another name.
            Err(rustix::io::Errno::EXIST) => continue,
            Err(errno) => {
                return Err(std::io::Error::from(errno))
                    .with_context(|| format!("creating the staging folder {}", stage.display()));
            }
        }
        let fd = rustix::fs::open(
            &stage,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .with_context(|| format!("opening {}", stage.display()))?;
        if let Some(gid) = gid {
            rustix::fs::fchown(&fd, None, Some(rustix::fs::Gid::from_raw(gid)))
                .with_context(|| format!("giving {} to the run's group", stage.display()))?;
            rustix::fs::fchmod(&fd, Mode::from_raw_mode(0o750))
                .with_context(|| format!("opening {} to the run's group", stage.display()))?;
        }
        return Ok(stage);
    }
    bail!("could not create a staging folder under {}", base.display())
}

/// Creates the run's group (recorded first) and returns its gid.
fn ensure_group(out: &Path, state: &State) -> anyhow::Result<u32> {
    let name = group_name(&state.run_id);
    if state.group.as_deref() != Some(name.as_str()) {
        State::update(out, |s| s.group = Some(name.clone()))?;
    }
    if let Some(gid) = gid_of(&name)? {
        return Ok(gid);
    }
    let output = super::users::shadow_tool(super::users::shadow_command("groupadd").arg(&name))?;
    if !output.status.success() {
        bail!(
            "groupadd {name} failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    gid_of(&name)?.with_context(|| format!("groupadd succeeded but {name} is not in /etc/group"))
}

/// The gid of group `name` from /etc/group.
fn gid_of(name: &str) -> anyhow::Result<Option<u32>> {
    let text = std::fs::read_to_string("/etc/group").context("reading /etc/group")?;
    Ok(text.lines().find_map(|line| {
        let mut fields = line.split(':');
        (fields.next()? == name).then(|| fields.nth(1)?.parse().ok())?
    }))
}

/// Whether `stage` is the staging folder clibench made for this run: under a staging base,
/// named for the run, a real folder (not a symlink) of the effective user. `Ok(false)`: it
/// does not exist.
fn check(state: &State, stage: &Path) -> Result<bool, String> {
    if !super::out_dir::is_own_folder(stage).map_err(|why| why.to_string())? {
        return Ok(false);
    }
    let named = stage
        .file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| name.starts_with(&prefix(&state.run_id)));
    let based = stage
        .parent()
        .is_some_and(|parent| BASES.iter().any(|base| parent == Path::new(base)));
    if !named || !based {
        return Err("it is not a staging folder clibench names for this run".to_owned());
    }
    Ok(true)
}

/// Removes the staging folder and, once no trial user is left, the run's group. Returns
/// what was removed; the state is updated in `state` (the caller saves it).
pub fn remove(state: &mut State) -> anyhow::Result<Vec<String>> {
    let mut removed = Vec::new();
    if let Some(stage) = state.stage.clone() {
        match check(state, &stage) {
            Ok(false) => {}
            Ok(true) => {
                std::fs::remove_dir_all(&stage)
                    .with_context(|| format!("removing {}", stage.display()))?;
                removed.push(stage.display().to_string());
            }
            Err(why) => {
                state.stage = None;
                bail!("refusing to remove {}: {why}", stage.display());
            }
        }
        state.stage = None;
    }
    if let Some(group) = state.group.clone()
        && state.users.is_empty()
    {
        if group != group_name(&state.run_id) {
            state.group = None;
            bail!(
                "refusing to delete group {group}: it is not the group clibench names for this run"
            );
        }
        if gid_of(&group)?.is_some() {
            let output =
                super::users::shadow_tool(super::users::shadow_command("groupdel").arg(&group))?;
            if !output.status.success() {
                bail!(
                    "groupdel {group} failed ({}): {}",
                    output.status,
                    String::from_utf8_lossy(&output.stderr).trim()
                );
            }
        }
        state.group = None;
    }
    Ok(removed)
}

/// `n` random bytes as hex.
fn random_hex(n: usize) -> anyhow::Result<String> {
    use std::io::Read;
    let mut bytes = vec![0u8; n];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("reading /dev/urandom")?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_stage_elsewhere_is_not_trusted() {
        let state = State {
            run_id: "abcdef".into(),
            ..State::default()
        };
        // Real folders of ours, but not where or named as this run's stage.
        let elsewhere = tempfile::tempdir().unwrap();
        assert!(check(&state, elsewhere.path()).is_err());
        let other_run = tempfile::Builder::new()
            .prefix("clibench-000000-")
            .tempdir_in("/tmp")
            .unwrap();
        assert!(check(&state, other_run.path()).is_err());
        let nested = tempfile::Builder::new()
            .prefix("clibench-abcdef-")
            .tempdir_in(elsewhere.path())
            .unwrap();
        assert!(check(&state, nested.path()).is_err());
        let ours = tempfile::Builder::new()
            .prefix("clibench-abcdef-")
            .tempdir_in("/tmp")
            .unwrap();
        assert_eq!(check(&state, ours.path()), Ok(true));
        // A symlink named like ours is refused; a stage already gone is not an error.
        let link = Path::new("/tmp").join(format!("clibench-abcdef-link{}", std::process::id()));
        std::os::unix::fs::symlink(ours.path(), &link).unwrap();
        let refused = check(&state, &link);
        std::fs::remove_file(&link).unwrap();
        assert_eq!(refused, Err("it is a symlink or not a folder".to_owned()));
        assert_eq!(
            check(&state, Path::new("/tmp/clibench-abcdef-gone")),
            Ok(false)
        );
    }
}
