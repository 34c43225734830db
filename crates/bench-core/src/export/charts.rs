//! The HTML report's charts, drawn by plotters' SVG backend into strings.
//!
//! Each function returns one `<svg>` element. plotters writes text as `<text>`
//! elements (no font file is read or embedded: the naive font only estimates label
//! widths) and escapes it, so a hostile process name cannot break out of the SVG.
//! Legends are left to the HTML around the chart, where text wraps and can carry
//! tooltips; the charts hold only data marks, so a chart's `<circle>`, `<polyline>`
//! and `<rect>` elements can be counted against the data.

use crate::units::{format_bytes, format_seconds};
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Chart width in pixels (the SVG scales down with the page).
pub const WIDTH: u32 = 940;

/// Colours of data series, in order; the first two are cold and warm.
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(214, 39, 40),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

const GRID: RGBColor = RGBColor(222, 222, 222);
const FAINT: RGBColor = RGBColor(246, 246, 246);
/// The longest category label drawn, in characters; longer ones end in `…`.
const MAX_LABEL_CHARS: usize = 32;
const AXIS_TEXT: RGBColor = RGBColor(60, 60, 60);
const FONT: &str = "sans-serif";

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

/// One trial's values per turn in a per-turn chart.
#[derive(Debug, Clone)]
pub struct TurnLine {
    /// (turn from 1, value): seconds, or bytes in [`memory_per_turn`].
    pub points: Vec<(u32, f64)>,
    /// The least-squares line fitted to the points after the warm-up, drawn across the
    /// turns it was fitted over; `None` draws none.
    pub fit: Option<FittedLine>,
}

/// A straight line over a range of turns: `intercept + slope × turn`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FittedLine {
    /// The first turn fitted.
    pub from: u32,
    /// The last turn fitted.
    pub to: u32,
    /// The value at turn 0.
    pub intercept: f64,
    /// The change per turn.
    pub slope: f64,
}

impl FittedLine {
    /// The least-squares line through `points` after turn `warmup` (the series' fit
    /// in `trend::fit`, with the intercept it implies); `None` with fewer than two turns.
    pub fn through(points: &[(u32, f64)], warmup: u32) -> Option<FittedLine> {
        let fitted: Vec<(f64, f64)> = points
            .iter()
            .filter(|(turn, _)| *turn > warmup)
            .map(|&(turn, value)| (f64::from(turn), value))
            .collect();
        let fit = crate::trend::fit(&fitted)?;
        let n = fitted.len() as f64;
        let mean = |pick: fn(&(f64, f64)) -> f64| fitted.iter().map(pick).sum::<f64>() / n;
        let (mean_turn, mean_value) = (mean(|p| p.0), mean(|p| p.1));
        Some(FittedLine {
            from: points.iter().map(|p| p.0).filter(|&t| t > warmup).min()?,
            to: points.iter().map(|p| p.0).max()?,
            intercept: mean_value - fit.slope * mean_turn,
            slope: fit.slope,
        })
    }

    fn at(&self, turn: u32) -> f64 {
        self.intercept + self.slope * f64::from(turn)
    }
}

/// Up to this many turns the turn axis labels every turn; beyond, the labels would
/// overlap (a 100-turn session printed "1234567891011..."), so it labels round turns.
const LABELLED_TURNS: u32 = 20;

/// The turn axis and where turn `t` sits on it (`t − offset`): a category per turn
/// (`1` at position 0) up to [`LABELLED_TURNS`], else a numeric axis whose positions are
/// the turns, labelled at round numbers (10, 20, ...).
fn turn_axis<'f>(turns: u32) -> (Axis<'f>, f64) {
    let turns = turns.max(1);
    if turns > LABELLED_TURNS {
        let mut axis = Axis::values(0.5..f64::from(turns) + 0.5, "turn", integer_label);
        axis.grid = false;
        return (axis, 0.0);
    }
    let mut axis = Axis::categories((1..=turns).map(|t| t.to_string()).collect());
    axis.range = -0.5..f64::from(turns) - 0.5;
    axis.desc = Some("turn".to_string());
    (axis, 1.0)
}

