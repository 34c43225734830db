//! A uid's kernel keyrings: emptied and dropped when its trial user goes, and
//! the uids that still own keys.
//!
//! The user keyring, the user session keyring and the persistent keyring of a
//! uid outlive its processes (the kernel keeps them in a per-namespace
//! register), so a key a trial added with `add_key(..., KEY_SPEC_USER_KEYRING)`
//! would be readable by the next trial with that uid. Only the uid itself may
//! reach those keyrings by their special ids, and root has no way to name them
//! for another uid, so a helper process becomes the uid and clears them.

use std::collections::BTreeSet;
use std::io;

// From <linux/keyctl.h> (the libc crate does not define them).
const KEY_SPEC_THREAD_KEYRING: libc::c_long = -1;
const KEY_SPEC_USER_KEYRING: libc::c_long = -4;
const KEY_SPEC_USER_SESSION_KEYRING: libc::c_long = -5;
const KEYCTL_GET_KEYRING_ID: libc::c_long = 0;
const KEYCTL_CLEAR: libc::c_long = 7;
const KEYCTL_INVALIDATE: libc::c_long = 21;
const KEYCTL_GET_PERSISTENT: libc::c_long = 22;

/// Why [`clear_keyrings`] or [`key_users`] failed.
#[derive(Debug, thiserror::Error)]
pub enum KeyringError {
    /// The uid is root's: its keyrings are the machine's.
    #[error("refusing to clear the keyrings of uid 0")]
    Root,
    /// The helper could not be forked or waited for.
    #[error("failed to run the helper that clears the keyrings of uid {uid}")]
    Helper {
        /// The uid.
        uid: u32,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The helper could not become the uid, or a keyring could not be cleared.
    #[error("the helper clearing the keyrings of uid {uid} failed at {stage}")]
    Failed {
        /// The uid.
        uid: u32,
        /// What failed: "setresuid", "the persistent keyring", "the user keyrings".
        stage: &'static str,
    },
    /// `/proc/key-users` could not be read.
    #[error("failed to read /proc/key-users")]
    KeyUsers(#[source] io::Error),
}

/// Clears and invalidates the user keyring, the user session keyring and the
/// persistent keyring of `uid`, so that no key of the uid is left in them and the
/// uid leaves `/proc/key-users` (once nothing else of it holds a key). Call it
/// after the uid's processes are stopped (a process of the uid could add keys
/// again). Needs root (to become the uid); a kernel without keys support has
/// nothing to clear.
pub fn clear_keyrings(uid: u32) -> Result<(), KeyringError> {
    if uid == 0 {
        return Err(KeyringError::Root);
    }
    // SAFETY: the child makes raw, async-signal-safe system calls only
    // (setresuid, keyctl, _exit) through `helper_main`, so forking from a
    // multithreaded process is sound.
    let helper = unsafe { libc::fork() };
    if helper < 0 {
        return Err(KeyringError::Helper {
            uid,
            source: io::Error::last_os_error(),
        });
    }
    if helper == 0 {
        // SAFETY: we are the freshly forked child; `helper_main` never returns.
        unsafe { helper_main(uid) }
    }
    let mut status = 0;
    loop {
        // SAFETY: waits for our own child; `status` is a valid out pointer. The
        // helper makes a handful of system calls that do not block, so the wait
        // is bounded.
        if unsafe { libc::waitpid(helper, &mut status, 0) } == helper {
            break;
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(KeyringError::Helper { uid, source: error });
        }
    }
    let stage = match (libc::WIFEXITED(status), libc::WEXITSTATUS(status)) {
        (true, 0) => return Ok(()),
        (true, 3) => "setresuid",
        (true, 5) => "the persistent keyring",
        (true, 6) => "the user keyrings",
        _ => "an unexpected exit",
    };
    Err(KeyringError::Failed { uid, stage })
}

/// The helper: become `uid` and clear its keyrings. Exit codes: 0 done (or no
/// keys support), 3 setresuid failed, 5 the persistent keyring, 6 the user
/// keyrings.
///
/// # Safety
/// Only in the child right after `fork`: it uses raw system calls only.
unsafe fn helper_main(uid: u32) -> ! {
    // SAFETY: raw, async-signal-safe system calls on plain numbers; `_exit`
    // never returns.
    unsafe {
        let id = uid as libc::uid_t;
        if libc::syscall(libc::SYS_setresuid, id, id, id) != 0 {
            libc::_exit(3);
        }
        let keyctl = |operation: libc::c_long, a: libc::c_long, b: libc::c_long| {
            libc::syscall(libc::SYS_keyctl, operation, a, b, 0 as libc::c_long)
        };
        let errno = || *libc::__errno_location();
        // The persistent keyring first: looking it up links it into this
        // thread's keyring, which dies with the helper. EOPNOTSUPP: the kernel
        // has no persistent keyrings.
        let persistent = keyctl(KEYCTL_GET_PERSISTENT, -1, KEY_SPEC_THREAD_KEYRING);
        if persistent < 0 {
            if errno() == libc::ENOSYS {
                libc::_exit(0);
            }
            if errno() != libc::EOPNOTSUPP {
                libc::_exit(5);
            }
        } else if keyctl(KEYCTL_CLEAR, persistent, 0) != 0
            || keyctl(KEYCTL_INVALIDATE, persistent, 0) != 0
        {
            libc::_exit(5);
        }
        // Both user keyrings are looked up (which creates them when missing)
        // before either is invalidated: looking up one after the other was
        // invalidated would create it again.
        let user = keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0);
        let session = keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_SESSION_KEYRING, 0);
        if user < 0 || session < 0 {
            libc::_exit(6);
        }
        for keyring in [session, user] {
            if keyctl(KEYCTL_CLEAR, keyring, 0) != 0 || keyctl(KEYCTL_INVALIDATE, keyring, 0) != 0 {
                libc::_exit(6);
            }
        }
        libc::_exit(0)
    }
}

