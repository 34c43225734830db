//! README names the examples as `cargo run -p clibench-examples --example NAME`: every
//! example in `examples/` is named there, and each named without arguments runs so.

use crate::example;
use std::path::PathBuf;

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The examples README's sentence names: `--example first`, then `` `name` `` or
/// `` `name ARGS` `` up to the end of the parenthesis.
fn named_examples(readme: &str) -> Vec<(String, bool)> {
    let flat = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    let start = flat
        .find("(`cargo run -p clibench-examples --example ")
        .expect("README names the examples");
    let list = &flat[start + 1..];
    let list = &list[..list.find(')').unwrap_or(list.len())];
    list.split('`')
        .skip(1)
        .step_by(2)
        .map(|quoted| {
            let quoted = quoted
                .strip_prefix("cargo run -p clibench-examples --example ")
                .unwrap_or(quoted);
            let mut words = quoted.split_whitespace();
            let name = words.next().unwrap_or_default().to_owned();
            (name, words.next().is_some())
        })
        .collect()
}

#[test]
fn every_example_is_named_in_the_readme_and_runs_as_named() {
    let readme = std::fs::read_to_string(repository().join("README.md")).unwrap();
    let named = named_examples(&readme);
    let mut on_disk: Vec<String> = std::fs::read_dir(repository().join("examples"))
        .unwrap()
        .filter_map(|entry| {
            let name = entry.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".rs").map(str::to_owned)
        })
        .collect();
    on_disk.sort();
    let mut names: Vec<String> = named.iter().map(|(name, _)| name.clone()).collect();
    names.sort();
    assert_eq!(
        names, on_disk,
        "README's list of examples is not examples/*.rs"
    );
    for (name, needs_arguments) in named {
        if needs_arguments {
            // pipeline_demo OUT_DIR: pipeline_demo.rs runs it on the demo.
            continue;
        }
        let output = example(&name).output().unwrap();
        // compare_results exits 1 on a regression, which the shipped results hold.
        let expected = if name == "compare_results" { 1 } else { 0 };
        assert_eq!(
            output.status.code(),
            Some(expected),
            "`--example {name}` without arguments:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn the_examples_sentence_is_parsed_with_arguments_told_apart() {
    let readme = "shows it (`cargo run -p clibench-examples --example\na`, `b`, and `c DIR`, \
                  which runs); more `d`";
    assert_eq!(
        named_examples(readme),
        [
            ("a".to_owned(), false),
            ("b".to_owned(), false),
            ("c".to_owned(), true)
        ]
    );
}
