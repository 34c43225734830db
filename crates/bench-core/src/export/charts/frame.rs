//! The frame every chart shares: its style, its axes (values, categories, a scale of
//! bytes, round tops, labels that fit), and the SVG the axes and the data marks are
//! drawn into in two passes, so that they line up.

use super::{ChartError, WIDTH, failed};
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

const GRID: RGBColor = RGBColor(222, 222, 222);
const FAINT: RGBColor = RGBColor(246, 246, 246);
/// The longest category label drawn, in characters; longer ones end in `…`.
const MAX_LABEL_CHARS: usize = 32;
pub(super) const AXIS_TEXT: RGBColor = RGBColor(60, 60, 60);
pub(super) const FONT: &str = "sans-serif";

pub(super) type Area<'b> = DrawingArea<SVGBackend<'b>, Shift>;
pub(super) type Chart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// One axis of a chart: its range, the room for its labels, and how they read.
pub(super) struct Axis<'f> {
    pub(super) range: std::ops::Range<f64>,
    pub(super) desc: Option<String>,
    /// How many labels plotters places; its default when `None`.
    pub(super) labels: Option<usize>,
    pub(super) format: Box<dyn Fn(&f64) -> String + 'f>,
    /// Whether grid lines cross the plot at this axis's labels.
    pub(super) grid: bool,
}

impl<'f> Axis<'f> {
    /// An axis of values, with a title and grid lines.
    pub(super) fn values(
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
    pub(super) fn categories(labels: Vec<String>) -> Axis<'f> {
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
pub(super) struct Frame<'f> {
    pub(super) height: u32,
    /// Pixels left of the plot for the y axis's labels and title; the x axis has
    /// [`X_LABEL_AREA`] below it.
    pub(super) y_label_area: u32,
    pub(super) x: Axis<'f>,
    pub(super) y: Axis<'f>,
}

/// Pixels below the plot for the x axis's labels and title.
const X_LABEL_AREA: u32 = 38;
/// Pixels left of the plot for a y axis of numbers and its title.
pub(super) const Y_LABEL_AREA: u32 = 70;

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
    pub(super) fn draw(
        &self,
        marks: impl FnOnce(&mut Chart<'_, '_>) -> Result<(), ChartError>,
    ) -> Result<String, ChartError> {
        drawable(&self.x.range)?;
        drawable(&self.y.range)?;
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

/// The narrowest and widest axis a chart draws, in the axis's own numbers.
const AXIS_WIDTHS: std::ops::RangeInclusive<f64> = 1e-200..=1e200;

/// Whether plotters can label `range` in bounded time. It steps from one end to the
/// other by a power of ten of the width: a width that overflows to infinity (values
/// near 1e308), underflows toward zero (subnormals) or vanishes beside the values
/// (1e9 + 1e-9) never reaches the end, and the chart would be drawn for ever.
fn drawable(range: &std::ops::Range<f64>) -> Result<(), ChartError> {
    // A reversed range (categories from the top down) is as drawable as its mirror.
    let width = (range.end - range.start).abs();
    let magnitude = range.start.abs().max(range.end.abs());
    if range.start.is_finite()
        && range.end.is_finite()
        && AXIS_WIDTHS.contains(&width)
        && width >= magnitude * 1e-9
    {
        return Ok(());
    }
    Err(ChartError(format!(
        "an axis from {:e} to {:e} cannot be drawn",
        range.start, range.end
    )))
}

/// Draws into a fresh SVG string of `width` × `height`.
pub(super) fn svg(
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
pub(super) fn short_label(label: &str) -> String {
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
pub(super) fn decimal_labels(span: f64) -> impl Fn(&f64) -> String {
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

pub(super) fn integer_label(value: &f64) -> String {
    if (value - value.round()).abs() < 1e-6 && *value >= 0.0 {
        format!("{}", value.round() as i64)
    } else {
        String::new()
    }
}

/// A round axis top a little above `max`, so the largest mark is not on the edge.
/// The half-width of a changes axis for a largest change of `extent` percent: rounded
/// up to a round number above it (the margin [`nice_top`] keeps), at least 1%.
pub(super) fn axis_extent(extent: f64) -> f64 {
    nice_top(extent).max(1.0)
}

pub(super) fn nice_top(max: f64) -> f64 {
    // Below 1e-150 of any unit is a zero to the eye, and a power of ten of a subnormal
    // is 0, which would divide into infinity below.
    if !max.is_finite() || max <= 1e-150 {
        return 1.0;
    }
    let padded = max * 1.08;
    let step = 10f64.powf(padded.log10().floor());
    (padded / step).ceil() * step
}

/// The binary unit an axis of bytes is drawn in.
pub(super) struct ByteScale {
    pub(super) divisor: f64,
    pub(super) unit: &'static str,
}

impl ByteScale {
    pub(super) fn for_max(max_bytes: f64) -> ByteScale {
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
