//! A board ([`crate::board::Board`]) as Markdown (`board.md`) and JSON (`board.json`):
//! the targets as columns, the metrics as rows by group, each cell the mean with its
//! interval and where it stands, and what differs between the specs under the table.

use crate::board::{Board, Cell, Sampling, Standing, Stopped};
use crate::export::markdown::code;
use crate::metric::Metric;
use std::fmt::Write;

/// `board.json`: the board as it is, with its schema version.
pub fn json(board: &Board) -> String {
    // Invariant: the board holds only strings, numbers and derived Serialize types.
    let mut text = serde_json::to_string_pretty(board).unwrap_or_default();
    text.push('\n');
    text
}

/// A cell's mean in the metric's unit, with its interval when there is one.
pub fn mean_text(metric: Metric, cell: &Cell) -> String {
    let unit = metric.unit();
    match cell.interval {
        Some((low, high)) => format!(
            "{} ({}–{})",
            unit.format(cell.mean),
            unit.format(low),
            unit.format(high)
        ),
        None => format!("{} (n={})", unit.format(cell.mean), cell.values.len()),
    }
}

/// Where a cell stands, in words: `best`, `2.40x`, `+1.2 MiB` or `tie`.
pub fn standing_text(metric: Metric, cell: &Cell, best: bool) -> String {
    match cell.standing {
        Standing::Best => "best".to_owned(),
        Standing::Behind {
            ratio: Some(ratio), ..
        } => format!("{ratio:.2}x"),
        Standing::Behind { difference, .. } => {
            let sign = if difference >= 0.0 { "+" } else { "" };
            format!("{sign}{}", metric.unit().format(difference))
        }
        Standing::Tie { .. } if best => "best, tied".to_owned(),
        Standing::Tie { .. } => "tie".to_owned(),
    }
}

/// A column's heading: its name and installed version, each inert code.
pub fn column_heading(name: &str, version: Option<&str>) -> String {
    match version {
        Some(version) => format!("{} {}", cell_code(name), cell_code(version)),
        None => cell_code(name),
    }
}

/// [`code`] safe in a table cell (a `|` would end the cell).
fn cell_code(text: &str) -> String {
    code(text).replace('|', "\\|")
}

/// `board.md`: the table, how to read it, what differs between the specs.
pub fn markdown(board: &Board) -> String {
    let mut out = String::from("## Board\n\n");
    let names: Vec<String> = board
        .columns
        .iter()
        .map(|column| column_heading(&column.name, column.version.as_deref()))
        .collect();
    let _ = writeln!(out, "| metric | {} |", names.join(" | "));
    let _ = writeln!(out, "|---|{}", "---:|".repeat(names.len()));
    for group in board.groups.iter().filter(|group| !group.rows.is_empty()) {
        let _ = writeln!(
            out,
            "| **{}** |{}",
            group.title,
            " |".repeat(board.columns.len())
        );
        for row in &group.rows {
            let cells: Vec<String> = row
                .cells
                .iter()
                .enumerate()
                .map(|(index, cell)| match cell {
                    Some(cell) => {
                        let standing = standing_text(row.metric, cell, row.best == Some(index));
                        let standing = if row.winner == Some(index) {
                            format!("**{standing}**")
                        } else {
                            standing
                        };
                        format!("{} {standing}", mean_text(row.metric, cell))
                    }
                    None => "–".to_owned(),
                })
                .collect();
            let _ = writeln!(out, "| `{}` | {} |", row.metric.name(), cells.join(" | "));
        }
    }
    let _ = write!(
        out,
        "\nEach cell: the geometric mean over trials (arithmetic where a value is 0 or \
         less) and its 95% interval. A cell is ranked behind the row's best (`2.40x`, or \
         the difference where a ratio means nothing) only when Welch's test tells them \
         apart after Holm's adjustment over every test on the board (family-wise level \
         {alpha}) and the difference is beyond the metric's practical threshold; \
         otherwise it is a tie. **best** marks a row's winner: every other target ranked \
         behind it.\n",
        alpha = board.alpha
    );
    if let Some(sampling) = &board.sampling {
        out.push_str("\n### How it was sampled\n\n");
        for line in sampling_lines(sampling, &code) {
            let _ = writeln!(out, "- {line}");
        }
    }
    differences(&mut out, board);
    out
}

