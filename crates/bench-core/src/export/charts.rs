//! The HTML report's charts, drawn by plotters' SVG backend into strings.
//!
//! Each function returns one `<svg>` element. plotters writes text as `<text>`
//! elements (no font file is read or embedded: the naive font only estimates label
//! widths) and escapes it, so a hostile process name cannot break out of the SVG.
//! Legends are left to the HTML around the chart, where text wraps and can carry
//! tooltips; the charts hold only data marks, so a chart's `<circle>`, `<polyline>`
//! and `<rect>` elements can be counted against the data.

use crate::units::{format_bytes, format_seconds};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

mod board;
mod frame;
mod turns;

pub use board::{RatioGroup, ratio_bars};
use frame::{
    AXIS_TEXT, Axis, ByteScale, FONT, Frame, Y_LABEL_AREA, axis_extent, decimal_labels,
    integer_label, nice_top, short_label,
};
pub use turns::{FittedLine, TurnLine, bytes_per_turn, memory_per_turn, seconds_per_turn};

/// Chart width in pixels (the SVG scales down with the page).
pub const WIDTH: u32 = 940;

/// Colours of data series, in order; the first two are cold and warm.
/// Ten, so that a board of every agent under examples/agents/ (nine) gives each its own.
pub const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(214, 39, 40),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
    RGBColor(188, 189, 34),
    RGBColor(127, 127, 127),
];