/// Draws each line's fitted line, dark and thin over the trial's colour.
fn fitted_lines(
    chart: &mut Chart<'_, '_>,
    lines: &[TurnLine],
    offset: f64,
    divisor: f64,
) -> Result<(), ChartError> {
    for (index, line) in lines.iter().enumerate() {
        let Some(fit) = line.fit else { continue };
        let color = PALETTE[index % PALETTE.len()];
        let ends =
            [fit.from, fit.to].map(|turn| (f64::from(turn) - offset, fit.at(turn) / divisor));
        chart
            .draw_series(LineSeries::new(ends, BLACK.mix(0.55).stroke_width(3)))
            .map_err(failed)?;
        chart
            .draw_series(LineSeries::new(ends, color.stroke_width(1)))
            .map_err(failed)?;
    }
    Ok(())
}

/// Seconds per turn: one `<polyline>` per line through its turns and one filled
/// `<circle>` per value. `value_desc` names the value axis (`first_token`).
pub fn seconds_per_turn(lines: &[TurnLine], value_desc: &str) -> Result<String, ChartError> {
    dots_per_turn(lines, value_desc, 1e-4, format_seconds)
}

/// [`seconds_per_turn`] for bytes (a checkpoint's bytes written per key).
pub fn bytes_per_turn(lines: &[TurnLine], value_desc: &str) -> Result<String, ChartError> {
    dots_per_turn(lines, value_desc, 1.0, format_bytes)
}

fn dots_per_turn(
    lines: &[TurnLine],
    value_desc: &str,
    least_top: f64,
    format: fn(f64) -> String,
) -> Result<String, ChartError> {
    let points = || lines.iter().flat_map(|line| &line.points);
    let turns = points().map(|p| p.0).max().unwrap_or(1);
    let max_value = points().map(|p| p.1).fold(0.0, f64::max);
    let (x, offset) = turn_axis(turns);
    let frame = Frame {
        height: 220,
        // Room for "10.0 ms" beside the axis title.
        y_label_area: Y_LABEL_AREA + 12,
        x,
        y: Axis::values(
            0.0..nice_top(max_value.max(least_top)),
            value_desc,
            move |v| format(*v),
        ),
    };
    let at = |turn: u32| f64::from(turn) - offset;
    frame.draw(|chart| {
        for (index, line) in lines.iter().enumerate() {
            let color = PALETTE[index % PALETTE.len()];
            let (width, radius) = layered(index, lines.len());
            chart
                .draw_series(LineSeries::new(
                    line.points.iter().map(|&(turn, s)| (at(turn), s)),
                    color.mix(0.8).stroke_width(width),
                ))
                .map_err(failed)?;
            chart
                .draw_series(
                    line.points
                        .iter()
                        .map(|&(turn, s)| Circle::new((at(turn), s), radius, color.filled())),
                )
                .map_err(failed)?;
        }
        fitted_lines(chart, lines, offset, 1.0)
    })
}

/// Memory after each turn: one `<polyline>` per line drawn as steps (a turn's value
/// holds across its column, then the line rises or falls to the next turn's), one
/// hollow `<circle>` per value. `value_desc` names the value axis; its unit is added.
pub fn memory_per_turn(lines: &[TurnLine], value_desc: &str) -> Result<String, ChartError> {
    let points = || lines.iter().flat_map(|line| &line.points);
    let turns = points().map(|p| p.0).max().unwrap_or(1);
    let max_bytes = points().map(|p| p.1).fold(0.0, f64::max);
    let scale = ByteScale::for_max(max_bytes);
    let (x, offset) = turn_axis(turns);
    let frame = Frame {
        height: 280,
        y_label_area: Y_LABEL_AREA,
        x,
        y: Axis::values(
            0.0..nice_top(max_bytes / scale.divisor),
            format!("{value_desc} ({})", scale.unit),
            |v| format!("{v:.0}"),
        ),
    };
    frame.draw(|chart| {
        for (index, line) in lines.iter().enumerate() {
            let color = PALETTE[index % PALETTE.len()];
            let (width, radius) = layered(index, lines.len());
            let corners = turn_steps(&line.points)
                .into_iter()
                .map(|(x, bytes)| (x + 1.0 - offset, bytes / scale.divisor));
            chart
                .draw_series(LineSeries::new(corners, color.stroke_width(width)))
                .map_err(failed)?;
            chart
                .draw_series(line.points.iter().map(|&(turn, bytes)| {
                    Circle::new(
                        (f64::from(turn) - offset, bytes / scale.divisor),
                        radius,
                        color.stroke_width(2),
                    )
                }))
                .map_err(failed)?;
        }
        fitted_lines(chart, lines, offset, scale.divisor)
    })
}

