//! Text lints over the whole workspace's sources: rules that hold in every library crate
//! and so belong to none of them.

use std::path::Path;

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, found: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
}

#[test]
fn no_message_repeats_the_cause_it_chains() {
    // thiserror makes a field named `source` (or marked #[source]/#[from]) the error's
    // source, which every printer here chains after the message: naming it in the
    // message too says the cause twice. Spelled in halves so this file does not match.
    let source_field = ["{sou", "rce"].concat();
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates");
    // bench-cli's library half; its binary (main.rs, commands/) prints with anyhow's
    // own chain and is checked by the same rule only through the library's errors.
    let cli = crates.join("bench-cli").join("src");
    let mut files = vec![cli.join("lib.rs"), cli.join("demo.rs")];
    for module in ["pipeline", "spec", "standalone", "history"] {
        sources(&cli.join(module), &mut files);
    }
    for library in ["bench-core", "bench-proc", "bench-term", "bench-model"] {
        sources(&crates.join(library).join("src"), &mut files);
    }
    assert!(files.len() > 50, "the crates were not found: {files:?}");
    let mut offenders = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (index, line) in lines.iter().enumerate() {
            if !line.trim_start().starts_with("#[error(") {
                continue;
            }
            // The attribute (it may span lines), then the variant's first line.
            let mut end = index;
            while !lines[end].trim_end().ends_with(")]") && end + 1 < lines.len() {
                end += 1;
            }
            let attribute = lines[index..=end].join(" ");
            let variant = lines
                .get(end + 1..)
                .into_iter()
                .flatten()
                .find(|line| !line.trim_start().starts_with("///"))
                .copied()
                .unwrap_or_default();
            let chained_tuple = ["(#[source]", "(#[from]"]
                .iter()
                .any(|mark| variant.contains(mark));
            if attribute.contains(&source_field) || (chained_tuple && attribute.contains("{0")) {
                offenders.push(format!("{}:{}", path.display(), index + 1));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "these messages print their source, which the error chain prints again: {offenders:?}"
    );
}

#[test]
fn the_library_half_uses_no_anyhow() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/bench-cli/src");
    let mut files = vec![src.join("lib.rs"), src.join("demo.rs")];
    for module in ["pipeline", "spec", "standalone", "history"] {
        sources(&src.join(module), &mut files);
    }
    assert!(files.len() > 20, "{files:?}");
    // Spelled in halves so that this file does not match itself: its paths, its
    // macros and a bare `use` of the crate.
    let uses = [["any", "how::"], ["any", "how!"], ["use any", "how"]].map(|p| p.concat());
    let offenders: Vec<_> = files
        .iter()
        .filter(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            uses.iter().any(|needle| text.contains(needle.as_str()))
        })
        .collect();
    assert!(
        offenders.is_empty(),
        "anyhow belongs to the binary (main.rs, commands/); the library uses thiserror: {offenders:?}"
    );
}