/// The colour of series `index` as CSS (`#1f77b4`), for legends beside a chart.
pub fn css_color(index: usize) -> String {
    let RGBColor(r, g, b) = PALETTE[index % PALETTE.len()];
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// A chart could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("failed to draw the chart: {0}")]
pub struct ChartError(String);

fn failed<E: std::fmt::Debug>(error: E) -> ChartError {
    ChartError(format!("{error:?}"))
}

/// One line of a memory-over-time chart: points of (milliseconds, bytes), and the
/// moment the program became ready.
#[derive(Debug, Clone)]
pub struct Line {
    /// (milliseconds since spawn, resident bytes).
    pub points: Vec<(u64, u64)>,
    /// Milliseconds since spawn when the program became ready.
    pub ready_ms: Option<u64>,
}

/// Memory over time: one `<polyline>` per line, drawn as steps (a sample's value holds
/// until the next sample: nothing is known in between, and a slope would invent values),
/// one hollow `<circle>` per ready moment.
pub fn memory_over_time(lines: &[Line]) -> Result<String, ChartError> {
    let max_ms = lines
        .iter()
        .flat_map(|line| line.points.iter().map(|p| p.0))
        .max()
        .unwrap_or(0)
        .max(1);
    let max_bytes = lines
        .iter()
        .flat_map(|line| line.points.iter().map(|p| p.1))
        .max()
        .unwrap_or(0);
    let scale = ByteScale::for_max(max_bytes as f64);
    let frame = Frame {
        height: 300,
        y_label_area: Y_LABEL_AREA,
        x: Axis::values(
            0.0..max_ms as f64 / 1000.0,
            "seconds since spawn",
            decimal_labels(max_ms as f64 / 1000.0),
        ),
        y: Axis::values(
            0.0..nice_top(max_bytes as f64 / scale.divisor),
            format!("resident memory ({})", scale.unit),
            |v| format!("{v:.0}"),
        ),
    };
    frame.draw(|chart| {
        for (index, line) in lines.iter().enumerate() {
            let color = PALETTE[index % PALETTE.len()];
            let points = steps(&line.points)
                .into_iter()
                .map(|(ms, bytes)| (ms as f64 / 1000.0, bytes as f64 / scale.divisor));
            chart
                .draw_series(LineSeries::new(points, color.stroke_width(2)))
                .map_err(failed)?;
            if let Some(ready_ms) = line.ready_ms {
                // On the line: the value of the last sample at or before ready.
                if let Some(bytes) = value_at(&line.points, ready_ms) {
                    chart
                        .draw_series(std::iter::once(Circle::new(
                            (ready_ms as f64 / 1000.0, bytes / scale.divisor),
                            5,
                            color.stroke_width(2),
                        )))
                        .map_err(failed)?;
                }
            }
        }
        Ok(())
    })
}

/// The corners of the step line through `points` (milliseconds, bytes): each value
/// holds until the next sample's time, where the line rises or falls straight.
fn steps(points: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut corners = Vec::with_capacity(points.len() * 2);
    for (index, &(ms, bytes)) in points.iter().enumerate() {
        if index > 0 {
            let held = points[index - 1].1;
            corners.push((ms, held));
        }
        corners.push((ms, bytes));
    }
    corners
}

/// The step line through `points` (milliseconds, bytes) at `ms`: the value of the last
/// sample at or before it, the first sample's before the first; `None` without points.
fn value_at(points: &[(u64, u64)], ms: u64) -> Option<f64> {
    points
        .iter()
        .rev()
        .find(|p| p.0 <= ms)
        .or(points.first())
        .map(|p| p.1 as f64)
}

/// One group of a time-to-ready chart (cold or warm): its samples and their median.
#[derive(Debug, Clone)]
pub struct Trials {
    /// (trial, seconds) of each successful sample.
    pub points: Vec<(u32, f64)>,
    /// The median of the samples, seconds, as the statistics computed it
    /// ([`MetricStats::median`](crate::stats::MetricStats::median)); no line without one.
    pub median: Option<f64>,
}

/// Time to ready per trial: one filled `<circle>` per sample, and one `<polyline>`
/// per group with a median, at that median.
pub fn time_to_ready(groups: &[Trials]) -> Result<String, ChartError> {
    let points = || groups.iter().flat_map(|group| &group.points);
    let trials = points().map(|p| p.0).max().unwrap_or(0);
    let max_seconds = points().map(|p| p.1).fold(0.0, f64::max);
    let x_range = -0.5..f64::from(trials) + 0.5;
    let frame = Frame {
        height: 280,
        y_label_area: Y_LABEL_AREA,
        x: Axis {
            labels: Some((trials as usize + 1).min(20)),
            ..Axis::values(x_range.clone(), "trial", integer_label)
        },
        y: Axis::values(0.0..nice_top(max_seconds.max(1e-3)), "time to ready", |s| {
            format_seconds(*s)
        }),
    };
    frame.draw(|chart| {
        for (index, group) in groups.iter().enumerate() {
            let color = PALETTE[index % PALETTE.len()];
            if let Some(median) = group.median {
                chart
                    .draw_series(LineSeries::new(
                        [(x_range.start, median), (x_range.end, median)],
                        color.mix(0.6).stroke_width(1),
                    ))
                    .map_err(failed)?;
            }
            chart
                .draw_series(
                    group
                        .points
                        .iter()
                        .map(|&(trial, s)| Circle::new((f64::from(trial), s), 5, color.filled())),
                )
                .map_err(failed)?;
        }
        Ok(())
    })
}

/// One bar of a bar chart.
#[derive(Debug, Clone)]
pub struct Bar {
    /// The label on the category axis.
    pub label: String,
    /// The bar's length, bytes.
    pub bytes: u64,
    /// A second, narrower bar inside the first (PSS inside RSS), bytes.
    pub inner_bytes: Option<u64>,
    /// Text written at the bar's end (`+45.1 MiB`).
    pub note: Option<String>,
}

/// Which way a bar chart's bars grow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Orientation {
    /// Up from a category axis at the bottom, in category order left to right (the
    /// staircase); each note sits above its bar.
    Vertical,
    /// Right from a category axis at the left, the first category at the top (who
    /// holds the memory); each note sits after its bar.
    Horizontal,
}

