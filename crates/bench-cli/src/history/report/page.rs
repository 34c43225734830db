//! `clibench history report --format html`: one offline page with a trend chart per
//! metric and series, each point's interval drawn, change points marked and listed.

use crate::history::change_points::find::ChangePoint;
use crate::history::report::render::{change_line, heading};
use crate::history::series::points::Series;
use bench_core::export::charts::{ChartError, TrendPoint, trend};
use bench_core::export::html::{escape, page};
use std::fmt::Write;

/// The page for `series`, each with its change points.
pub fn html(series: &[(Series, Vec<ChangePoint>)]) -> Result<String, ChartError> {
    let mut body = String::from("<h1>clibench history</h1>\n");
    if series.is_empty() {
        body.push_str("<p class=\"none\">The store holds no series for this choice.</p>\n");
    }
    let _ = writeln!(
        body,
        "<p class=\"note\">One point per stored result: the median of its trials, with a \
         distribution-free 95% interval for it (the whole range below 6 trials). A red \
         line marks a change point (the largest t over the cuts, with a permutation test); \
         testbeds are never mixed.</p>"
    );
    for (one, changes) in series {
        let points: Vec<TrendPoint> = one
            .points
            .iter()
            .map(|point| TrendPoint {
                median: point.median,
                low: point.low,
                high: point.high,
            })
            .collect();
        let indices: Vec<usize> = changes.iter().map(|change| change.index).collect();
        let svg = trend(&points, &indices, one.metric.unit())?;
        let _ = writeln!(
            body,
            "<section><h2>{}</h2>\n<figure>{svg}<figcaption>{} point(s), first {}, last {}</figcaption></figure>",
            escape(&heading(one)),
            one.points.len(),
            escape(one.points.first().map_or("", |p| p.label.as_str())),
            escape(one.points.last().map_or("", |p| p.label.as_str())),
        );
        if changes.is_empty() {
            body.push_str("<p class=\"none\">No change point.</p>\n");
        } else {
            body.push_str("<ul class=\"changes\">\n");
            for change in changes {
                let _ = writeln!(body, "<li>{}</li>", escape(&change_line(one, change)));
            }
            body.push_str("</ul>\n");
        }
        body.push_str("</section>\n");
    }
    Ok(page("clibench history", &body))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::series::points::Point;
    use crate::history::store::record::Testbed;
    use bench_core::Metric;

    #[test]
    fn text_from_a_store_is_escaped_on_the_page() {
        let point = |label: &str, median: f64| Point {
            id: 1,
            label: label.into(),
            revision: label.into(),
            started_unix_ms: None,
            load_average: None,
            n: 1,
            median,
            low: median,
            high: median,
        };
        let series = Series {
            metric: Metric::Cold,
            target: "<script>alert(1)</script>".into(),
            branch: "main".into(),
            testbed: Testbed {
                cpu: "cpu".into(),
                cores: 2,
                memory_bytes: 1 << 30,
                kernel: "6.1".into(),
            },
            duet: true,
            points: vec![point("<b>a", 0.4), point("b", 0.5)],
        };
        let change = ChangePoint {
            index: 1,
            p_value: 0.001,
            change: 0.25,
            low: 0.2,
            high: 0.3,
        };
        let page = html(&[(series, vec![change])]).unwrap();
        assert!(!page.contains("<script>alert"));
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(page.contains("&lt;b&gt;a -&gt; b"));
    }
}
