//! A board: N different targets side by side, one column each, one row per metric, and
//! for each row which target is best and by how much, said only where the trials allow
//! it. What `clibench board` writes as `board.json`, `board.md` and `board.html`.
//!
//! # The decision
//! Each cell is the geometric mean of the target's trials with its 95% interval (Student's
//! t on the logs); a metric with a value that is not positive (a slope, an idle CPU of 0)
//! uses the arithmetic mean and its interval instead. The row's best is the cell with the
//! best mean. Every other cell is tested against it with Welch's t-test
//! ([`stats::welch`]); the p-values of all rows together are adjusted with Holm's
//! procedure ([`stats::holm`]), so that the chance of any false ranking on the
//! whole board stays at [`ALPHA`]. A cell is ranked behind the best (`2.4x`) only when its
//! adjusted p-value is at most [`ALPHA`] *and* it is worse by more than the metric's
//! practical threshold ([`Nature::default_threshold`]); otherwise it is a tie. The best is
//! marked the winner only when every other cell is ranked behind it.
//!
//! Exact sizes (`disk`, `bundle`) are measured once and have no spread: they are ranked on
//! their values, by the practical threshold alone.
//!
//! ```
//! use bench_core::board::{Board, Entry};
//! use bench_core::{Metric, Side};
//!
//! let mut a = Side::new("a");
//! let mut b = Side::new("b");
//! for (trial, (x, y)) in [(1.00, 2.0), (1.02, 2.1), (0.99, 1.9), (1.01, 2.05)].into_iter().enumerate() {
//!     a.metrics.entry(Metric::Cold).or_default().push(bench_core::Observation::value(trial as u32, x));
//!     b.metrics.entry(Metric::Cold).or_default().push(bench_core::Observation::value(trial as u32, y));
//! }
//! let board = Board::new(&[Entry::new("a", &a), Entry::new("b", &b)], Vec::new());
//! let row = &board.groups[1].rows[0];
//! assert_eq!(row.winner, Some(0));
//! ```

use crate::metric::{Direction, Metric, Nature};
use crate::result::Side;
use crate::stats::{self, holm, t_quantile};

/// The family-wise level of the board's rankings: the chance that a board of equal
/// targets ranks any cell is at most this.
pub const ALPHA: f64 = 0.05;

/// The format version of `board.json`: 2 added [`Board::sampling`].
pub const SCHEMA_VERSION: u32 = 2;

/// The row groups, by what a person feels, and their metrics in order.
pub const GROUPS: [(&str, &[Metric]); 5] = [
    ("Install and disk", &[Metric::Install, Metric::Disk]),
    ("Start-up", &[Metric::Cold, Metric::Warm]),
    (
        "Memory: idle and per extra instance",
        &[
            Metric::Pss,
            Metric::Rss,
            Metric::InstancePss,
            Metric::InstanceRss,
        ],
    ),
    (
        "At work",
        &[
            Metric::Turn,
            Metric::FirstToken,
            Metric::TypingLag,
            Metric::IdleCpu,
        ],
    ),
    ("Over time", &[Metric::SessionGrowth, Metric::LagGrowth]),
];

/// One target of a board, as given to [`Board::new`].
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    /// The target's name on the board.
    pub name: &'a str,
    /// What its result holds.
    pub side: &'a Side,
}

impl<'a> Entry<'a> {
    /// A target named `name` with the measurements of `side`.
    pub fn new(name: &'a str, side: &'a Side) -> Entry<'a> {
        Entry { name, side }
    }
}

/// A spec key whose value differs between the targets: what is not alike on the board.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Difference {
    /// The dotted key (`session.env.PI_OFFLINE`).
    pub key: String,
    /// Each column's value as TOML, `None` where its spec does not set the key.
    pub values: Vec<Option<String>>,
}

/// The most characters of a spec value "What differs between the specs" shows: a file an
/// install writes is hundreds of characters of JSON, and nine of them made the section a
/// wall (the whole value stays in board.json).
pub const SHOWN_VALUE_CHARS: usize = 80;