/// Bars of bytes: one `<rect>` per bar and per inner bar, and each bar's note as
/// text. `value_desc` names the value axis; its unit is added.
pub fn bars(
    bars: &[Bar],
    value_desc: &str,
    orientation: Orientation,
) -> Result<String, ChartError> {
    let vertical = orientation == Orientation::Vertical;
    let max_bytes = bars.iter().map(|bar| bar.bytes).max().unwrap_or(0);
    let scale = ByteScale::for_max(max_bytes as f64);
    // Headroom for the notes: above a vertical bar, after a horizontal one.
    let headroom = if vertical { 1.12 } else { 1.2 };
    let count = bars.len().max(1);
    let labels: Vec<String> = bars.iter().map(|bar| short_label(&bar.label)).collect();
    let label_chars = labels.iter().map(|label| label.chars().count()).max();
    let mut category = Axis::categories(labels);
    let value = Axis::values(
        0.0..nice_top(max_bytes as f64 / scale.divisor * headroom),
        format!("{value_desc} ({})", scale.unit),
        |v| format!("{v:.0}"),
    );
    let frame = if vertical {
        category.range = -0.5..count as f64 - 0.5;
        Frame {
            height: 300,
            y_label_area: Y_LABEL_AREA,
            x: category,
            y: value,
        }
    } else {
        // Category 0 is drawn at the top: y runs from count-0.5 (bottom) to -0.5 (top).
        category.range = (count as f64 - 0.5)..-0.5;
        Frame {
            height: 60 + 26 * count as u32,
            y_label_area: label_chars.unwrap_or(0).max(6) as u32 * 7 + 16,
            x: value,
            y: category,
        }
    };
    let point = |category: f64, value: f64| match orientation {
        Orientation::Vertical => (category, value),
        Orientation::Horizontal => (value, category),
    };
    let note_pos = if vertical {
        Pos::new(HPos::Center, VPos::Bottom)
    } else {
        Pos::new(HPos::Left, VPos::Center)
    };
    let inner_half_width = if vertical { 0.15 } else { 0.12 };
    frame.draw(|chart| {
        for (index, bar) in bars.iter().enumerate() {
            let c = index as f64;
            let end = bar.bytes as f64 / scale.divisor;
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [point(c - 0.35, 0.0), point(c + 0.35, end)],
                    PALETTE[0].mix(0.75).filled(),
                )))
                .map_err(failed)?;
            if let Some(inner) = bar.inner_bytes {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [
                            point(c - inner_half_width, 0.0),
                            point(c + inner_half_width, inner as f64 / scale.divisor),
                        ],
                        PALETTE[3].filled(),
                    )))
                    .map_err(failed)?;
            }
            if let Some(note) = &bar.note {
                let note = if vertical {
                    note.clone()
                } else {
                    format!(" {note}")
                };
                chart
                    .draw_series(std::iter::once(Text::new(
                        note,
                        point(c, end),
                        (FONT, 15).into_font().color(&AXIS_TEXT).pos(note_pos),
                    )))
                    .map_err(failed)?;
            }
        }
        Ok(())
    })
}

/// One row of the comparison chart.
#[derive(Debug, Clone)]
pub struct Change {
    /// The metric's name.
    pub label: String,
    /// The change of the medians in percent (`+12.5`).
    pub percent: f64,
    /// The interval of the change, percent.
    pub low_percent: f64,
    /// The interval of the change, percent.
    pub high_percent: f64,
    /// The metric's noise floor in percent: changes within ±this are not counted.
    pub floor_percent: f64,
    /// Whether the change is a regression (red), an improvement (green) or neither (grey).
    pub tone: Tone,
}

/// How a change is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Worse beyond the noise floor.
    Regressed,
    /// Better beyond the noise floor.
    Improved,
    /// Within the noise floor.
    Neutral,
}

