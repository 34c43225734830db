//! `OUT/state.json`: every user, home, folder and server clibench created for a run,
//! written before the thing exists, so that cleanup after a crash or Ctrl-C finds it.

use crate::pipeline::out::folder;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The state file's name under OUT/.
pub(crate) const STATE_FILE: &str = "state.json";

/// A trial user clibench plans or created (or, without root, a home it made for the
/// current user). No uid is stored: it is looked up by name in /etc/passwd whenever the user
/// is used or removed, and acted on only when the entry carries clibench's mark. (State
/// files of older versions also hold `uid` and `gid`; they are read and ignored.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserPlan {
    /// The install index this user belongs to.
    pub install: u32,
    /// The user name.
    pub name: String,
    /// The home folder.
    pub home: PathBuf,
    /// True when clibench creates a Unix user (as root) that cleanup deletes; false
    /// when the home is a folder under OUT/ for the current user.
    pub dedicated: bool,
}

/// A trial user as the phases use it: its plan with the ids resolved from /etc/passwd.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrialUser {
    /// The install index this user belongs to.
    pub install: u32,
    /// The user name.
    pub name: String,
    /// The ids its processes run as: a dedicated user's from /etc/passwd (no
    /// supplementary groups), otherwise clibench's own.
    pub identity: bench_proc::Identity,
    /// The home folder.
    pub home: PathBuf,
    /// True when clibench created a Unix user (as root) that cleanup deletes.
    pub dedicated: bool,
}

impl TrialUser {
    /// The user `plan` describes, running as `identity`.
    pub fn new(plan: &UserPlan, identity: bench_proc::Identity) -> TrialUser {
        TrialUser {
            install: plan.install,
            name: plan.name.clone(),
            identity,
            home: plan.home.clone(),
            dedicated: plan.dedicated,
        }
    }

    /// The uid and gid that what clibench writes into the home is given to: the
    /// dedicated user's; `None` (left as written) when the target runs as clibench.
    pub(crate) fn home_owner(&self) -> Option<(u32, u32)> {
        self.dedicated
            .then_some((self.identity.uid, self.identity.gid))
    }
}

/// A loopback server clibench started (inside the process `pid`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerRecord {
    /// The process serving.
    pub pid: u32,
    /// That process's start time (clock ticks after boot, `/proc/PID/stat`): with the pid
    /// it names one process, so a pid reused since is never stopped.
    #[serde(default)]
    pub start_ticks: Option<u64>,
    /// Its base URL.
    pub url: String,
}

/// The start time of `pid` (clock ticks after boot), `None` if it is gone.
pub(crate) fn start_ticks(pid: u32) -> Option<u64> {
    bench_proc::process_stat(pid).map(|stat| stat.start_ticks)
}

/// Everything clibench created for the run in one OUT/ folder.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct State {
    /// A short random id, part of user names, so two runs never share a user.
    pub run_id: String,
    /// Keep the users and homes at cleanup (`--keep-users`).
    #[serde(default)]
    pub keep_users: bool,
    /// Users and homes, by install index.
    #[serde(default)]
    pub users: Vec<UserPlan>,
    /// The per-run group of the trial users (as root), recorded before it is created.
    #[serde(default)]
    pub group: Option<String>,
    /// The staging folder the trial users read the source and artifacts from, recorded
    /// before it is created.
    #[serde(default)]
    pub stage: Option<PathBuf>,
    /// Temporary folders to remove at cleanup.
    #[serde(default)]
    pub folders: Vec<PathBuf>,
    /// Servers that were running.
    #[serde(default)]
    pub servers: Vec<ServerRecord>,
    /// The origin's secret path prefix (32 hex digits from getrandom), made once per run
    /// so that a fixed-port `{origin}` baked into a build at prepare still works at
    /// install; kept here, readable by the effective user only, because it is what keeps
    /// other local users from fetching the artifacts.
    #[serde(default)]
    pub origin_token: Option<String>,
    /// The model endpoint's loopback port and secret path token, made once per run (with
    /// `[model]`) so that `{model_url}` written into the home at install is the URL every
    /// later phase's endpoint serves; kept here for the same reason as `origin_token`.
    #[serde(default)]
    pub model: Option<ModelAddress>,
    /// Install 0's home footprint in bytes before its installer ran: measure's `disk` is
    /// the footprint after the install minus this. Written by install trial 0.
    #[serde(default)]
    pub home_before_install_bytes: Option<u64>,
}

/// Where a run's model endpoint listens: `http://127.0.0.1:PORT/m/TOKEN`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ModelAddress {
    /// The loopback port, picked by the kernel once (bound and released).
    pub port: u16,
    /// 32 hex digits from getrandom.
    pub token: String,
}

impl ModelAddress {
    /// A port the kernel picked on 127.0.0.1 (bound, then released) and a fresh token.
    pub(crate) fn fresh() -> std::io::Result<ModelAddress> {
        let listener = std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))?;
        let port = listener.local_addr()?.port();
        Ok(ModelAddress {
            port,
            token: bench_core::io::random_hex(16)?,
        })
    }
}