/// The stroke width and dot radius, in pixels, of line `index` of `count` in a per-turn
/// chart. Trials often take the same value, and the line drawn last would hide the
/// others: earlier lines are drawn wider with larger dots, so where they coincide each
/// colour still shows, as a band beside the line or a ring around the dot drawn after it.
/// Past four lines the rest take the narrowest width.
fn layered(index: usize, count: usize) -> (u32, i32) {
    let layers = count.clamp(1, 4);
    let depth = (layers - 1 - index.min(layers - 1)) as u32;
    (2 + 2 * depth, 4 + 2 * depth as i32)
}

/// The corners of the step line through per-turn `points` on the turn axis (turn 1 at
/// 0): each value spans its turn's column, half a turn either side, and the line rises
/// or falls straight where two columns meet.
fn turn_steps(points: &[(u32, f64)]) -> Vec<(f64, f64)> {
    let mut corners = Vec::with_capacity(points.len() * 2);
    for &(turn, value) in points {
        let x = f64::from(turn) - 1.0;
        corners.push((x - 0.5, value));
        corners.push((x + 0.5, value));
    }
    corners
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
    /// The median.
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

type Area<'b> = DrawingArea<SVGBackend<'b>, Shift>;
type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// One axis of a chart: its range, the room for its labels, and how they read.
struct Axis<'f> {
    range: std::ops::Range<f64>,
    desc: Option<String>,
    /// How many labels plotters places; its default when `None`.
    labels: Option<usize>,
    format: Box<dyn Fn(&f64) -> String + 'f>,
    /// Whether grid lines cross the plot at this axis's labels.
    grid: bool,
}

impl<'f> Axis<'f> {
    /// An axis of values, with a title and grid lines.
    fn values(
        range: std::ops::Range<f64>,
        desc: impl Into<String>,
        format: impl Fn(&f64) -> String + 'f,
    ) -> Axis<'f> {
        Axis {
            range,
            desc: Some(desc.into()),
            labels: None,
            format: Box::new(format),
            grid: true,
        }
    }

    /// An axis of categories, `labels[i]` at position `i`: two label slots per
    /// category so that only whole positions get one, and no grid lines. The caller
    /// sets the range, which decides the categories' direction.
    fn categories(labels: Vec<String>) -> Axis<'f> {
        Axis {
            range: 0.0..1.0,
            desc: None,
            labels: Some(labels.len().max(1) * 2 + 1),
            format: Box::new(move |position| category_label(&labels, *position)),
            grid: false,
        }
    }
}

/// A chart's height and axes. The axes and the marks are drawn in two passes over
/// the same frame, so they line up.
struct Frame<'f> {
    height: u32,
    /// Pixels left of the plot for the y axis's labels and title; the x axis has
    /// [`X_LABEL_AREA`] below it.
    y_label_area: u32,
    x: Axis<'f>,
    y: Axis<'f>,
}

/// Pixels below the plot for the x axis's labels and title.
const X_LABEL_AREA: u32 = 38;
/// Pixels left of the plot for a y axis of numbers and its title.
const Y_LABEL_AREA: u32 = 70;

