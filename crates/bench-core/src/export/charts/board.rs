//! A board's bar chart: one group of bars per metric, one bar per target, each as many
//! times its row's best as its mean is, so that metrics of different units (an install's
//! seconds, a disk's bytes) share one axis.

use super::frame::{Axis, Frame, Y_LABEL_AREA, decimal_labels, nice_top};
use super::{ChartError, PALETTE, failed};
use plotters::prelude::*;

/// A bar: a target's mean over its row's best, and its interval likewise.
pub type RatioBar = (f64, Option<(f64, f64)>);

/// One metric of a board's bar chart.
#[derive(Debug, Clone)]
pub struct RatioGroup {
    /// The metric's name, under its bars.
    pub label: String,
    /// Per target: its mean over the row's best and its interval likewise, `None` where
    /// the target has no value.
    pub bars: Vec<Option<RatioBar>>,
}

/// Bars of ratios to the best: a filled `<rect>` per bar and a `<polyline>` per interval,
/// the target's colour its index in [`PALETTE`].
pub fn ratio_bars(groups: &[RatioGroup]) -> Result<String, ChartError> {
    let top = groups
        .iter()
        .flat_map(|group| group.bars.iter().flatten())
        .map(|(ratio, interval)| interval.map_or(*ratio, |(_, high)| high.max(*ratio)))
        .fold(1.0, f64::max);
    let count = groups.len().max(1);
    let mut x = Axis::categories(groups.iter().map(|group| group.label.clone()).collect());
    x.range = -0.5..count as f64 - 0.5;
    let top = nice_top(top);
    let frame = Frame {
        height: 260,
        y_label_area: Y_LABEL_AREA,
        x,
        y: Axis::values(0.0..top, "times the best", decimal_labels(top)),
    };
    frame.draw(|chart| {
        for (position, group) in groups.iter().enumerate() {
            let targets = group.bars.len().max(1) as f64;
            let width = 0.8 / targets;
            for (index, bar) in group.bars.iter().enumerate() {
                let Some((ratio, interval)) = bar else {
                    continue;
                };
                let left = position as f64 - 0.4 + width * index as f64;
                let color = PALETTE[index % PALETTE.len()];
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(left + width * 0.1, 0.0), (left + width * 0.9, *ratio)],
                        color.mix(0.8).filled(),
                    )))
                    .map_err(failed)?;
                if let Some((low, high)) = interval {
                    let middle = left + width / 2.0;
                    chart
                        .draw_series(std::iter::once(PathElement::new(
                            vec![(middle, *low), (middle, *high)],
                            BLACK.mix(0.7).stroke_width(2),
                        )))
                        .map_err(failed)?;
                }
            }
        }
        Ok(())
    })
}