impl Difference {
    /// The columns that set the key, as (column index, value cut to
    /// [`SHOWN_VALUE_CHARS`] with `…`), and how many columns do not set it: nine agents'
    /// line of one agent's setting named the other eight "(not set)".
    pub fn shown(&self) -> (Vec<(usize, String)>, usize) {
        let set: Vec<(usize, String)> = self
            .values
            .iter()
            .enumerate()
            .filter_map(|(index, value)| {
                let value = value.as_deref()?;
                let one_line = value.split_whitespace().collect::<Vec<_>>().join(" ");
                let shown = if one_line.chars().count() > SHOWN_VALUE_CHARS {
                    let cut: String = one_line.chars().take(SHOWN_VALUE_CHARS - 1).collect();
                    format!("{cut}…")
                } else {
                    one_line
                };
                Some((index, shown))
            })
            .collect();
        let unset = self.values.len() - set.len();
        (set, unset)
    }
}

/// A column: a target, its installed version.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Column {
    /// The target's name.
    pub name: String,
    /// The first line of its version command's output, when the install recorded one.
    pub version: Option<String>,
}

/// One cell: a target's trials of one metric.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Cell {
    /// The successful trials' values, in trial order.
    pub values: Vec<f64>,
    /// The geometric mean (arithmetic when `geometric` is false), in the metric's unit.
    pub mean: f64,
    /// Whether `mean` and the interval are geometric (every value positive).
    pub geometric: bool,
    /// The 95% interval of the mean; `None` with fewer than two trials.
    pub interval: Option<(f64, f64)>,
    /// Where it stands in its row.
    pub standing: Standing,
}

/// Where a cell stands against its row's best.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Standing {
    /// The row's best mean.
    Best,
    /// Not told apart from the best by the test, or within the practical threshold.
    Tie {
        /// The Holm-adjusted p-value, when a test was made.
        adjusted_p: Option<f64>,
    },
    /// Ranked behind the best.
    Behind {
        /// How many times the best (worse side over better side); `None` for an
        /// arithmetic row, whose ratio means nothing.
        ratio: Option<f64>,
        /// The difference from the best, in the metric's unit (worse minus best).
        difference: f64,
        /// The Holm-adjusted p-value (0 for an exact size).
        adjusted_p: f64,
    },
}

/// A row: one metric across the targets.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Row {
    /// Which metric the row compares.
    pub metric: Metric,
    /// One cell per column; `None` where the target has no value.
    pub cells: Vec<Option<Cell>>,
    /// The column whose mean is best.
    pub best: Option<usize>,
    /// The column that is the winner: the best, with every other cell ranked behind it.
    pub winner: Option<usize>,
}

/// A group of rows.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Group {
    /// What a person feels (`Start-up`).
    pub title: String,
    /// Its rows that some target has a value of.
    pub rows: Vec<Row>,
}

/// A whole board.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Board {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The targets, in the order given.
    pub columns: Vec<Column>,
    /// The rows by group, every group in [`GROUPS`] order (a group may have no rows).
    pub groups: Vec<Group>,
    /// The family-wise level of the rankings.
    pub alpha: f64,
    /// The spec keys whose values differ between the targets.
    pub differences: Vec<Difference>,
    /// How the trials were sampled and which model script was shared; `None` for a board
    /// made from results alone.
    pub sampling: Option<Sampling>,
}

/// How a board's trials were sampled: how many rounds ran and why no more did, and the
/// model script every target played when one was shared.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Sampling {
    /// Rounds that ran; round k is trial k of every target (and every trial phase).
    pub rounds: u32,
    /// Why no further round started.
    pub stopped: Stopped,
    /// The time budget the rounds ran within, counted from the first trial's start.
    #[serde(rename = "budget_seconds", serialize_with = "seconds")]
    pub budget: Option<std::time::Duration>,
    /// The shared model script (its path as given), when every target played one script.
    pub model_script: Option<String>,
    /// The targets the shared script did not apply to: their specs have no `[model]` and
    /// `[session]`, so they never talk to a model.
    pub script_not_applied: Vec<String>,
}