impl Frame<'_> {
    fn on<'a, 'b>(&self, root: &'a Area<'b>) -> Result<Chart<'a, 'b>, ChartError> {
        ChartBuilder::on(root)
            .margin(12)
            // Room for the last x label, which is centred on the axis's end.
            .margin_right(30)
            .x_label_area_size(X_LABEL_AREA)
            .y_label_area_size(self.y_label_area)
            .build_cartesian_2d(self.x.range.clone(), self.y.range.clone())
            .map_err(failed)
    }

    /// The grid, the labels and the axis titles, in the one style of every chart.
    fn axes(&self, root: &Area<'_>) -> Result<(), ChartError> {
        let mut chart = self.on(root)?;
        let mut mesh = chart.configure_mesh();
        mesh.light_line_style(FAINT)
            .bold_line_style(GRID)
            .x_label_formatter(&self.x.format)
            .y_label_formatter(&self.y.format)
            .label_style((FONT, 15).into_font().color(&AXIS_TEXT))
            .axis_desc_style((FONT, 16).into_font().color(&AXIS_TEXT));
        if !self.x.grid {
            mesh.disable_x_mesh();
        }
        if !self.y.grid {
            mesh.disable_y_mesh();
        }
        if let Some(labels) = self.x.labels {
            mesh.x_labels(labels);
        }
        if let Some(labels) = self.y.labels {
            mesh.y_labels(labels);
        }
        if let Some(desc) = &self.x.desc {
            mesh.x_desc(desc);
        }
        if let Some(desc) = &self.y.desc {
            mesh.y_desc(desc);
        }
        mesh.draw().map_err(failed)
    }

    /// The axes, then the data marks in a `<g class="marks">` group, so that a
    /// reader (or a test) can tell the data from the grid.
    fn draw(
        &self,
        marks: impl FnOnce(&mut Chart<'_, '_>) -> Result<(), ChartError>,
    ) -> Result<String, ChartError> {
        let axes = svg(WIDTH, self.height, |root| self.axes(root))?;
        let marks = svg(WIDTH, self.height, |root| marks(&mut self.on(root)?))?;
        let inner = marks
            .find('>')
            .and_then(|open| Some(&marks[open + 1..marks.rfind("</svg>")?]))
            .unwrap_or_default();
        let end = axes.rfind("</svg>").unwrap_or(axes.len());
        Ok(format!(
            "{}<g class=\"marks\">{inner}</g>\n</svg>\n",
            &axes[..end]
        ))
    }
}

/// Draws into a fresh SVG string of `width` × `height`.
fn svg(
    width: u32,
    height: u32,
    paint: impl FnOnce(&Area<'_>) -> Result<(), ChartError>,
) -> Result<String, ChartError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        paint(&root)?;
        root.present().map_err(failed)?;
    }
    Ok(svg)
}

/// The label of category `index` at an axis position, empty between categories.
fn category_label(labels: &[String], position: f64) -> String {
    let index = position.round();
    if (position - index).abs() > 1e-6 || index < 0.0 {
        return String::new();
    }
    labels.get(index as usize).cloned().unwrap_or_default()
}

/// `label` cut to [`MAX_LABEL_CHARS`] characters, ending in `…` when cut.
fn short_label(label: &str) -> String {
    if label.chars().count() <= MAX_LABEL_CHARS {
        return label.to_string();
    }
    let mut short: String = label.chars().take(MAX_LABEL_CHARS - 1).collect();
    short.push('…');
    short
}

/// Labels for an axis of decimals from 0 to `span`, with as many decimals as its steps
/// need to differ and none to spare: plotters places up to about 20 labels at round steps
/// (1, 2 or 5 times a power of ten, or halves of them), so one decimal more than the step
/// of 20 labels suffices, and trailing zeros go (`0.025`, `0.05`, `0.1`, `2`).
fn decimal_labels(span: f64) -> impl Fn(&f64) -> String {
    let step = span / 20.0;
    let decimals = if step > 0.0 && step.is_finite() {
        (-step.log10()).ceil().max(0.0) as usize + 1
    } else {
        1
    };
    move |value| {
        let text = format!("{value:.decimals$}");
        let text = if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.')
        } else {
            &text
        };
        // "-0" would read as a different label from "0".
        if text == "-0" {
            "0".to_owned()
        } else {
            text.to_owned()
        }
    }
}

fn integer_label(value: &f64) -> String {
    if (value - value.round()).abs() < 1e-6 && *value >= 0.0 {
        format!("{}", value.round() as i64)
    } else {
        String::new()
    }
}

/// A round axis top a little above `max`, so the largest mark is not on the edge.
/// The half-width of a changes axis for a largest change of `extent` percent: rounded
/// up to a round number above it (the margin [`nice_top`] keeps), at least 1%.
fn axis_extent(extent: f64) -> f64 {
    nice_top(extent).max(1.0)
}

fn nice_top(max: f64) -> f64 {
    if !max.is_finite() || max <= 0.0 {
        return 1.0;
    }
    let padded = max * 1.08;
    let step = 10f64.powf(padded.log10().floor());
    (padded / step).ceil() * step
}

/// The binary unit an axis of bytes is drawn in.
struct ByteScale {
    divisor: f64,
    unit: &'static str,
}