/// Dot and whisker per metric: each metric's noise floor as a grey `<rect>` band
/// (none for a floor of 0), each interval as a `<polyline>`, each change as a filled
/// `<circle>`.
pub fn changes(rows: &[Change]) -> Result<String, ChartError> {
    let extent = rows
        .iter()
        // The axis fits the largest change and the widest noise band, with a margin; an
        // interval reaching beyond is cut at the edge. Intervals of a few trials can span
        // thousands of percent and would squeeze every dot into the middle.
        .flat_map(|row| [row.percent.abs(), row.floor_percent])
        .filter(|value| value.is_finite())
        .fold(0.0, f64::max);
    let x_max = axis_extent(extent);
    let count = rows.len().max(1);
    let labels: Vec<String> = rows.iter().map(|row| short_label(&row.label)).collect();
    let frame = Frame {
        height: 70 + 28 * count as u32,
        // Room for the name and the delta: "kernel_exec -1.00 µs".
        y_label_area: 160,
        x: Axis::values(-x_max..x_max, "change, candidate vs base (%)", |v| {
            format!("{v:+.0}%")
        }),
        y: Axis {
            range: (count as f64 - 0.5)..-0.5,
            ..Axis::categories(labels)
        },
    };
    frame.draw(|chart| {
        for (index, row) in rows.iter().enumerate() {
            let y = index as f64;
            if row.floor_percent > 0.0 {
                let floor = row.floor_percent.min(x_max);
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(-floor, y - 0.42), (floor, y + 0.42)],
                        RGBColor(120, 120, 120).mix(0.15).filled(),
                    )))
                    .map_err(failed)?;
            }
            let color = match row.tone {
                Tone::Regressed => RGBColor(200, 40, 40),
                Tone::Improved => RGBColor(30, 140, 60),
                Tone::Neutral => RGBColor(90, 90, 90),
            };
            let clamp = |value: f64| value.clamp(-x_max, x_max);
            chart
                .draw_series(LineSeries::new(
                    [(clamp(row.low_percent), y), (clamp(row.high_percent), y)],
                    color.stroke_width(2),
                ))
                .map_err(failed)?;
            chart
                .draw_series(std::iter::once(Circle::new(
                    (clamp(row.percent), y),
                    5,
                    color.filled(),
                )))
                .map_err(failed)?;
        }
        Ok(())
    })
}

/// One moment of a turn's timeline.
#[derive(Debug, Clone)]
pub struct Moment {
    /// What happened (`first text visible`).
    pub label: String,
    /// Seconds since Enter.
    pub seconds: f64,
}

/// One turn as a horizontal timeline: a row per moment in the order given (the first
/// at the top) with its label on the left, a filled `<circle>` at its time, a
/// `<polyline>` from the previous moment's time (the wait between the two) and the
/// time as text after the dot.
pub fn timeline(moments: &[Moment]) -> Result<String, ChartError> {
    let count = moments.len().max(1);
    let max_seconds = moments.iter().map(|m| m.seconds).fold(0.0, f64::max);
    let labels: Vec<String> = moments.iter().map(|m| short_label(&m.label)).collect();
    let label_chars = labels.iter().map(|label| label.chars().count()).max();
    let mut rows = Axis::categories(labels);
    rows.range = (count as f64 - 0.5)..-0.5;
    let frame = Frame {
        height: 60 + 26 * count as u32,
        y_label_area: label_chars.unwrap_or(0).max(6) as u32 * 7 + 16,
        // Headroom after the last dot for its time.
        x: Axis::values(
            0.0..nice_top(max_seconds.max(1e-4) * 1.15),
            "seconds since Enter",
            |s| format_seconds(*s),
        ),
        y: rows,
    };
    frame.draw(|chart| {
        let mut previous = 0.0;
        for (index, moment) in moments.iter().enumerate() {
            let y = index as f64;
            let color = PALETTE[index % PALETTE.len()];
            chart
                .draw_series(LineSeries::new(
                    [(previous, y), (moment.seconds, y)],
                    color.mix(0.5).stroke_width(6),
                ))
                .map_err(failed)?;
            chart
                .draw_series(std::iter::once(Circle::new(
                    (moment.seconds, y),
                    5,
                    color.filled(),
                )))
                .map_err(failed)?;
            // Ten pixels right of the dot: SVG collapses leading spaces, and the text
            // would start under the dot.
            let time = EmptyElement::at((moment.seconds, y))
                + Text::new(
                    format_seconds(moment.seconds),
                    (10, 0),
                    (FONT, 14)
                        .into_font()
                        .color(&AXIS_TEXT)
                        .pos(Pos::new(HPos::Left, VPos::Center)),
                );
            chart.draw_series(std::iter::once(time)).map_err(failed)?;
            previous = moment.seconds;
        }
        Ok(())
    })
}

