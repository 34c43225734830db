//! Files a failed command cites that live in a home clibench removes (npm's "A complete log
//! of this run can be found in: HOME/.npm/_logs/...-debug-0.log"): copied into `OUT/logs`
//! while they still exist, so that the error points at a file that is there afterwards.
//!
//! The home belongs to the target (a trial user's, or a build's scratch home whose
//! commands clibench does not trust either), so a cited path is opened beneath the home
//! without following any symbolic link, must be a regular file, and is copied at most
//! [`MAX_BYTES`] of it, into a new file of clibench's own in `OUT/logs`.

use rustix::fs::{Mode, OFlags, ResolveFlags};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// At most this many files are kept per failure.
const MAX_FILES: usize = 4;
/// At most this much of each file is copied.
const MAX_BYTES: u64 = 8 << 20;

/// The paths under `home` that `text` names: words starting with `HOME/`, without the
/// quotes and punctuation around them.
pub fn cited_paths(home: &Path, text: &str) -> Vec<PathBuf> {
    let Some(prefix) = home
        .to_str()
        .map(|home| format!("{}/", home.trim_end_matches('/')))
    else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = Vec::new();
    for word in text.split(|c: char| c.is_whitespace() || "\"'`()<>,;".contains(c)) {
        let word = word.trim_end_matches(['.', ':']);
        if word.len() > prefix.len()
            && word.starts_with(&prefix)
            && !word.split('/').any(|part| part == "..")
            && !found.iter().any(|known| known.as_os_str() == word)
        {
            found.push(PathBuf::from(word));
        }
    }
    found.truncate(MAX_FILES);
    found
}

/// Copies each file `text` cites under `home` into `logs` and returns `text` with each
/// copied path replaced by its copy's. Files that cannot be kept (gone, a link, not a
/// regular file) are left as cited: keeping them is a courtesy, never a failure.
pub fn keep_cited(home: &Path, logs: &Path, text: &str) -> String {
    let mut text = text.to_owned();
    for cited in cited_paths(home, &text.clone()) {
        let Ok(relative) = cited.strip_prefix(home) else {
            continue;
        };
        if let Some(kept) = copy_beneath(home, relative, logs) {
            text = text.replace(&cited.display().to_string(), &kept.display().to_string());
        }
    }
    text
}

fn copy_beneath(home: &Path, relative: &Path, logs: &Path) -> Option<PathBuf> {
    let root = rustix::fs::open(
        home,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    // Beneath the home and through no link at all: a target cannot point the copy at a
    // file of someone else's.
    let fd = rustix::fs::openat2(
        &root,
        relative,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
    )
    .ok()?;
    let stat = rustix::fs::fstat(&fd).ok()?;
    if rustix::fs::FileType::from_raw_mode(stat.st_mode) != rustix::fs::FileType::RegularFile {
        return None;
    }
    let name: String = relative
        .file_name()?
        .to_string_lossy()
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut source = std::fs::File::from(fd).take(MAX_BYTES);
    for attempt in 0..100 {
        let kept = logs.join(if attempt == 0 {
            format!("cited-{name}")
        } else {
            format!("cited-{attempt}-{name}")
        });
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&kept)
        {
            Ok(mut file) => {
                let copied = std::io::copy(&mut source, &mut file).and_then(|_| file.flush());
                return copied.is_ok().then_some(kept);
            }
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(_) => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_under_the_home_are_found_without_their_punctuation() {
        let text = "npm error A complete log of this run can be found in: \
                    /h/.npm/_logs/2026-debug-0.log\nsee '/h/a.txt'. and /other/b /h/../etc/x";
        assert_eq!(
            cited_paths(Path::new("/h"), text),
            [
                PathBuf::from("/h/.npm/_logs/2026-debug-0.log"),
                PathBuf::from("/h/a.txt")
            ]
        );
    }

    #[test]
    fn a_cited_log_is_copied_and_a_link_is_not_followed() {
        let home = tempfile::tempdir().unwrap();
        let logs = tempfile::tempdir().unwrap();
        let secret = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(secret.path(), "secret").unwrap();
        std::fs::create_dir_all(home.path().join(".npm/_logs")).unwrap();
        let log = home.path().join(".npm/_logs/debug-0.log");
        std::fs::write(&log, "verbose stack Error: 404").unwrap();
        let link = home.path().join("link.log");
        std::os::unix::fs::symlink(secret.path(), &link).unwrap();
        // A folder on the way that is a link is refused too.
        std::os::unix::fs::symlink(secret.path().parent().unwrap(), home.path().join("up"))
            .unwrap();
        let through = home
            .path()
            .join("up")
            .join(secret.path().file_name().unwrap());
        let text = format!(
            "log in: {}\nand {}\nand {}",
            log.display(),
            link.display(),
            through.display()
        );
        let kept = keep_cited(home.path(), logs.path(), &text);
        let copy = logs.path().join("cited-debug-0.log");
        assert_eq!(
            std::fs::read_to_string(&copy).unwrap(),
            "verbose stack Error: 404"
        );
        assert!(kept.contains(&copy.display().to_string()), "{kept}");
        assert!(kept.contains(&link.display().to_string()), "{kept}");
        assert!(kept.contains(&through.display().to_string()), "{kept}");
        assert_eq!(std::fs::read_dir(logs.path()).unwrap().count(), 1);
    }
}
