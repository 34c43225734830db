//! Where the store lives when no `--store` is given, and opening it to write or read.

use crate::history::{Store, StoreError};
use std::path::{Path, PathBuf};

/// The environment variable that names the store.
pub(crate) const ENV: &str = "CLIBENCH_HISTORY";

/// The default store: `$CLIBENCH_HISTORY` (a file, or a `postgres://` URL, password and
/// all: the environment is the caller's alone), else `$XDG_DATA_HOME/clibench/history.sqlite`,
/// else `$HOME/.local/share/clibench/history.sqlite`; `None` when none of them is set.
/// `env` reads a variable (`std::env::var_os` in the binary), so tests need no process
/// environment.
pub(crate) fn default_store(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let set = |name: &str| {
        env(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    if let Some(path) = set(ENV) {
        return Some(path);
    }
    // XDG says a relative value is invalid and must be ignored.
    let data = set("XDG_DATA_HOME")
        .filter(|path| path.is_absolute())
        .or_else(|| set("HOME").map(|home| home.join(".local/share")))?;
    Some(data.join("clibench").join("history.sqlite"))
}

/// Why the store cannot be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// No path was given and no default can be made.
    #[error("no history store: give --store PATH or set {ENV} (HOME is not set either)")]
    NoDefault,
    /// A store to read that does not exist.
    #[error("no history store at {}; add results with `clibench history add`", path.display())]
    Missing {
        /// Where it was looked for.
        path: PathBuf,
    },
    /// A store URL on the command line holds a password.
    #[error(
        "the store's URL holds a password, which every local user could read in the \
         process list; put it in PGPASSWORD, a pgpass file (~/.pgpass) or CLIBENCH_HISTORY, \
         or give `-` and the URL on standard input"
    )]
    PasswordInFlag,
    /// The store failed to open.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl OpenError {
    /// Whether the user named something that is not a store this clibench can use,
    /// rather than the file system or SQLite failing.
    pub fn is_input(&self) -> bool {
        match self {
            OpenError::Store(error) => {
                matches!(
                    error,
                    StoreError::Newer { .. }
                        | StoreError::NotAStore { .. }
                        | StoreError::Untrusted { .. }
                )
            }
            _ => true,
        }
    }
}

/// The store URL read from standard input (`--store -`): the one URL that may carry its
/// password, since no other process can read it.
static FROM_STDIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Reads a `postgres://` URL from the first line of `input` (standard input, for `--store
/// -`), and remembers it as one that may hold a password.
pub fn store_from_stdin(mut input: impl std::io::BufRead) -> Result<PathBuf, std::io::Error> {
    let mut line = String::new();
    input.read_line(&mut line)?;
    let url = line.trim();
    if !crate::history::store::server::is_url(url) {
        return Err(std::io::Error::other(
            "standard input must hold a postgres:// URL on its first line",
        ));
    }
    Ok(FROM_STDIN.get_or_init(|| PathBuf::from(url)).clone())
}

/// Checks a store named by a flag: a `postgres://` URL there must hold no password
/// (one read from standard input, `-`, is no longer in the flag and may).
pub fn check_flag(path: &Path) -> Result<(), OpenError> {
    let text = path.to_str().unwrap_or_default();
    if FROM_STDIN.get().is_some_and(|url| url == path) {
        return Ok(());
    }
    if crate::history::store::server::is_url(text)
        && crate::history::store::server::has_password(text)
    {
        return Err(OpenError::PasswordInFlag);
    }
    Ok(())
}

/// The store's path, `given` or the default, and whether it is the default (whose
/// folder may be created).
pub(crate) fn store_path(given: Option<&Path>) -> Result<(PathBuf, bool), OpenError> {
    match given {
        Some(path) => check_flag(path).map(|()| (path.to_path_buf(), false)),
        None => default_store(|name| std::env::var_os(name))
            .map(|path| (path, true))
            .ok_or(OpenError::NoDefault),
    }
}

/// Opens the store at `given`, else the default one (creating its folder), to write.
pub fn open_to_write(given: Option<&Path>) -> Result<Store, OpenError> {
    let (path, default) = store_path(given)?;
    Ok(Store::open(&path, default)?)
}

/// Opens an existing store to read.
pub fn open_to_read(given: Option<&Path>) -> Result<Store, OpenError> {
    let (path, _) = store_path(given)?;
    let url = path
        .to_str()
        .is_some_and(crate::history::store::server::is_url);
    if !url && std::fs::symlink_metadata(&path).is_err() {
        return Err(OpenError::Missing { path });
    }
    Ok(Store::open(&path, false)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn env<'a>(vars: &'a [(&str, &str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| OsString::from(value))
        }
    }

    #[test]
    fn the_variable_wins_then_xdg_then_home() {
        let all = [
            ("CLIBENCH_HISTORY", "/x/h.sqlite"),
            ("XDG_DATA_HOME", "/data"),
            ("HOME", "/home/u"),
        ];
        assert_eq!(default_store(env(&all)), Some("/x/h.sqlite".into()));
        assert_eq!(
            default_store(env(&all[1..])),
            Some("/data/clibench/history.sqlite".into())
        );
        assert_eq!(
            default_store(env(&all[2..])),
            Some("/home/u/.local/share/clibench/history.sqlite".into())
        );
        assert_eq!(default_store(env(&[])), None);
    }

    #[test]
    fn a_relative_xdg_data_home_is_ignored() {
        let vars = [("XDG_DATA_HOME", "rel"), ("HOME", "/home/u")];
        assert_eq!(
            default_store(env(&vars)),
            Some("/home/u/.local/share/clibench/history.sqlite".into())
        );
    }
}
