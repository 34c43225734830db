//! `board.html`: the board's table, a bar chart per row group (each target's mean as a
//! multiple of the row's best) and every target's turn latency per turn on one chart.

use super::page::{escape, figure, legend, page};
use crate::board::{Board, Group};
use crate::export::board::standing_text;
use crate::export::charts::{self, RatioGroup, TurnLine};
use crate::result::Side;
use std::fmt::Write;

/// The whole page; `sides[i]` is column `i`'s result (for its per-turn latencies).
pub fn board(board: &Board, sides: &[&Side]) -> String {
    let names: Vec<String> = board
        .columns
        .iter()
        .map(|column| match &column.version {
            Some(version) => format!("{} {version}", column.name),
            None => column.name.clone(),
        })
        .collect();
    let mut body = String::from("<h1>Board</h1>\n");
    legend(&mut body, &names);
    table(&mut body, board, &names);
    for (index, group) in board.groups.iter().enumerate() {
        group_chart(&mut body, index, group);
    }
    turn_chart(&mut body, sides, &names);
    sampling(&mut body, board);
    differences(&mut body, board);
    page("clibench board", &body)
}

fn table(out: &mut String, board: &Board, names: &[String]) {
    // Nine agents' columns are wider than the page: the table scrolls, not the page.
    out.push_str("<div class=\"scroll\">\n<table class=\"board\">\n<thead><tr><th>metric</th>");
    for name in names {
        let _ = write!(out, "<th>{}</th>", escape(name));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for group in board.groups.iter().filter(|group| !group.rows.is_empty()) {
        let _ = writeln!(
            out,
            "<tr class=\"phase\"><th colspan=\"{}\">{}</th></tr>",
            names.len() + 1,
            escape(&group.title)
        );
        for row in &group.rows {
            let _ = write!(out, "<tr><td><code>{}</code></td>", row.metric.name());
            for (index, cell) in row.cells.iter().enumerate() {
                let Some(cell) = cell else {
                    out.push_str("<td>–</td>");
                    continue;
                };
                let standing = standing_text(row.metric, cell, row.best == Some(index));
                let class = if row.winner == Some(index) {
                    " class=\"improved\""
                } else {
                    ""
                };
                // The mean, its interval and the standing each on a line of its own: nine
                // columns in the page's width broke "1.38 s (596 ms–3.18 s) tie" anywhere.
                let unit = row.metric.unit();
                let spread = match cell.interval {
                    Some((low, high)) => format!("{}–{}", unit.format(low), unit.format(high)),
                    None => format!("n={}", cell.values.len()),
                };
                let _ = write!(
                    out,
                    "<td{class}><span class=\"mean\">{}</span><br><span class=\"spread\">{}\
                     </span><br><strong>{}</strong></td>",
                    escape(&unit.format(cell.mean)),
                    escape(&spread),
                    escape(&standing)
                );
            }
            out.push_str("</tr>\n");
        }
    }
    out.push_str("</tbody>\n</table>\n</div>\n");
    let _ = writeln!(
        out,
        "<p class=\"note\">Each cell: the geometric mean over trials and its 95% interval. \
         A target is ranked behind the best only when the test tells them apart after \
         Holm's adjustment over the whole board (family-wise level {}) and beyond the \
         metric's practical threshold; otherwise it is a tie.</p>",
        board.alpha
    );
}

/// The group's rows whose cells are all geometric, as multiples of the row's best.
fn group_chart(out: &mut String, index: usize, group: &Group) {
    let groups: Vec<RatioGroup> = group
        .rows
        .iter()
        .filter_map(|row| {
            let best = row.cells[row.best?].as_ref()?;
            if !best.geometric || best.mean <= 0.0 {
                return None;
            }
            let bars = row
                .cells
                .iter()
                .map(|cell| {
                    let cell = cell.as_ref().filter(|cell| cell.geometric)?;
                    let scale = |v: f64| v / best.mean;
                    Some((
                        scale(cell.mean),
                        cell.interval.map(|(low, high)| (scale(low), scale(high))),
                    ))
                })
                .collect();
            Some(RatioGroup {
                label: row.metric.name().to_owned(),
                bars,
            })
        })
        .collect();
    if groups.is_empty() {
        return;
    }
    let _ = writeln!(out, "<h2>{}</h2>", escape(&group.title));
    figure(
        out,
        &format!("chart-board-{index}"),
        &format!("{}: each target's mean over the row's best", group.title),
        charts::ratio_bars(&groups),
        "Each bar: a target's geometric mean as a multiple of the best in its row \
         (1 is the best); the line is its 95% interval.",
    );
}

/// Every target's median turn latency per turn over its trials, one line each.
fn turn_chart(out: &mut String, sides: &[&Side], names: &[String]) {
    let lines: Vec<TurnLine> = sides
        .iter()
        .map(|side| {
            let mut by_turn: std::collections::BTreeMap<u32, Vec<f64>> = Default::default();
            for run in &side.sessions {
                for turn in &run.turns {
                    by_turn
                        .entry(turn.turn)
                        .or_default()
                        .push(turn.turn_seconds);
                }
            }
            let points = by_turn
                .into_iter()
                .filter_map(|(turn, mut values)| {
                    values.retain(|v| v.is_finite());
                    values.sort_by(f64::total_cmp);
                    (!values.is_empty()).then(|| (turn, crate::stats::median_of_sorted(&values)))
                })
                .collect();
            TurnLine { points, fit: None }
        })
        .collect();
    if lines.iter().all(|line| line.points.is_empty()) {
        return;
    }
    out.push_str("<h2>Over time: turn latency per turn</h2>\n");
    legend(out, names);
    figure(
        out,
        "chart-board-turns",
        "turn latency per turn, one line per target",
        charts::seconds_per_turn(&lines, "turn"),
        "Each line: a target's median over its trials of the time from Enter until the \
         turn's reply is shown and the prompt takes input.",
    );
}

fn sampling(out: &mut String, board: &Board) {
    let Some(sampling) = &board.sampling else {
        return;
    };
    out.push_str("<h2>How it was sampled</h2>\n<ul class=\"sampling\">\n");
    let quote = |text: &str| format!("<code>{}</code>", escape(text));
    for line in crate::export::board::sampling_lines(sampling, &quote) {
        // The lines' own words are ours; what came from outside went through `quote`.
        let _ = writeln!(out, "<li>{line}</li>");
    }
    out.push_str("</ul>\n");
}

fn differences(out: &mut String, board: &Board) {
    out.push_str("<h2>What differs between the specs</h2>\n");
    if board.differences.is_empty() {
        out.push_str(
            "<p class=\"none\">Nothing: every spec sets the same keys to the same values.</p>\n",
        );
        return;
    }
    out.push_str("<ul class=\"differences\">\n");
    for difference in &board.differences {
        let (set, unset) = difference.shown();
        let values: Vec<String> = set
            .iter()
            .map(|(index, value)| {
                format!(
                    "{}: <code>{}</code>",
                    escape(&board.columns[*index].name),
                    escape(value)
                )
            })
            .collect();
        let others = if unset > 0 {
            "; the others: not set"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "<li><code>{}</code>: {}{others}</li>",
            escape(&difference.key),
            values.join("; ")
        );
    }
    out.push_str("</ul>\n");
}