impl ByteScale {
    fn for_max(max_bytes: f64) -> ByteScale {
        const KIB: f64 = 1024.0;
        let (divisor, unit) = if max_bytes >= 4.0 * KIB * KIB * KIB {
            (KIB * KIB * KIB, "GiB")
        } else if max_bytes >= 4.0 * KIB * KIB {
            (KIB * KIB, "MiB")
        } else {
            (KIB, "KiB")
        };
        ByteScale { divisor, unit }
    }
}

/// `bytes` as a signed delta for a bar's note: `+45.1 MiB`, `-2.0 KiB`.
pub fn signed_bytes(bytes: i64) -> String {
    let text = format_bytes(bytes as f64);
    if bytes >= 0 { format!("+{text}") } else { text }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How many `tag` elements the chart's data marks have.
    fn count(svg: &str, tag: &str) -> usize {
        let marks = &svg[svg.find("<g class=\"marks\">").expect("a marks group")..];
        marks.matches(&format!("<{tag} ")).count()
    }

    #[test]
    fn a_trend_has_a_dot_and_a_whisker_per_point_and_a_line_per_change() {
        let points: Vec<TrendPoint> = [0.40, 0.41, 0.52, 0.53]
            .iter()
            .map(|&median| TrendPoint {
                median,
                low: median - 0.01,
                high: median + 0.01,
            })
            .collect();
        let svg = trend(&points, &[2], crate::units::Unit::Seconds).unwrap();
        assert_eq!(count(&svg, "circle"), 4);
        // The median line, four whiskers and one change line.
        assert_eq!(count(&svg, "polyline"), 6);
    }

    #[test]
    fn time_to_ready_has_a_dot_per_trial_and_a_median_line_per_group() {
        let cold = Trials {
            points: vec![(0, 0.41), (1, 0.39), (2, 0.44)],
            median: Some(0.41),
        };
        let warm = Trials {
            points: vec![(0, 0.21), (2, 0.2)],
            median: Some(0.205),
        };
        let svg = time_to_ready(&[cold.clone(), warm.clone()]).unwrap();
        assert_eq!(count(&svg, "circle"), 5);
        assert_eq!(count(&svg, "polyline"), 2);
        // The line is drawn at the median it is given, not one it computes.
        let without = time_to_ready(&[
            cold,
            Trials {
                median: None,
                ..warm
            },
        ])
        .unwrap();
        assert_eq!(count(&without, "circle"), 5);
        assert_eq!(count(&without, "polyline"), 1);
        assert!(svg.contains("time to ready\n</text>"), "{svg}");
        assert!(svg.contains("trial\n</text>"));
    }

    #[test]
    fn memory_lines_and_ready_marks_are_drawn() {
        let line = |ready| Line {
            points: vec![(0, 1 << 20), (100, 50 << 20), (200, 60 << 20)],
            ready_ms: ready,
        };
        let svg = memory_over_time(&[line(Some(120)), line(None)]).unwrap();
        assert_eq!(count(&svg, "polyline"), 2);
        assert_eq!(count(&svg, "circle"), 1);
        assert!(svg.contains("resident memory (MiB)"));
    }

    /// The labels under the x axis of `svg`, left to right.
    fn x_labels(svg: &str) -> Vec<String> {
        svg.split("<text ")
            .skip(1)
            .filter(|text| text.contains("dy=\"0.76em\"") && !text.contains("rotate("))
            .filter_map(|text| Some(text.split_once('>')?.1.split_once("</text>")?.0.trim()))
            .filter(|label| !label.is_empty() && *label != "seconds since spawn")
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn memory_time_labels_are_distinct_whatever_the_span() {
        for span_ms in [40, 90, 250, 330, 700, 1_300, 2_600, 9_000, 45_000, 130_000] {
            let line = Line {
                points: vec![(0, 1 << 20), (span_ms, 2 << 20)],
                ready_ms: None,
            };
            let labels = x_labels(&memory_over_time(&[line]).unwrap());
            assert!(labels.len() >= 3, "{span_ms} ms: {labels:?}");
            let mut distinct = labels.clone();
            distinct.dedup();
            assert_eq!(distinct, labels, "{span_ms} ms: a label repeats");
        }
    }

    #[test]
    fn labels_are_escaped_by_the_svg_backend() {
        let drawn = [Bar {
            label: "<script>alert(1)</script>".into(),
            bytes: 10 << 20,
            inner_bytes: Some(5 << 20),
            note: Some("a & b".into()),
        }];
        let svg = bars(&drawn, "memory", Orientation::Horizontal).unwrap();
        assert!(!svg.contains("<script>"));
        assert!(svg.contains("&lt;script&gt;"));
        assert!(svg.contains("a &amp; b"));
        assert_eq!(count(&svg, "rect"), 2, "{svg}");
    }

    #[test]
    fn bars_grow_along_the_value_axis_in_either_orientation() {
        let drawn: Vec<Bar> = [(10u64, Some(5u64)), (20, None), (40, Some(30))]
            .into_iter()
            .enumerate()
            .map(|(index, (mib, inner))| Bar {
                label: format!("bar {index}"),
                bytes: mib << 20,
                inner_bytes: inner.map(|mib| mib << 20),
                note: Some(format!("note {index}")),
            })
            .collect();
        for (orientation, desc) in [
            (Orientation::Vertical, "resident memory"),
            (Orientation::Horizontal, "memory"),
        ] {
            let svg = bars(&drawn, desc, orientation).unwrap();
            assert_eq!(count(&svg, "rect"), 5, "{orientation:?}: {svg}");
            assert_eq!(count(&svg, "text"), 3, "{orientation:?}: {svg}");
            assert!(svg.contains(&format!("{desc} (MiB)")), "{orientation:?}");
            assert!(
                svg.contains("bar 2"),
                "{orientation:?}: the category labels"
            );
        }
    }

    #[test]
    fn the_ready_mark_sits_on_the_step_line() {
        let points = [(10, 0), (100, 100), (200, 300)];
        assert_eq!(value_at(&points, 150), Some(100.0));
        assert_eq!(value_at(&points, 100), Some(100.0));
        assert_eq!(value_at(&points, 199), Some(100.0));
        assert_eq!(value_at(&points, 500), Some(300.0));
        assert_eq!(value_at(&points, 0), Some(0.0));
        assert_eq!(value_at(&[], 5), None);
    }

    #[test]
    fn a_value_holds_until_the_next_sample() {
        let points = [(0, 4), (100, 11), (250, 7)];
        assert_eq!(
            steps(&points),
            [(0, 4), (100, 4), (100, 11), (250, 11), (250, 7)]
        );
        assert_eq!(steps(&[(5, 1)]), [(5, 1)]);
        assert!(steps(&[]).is_empty());
    }

    #[test]
    fn the_changes_axis_fits_the_largest_change_not_the_widest_interval() {
        let row = Change {
            label: "cold".into(),
            percent: 430.0,
            low_percent: -90.0,
            high_percent: 1900.0,
            floor_percent: 3.0,
            tone: Tone::Regressed,
        };
        assert_eq!(axis_extent(430.0), 500.0);
        assert_eq!(axis_extent(8.0), 9.0);
        assert_eq!(axis_extent(0.0), 1.0);
        let svg = changes(&[row]).unwrap();
        assert!(!svg.contains("1000%") && !svg.contains("2000%"), "{svg}");
    }

    #[test]
    fn a_turn_holds_its_column_and_the_line_steps_between_turns() {
        assert_eq!(
            turn_steps(&[(1, 4.0), (2, 9.0)]),
            [(-0.5, 4.0), (0.5, 4.0), (0.5, 9.0), (1.5, 9.0)]
        );
        let line = TurnLine {
            points: vec![(1, 10e6), (2, 12e6), (3, 14e6)],
            fit: None,
        };
        let svg = memory_per_turn(&[line.clone(), line], "proportional memory").unwrap();
        assert_eq!(count(&svg, "polyline"), 2);
        assert_eq!(count(&svg, "circle"), 6);
        assert!(svg.contains("proportional memory (MiB)"), "{svg}");
    }

    #[test]
    fn seconds_per_turn_has_a_line_per_trial_and_a_dot_per_turn() {
        let lines = [
            TurnLine {
                points: vec![(1, 0.5), (2, 0.7), (3, 0.6)],
                fit: None,
            },
            TurnLine {
                points: vec![(1, 0.4), (3, 0.9)],
                fit: None,
            },
        ];
        let svg = seconds_per_turn(&lines, "turn").unwrap();
        assert_eq!(count(&svg, "polyline"), 2);
        assert_eq!(count(&svg, "circle"), 5);
    }

    /// The values of attribute `name` on the `tag` elements of `svg`'s marks, in order.
    fn attributes(svg: &str, tag: &str, name: &str) -> Vec<String> {
        let marks = &svg[svg.find("class=\"marks\"").unwrap()..];
        marks
            .split(&format!("<{tag} "))
            .skip(1)
            .filter_map(|element| {
                let value = element.split(&format!("{name}=\"")).nth(1)?;
                Some(value[..value.find('"')?].to_owned())
            })
            .collect()
    }

    #[test]
    fn trials_with_the_same_values_stay_visible_under_the_last_one() {
        let line = TurnLine {
            points: vec![(1, 0.5), (2, 0.7), (3, 0.6)],
            fit: None,
        };
        let lines = [line.clone(), line.clone(), line];
        for svg in [
            seconds_per_turn(&lines, "turn").unwrap(),
            memory_per_turn(&lines, "proportional memory").unwrap(),
        ] {
            // Each later line is narrower than the one it is drawn over, and its dots smaller.
            let widths: Vec<f64> = attributes(&svg, "polyline", "stroke-width")
                .iter()
                .map(|w| w.parse().unwrap())
                .collect();
            assert_eq!(widths.len(), 3, "{svg}");
            assert!(widths.windows(2).all(|w| w[0] > w[1]), "{widths:?}");
            let radii: Vec<f64> = attributes(&svg, "circle", "r")
                .iter()
                .map(|r| r.parse().unwrap())
                .collect();
            assert_eq!(radii.len(), 9, "{svg}");
            assert!(radii[0] > radii[3] && radii[3] > radii[6], "{radii:?}");
        }
    }

    #[test]
    fn the_timeline_has_a_row_per_moment_with_its_label_and_time() {
        let moments: Vec<Moment> = [("Enter", 0.0), ("a <b>", 0.012), ("done", 0.5)]
            .into_iter()
            .map(|(label, seconds)| Moment {
                label: label.into(),
                seconds,
            })
            .collect();
        let svg = timeline(&moments).unwrap();
        assert_eq!(count(&svg, "circle"), 3);
        assert_eq!(count(&svg, "polyline"), 3);
        assert_eq!(count(&svg, "text"), 3, "a time per moment");
        assert!(svg.contains("12.0 ms") && svg.contains("500 ms"), "{svg}");
        assert!(svg.contains("a &lt;b&gt;") && !svg.contains("<b>"));
    }

    #[test]
    fn a_long_session_labels_round_turns_and_draws_each_fitted_line() {
        // 100 turns growing 1 MiB a turn after a warm-up turn that loads 60 MiB.
        let points: Vec<(u32, f64)> = (1..=100)
            .map(|turn| {
                (
                    turn,
                    1e8 + 6e7 * f64::from(u8::from(turn > 1)) + 1048576.0 * f64::from(turn),
                )
            })
            .collect();
        let fit = FittedLine::through(&points, 1).unwrap();
        assert_eq!((fit.from, fit.to), (2, 100));
        assert!((fit.slope - 1048576.0).abs() < 1e-3, "{fit:?}");
        assert!((fit.at(50) - points[49].1).abs() < 1.0, "{fit:?}");
        let svg = memory_per_turn(
            &[TurnLine {
                points,
                fit: Some(fit),
            }],
            "proportional memory",
        )
        .unwrap();
        // The step line, then the fitted line twice (a dark edge and the trial's colour).
        assert_eq!(count(&svg, "polyline"), 3, "{svg}");
        // Round turns are labelled, not every turn.
        let labels: Vec<&str> = svg
            .split("<text")
            .skip(1)
            .filter_map(|text| Some(text[text.find('>')? + 1..text.find("</text>")?].trim()))
            .collect();
        assert!(
            labels.contains(&"50") && labels.contains(&"100"),
            "{labels:?}"
        );
        assert!(
            !labels.contains(&"51") && !labels.contains(&"99"),
            "{labels:?}"
        );
    }

    #[test]
    fn axis_tops_are_round_and_above_the_maximum() {
        assert_eq!(nice_top(0.0), 1.0);
        assert_eq!(nice_top(95.0), 200.0);
        assert_eq!(nice_top(412.0), 500.0);
        assert!(nice_top(0.0123) >= 0.0123);
    }
}