/// Why a board ran no further round of trials.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stopped {
    /// The time budget had passed when the next round was due.
    Budget,
    /// Every round the trial count allows ran.
    Trials,
}

fn seconds<S: serde::Serializer>(
    duration: &Option<std::time::Duration>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match duration {
        Some(duration) => serializer.serialize_some(&duration.as_secs_f64()),
        None => serializer.serialize_none(),
    }
}

impl Board {
    /// The board of `entries`, with the spec keys that differ between them.
    pub fn new(entries: &[Entry<'_>], differences: Vec<Difference>) -> Board {
        let columns = entries
            .iter()
            .map(|entry| Column {
                name: entry.name.to_owned(),
                version: version_of(entry.side),
            })
            .collect();
        let mut groups: Vec<Group> = GROUPS
            .iter()
            .map(|(title, metrics)| Group {
                title: (*title).to_owned(),
                rows: metrics
                    .iter()
                    .filter_map(|&metric| unranked_row(entries, metric))
                    .collect(),
            })
            .collect();
        rank(&mut groups);
        Board {
            schema_version: SCHEMA_VERSION,
            columns,
            groups,
            alpha: ALPHA,
            differences,
            sampling: None,
        }
    }

    /// The board with how its trials were sampled.
    pub fn with_sampling(mut self, sampling: Sampling) -> Board {
        self.sampling = Some(sampling);
        self
    }

    /// Every row, in group order.
    pub fn rows(&self) -> impl Iterator<Item = &Row> {
        self.groups.iter().flat_map(|group| &group.rows)
    }
}

/// The first line of the version command's output the install recorded.
fn version_of(side: &Side) -> Option<String> {
    let text = side.runtime.get("installed")?;
    let line = text.lines().next()?.trim();
    (!line.is_empty()).then(|| line.chars().take(60).collect())
}

/// A row's cells before ranking (each a tie), its best; `None` when no target has a value.
fn unranked_row(entries: &[Entry<'_>], metric: Metric) -> Option<Row> {
    let values: Vec<Vec<f64>> = entries
        .iter()
        .map(|entry| {
            let mut values = entry.side.values(metric);
            values.retain(|v| v.is_finite());
            values
        })
        .collect();
    // One scale for the whole row, so that its cells and their ratios compare alike.
    let geometric = values.iter().flatten().all(|&v| v > 0.0);
    let cells: Vec<Option<Cell>> = values
        .into_iter()
        .map(|values| cell(values, geometric))
        .collect();
    if cells.iter().all(Option::is_none) {
        return None;
    }
    let better = |x: f64, y: f64| match metric.direction() {
        Direction::LowerIsBetter => x < y,
        Direction::HigherIsBetter => x > y,
    };
    let mut best: Option<usize> = None;
    for (index, cell) in cells.iter().enumerate() {
        let Some(cell) = cell else { continue };
        let beats = best
            .and_then(|b| cells[b].as_ref())
            .is_none_or(|current| better(cell.mean, current.mean));
        if beats {
            best = Some(index);
        }
    }
    Some(Row {
        metric,
        cells,
        best,
        winner: None,
    })
}

/// The mean and interval of `values` (finite ones), geometric or not; `None` without any.
fn cell(values: Vec<f64>, geometric: bool) -> Option<Cell> {
    if values.is_empty() {
        return None;
    }
    let scaled: Vec<f64> = if geometric {
        values.iter().map(|v| v.ln()).collect()
    } else {
        values.clone()
    };
    let n = scaled.len() as f64;
    let mean = scaled.iter().sum::<f64>() / n;
    let back = |v: f64| if geometric { v.exp() } else { v };
    let interval = (scaled.len() >= 2).then(|| {
        let variance = scaled.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let half = t_quantile(0.975, n - 1.0) * (variance / n).sqrt();
        (back(mean - half), back(mean + half))
    });
    Some(Cell {
        values,
        mean: back(mean),
        geometric,
        interval,
        standing: Standing::Tie { adjusted_p: None },
    })
}

/// One test of a cell against its row's best.
struct Test {
    group: usize,
    row: usize,
    column: usize,
    /// The p-value; 0 or 1 for an exact size, decided by its values.
    p: f64,
    /// Whether the difference is beyond the metric's practical threshold.
    practical: bool,
}

/// Tests every cell against its row's best, adjusts over the whole board (Holm) and sets
/// each cell's standing and each row's winner.
fn rank(groups: &mut [Group]) {
    let mut tests = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        for (r, row) in group.rows.iter().enumerate() {
            tests.extend(row_tests(g, r, row));
        }
    }
    let adjusted = holm(&tests.iter().map(|test| Some(test.p)).collect::<Vec<_>>());
    for (test, adjusted_p) in tests.iter().zip(adjusted) {
        let adjusted_p = adjusted_p.unwrap_or(1.0);
        let row = &mut groups[test.group].rows[test.row];
        let Some(best) = row.best.and_then(|b| row.cells[b].clone()) else {
            continue;
        };
        let Some(cell) = row.cells[test.column].as_mut() else {
            continue;
        };
        cell.standing = if adjusted_p <= ALPHA && test.practical {
            Standing::Behind {
                ratio: (cell.geometric && best.geometric).then(|| ratio(cell.mean, best.mean)),
                difference: cell.mean - best.mean,
                adjusted_p,
            }
        } else {
            Standing::Tie {
                adjusted_p: Some(adjusted_p),
            }
        };
    }
    for row in groups.iter_mut().flat_map(|group| group.rows.iter_mut()) {
        let Some(best) = row.best else { continue };
        let others_behind = row
            .cells
            .iter()
            .enumerate()
            .filter(|(index, _)| *index != best)
            .filter_map(|(_, cell)| cell.as_ref())
            .map(|cell| matches!(cell.standing, Standing::Behind { .. }))
            .collect::<Vec<_>>();
        let won = !others_behind.is_empty() && others_behind.iter().all(|&behind| behind);
        if let Some(cell) = row.cells[best].as_mut()
            && won
        {
            cell.standing = Standing::Best;
            row.winner = Some(best);
        }
    }
}

/// Welch's two-sided p-value with the conservative degrees of freedom min(n₁, n₂) − 1
/// (Banerjee's bound) instead of Welch–Satterthwaite's: with three trials a side the
/// latter's estimate is itself so noisy that boards of equal targets were ranked more
/// often than [`ALPHA`] allows (1 board in 10 of a simulated agent against itself).
fn conservative_welch(x: &[f64], y: &[f64]) -> Option<f64> {
    let welch = stats::welch(x, y)?;
    let df = (x.len().min(y.len()) as f64 - 1.0).max(1.0);
    Some(if welch.standard_error > 0.0 {
        stats::t_two_sided(welch.difference / welch.standard_error, df)
    } else {
        welch.p_value
    })
}

/// The larger of two positive means over the smaller.
fn ratio(x: f64, y: f64) -> f64 {
    x.max(y) / x.min(y)
}

/// The tests of one row: each other cell with a value against the best.
fn row_tests(group: usize, row_index: usize, row: &Row) -> Vec<Test> {
    let Some(best) = row.best else {
        return Vec::new();
    };
    let metric = row.metric;
    let Some(best_cell) = row.cells[best].as_ref() else {
        return Vec::new();
    };
    let nature = metric.nature();
    let threshold = nature.default_threshold();
    row.cells
        .iter()
        .enumerate()
        .filter(|(index, _)| *index != best)
        .filter_map(|(column, cell)| {
            let cell = cell.as_ref()?;
            let practical = if cell.geometric && best_cell.geometric {
                ratio(cell.mean, best_cell.mean) - 1.0 > threshold
            } else {
                // An arithmetic row (values around 0): the threshold of its slope, else
                // the relative threshold of the larger mean's size.
                let floor = metric
                    .slope_threshold()
                    .unwrap_or(threshold * cell.mean.abs().max(best_cell.mean.abs()));
                (cell.mean - best_cell.mean).abs() > floor
            };
            let p = if nature == Nature::Exact {
                if practical { 0.0 } else { 1.0 }
            } else {
                conservative_welch(&cell.values, &best_cell.values)?
            };
            Some(Test {
                group,
                row: row_index,
                column,
                p,
                practical,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Observation;
    use crate::rng::SplitMix64;

    fn side(values: &[(Metric, &[f64])]) -> Side {
        let mut side = Side::new("0".repeat(40));
        for (metric, values) in values {
            let samples = side.metrics.entry(*metric).or_default();
            for (trial, &value) in values.iter().enumerate() {
                samples.push(Observation::value(trial as u32, value));
            }
        }
        side
    }

    fn row(board: &Board, metric: Metric) -> &Row {
        board.rows().find(|row| row.metric == metric).unwrap()
    }

    /// Trials around `centre` with a relative spread of `spread` (lognormal).
    fn noisy(rng: &mut SplitMix64, centre: f64, spread: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|_| centre * (spread * rng.next_normal()).exp())
            .collect()
    }

    /// A board of two targets whose trials come from the same distribution, on the
    /// metrics a board of agents has.
    fn equal_board(rng: &mut SplitMix64, trials: usize) -> Board {
        let metrics = [
            (Metric::Cold, 0.4, 0.15),
            (Metric::Warm, 0.3, 0.15),
            (Metric::Pss, 300e6, 0.02),
            (Metric::Rss, 350e6, 0.02),
            (Metric::Turn, 0.5, 0.1),
            (Metric::FirstToken, 0.05, 0.2),
            (Metric::TypingLag, 0.02, 0.3),
            (Metric::IdleCpu, 0.01, 0.5),
        ];
        let sides: Vec<Side> = (0..2)
            .map(|_| {
                let values: Vec<(Metric, Vec<f64>)> = metrics
                    .iter()
                    .map(|&(metric, centre, spread)| (metric, noisy(rng, centre, spread, trials)))
                    .collect();
                let borrowed: Vec<(Metric, &[f64])> = values
                    .iter()
                    .map(|(metric, values)| (*metric, values.as_slice()))
                    .collect();
                side(&borrowed)
            })
            .collect();
        Board::new(
            &[Entry::new("one", &sides[0]), Entry::new("two", &sides[1])],
            Vec::new(),
        )
    }

    #[test]
    fn a_clear_difference_ranks_the_slower_behind_with_its_ratio() {
        let fast = side(&[(Metric::Cold, &[1.0, 1.02, 0.98, 1.01, 0.99])]);
        let slow = side(&[(Metric::Cold, &[2.4, 2.45, 2.38, 2.41, 2.36])]);
        let board = Board::new(
            &[Entry::new("slow", &slow), Entry::new("fast", &fast)],
            Vec::new(),
        );
        let cold = row(&board, Metric::Cold);
        assert_eq!(cold.best, Some(1));
        assert_eq!(cold.winner, Some(1));
        let Some(Cell {
            standing: Standing::Behind { ratio, .. },
            ..
        }) = &cold.cells[0]
        else {
            panic!("{cold:?}");
        };
        assert!((ratio.unwrap() - 2.4).abs() < 0.05, "{ratio:?}");
    }

    #[test]
    fn an_agent_against_itself_marks_no_winner_in_ten_of_ten_boards() {
        let mut rng = SplitMix64::new(46);
        for run in 0..10 {
            let board = equal_board(&mut rng, 3);
            let winners: Vec<Metric> = board
                .rows()
                .filter(|row| row.winner.is_some())
                .map(|row| row.metric)
                .collect();
            assert!(winners.is_empty(), "board {run} ranked {winners:?}");
        }
    }

    #[test]
    fn equal_targets_are_ranked_on_at_most_alpha_of_many_boards() {
        let mut rng = SplitMix64::new(7);
        let boards = 400;
        let ranked = (0..boards)
            .filter(|_| {
                equal_board(&mut rng, 3)
                    .rows()
                    .any(|row| row.winner.is_some())
            })
            .count();
        // Holm keeps the chance of any ranking on a board of equals at ALPHA; the
        // practical threshold makes it smaller still.
        assert!(
            (ranked as f64) <= ALPHA * boards as f64,
            "{ranked} of {boards} boards of equals ranked something"
        );
    }

    #[test]
    fn a_sure_difference_within_the_practical_threshold_is_a_tie() {
        let a = side(&[(Metric::Pss, &[100e6, 100.001e6, 99.999e6])]);
        let b = side(&[(Metric::Pss, &[101e6, 101.001e6, 100.999e6])]);
        let board = Board::new(&[Entry::new("a", &a), Entry::new("b", &b)], Vec::new());
        let pss = row(&board, Metric::Pss);
        assert_eq!(pss.winner, None);
        assert!(matches!(
            pss.cells[1].as_ref().unwrap().standing,
            Standing::Tie { .. }
        ));
    }

    #[test]
    fn a_single_trial_cannot_rank_a_timing() {
        let a = side(&[(Metric::Install, &[10.0])]);
        let b = side(&[(Metric::Install, &[30.0])]);
        let board = Board::new(&[Entry::new("a", &a), Entry::new("b", &b)], Vec::new());
        let install = row(&board, Metric::Install);
        assert_eq!(install.best, Some(0));
        assert_eq!(install.winner, None);
        assert_eq!(install.cells[1].as_ref().unwrap().interval, None);
    }

    #[test]
    fn exact_sizes_are_ranked_on_their_values() {
        let a = side(&[(Metric::Disk, &[300e6])]);
        let b = side(&[(Metric::Disk, &[100e6])]);
        let board = Board::new(&[Entry::new("a", &a), Entry::new("b", &b)], Vec::new());
        assert_eq!(row(&board, Metric::Disk).winner, Some(1));
    }

    #[test]
    fn values_around_zero_use_the_arithmetic_mean_and_no_ratio() {
        let a = side(&[(Metric::SessionGrowth, &[0.0, 1000.0, -500.0])]);
        let b = side(&[(Metric::SessionGrowth, &[9e6, 9.1e6, 8.9e6])]);
        let board = Board::new(&[Entry::new("a", &a), Entry::new("b", &b)], Vec::new());
        let growth = row(&board, Metric::SessionGrowth);
        let cell = growth.cells[0].as_ref().unwrap();
        assert!(!cell.geometric);
        assert!((cell.mean - 500.0 / 3.0).abs() < 1e-9);
        if let Standing::Behind { ratio, .. } = growth.cells[1].as_ref().unwrap().standing {
            assert_eq!(ratio, None);
        }
    }

    #[test]
    fn a_row_no_target_has_is_left_out_and_the_version_is_the_first_line() {
        let mut a = side(&[(Metric::Cold, &[1.0, 1.1])]);
        a.runtime.insert("installed".into(), "0.73.1\nextra".into());
        let board = Board::new(&[Entry::new("a", &a)], Vec::new());
        assert_eq!(board.rows().count(), 1);
        assert_eq!(board.columns[0].version.as_deref(), Some("0.73.1"));
    }
    #[test]
    fn a_difference_shows_who_sets_the_key_in_one_line_cut_to_its_length() {
        let long = format!("{{\n  \"a\": \"{}\"\n}}", "x".repeat(200));
        let difference = Difference {
            key: "install.write".to_owned(),
            values: vec![None, Some(long), None, Some("\"1\"".to_owned())],
        };
        let (set, unset) = difference.shown();
        assert_eq!(unset, 2);
        assert_eq!(set[0].0, 1);
        assert!(set[0].1.starts_with("{ \"a\": \"xxx"), "{}", set[0].1);
        assert_eq!(set[0].1.chars().count(), SHOWN_VALUE_CHARS);
        assert!(set[0].1.ends_with('…'));
        assert_eq!(set[1], (3, "\"1\"".to_owned()));
    }
}
