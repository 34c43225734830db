//! What the report page and the comparison page share: the page's chrome (style,
//! Content-Security-Policy), escaping, figures and legends, failures and the glossary.

use crate::export::charts;
use crate::export::failures::{Failure, SideFailures};
use crate::metric::Metric;
use std::fmt::Write;

/// `text` safe inside HTML text and quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    // Control characters and bidi overrides are shown escaped, as on a terminal: the
    // page may be printed to one (`--format html`), and an override would reorder
    // what the reader sees.
    for c in crate::text::inert(text).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "\
:root{color-scheme:light;--fg:#1d1d1f;--muted:#5f6368;--line:#e3e3e3;--bad:#c62828;--good:#1e8c3c}\
*{box-sizing:border-box}\
body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif;color:var(--fg);margin:0 auto;max-width:980px;padding:24px 20px 60px}\
h1{font-size:1.45em;margin:0 0 4px}h2{font-size:1.15em;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}\
h3{font-size:1em;margin:18px 0 6px}\
code,pre{font-family:ui-monospace,'SFMono-Regular',Menlo,Consolas,'DejaVu Sans Mono',monospace;font-size:.92em}\
.request,.none,figcaption,.note{color:var(--muted)}\
table{border-collapse:collapse;margin:6px 0;font-variant-numeric:tabular-nums}\
th,td{padding:4px 10px;border-bottom:1px solid var(--line);text-align:right;vertical-align:top}\
th:first-child,td:first-child{text-align:left}\
thead th{font-weight:600;border-bottom:2px solid #ccc}\
tr.phase th{text-align:left;background:#f6f6f6;font-weight:600;color:var(--muted);font-size:.85em;text-transform:uppercase;letter-spacing:.04em}\
td.failed{color:var(--bad)}\
abbr{text-decoration:underline dotted;cursor:help}\
figure{margin:8px 0 18px}figure svg{max-width:100%;height:auto;display:block}\
figcaption{font-size:.9em;margin-top:2px}\
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:.9em;margin:2px 0 4px}\
.swatch{display:inline-block;width:11px;height:11px;border-radius:50%;margin-right:5px;vertical-align:-1px}\
pre.config{white-space:pre-wrap;overflow-wrap:anywhere}\
pre.screen{background:#111;color:#e6e6e6;padding:12px 14px;border-radius:6px;overflow-x:auto;line-height:1.2;font-size:.8em;width:fit-content;max-width:calc(100% - 28px)}\
details{margin:6px 0}summary{cursor:pointer;font-weight:600}\
dl.glossary dt{font-weight:600;margin-top:8px}dl.glossary dd{margin:2px 0 0 18px}\
.regressed{color:var(--bad);font-weight:600}.improved{color:var(--good)}\
ul.failures li{color:var(--bad)}\
table.facts td{text-align:left}\
div.scroll{overflow-x:auto}table.board td span{white-space:nowrap}table.board .spread{font-size:.8em;color:var(--muted)}\
";

/// `body` (HTML, escaped by its maker) in the one page frame every report uses: its
/// style, a title escaped here, and a policy that lets the page load nothing.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}\
         <footer class=\"note\"><p>Made by clibench. This page is self-contained: it loads nothing from anywhere.</p></footer>\n\
         </body>\n</html>\n",
        escape(title)
    )
}

/// The busy-host warning of a side (`role` names it in a comparison).
pub(super) fn busy_line(body: &mut String, role: &str, busy: &crate::busy::BusyHost) {
    let _ = writeln!(
        body,
        "<p class=\"busy\"><strong>Warning</strong>: {}{}.</p>",
        escape(role),
        escape(&busy.to_string())
    );
}

/// A metric's name with its glossary entry as a tooltip.
pub(super) fn metric_name(metric: Metric) -> String {
    format!(
        "<abbr title=\"{} ({})\"><code>{}</code></abbr>",
        escape(metric.description()),
        escape(&metric.unit_and_direction()),
        metric.name()
    )
}

pub(super) fn failures(out: &mut String, sides: &[SideFailures<'_>]) {
    let lines = crate::export::failures::failures(sides);
    if lines.is_empty() {
        return;
    }
    out.push_str("<h3>Failures</h3>\n<ul class=\"failures\">\n");
    for (prefix, failure) in lines {
        let _ = match failure {
            Failure::Run(error) => writeln!(out, "<li>{prefix}run: {}</li>", escape(error)),
            Failure::Samples(group) => writeln!(
                out,
                "<li>{prefix}{} trial {}: {}</li>",
                group.metric_list(|m| format!("<code>{m}</code>")),
                group.trial,
                escape(group.error)
            ),
        };
    }
    out.push_str("</ul>\n");
}

/// A chart in a `<figure>` with a tooltip (`<title>`) and a caption; a chart that
/// could not be drawn is replaced by the reason.
pub(super) fn figure(
    out: &mut String,
    id: &str,
    title: &str,
    svg: Result<String, charts::ChartError>,
    caption: &str,
) {
    let _ = writeln!(out, "<figure id=\"{id}\">");
    match svg {
        Ok(svg) => {
            // The chart's own tooltip: the first child of the <svg> element.
            let title = format!("<title>{}</title>", escape(title));
            match svg.find('>') {
                Some(open) => {
                    out.push_str(&svg[..=open]);
                    out.push_str(&title);
                    out.push_str(&svg[open + 1..]);
                }
                None => out.push_str(&svg),
            }
        }
        Err(error) => {
            let _ = writeln!(out, "<p class=\"none\">{}</p>", escape(&error.to_string()));
        }
    }
    let _ = writeln!(out, "<figcaption>{caption}</figcaption>\n</figure>");
}

pub(super) fn legend(out: &mut String, entries: &[String]) {
    out.push_str("<div class=\"legend\">");
    for (index, entry) in entries.iter().enumerate() {
        let _ = write!(
            out,
            "<span><span class=\"swatch\" style=\"background:{}\"></span>{}</span>",
            charts::css_color(index),
            escape(entry)
        );
    }
    out.push_str("</div>\n");
}

pub(super) fn glossary(out: &mut String, metrics: &[Metric]) {
    if metrics.is_empty() {
        return;
    }
    out.push_str(
        "<section id=\"glossary\"><h2>What the metrics mean</h2>\n<dl class=\"glossary\">\n",
    );
    for metric in Metric::ALL.into_iter().filter(|m| metrics.contains(m)) {
        let _ = writeln!(
            out,
            "<dt><code>{}</code> <span class=\"note\">({})</span></dt><dd>{}</dd>",
            metric.name(),
            escape(&metric.unit_and_direction()),
            escape(metric.description())
        );
    }
    out.push_str("</dl>\n</section>\n");
}

/// `text` reduced to letters, digits and dashes, for an element id.
pub(super) fn css_id(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_text_and_attributes() {
        assert_eq!(
            escape(r#"<script>alert("x") & 'y'</script>"#),
            "&lt;script&gt;alert(&quot;x&quot;) &amp; &#39;y&#39;&lt;/script&gt;"
        );
    }

    #[test]
    fn ids_are_tame() {
        assert_eq!(css_id("ui"), "ui");
        assert_eq!(css_id("a\"b c"), "a-b-c");
    }
}
