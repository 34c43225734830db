//! `OUT/report.md` and `OUT/report.html`, rendered from `OUT/result.json`.

use crate::pipeline::Error;
use std::path::Path;

/// What [`write_report`] wrote, and the result it read to write it.
#[derive(Debug)]
pub struct WrittenReport {
    /// The Markdown of `OUT/report.md`.
    pub markdown: String,
    /// `OUT/result.json`, as loaded.
    pub result: bench_core::ResultFile,
}

/// Renders `OUT/result.json` as `OUT/report.md` (with `extra` Markdown sections at its
/// end) and `OUT/report.html`, reading the result once.
pub fn write_report(out: &Path, extra: &[String]) -> Result<WrittenReport, Error> {
    let path = out.join("result.json");
    if !path.exists() {
        return Err(Error::NoResult {
            logs: out.join("logs"),
        });
    }
    let result = bench_core::ResultFile::load(&path).map_err(Error::ResultUnreadable)?;
    let mut markdown =
        bench_core::export::markdown::report(&bench_core::report::Report::new(&result));
    // The screen a person saw at ready: the quickest check that ready was the real prompt.
    let screen = crate::pipeline::phases::measure::ready_screen_section(out);
    for section in screen.iter().chain(extra) {
        markdown.push('\n');
        markdown.push_str(section);
    }
    bench_core::io::write_atomic(&out.join("report.md"), markdown.as_bytes())?;
    let html = bench_core::export::html::report(&result);
    bench_core::io::write_atomic(&out.join("report.html"), html.as_bytes())?;
    Ok(WrittenReport { markdown, result })
}