/// The uids in a `/proc/key-users` text (`  1000:     5 5/5 ...`).
pub fn parse_key_users(text: &str) -> BTreeSet<u32> {
    text.lines()
        .filter_map(|line| line.split_once(':')?.0.trim().parse().ok())
        .collect()
}

/// Every uid that owns a key (`/proc/key-users`); empty when the kernel has no
/// keys support.
pub fn key_users() -> Result<BTreeSet<u32>, KeyringError> {
    match std::fs::read_to_string("/proc/key-users") {
        Ok(text) => Ok(parse_key_users(&text)),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(BTreeSet::new()),
        Err(error) => Err(KeyringError::KeyUsers(error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_users_are_read_from_their_first_column() {
        let text = "    0:     9 8/8 3/1000000 40/25000000\n 1001:     4 4/4 3/200 50/20000\n";
        assert_eq!(parse_key_users(text), BTreeSet::from([0, 1001]));
        assert_eq!(parse_key_users("garbage\n"), BTreeSet::new());
    }

    #[test]
    fn root_keyrings_are_never_cleared() {
        assert!(matches!(clear_keyrings(0), Err(KeyringError::Root)));
    }

    /// Runs `script` (Python, as the uid) and returns its stdout.
    fn as_uid(uid: u32, script: &str) -> String {
        use std::os::unix::process::CommandExt;
        let output = std::process::Command::new("python3")
            .args(["-c", script])
            .uid(uid)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).unwrap()
    }

    const KEYS: &str = "import ctypes, sys\n\
        libc = ctypes.CDLL(None, use_errno=True)\n\
        c = ctypes.c_long\n\
        def add():\n\
        \x20   k = libc.syscall(c(248), b'user', b'secret', b'hunter2', c(7), c(-4))\n\
        \x20   p = libc.syscall(c(250), c(22), c(-1), c(-1))\n\
        \x20   assert k > 0 and p > 0, ctypes.get_errno()\n\
        \x20   assert libc.syscall(c(250), c(8), c(k), c(p)) == 0\n\
        def find():\n\
        \x20   k = libc.syscall(c(250), c(10), c(-4), b'user', b'secret', c(0))\n\
        \x20   print('found' if k > 0 else 'gone')\n";

    #[test]
    fn a_key_added_by_a_uid_is_gone_after_clearing() {
        if !rustix::process::geteuid().is_root() {
            eprintln!("SKIPPED a_key_added_by_a_uid_is_gone_after_clearing: needs root");
            return;
        }
        if !std::path::Path::new("/proc/key-users").exists() {
            eprintln!("SKIPPED a_key_added_by_a_uid_is_gone_after_clearing: no keys support");
            return;
        }
        let uid = 3_700_000 + std::process::id() % 100_000;
        // A key in the user keyring, and one linked into the persistent keyring.
        as_uid(uid, &format!("{KEYS}add()"));
        assert!(key_users().unwrap().contains(&uid));
        assert_eq!(as_uid(uid, &format!("{KEYS}find()")).trim(), "found");
        clear_keyrings(uid).unwrap();
        // The kernel drops invalidated keys from a work queue: a moment later.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while key_users().unwrap().contains(&uid) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(
            !key_users().unwrap().contains(&uid),
            "uid {uid} still owns keys"
        );
        assert_eq!(as_uid(uid, &format!("{KEYS}find()")).trim(), "gone");
        // The search above made new, empty user keyrings: clear them again.
        clear_keyrings(uid).unwrap();
    }
}
