//! Finding a command's program before it is started many times, so that a typo is said once
//! ("`no-such-program` was not found on PATH") instead of once per run.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A program that cannot be started, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotFound {
    /// A path to something that is not an executable file.
    #[error("`{0}` is not an executable file")]
    NotExecutable(String),
    /// A path to nothing.
    #[error("`{0}` does not exist")]
    Missing(String),
    /// A name that no folder of `PATH` holds an executable of.
    #[error("`{program}` was not found on PATH ({path})")]
    NotOnPath {
        /// The program's name.
        program: String,
        /// The `PATH` searched.
        path: String,
    },
}

/// Where `program` is: itself when it names a path (contains `/`), else the first
/// executable file of that name in the folders of `path` (a `PATH` value). The error says
/// what was looked at, for the user.
pub fn find(program: &OsStr, path: Option<&OsStr>) -> Result<PathBuf, NotFound> {
    let shown = program.to_string_lossy();
    if program.as_encoded_bytes().contains(&b'/') {
        let candidate = Path::new(program);
        return if is_executable(candidate) {
            Ok(candidate.to_path_buf())
        } else if candidate.exists() {
            Err(NotFound::NotExecutable(shown.into_owned()))
        } else {
            Err(NotFound::Missing(shown.into_owned()))
        };
    }
    let path = path.map(OsStr::to_owned).unwrap_or_default();
    std::env::split_paths(&path)
        .map(|folder| folder.join(program))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| NotFound::NotOnPath {
            program: shown.into_owned(),
            path: path.to_string_lossy().into_owned(),
        })
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_found_on_the_given_path_only() {
        let dir = tempfile::tempdir().unwrap();
        let tool = dir.path().join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let data = dir.path().join("data");
        std::fs::write(&data, "").unwrap();
        let path = std::env::join_paths(["/nonexistent", dir.path().to_str().unwrap()]).unwrap();
        assert_eq!(find(OsStr::new("tool"), Some(&path)), Ok(tool.clone()));
        let missing = find(OsStr::new("no-such-program"), Some(&path))
            .unwrap_err()
            .to_string();
        assert!(
            missing.starts_with("`no-such-program` was not found on PATH (/nonexistent:"),
            "{missing}"
        );
        assert!(find(OsStr::new("data"), Some(&path)).is_err());
        assert_eq!(find(tool.as_os_str(), None), Ok(tool));
        assert_eq!(
            find(data.as_os_str(), None).unwrap_err().to_string(),
            format!("`{}` is not an executable file", data.display())
        );
    }
}
