//! Unit tests of the charts: each chart's data marks counted against its data, its
//! labels, its axes' tops, and text escaped by the SVG backend.

use super::turns::turn_steps;
use super::*;
use crate::units::Unit;

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

/// Draws a trend of `values` on another thread and waits at most a minute: plotters
/// looped for ever on an axis it could not label, so a hang must fail, not stall.
fn trend_within_a_minute(values: &[f64], unit: Unit) -> Result<String, ChartError> {
    let points: Vec<TrendPoint> = values
        .iter()
        .map(|&value| TrendPoint {
            median: value,
            low: value,
            high: value,
        })
        .collect();
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || send.send(trend(&points, &[], unit)));
    receive
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the chart is drawn or refused, never drawn for ever")
}

#[test]
fn extreme_values_are_refused_instead_of_drawn_for_ever() {
    for values in [vec![1e308, 5e-324, 1e308, 5e-324], vec![1e308, 1e308]] {
        for unit in [Unit::Seconds, Unit::Bytes, Unit::Share] {
            let error = trend_within_a_minute(&values, unit).unwrap_err();
            assert!(error.to_string().contains("cannot be drawn"), "{error}");
        }
    }
    // Subnormals alone are zeros to the eye: drawn on an axis from 0 to 1.
    for unit in [Unit::Seconds, Unit::Bytes, Unit::Share] {
        trend_within_a_minute(&[5e-324, 5e-324], unit).unwrap();
    }
    // The widest and narrowest values a measurement can have are drawn.
    for unit in [Unit::Seconds, Unit::Bytes, Unit::Share] {
        let max = unit.max_measurable();
        trend_within_a_minute(&[f64::MIN_POSITIVE, max, 0.0], unit).unwrap();
        trend_within_a_minute(&[f64::MIN_POSITIVE, f64::MIN_POSITIVE], unit).unwrap();
    }
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
