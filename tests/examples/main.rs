//! Runs the top-level examples (`examples/*.rs`) as their users would and
//! snapshot-tests what they print. One module per example.

mod ci_workflows;
mod compare_results;
mod family_memory;
mod kernel_roundtrip;
mod pipeline_demo;
mod readme;
mod startup_time;

use std::path::PathBuf;
use std::process::Command;

/// The built example `name`. Cargo builds the package's examples before its
/// tests, next to the test binary's folder: `target/<profile>/examples/<name>`.
pub fn example(name: &str) -> Command {
    let test_binary = std::env::current_exe().expect("the test binary knows its path");
    let profile = test_binary
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test binary lives in target/<profile>/deps");
    let path: PathBuf = profile.join("examples").join(name);
    assert!(
        path.is_file(),
        "example `{name}` is not built at {}; run the tests with `cargo test` or \
         `cargo nextest run`, which build the examples first",
        path.display()
    );
    Command::new(path)
}
