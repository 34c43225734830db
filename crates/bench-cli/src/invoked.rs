//! How the user started clibench, so that a hint names a command they can paste:
//! `clibench` when that is what PATH finds, else the path they ran (`target/debug/clibench`
//! under `cargo run`).

use std::ffi::OsStr;
use std::path::Path;

/// The command that runs this clibench again, as the user would type it: the command to name in a hint: `clibench` when PATH finds this executable under that
/// name, else what the user typed (quoted for a shell when it needs it).
pub fn invoked_as() -> String {
    let argv0 = std::env::args_os().next().unwrap_or_default();
    let path = std::env::var_os("PATH");
    let on_path = crate::standalone::program::find(OsStr::new("clibench"), path.as_deref()).ok();
    let running = std::env::current_exe().ok();
    name_for(&argv0, on_path.as_deref(), running.as_deref())
}

/// `clibench` when the `clibench` PATH finds is the program running (or when it was run
/// by a bare name, which PATH found); else the path it was run by, quoted for a shell.
fn name_for(argv0: &OsStr, on_path: Option<&Path>, running: Option<&Path>) -> String {
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if let (Some(on_path), Some(running)) = (on_path, running)
        && same(on_path, running)
    {
        return "clibench".to_owned();
    }
    let typed = argv0.to_string_lossy();
    if typed.is_empty() {
        return running.map_or_else(
            || "clibench".to_owned(),
            |p| shell_word(&p.to_string_lossy()),
        );
    }
    shell_word(&typed)
}

/// `word` as one shell word: as it is when it holds only safe characters, else in single
/// quotes.
fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "/._-+=:@".contains(c);
    if word.chars().all(safe) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn a_clibench_run_through_cargo_is_named_by_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let built = dir.path().join("target/debug/clibench");
        std::fs::create_dir_all(built.parent().unwrap()).unwrap();
        std::fs::write(&built, "").unwrap();
        let argv0 = OsString::from("target/debug/clibench");
        // Not on PATH at all, or another clibench is.
        assert_eq!(
            name_for(&argv0, None, Some(&built)),
            "target/debug/clibench"
        );
        let other = dir.path().join("clibench");
        std::fs::write(&other, "").unwrap();
        assert_eq!(
            name_for(&argv0, Some(&other), Some(&built)),
            "target/debug/clibench"
        );
        // The same file as PATH's clibench: its usual name.
        assert_eq!(name_for(&argv0, Some(&built), Some(&built)), "clibench");
    }

    #[test]
    fn a_path_with_spaces_is_quoted_for_the_shell() {
        let argv0 = OsString::from("/tmp/my tools/clibench");
        assert_eq!(name_for(&argv0, None, None), "'/tmp/my tools/clibench'");
        assert_eq!(
            name_for(&OsString::from("clibench"), None, None),
            "clibench"
        );
    }
}
