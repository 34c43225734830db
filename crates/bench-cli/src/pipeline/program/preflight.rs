//! Before the target starts: can the trial user enter the folders it needs (its home, the
//! folder the target starts in, the folder of its program)? A machine whose folders lost
//! their x bit otherwise fails deep inside the session with the agent's own errors.
//!
//! The check walks each folder's path from `/` and reads each component's mode, owner and
//! group as the kernel's permission check does for the trial user's uid, gid and groups. It
//! does not read ACLs or security modules: a folder they close still fails later, in the
//! target's own words.

use bench_proc::Identity;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A folder on the way to one the target needs that the trial user may not enter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "preflight: the trial user {user} (uid {uid}) cannot enter {what} {}: {} has mode {mode:04o} \
     (owner uid {owner}, group {group}) without the x bit for it",
    needed.display(),
    blocker.display()
)]
pub struct PreflightError {
    /// The trial user's name.
    pub user: String,
    /// The trial user's uid, which the folder's owner and group bits were read against.
    pub uid: u32,
    /// What the folder is for: "its home", "the working folder", "the program's folder".
    pub what: &'static str,
    /// The folder the target needs.
    pub needed: PathBuf,
    /// The first folder on its path the user may not search.
    pub blocker: PathBuf,
    /// That folder's permission bits.
    pub mode: u32,
    /// Its owner's uid.
    pub owner: u32,
    /// Its group's gid.
    pub group: u32,
}

/// A folder's permission bits, owner and group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Access {
    pub(crate) mode: u32,
    pub(crate) owner: u32,
    pub(crate) group: u32,
}

impl Access {
    /// Whether `identity` may search (enter) the folder: the owner's x bit for its owner,
    /// else the group's for a member, else the others'. Root passes.
    fn searchable_by(self, identity: &Identity) -> bool {
        if identity.uid == 0 {
            return true;
        }
        let bit = if self.owner == identity.uid {
            0o100
        } else if self.group == identity.gid || identity.groups.contains(&self.group) {
            0o010
        } else {
            0o001
        };
        self.mode & bit != 0
    }
}

/// The first folder on the way from `/` to `folder` (itself included) that `identity` may
/// not search, with its access; `None` when every one may be entered, or one does not
/// exist (that is for the target to say). `stat` reads a folder's access.
pub(crate) fn first_closed(
    folder: &Path,
    identity: &Identity,
    stat: &dyn Fn(&Path) -> Option<Access>,
) -> Option<(PathBuf, Access)> {
    let mut ancestors: Vec<&Path> = folder.ancestors().collect();
    ancestors.reverse();
    for path in ancestors {
        let access = stat(path)?;
        if !access.searchable_by(identity) {
            return Some((path.to_path_buf(), access));
        }
    }
    None
}

/// The access of a path on this machine, following links.
fn live_stat(path: &Path) -> Option<Access> {
    let meta = std::fs::metadata(path).ok()?;
    Some(Access {
        mode: meta.mode() & 0o7777,
        owner: meta.uid(),
        group: meta.gid(),
    })
}

/// Checks that `user` (its `identity`) can enter each of `folders` (what each is for, and
/// the folder). Links are resolved first, so the walk follows the real path.
pub(crate) fn check(
    user: &str,
    identity: &Identity,
    folders: &[(&'static str, &Path)],
) -> Result<(), PreflightError> {
    for &(what, folder) in folders {
        let real = folder
            .canonicalize()
            .unwrap_or_else(|_| folder.to_path_buf());
        if let Some((blocker, access)) = first_closed(&real, identity, &live_stat) {
            return Err(PreflightError {
                user: user.to_owned(),
                uid: identity.uid,
                what,
                needed: folder.to_path_buf(),
                blocker,
                mode: access.mode,
                owner: access.owner,
                group: access.group,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::os::unix::fs::PermissionsExt;

    fn trial() -> Identity {
        Identity {
            uid: 3000,
            gid: 3000,
            groups: vec![],
        }
    }

    fn tree(entries: &[(&str, u32, u32, u32)]) -> BTreeMap<PathBuf, Access> {
        entries
            .iter()
            .map(|&(path, mode, owner, group)| (PathBuf::from(path), Access { mode, owner, group }))
            .collect()
    }

    #[test]
    fn the_first_folder_without_the_x_bit_for_the_user_is_named() {
        let folders = tree(&[
            ("/", 0o755, 0, 0),
            ("/home", 0o750, 0, 0),
            ("/home/t", 0o700, 3000, 3000),
        ]);
        let stat = |path: &Path| folders.get(path).copied();
        let (blocker, access) = first_closed(Path::new("/home/t"), &trial(), &stat).unwrap();
        assert_eq!(blocker, Path::new("/home"));
        assert_eq!(access.mode, 0o750);
    }

    #[test]
    fn owner_group_and_other_bits_are_read_as_the_kernel_reads_them() {
        let stat_of = |mode, owner, group| {
            let folders = tree(&[("/", 0o755, 0, 0), ("/d", mode, owner, group)]);
            move |path: &Path| folders.get(path).copied()
        };
        let open = |mode, owner, group| {
            first_closed(Path::new("/d"), &trial(), &stat_of(mode, owner, group)).is_none()
        };
        // The owner's bit decides for the owner, even when others may enter.
        assert!(!open(0o011, 3000, 0));
        assert!(open(0o100, 3000, 0));
        // The group's bit for a member, the others' bit for the rest.
        assert!(open(0o010, 0, 3000));
        assert!(!open(0o701, 0, 3000));
        assert!(open(0o001, 0, 0));
        assert!(!open(0o770, 0, 0));
        let mut member = trial();
        member.groups.push(50);
        let stat = stat_of(0o710, 0, 50);
        assert!(first_closed(Path::new("/d"), &member, &stat).is_none());
    }

    #[test]
    fn a_closed_folder_on_this_machine_fails_with_one_line_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let closed = dir.path().join("closed");
        let home = closed.join("home");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        // Whoever runs the test owns the folder; uid 65534 (nobody) is another user.
        let nobody = Identity {
            uid: 65534,
            gid: 65534,
            groups: vec![],
        };
        let error = check("clibench-t-0", &nobody, &[("its home", &home)]).unwrap_err();
        assert_eq!(error.blocker, closed.canonicalize().unwrap());
        let message = error.to_string();
        assert_eq!(message.lines().count(), 1, "{message}");
        assert!(
            message.starts_with(
                "preflight: the trial user clibench-t-0 (uid 65534) cannot enter its home"
            ),
            "{message}"
        );
        assert!(message.contains("has mode 0700"), "{message}");
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o711)).unwrap();
        check("clibench-t-0", &nobody, &[("its home", &home)]).unwrap();
    }
}
