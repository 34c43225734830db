//! [`Identity`]: the user, group and supplementary groups a program runs as, and
//! switching a forked child to them before exec.

use rustix::process::{Gid, Uid};

/// The ids a process runs as: user, primary group and supplementary groups.
///
/// One type for every program clibench starts as another user (a terminal
/// session, a REPL kernel, a pipeline step), so that they all switch the same
/// way: supplementary groups first, then the group, then the user.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Identity {
    /// User id.
    pub uid: u32,
    /// Primary group id.
    pub gid: u32,
    /// Supplementary groups; empty drops every supplementary group of the
    /// process that switches.
    pub groups: Vec<u32>,
}

impl Identity {
    /// `uid` and `gid` with no supplementary groups.
    pub fn new(uid: u32, gid: u32) -> Identity {
        Identity {
            uid,
            gid,
            groups: Vec::new(),
        }
    }

    /// The same ids with these supplementary groups.
    pub fn with_groups(mut self, groups: impl IntoIterator<Item = u32>) -> Identity {
        self.groups = groups.into_iter().collect();
        self
    }

    /// This process's real user and group ids and its supplementary groups (none
    /// when they cannot be read).
    pub fn current() -> Identity {
        let groups = rustix::process::getgroups()
            .map(|groups| groups.into_iter().map(Gid::as_raw).collect())
            .unwrap_or_default();
        Identity {
            uid: rustix::process::getuid().as_raw(),
            gid: rustix::process::getgid().as_raw(),
            groups,
        }
    }

    /// The switch to this identity, prepared for a `pre_exec` hook: everything it
    /// needs is allocated here, before the fork.
    pub fn switch(&self) -> IdentitySwitch {
        IdentitySwitch {
            groups: self.groups.iter().map(|&g| Gid::from_raw(g)).collect(),
            gid: Gid::from_raw(self.gid),
            uid: Uid::from_raw(self.uid),
        }
    }
}

/// An [`Identity`] ready to be taken on between fork and exec
/// (see [`Identity::switch`]).
#[derive(Debug, Clone)]
pub struct IdentitySwitch {
    groups: Vec<Gid>,
    gid: Gid,
    uid: Uid,
}

impl IdentitySwitch {
    /// Sets the supplementary groups, then the group id, then the user id (real,
    /// effective and saved, as root's `setuid` does), which gives up root's
    /// privileges last, once nothing else needs them.
    ///
    /// Call it only in a forked child before exec (a `pre_exec` hook), and after
    /// anything that still needs root: it uses the raw per-thread system calls,
    /// which change the whole process only because a forked child has one thread
    /// (libc's wrappers would signal threads that do not exist there). It
    /// allocates nothing and takes no lock, so it is safe between fork and exec.
    pub fn apply(&self) -> std::io::Result<()> {
        rustix::thread::set_thread_groups(&self.groups)?;
        rustix::thread::set_thread_gid(self.gid)?;
        rustix::thread::set_thread_uid(self.uid)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    #[test]
    fn the_current_identity_is_this_process() {
        let me = Identity::current();
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .unwrap()
                .split_whitespace()
                .map(|word| word.parse::<u32>().unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(me.uid, field("Uid:")[0]);
        assert_eq!(me.gid, field("Gid:")[0]);
        let mut groups = me.groups.clone();
        groups.sort_unstable();
        let mut expected = field("Groups:");
        expected.sort_unstable();
        assert_eq!(groups, expected);
    }

    #[test]
    fn a_child_switches_to_every_id_of_the_identity() {
        if !rustix::process::geteuid().is_root() {
            bench_core::skip_test!("needs root to switch ids");
        }
        let identity = Identity::new(65534, 65533).with_groups([4242, 4243]);
        let switch = identity.switch();
        let mut command = Command::new("/bin/sh");
        command.args(["-c", "grep -E '^(Uid|Gid|Groups):' /proc/self/status"]);
        // SAFETY: apply() makes raw system calls only and allocates nothing.
        unsafe {
            command.pre_exec(move || switch.apply());
        }
        let output = command.output().unwrap();
        assert!(output.status.success(), "{output:?}");
        let text = String::from_utf8(output.stdout).unwrap();
        let words = |name: &str| -> Vec<String> {
            text.lines()
                .find_map(|line| line.strip_prefix(name))
                .unwrap()
                .split_whitespace()
                .map(str::to_owned)
                .collect()
        };
        // Real, effective, saved and filesystem ids all switched: no way back to root.
        assert_eq!(words("Uid:"), ["65534"; 4]);
        assert_eq!(words("Gid:"), ["65533"; 4]);
        assert_eq!(words("Groups:"), ["4242", "4243"]);
    }
}