/// What a board's [`Sampling`] says, a sentence each: the rounds and why they stopped,
/// the shared model script and whom it did not apply to. `quote` makes a name or path
/// inert for the page it goes to (Markdown code, HTML `<code>`).
pub fn sampling_lines(sampling: &Sampling, quote: &dyn Fn(&str) -> String) -> Vec<String> {
    let rounds = sampling.rounds;
    let budget = sampling
        .budget
        .map(|budget| crate::units::format_seconds(budget.as_secs_f64()));
    let mut lines = vec![match (sampling.stopped, budget) {
        (Stopped::Budget, Some(budget)) => format!(
            "{rounds} rounds of trials (trial k of every target before trial k+1 of any): \
             the budget of {budget} had passed when round {} was due.",
            rounds + 1
        ),
        (_, Some(budget)) => format!(
            "{rounds} rounds of trials (trial k of every target before trial k+1 of any): \
             every round the trial count allows ran within the budget of {budget}."
        ),
        (_, None) => format!(
            "{rounds} rounds of trials (trial k of every target before trial k+1 of any), \
             as many as the trial count asked."
        ),
    }];
    if let Some(script) = &sampling.model_script {
        lines.push(format!(
            "Every target played the same model script, {}, each in its own spec's dialect \
             and endpoint settings.",
            quote(script)
        ));
        if !sampling.script_not_applied.is_empty() {
            let names: Vec<String> = sampling
                .script_not_applied
                .iter()
                .map(|name| quote(name))
                .collect();
            lines.push(format!(
                "The script does not apply to {}: no {} and {} in its spec, so it talks to \
                 no model.",
                names.join(", "),
                quote("[model]"),
                quote("[session]")
            ));
        }
    }
    lines
}

/// "What differs between the specs": one line per key, each column's value.
fn differences(out: &mut String, board: &Board) {
    out.push_str("\n### What differs between the specs\n\n");
    if board.differences.is_empty() {
        out.push_str("Nothing: every spec sets the same keys to the same values.\n");
        return;
    }
    for difference in &board.differences {
        let (set, unset) = difference.shown();
        let values: Vec<String> = set
            .iter()
            .map(|(index, value)| format!("{}: {}", code(&board.columns[*index].name), code(value)))
            .collect();
        let others = if unset > 0 {
            "; the others: not set"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "- {}: {}{others}",
            code(&difference.key),
            values.join("; ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::{Difference, Entry};
    use crate::result::{Observation, Side};

    fn side(values: &[(Metric, &[f64])], version: &str) -> Side {
        let mut side = Side::new("0".repeat(40));
        side.runtime.insert("installed".into(), version.into());
        for (metric, values) in values {
            let samples = side.metrics.entry(*metric).or_default();
            for (trial, &value) in values.iter().enumerate() {
                samples.push(Observation::value(trial as u32, value));
            }
        }
        side
    }

    fn board() -> Board {
        let fast = side(
            &[
                (Metric::Cold, &[0.40, 0.41, 0.39, 0.40]),
                (Metric::Pss, &[100e6, 101e6, 99e6, 100e6]),
                (Metric::Turn, &[0.50, 0.70, 0.40, 0.60]),
            ],
            "0.73.1",
        );
        let slow = side(
            &[
                (Metric::Cold, &[0.96, 0.97, 0.95, 0.96]),
                (Metric::Pss, &[310e6, 311e6, 309e6, 310e6]),
                (Metric::Turn, &[0.55, 0.45, 0.65, 0.50]),
            ],
            "2.0.14 (Claude Code)",
        );
        Board::new(
            &[Entry::new("pi", &fast), Entry::new("claude|code", &slow)],
            vec![Difference {
                key: "session.env.`X`".into(),
                values: vec![Some("\"1\"".into()), None],
            }],
        )
    }

    #[test]
    fn the_markdown_table_has_a_column_per_target_and_ranks_only_what_it_can() {
        insta::assert_snapshot!(markdown(&board()));
    }

    #[test]
    fn the_sampling_says_why_the_rounds_stopped_and_which_script_was_shared() {
        let sampling = Sampling {
            rounds: 4,
            stopped: Stopped::Budget,
            budget: Some(std::time::Duration::from_secs(600)),
            model_script: Some("scripts/at-work.toml".into()),
            script_not_applied: vec!["sleep".into()],
        };
        let board = board().with_sampling(sampling.clone());
        insta::assert_snapshot!(markdown(&board));
        let json: serde_json::Value = serde_json::from_str(&json(&board)).unwrap();
        assert_eq!(json["sampling"]["rounds"], 4);
        assert_eq!(json["sampling"]["stopped"], "budget");
        assert_eq!(json["sampling"]["budget_seconds"], 600.0);
        let trials = Sampling {
            stopped: Stopped::Trials,
            budget: None,
            model_script: None,
            ..sampling
        };
        assert_eq!(
            sampling_lines(&trials, &|text| text.to_owned()),
            [
                "4 rounds of trials (trial k of every target before trial k+1 of any), as many \
              as the trial count asked."
            ]
        );
    }

    #[test]
    fn the_json_carries_the_schema_version_and_each_standing() {
        let json: serde_json::Value = serde_json::from_str(&json(&board())).unwrap();
        assert_eq!(json["schema_version"], 2);
        assert!(json["sampling"].is_null());
        let cold = &json["groups"][1]["rows"][0];
        assert_eq!(cold["metric"], "cold");
        assert_eq!(cold["winner"], 0);
        assert_eq!(cold["cells"][1]["standing"]["kind"], "behind");
    }
}
