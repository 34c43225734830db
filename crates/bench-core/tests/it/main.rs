//! Integration tests of bench-core: the exporters on the shipped example results,
//! and the checked-in JSON Schema.

// The HTML report and the JSON Schema are behind bench-core's default features
// `html` and `schema`.
#[cfg(feature = "html")]
mod browser;
mod busy;
mod export;
mod gfm;
#[cfg(feature = "html")]
mod html;
#[cfg(feature = "schema")]
mod schema;
mod services;

use bench_core::ResultFile;

/// The example result files shipped at the top of the repository.
pub fn example(name: &str) -> ResultFile {
    let text = match name {
        "base" => include_str!("../../../../examples/results/base.json"),
        "candidate" => include_str!("../../../../examples/results/candidate.json"),
        other => panic!("no example result {other}"),
    };
    ResultFile::from_json_str(text).unwrap_or_else(|error| panic!("{name}.json: {error}"))
}