/// One point of a trend chart: a build's median and the interval for it, in the
/// metric's base unit.
#[derive(Debug, Clone, Copy)]
pub struct TrendPoint {
    /// The build's median.
    pub median: f64,
    /// The interval's lower end.
    pub low: f64,
    /// The interval's upper end.
    pub high: f64,
}

/// A metric over a series of builds (`clibench history report`): one `<polyline>`
/// through the medians, one `<polyline>` whisker per point's interval, one filled
/// `<circle>` per point, and one red `<polyline>` across the plot before each change
/// point (`changes` holds the index of the first point after each change).
pub fn trend(
    points: &[TrendPoint],
    changes: &[usize],
    unit: crate::units::Unit,
) -> Result<String, ChartError> {
    let count = points.len().max(1);
    let top = points
        .iter()
        .flat_map(|p| [p.median, p.high])
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let scale = match unit {
        crate::units::Unit::Bytes => ByteScale::for_max(top),
        _ => ByteScale {
            divisor: 1.0,
            unit: "",
        },
    };
    let y_top = nice_top(top / scale.divisor);
    let desc = match unit {
        crate::units::Unit::Bytes => format!("median ({})", scale.unit),
        _ => "median".to_string(),
    };
    let x_range = -0.5..count as f64 - 0.5;
    let frame = Frame {
        height: 260,
        y_label_area: Y_LABEL_AREA,
        x: Axis {
            labels: Some(count.min(20)),
            ..Axis::values(x_range, "point (oldest first, from 1)", |v| {
                integer_label(&(v + 1.0))
            })
        },
        y: Axis::values(0.0..y_top, desc, move |v| match unit {
            crate::units::Unit::Bytes => format!("{v:.0}"),
            _ => unit.format(*v),
        }),
    };
    let color = PALETTE[0];
    frame.draw(|chart| {
        for &change in changes {
            let x = change as f64 - 0.5;
            chart
                .draw_series(LineSeries::new(
                    [(x, 0.0), (x, y_top)],
                    RGBColor(200, 40, 40).stroke_width(2),
                ))
                .map_err(failed)?;
        }
        let y = |v: f64| v / scale.divisor;
        chart
            .draw_series(LineSeries::new(
                points
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (i as f64, y(p.median))),
                color.mix(0.5).stroke_width(1),
            ))
            .map_err(failed)?;
        for (i, p) in points.iter().enumerate() {
            chart
                .draw_series(LineSeries::new(
                    [(i as f64, y(p.low)), (i as f64, y(p.high))],
                    color.mix(0.6).stroke_width(1),
                ))
                .map_err(failed)?;
        }
        chart
            .draw_series(
                points
                    .iter()
                    .enumerate()
                    .map(|(i, p)| Circle::new((i as f64, y(p.median)), 3, color.filled())),
            )
            .map_err(failed)?;
        Ok(())
    })
}

/// `bytes` as a signed delta for a bar's note: `+45.1 MiB`, `-2.0 KiB`.
pub fn signed_bytes(bytes: i64) -> String {
    let text = format_bytes(bytes as f64);
    if bytes >= 0 { format!("+{text}") } else { text }
}

#[cfg(test)]
mod tests;
