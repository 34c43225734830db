//! Text from a target cannot format, link or mention in the Markdown that becomes a
//! pull-request comment: snapshots of a report and a comparison full of such text, and
//! the same Markdown rendered by GitHub's own renderer (cmark-gfm) when it is installed.

use bench_core::ProcessMemory;
use bench_core::compare::{CompareOptions, compare};
use bench_core::export::Format;
use bench_core::{Metric, Report, Request, ResultFile, Role, Sample, record};
use std::io::Write;
use std::process::{Command, Stdio};

/// Version output, screen text and names as a hostile target could leave them.
const VERSION: &str = "installed tool 1.0 @octocat @github/security-team \
                       https://evil.example/login www.evil.example #123 _em_ ~del~ *b*";
const SCREEN: &str = "timed out; last screen: `@octocat` ``see #42`` [x](//e.vil) <b>bold</b>";
const NAME: &str = "|[x](//e.vil)|";

fn hostile(sha: &str, role: Role) -> ResultFile {
    let mut request = Request::new(sha, role);
    request
        .config
        .insert("target".to_owned(), "@octocat/tool #7".to_owned());
    let mut result = ResultFile::new(request);
    let side = &mut result.side;
    side.runtime
        .insert("version".to_owned(), VERSION.to_owned());
    side.runtime.insert(NAME.to_owned(), NAME.to_owned());
    side.artifacts.insert(NAME.to_owned(), 1024);
    side.processes.push(ProcessMemory {
        pid: 42,
        ppid: None,
        name: NAME.to_owned(),
        rss: 4096,
        pss: None,
        uss: None,
        swap: None,
        cpu_seconds: None,
        threads: None,
        cmdline: Some(VERSION.to_owned()),
        role: None,
    });
    for trial in 0..3 {
        record(side, Metric::Cold, trial, Sample::Value(0.5));
    }
    record(side, Metric::Warm, 0, Sample::Error(SCREEN.to_owned()));
    side.error = Some(format!("session: {SCREEN} https://evil.example @octocat"));
    result
}

fn report() -> String {
    Format::Markdown.report(&Report::new(&hostile("a1", Role::Candidate)))
}

fn comparison() -> String {
    let base = hostile("b2", Role::Base);
    let candidate = hostile("a1", Role::Candidate);
    Format::Markdown.comparison(&compare(
        &base.side,
        &candidate.side,
        &CompareOptions::default(),
    ))
}

#[test]
fn target_text_in_a_report_is_held_in_code_spans() {
    insta::assert_snapshot!(report());
}

#[test]
fn target_text_in_a_comparison_is_held_in_code_spans() {
    insta::assert_snapshot!(comparison());
}

/// `markdown` as GitHub renders it, or `None` when cmark-gfm is not installed.
fn render(markdown: &str) -> Option<String> {
    let mut child = Command::new("cmark-gfm")
        .args(["-e", "table", "-e", "autolink", "-e", "strikethrough"])
        .args(["-e", "tagfilter", "--unsafe"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    stdin
        .write_all(markdown.as_bytes())
        .expect("cmark-gfm reads");
    drop(stdin);
    let output = child.wait_with_output().expect("cmark-gfm runs");
    assert!(output.status.success(), "cmark-gfm failed: {output:?}");
    Some(String::from_utf8(output.stdout).expect("cmark-gfm writes UTF-8"))
}

/// `html` with every `<code>…</code>` element taken out.
fn outside_code(html: &str) -> String {
    let mut rest = html;
    let mut out = String::new();
    while let Some(start) = rest.find("<code>") {
        out.push_str(&rest[..start]);
        let end = rest[start..]
            .find("</code>")
            .expect("a closed code element");
        rest = &rest[start + end + "</code>".len()..];
    }
    out.push_str(rest);
    out
}

/// The report and the comparison as GitHub renders them; `None` (said on stderr) when
/// cmark-gfm is not installed (`.ci/run` installs it).
fn rendered(test: &str) -> Option<[(&'static str, String); 2]> {
    let report = render(&report());
    let comparison = render(&comparison());
    match (report, comparison) {
        (Some(report), Some(comparison)) => Some([("report", report), ("comparison", comparison)]),
        _ => {
            eprintln!("SKIPPED {test}: cmark-gfm is not installed (apt-get install cmark-gfm)");
            None
        }
    }
}

#[test]
fn github_renders_target_text_without_links_mentions_or_formatting() {
    let Some(pages) = rendered("github_renders_target_text_without_links_mentions_or_formatting")
    else {
        return;
    };
    for (name, html) in pages {
        let outside = outside_code(&html);
        // GitHub links mentions and issue numbers in text outside code after rendering,
        // so none of the target's `@`, `#123`, URLs or markup may be left outside code.
        for live in [
            "<a ", "<em>", "<del>", "<b>", "@", "#123", "#42", "#7", "evil",
        ] {
            assert!(
                !outside.contains(live),
                "{name}: {live:?} outside code in\n{html}"
            );
        }
        assert!(html.contains(&format!("<code>{VERSION}</code>")), "{html}");
    }
}

#[test]
fn github_keeps_a_pipe_in_a_name_inside_its_table_cell() {
    let Some(pages) = rendered("github_keeps_a_pipe_in_a_name_inside_its_table_cell") else {
        return;
    };
    for (name, html) in pages {
        // Each table's rows keep the header's cells: a `|` in a name split none.
        for table in html.split("<table>").skip(1) {
            let table = &table[..table.find("</table>").expect("a closed table")];
            let cells = |row: &str| row.matches("<td").count() + row.matches("<th").count();
            let mut rows = table.split("<tr>").skip(1);
            let header = cells(rows.next().expect("a header row"));
            for row in rows {
                assert_eq!(cells(row), header, "{name}: a row lost its shape:\n{row}");
            }
        }
        // The report's tables hold the name, shown as it is.
        assert!(
            name != "report"
                || html
                    .matches("<td align=\"left\"><code>|[x](//e.vil)|</code></td>")
                    .count()
                    == 4,
            "{name}: the name is shown as it is:\n{html}"
        );
    }
}
