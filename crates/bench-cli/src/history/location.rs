//! Where the store lives when no `--store` is given, and opening it to write or read.

use super::{Store, StoreError};
use std::path::{Path, PathBuf};

/// The environment variable that names the store.
pub const ENV: &str = "CLIBENCH_HISTORY";

/// The default store: `$CLIBENCH_HISTORY`, else `$XDG_DATA_HOME/clibench/history.sqlite`,
/// else `$HOME/.local/share/clibench/history.sqlite`; `None` when none of them is set.
/// `env` reads a variable (`std::env::var_os` in the binary), so tests need no process
/// environment.
pub fn default_store(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
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

/// The store's path, `given` or the default, and whether it is the default (whose
/// folder may be created).
pub fn store_path(given: Option<&Path>) -> Result<(PathBuf, bool), OpenError> {
    match given {
        Some(path) => Ok((path.to_path_buf(), false)),
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
    if std::fs::symlink_metadata(&path).is_err() {
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
