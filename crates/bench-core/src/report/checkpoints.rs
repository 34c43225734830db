//! The compact form of a long session's checkpoints for report.md: one trial's idle
//! prompt every `checkpoint_every` turns (at most [`MAX_ROWS`] rows, evenly spread, the
//! first and the last always), and the fitted slopes of the whole series.

use crate::detail::SessionRun;
use crate::metric::Metric;
use crate::stats::Fit;
use crate::stats::slope_change::run_slope;

/// The most checkpoints the table lists: a 1,000-turn session has 100 of them.
pub const MAX_ROWS: usize = 12;

/// One checkpoint's row.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CheckpointRow {
    /// The turn it followed.
    pub turn: u32,
    /// The median keystroke-to-echo seconds, when a key was echoed.
    pub key_echo_seconds: Option<f64>,
    /// Bytes written per key.
    pub bytes_per_key: f64,
    /// The family's PSS (RSS when PSS was unreadable), bytes.
    pub memory_bytes: u64,
}

/// One trial's checkpoints and slopes, for the table.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Checkpoints {
    /// The trial shown: the first with two checkpoints or more.
    pub trial: u32,
    /// How many checkpoints the trial measured (the table may show fewer).
    pub measured: usize,
    /// Whether `memory_bytes` is PSS (every checkpoint had it) rather than RSS.
    pub pss: bool,
    /// The rows shown, in turn order.
    pub rows: Vec<CheckpointRow>,
    /// `lag_growth`'s fit (seconds per 100 turns).
    pub lag: Option<Fit>,
    /// `render_growth`'s fit (bytes per key per 100 turns).
    pub render: Option<Fit>,
    /// `session_growth`'s fit (bytes per turn).
    pub growth: Option<Fit>,
}

/// The table of the first trial with two checkpoints or more; `None` without one.
pub fn of(runs: &[SessionRun]) -> Option<Checkpoints> {
    let run = runs
        .iter()
        .filter(|run| run.checkpoints.len() >= 2)
        .min_by_key(|run| run.trial)?;
    let pss = run.checkpoints.iter().all(|c| c.pss_bytes.is_some());
    let count = run.checkpoints.len();
    // Evenly spread indices, the first and the last included.
    let shown: Vec<usize> = if count <= MAX_ROWS {
        (0..count).collect()
    } else {
        let mut picked: Vec<usize> = (0..MAX_ROWS)
            .map(|k| k * (count - 1) / (MAX_ROWS - 1))
            .collect();
        picked.dedup();
        picked
    };
    let rows = shown
        .into_iter()
        .map(|index| {
            let checkpoint = &run.checkpoints[index];
            CheckpointRow {
                turn: checkpoint.turn,
                key_echo_seconds: checkpoint.key_echo_median(),
                bytes_per_key: checkpoint.bytes_per_key,
                memory_bytes: match checkpoint.pss_bytes {
                    Some(pss_bytes) if pss => pss_bytes,
                    _ => checkpoint.rss_bytes,
                },
            }
        })
        .collect();
    Some(Checkpoints {
        trial: run.trial,
        measured: count,
        pss,
        rows,
        lag: run_slope(run, Metric::LagGrowth),
        render: run_slope(run, Metric::RenderGrowth),
        growth: run_slope(run, Metric::SessionGrowth),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detail::SessionCheckpoint;

    fn run(checkpoints: u32) -> SessionRun {
        SessionRun {
            trial: 2,
            dialect: String::new(),
            turns: Vec::new(),
            growth_bytes_per_turn: None,
            warmup_turns: 1,
            pss_every: 1,
            growth: None,
            lag: None,
            render: None,
            checkpoints: (1..=checkpoints)
                .map(|k| SessionCheckpoint {
                    turn: 10 * k,
                    key_echo_seconds: vec![0.001 * f64::from(k)],
                    bytes_per_key: 800.0,
                    rss_bytes: 100,
                    pss_bytes: Some(90),
                    idle_cpu_share: None,
                    idle_bytes_per_second: None,
                })
                .collect(),
            idle_seconds: 1.0,
            idle_cpu_share: None,
            idle_monotonic_ns: None,
            idle_output: None,
            startup_output: None,
            pastes: Vec::new(),
        }
    }

    #[test]
    fn a_thousand_turns_show_twelve_checkpoints_from_the_first_to_the_last() {
        let table = of(&[run(100)]).unwrap();
        assert_eq!(table.measured, 100);
        let turns: Vec<u32> = table.rows.iter().map(|row| row.turn).collect();
        assert_eq!(turns.len(), MAX_ROWS);
        assert_eq!((turns[0], turns[MAX_ROWS - 1]), (10, 1000));
        assert!(turns.windows(2).all(|pair| pair[0] < pair[1]), "{turns:?}");
        assert!(table.pss && table.rows[0].memory_bytes == 90);
        // A session with one checkpoint has no table.
        assert_eq!(of(&[run(1)]), None);
    }
}
