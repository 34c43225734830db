//! Where the store lives when no `--store` is given.

use std::path::PathBuf;

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
