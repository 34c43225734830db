//! `OUT/report.md` and `OUT/report.html`, rendered from `OUT/result.json`: both read
//! the result alone, the screen at ready included (`side.screens`).

use crate::pipeline::Error;
use bench_core::{Phase, Side};
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
    let mut markdown = bench_core::export::markdown::report(&bench_core::Report::new(&result));
    // The screen a person saw at ready: the quickest check that ready was the real prompt.
    let screen = ready_screen_section(&result.side);
    for section in screen.iter().chain(extra) {
        markdown.push('\n');
        markdown.push_str(section);
    }
    bench_core::io::write_atomic(&out.join("report.md"), markdown.as_bytes())?;
    let html = bench_core::export::html::report(&result);
    bench_core::io::write_atomic(&out.join("report.html"), html.as_bytes())?;
    Ok(WrittenReport { markdown, result })
}

/// The screen at ready of the measure phase's first start that kept one (trial 0's cold
/// start when it got that far), as a Markdown section for report.md: where its whole
/// text is in the logs, and the screen in a fenced text block. `None` when no start
/// kept a screen at ready.
pub(crate) fn ready_screen_section(side: &Side) -> Option<String> {
    let screen = side
        .screens
        .iter()
        .filter(|screen| screen.phase == Phase::Measure)
        .min_by_key(|screen| (screen.trial, screen.session != "cold"))?;
    Some(format!(
        "## Screen at ready\n\nThe screen when the program was judged ready \
         (logs/screen-at-ready-{}-{}.txt):\n\n{}",
        screen.trial,
        screen.session,
        bench_core::export::markdown::fenced("text", screen.text.trim_end())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::detail::Screen;

    fn side(screens: &[(Phase, u32, &str, &str)]) -> Side {
        let mut side = Side::new("abc");
        side.screens = screens
            .iter()
            .map(|&(phase, trial, session, text)| Screen::new(phase, trial, session, text.into()))
            .collect();
        side
    }

    #[test]
    fn the_report_shows_the_earliest_cold_screen_at_ready_of_the_measure_phase() {
        assert_eq!(ready_screen_section(&side(&[])), None);
        let side = side(&[
            (Phase::Ui, 0, "ui", "the ui phase's"),
            (Phase::Measure, 2, "warm", "trial two, warm"),
            (Phase::Measure, 2, "cold", "> ```quoted```\n\n"),
        ]);
        insta::assert_snapshot!(ready_screen_section(&side).unwrap(), @r"
        ## Screen at ready

        The screen when the program was judged ready (logs/screen-at-ready-2-cold.txt):

        ````text
        > ```quoted```
        ````
        ");
    }

    #[test]
    fn a_screen_with_backtick_and_tilde_fences_stays_inside_its_block() {
        let screen = "ready\n```\n~~~~\n![x](http://example.invalid/p.png)\n# Owned\n";
        let section = ready_screen_section(&side(&[(Phase::Measure, 0, "cold", screen)])).unwrap();
        // CommonMark: a fence closes only on a line of at least as many of its own
        // characters; the block must end at its own last line, not before.
        let lines: Vec<&str> = section.lines().collect();
        let open = lines.iter().position(|l| l.ends_with("text")).unwrap();
        let fence: String = lines[open]
            .chars()
            .take_while(|&c| c == '`' || c == '~')
            .collect();
        let mark = fence.chars().next().unwrap();
        let close = lines[open + 1..]
            .iter()
            .position(|l| {
                let run = l.trim_start().chars().take_while(|&c| c == mark).count();
                run >= fence.len() && l.trim_start().chars().all(|c| c == mark)
            })
            .map(|at| open + 1 + at)
            .unwrap();
        assert_eq!(close, lines.len() - 1, "{section}");
        assert!(lines[open + 1..close].contains(&"# Owned"), "{section}");
    }
}
