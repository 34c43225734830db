//! The per-turn charts of a session: a trial's value at each turn (seconds, bytes, or
//! memory drawn as steps), the turn axis, and the least-squares line fitted after the
//! warm-up.

use super::frame::{Axis, ByteScale, Chart, Frame, Y_LABEL_AREA, integer_label, nice_top};
use super::{ChartError, PALETTE, failed};
use crate::units::{format_bytes, format_seconds};
use plotters::prelude::*;

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
        let fit = crate::stats::fit(&fitted)?;
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

    pub(super) fn at(&self, turn: u32) -> f64 {
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
pub(super) fn turn_steps(points: &[(u32, f64)]) -> Vec<(f64, f64)> {
    let mut corners = Vec::with_capacity(points.len() * 2);
    for &(turn, value) in points {
        let x = f64::from(turn) - 1.0;
        corners.push((x - 0.5, value));
        corners.push((x + 0.5, value));
    }
    corners
}
