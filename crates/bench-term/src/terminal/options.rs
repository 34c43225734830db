//! [`SpawnOptions`]: how a [`Terminal`](super::Terminal) starts its program and how
//! it asks the program to quit.

use crate::keys::Key;
use crate::transcript::TRANSCRIPT_LIMIT_BYTES;
use bench_proc::Identity;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// How long a program may stay alive and silent after its last quit key before
/// close() concludes that the keys did nothing and hangs up. A program that quits
/// on them exits, keeps writing (saving, saying goodbye) or gives the terminal back
/// (leaves raw mode, as a TUI does first on its way out) within this; one that
/// ignores them (python at its prompt answers Ctrl-C with a new prompt) goes quiet
/// in the same mode and would otherwise wait out the whole grace on every close.
pub const QUIT_QUIET: Duration = Duration::from_millis(200);

/// The quit keys of [`SpawnOptions::new`]: Ctrl-C twice, then Ctrl-D.
///
/// Ctrl-C twice is how the agent CLIs quit (the first one cancels or warns, the
/// second exits) and how a TUI quits; Ctrl-D on the empty line a Ctrl-C left
/// ends the line REPLs that answer Ctrl-C with a new prompt (python, node, a
/// shell). close() presses a key only while the program has not exited or left
/// raw mode, so keys a program does not need cost nothing. A program that quits
/// otherwise (`/quit` and Enter) says so in its spec (`measure.quit`).
pub const DEFAULT_QUIT_KEYS: [Key; 3] = [Key::Ctrl('c'), Key::Ctrl('c'), Key::Ctrl('d')];

/// The default of [`SpawnOptions::quit_reaction_wait`].
const QUIT_REACTION_WAIT: Duration = Duration::from_millis(100);

/// How to start a program in a [`Terminal`](crate::Terminal).
#[derive(Debug, Clone)]
pub struct SpawnOptions {
    /// The program (a path, or a name looked up in the `PATH` of [`SpawnOptions::env`]
    /// as std does).
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// The exact environment: nothing is inherited unless put here
    /// (see [`SpawnOptions::inherit_env`]).
    pub env: Vec<(OsString, OsString)>,
    /// Working directory; the caller's when `None`.
    pub cwd: Option<PathBuf>,
    /// Screen columns.
    pub cols: u16,
    /// Screen rows.
    pub rows: u16,
    /// Run as this user, groups and all (needs root).
    pub user: Option<Identity>,
    /// Folder to save the transcript into on close (`output.raw`, `input.raw`,
    /// `screen.txt`); nothing is kept when `None`.
    pub transcript: Option<PathBuf>,
    /// Output cap for the transcript, in bytes.
    pub transcript_limit_bytes: usize,
    /// Keys close() sends first to ask the program to quit ([`DEFAULT_QUIT_KEYS`]
    /// unless set).
    pub quit_keys: Vec<Key>,
    /// The longest close() waits after a quit key (other than the last) for the
    /// program to react before it presses the next: it presses the next one as
    /// soon as output arrives; it presses none once the program exited or left
    /// raw mode. 100 ms unless set.
    pub quit_reaction_wait: Duration,
    /// The longest close() lets the program exit after its last quit key before
    /// hanging up; a program that goes quiet for [`QUIT_QUIET`] without exiting or
    /// leaving raw mode is hung up at once.
    pub quit_grace: Duration,
}

impl SpawnOptions {
    /// Options for `program` with no arguments, an empty environment, 120 x 40 cells,
    /// [`DEFAULT_QUIT_KEYS`] to quit.
    pub fn new(program: impl Into<OsString>) -> SpawnOptions {
        SpawnOptions {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            cols: 120,
            rows: 40,
            user: None,
            transcript: None,
            transcript_limit_bytes: TRANSCRIPT_LIMIT_BYTES,
            quit_keys: DEFAULT_QUIT_KEYS.to_vec(),
            quit_reaction_wait: QUIT_REACTION_WAIT,
            quit_grace: Duration::from_secs(2),
        }
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> SpawnOptions
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets one environment variable (replacing an earlier value).
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> SpawnOptions {
        let key = key.into();
        self.env.retain(|(k, _)| *k != key);
        self.env.push((key, value.into()));
        self
    }

    /// Copies these variables from this process's environment, where set.
    pub fn inherit_env<I, S>(mut self, keys: I) -> SpawnOptions
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        for key in keys {
            let key = key.into();
            if let Some(value) = std::env::var_os(&key) {
                self = self.env(key, value);
            }
        }
        self
    }

    /// Sets the working directory.
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> SpawnOptions {
        self.cwd = Some(cwd.into());
        self
    }

    /// Sets the screen size.
    pub fn size(mut self, cols: u16, rows: u16) -> SpawnOptions {
        self.cols = cols;
        self.rows = rows;
        self
    }

    /// Runs the program as `user`.
    pub fn user(mut self, user: Identity) -> SpawnOptions {
        self.user = Some(user);
        self
    }

    /// Saves the transcript into `folder` on close.
    pub fn transcript(mut self, folder: impl Into<PathBuf>) -> SpawnOptions {
        self.transcript = Some(folder.into());
        self
    }

    /// Sets the keys close() sends before hanging up.
    pub fn quit_keys(mut self, keys: Vec<Key>) -> SpawnOptions {
        self.quit_keys = keys;
        self
    }

    /// Sets the longest close() waits for a reaction to one quit key before it
    /// presses the next.
    pub fn quit_reaction_wait(mut self, wait: Duration) -> SpawnOptions {
        self.quit_reaction_wait = wait;
        self
    }

    /// Sets the longest close() waits for the program to exit on its quit keys.
    pub fn quit_grace(mut self, grace: Duration) -> SpawnOptions {
        self.quit_grace = grace;
        self
    }

    /// The value of `TERM` in the environment, if set.
    pub(super) fn term(&self) -> Option<String> {
        self.env
            .iter()
            .find(|(k, _)| k == "TERM")
            .map(|(_, v)| v.to_string_lossy().into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_keep_one_value_per_variable() {
        let options = SpawnOptions::new("x")
            .env("A", "1")
            .env("B", "2")
            .env("A", "3");
        assert_eq!(
            options.env,
            vec![("B".into(), "2".into()), ("A".into(), "3".into())]
        );
    }
}