/// The state file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The file is not clibench's to read or write (see [`folder`]), or the call failed.
    #[error(transparent)]
    Out(#[from] folder::OutError),
    /// The file is not a state file.
    #[error("reading clibench's state file {}", path.display())]
    Parse {
        /// The state file.
        path: PathBuf,
        /// Why it does not parse.
        #[source]
        source: serde_json::Error,
    },
    /// The state could not be turned into JSON.
    #[error("serializing the state")]
    Serialize(#[source] serde_json::Error),
    /// No random run id could be made.
    #[error("reading /dev/urandom for a run id")]
    RunId(#[source] std::io::Error),
}

impl State {
    /// The state of `out`, or a new one with a fresh run id. Only a state file clibench
    /// wrote itself is read (see `folder::read_trusted`): anything else is refused.
    pub fn load(out: &Path) -> Result<State, StateError> {
        match folder::read_trusted(out, STATE_FILE)? {
            Some(bytes) => serde_json::from_slice(&bytes).map_err(|source| StateError::Parse {
                path: out.join(STATE_FILE),
                source,
            }),
            None => Ok(State {
                run_id: new_run_id()?,
                ..State::default()
            }),
        }
    }

    /// Whether a state file exists under `out`.
    pub fn exists(out: &Path) -> bool {
        std::fs::symlink_metadata(out.join(STATE_FILE)).is_ok()
    }

    /// Writes the state atomically, readable by the effective user only.
    pub fn save(&self, out: &Path) -> Result<(), StateError> {
        let mut text = serde_json::to_string_pretty(self).map_err(StateError::Serialize)?;
        text.push('\n');
        folder::write_private(out, STATE_FILE, text.as_bytes())?;
        Ok(())
    }

    /// Loads, changes and saves the state in one go.
    pub fn update<T>(out: &Path, change: impl FnOnce(&mut State) -> T) -> Result<T, StateError> {
        let mut state = State::load(out)?;
        let value = change(&mut state);
        state.save(out)?;
        Ok(value)
    }

    /// The user of one install index.
    pub fn user(&self, install: u32) -> Option<&UserPlan> {
        self.users.iter().find(|u| u.install == install)
    }

    /// The install whose home trial `trial` of a phase after install uses: the installs
    /// are taken in turn (trial k uses install k mod the number of installs made), so that
    /// what one install has of its own (its user, its home, where its files sit) is spread
    /// over the trials instead of biasing all of them alike. With one install, always 0.
    pub fn install_for_trial(&self, trial: u32) -> u32 {
        let made = self.users.iter().map(|u| u.install + 1).max().unwrap_or(1);
        trial % made
    }
}

/// Six hex characters from the kernel's random source.
fn new_run_id() -> Result<String, StateError> {
    use std::io::Read;
    let mut bytes = [0u8; 3];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(StateError::RunId)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trips_and_gets_a_run_id() {
        let dir = tempfile::tempdir().unwrap();
        folder::create(dir.path()).unwrap();
        let state = State::load(dir.path()).unwrap();
        assert_eq!(state.run_id.len(), 6);
        State::update(dir.path(), |s| {
            s.run_id = state.run_id.clone();
            s.folders.push("/tmp/x".into());
        })
        .unwrap();
        let again = State::load(dir.path()).unwrap();
        assert_eq!(again.run_id, state.run_id);
        assert_eq!(again.folders, vec![PathBuf::from("/tmp/x")]);
    }

    #[test]
    fn later_phases_take_the_installs_in_turn() {
        let user = |install| UserPlan {
            install,
            name: format!("clibench-abcdef-{install}"),
            home: PathBuf::from(format!("/home/clibench-abcdef-{install}")),
            dedicated: true,
        };
        let mut state = State::default();
        assert_eq!(state.install_for_trial(7), 0, "no install made yet");
        state.users.push(user(0));
        assert_eq!(state.install_for_trial(7), 0);
        state.users.extend([user(1), user(2)]);
        let installs: Vec<u32> = (0..7).map(|trial| state.install_for_trial(trial)).collect();
        assert_eq!(installs, [0, 1, 2, 0, 1, 2, 0]);
    }

    #[test]
    fn an_older_state_files_uid_is_ignored() {
        let text = r#"{"run_id":"abcdef","users":[{"install":0,"name":"clibench-abcdef-0",
            "uid":0,"gid":0,"home":"/home/clibench-abcdef-0","dedicated":true}]}"#;
        let state: State = serde_json::from_str(text).unwrap();
        assert_eq!(state.users[0].name, "clibench-abcdef-0");
        assert!(!serde_json::to_string(&state).unwrap().contains("uid"));
    }

    #[test]
    fn a_state_file_clibench_did_not_write_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        folder::create(dir.path()).unwrap();
        std::fs::write(dir.path().join(STATE_FILE), "{\"run_id\":\"abc\"}").unwrap();
        std::fs::set_permissions(
            dir.path().join(STATE_FILE),
            std::os::unix::fs::PermissionsExt::from_mode(0o666),
        )
        .unwrap();
        let error = State::load(dir.path()).unwrap_err();
        assert!(
            error.to_string().contains("other users can write it"),
            "{error}"
        );
    }
}
