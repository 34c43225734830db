//! How far a session is: the turns played of how many and an estimate of the time left,
//! in `OUT/logs/progress-<phase>-<trial>.txt`. The session phase (its own process) writes
//! it after every turn and the runner reads it while it waits for the phase, so that a
//! 100-turn session that takes minutes says where it is instead of nothing.

use bench_core::Phase;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The turns a session played of how many, and the time its remaining turns will take at
/// the pace of those played.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnCount {
    /// Turns played.
    pub done: u32,
    /// Turns in all.
    pub total: u32,
    /// What the turns left will take, at the pace so far.
    pub left: Duration,
}

impl TurnCount {
    /// `done` of `total` turns after `elapsed`: the turns left at the same pace.
    pub fn after(done: u32, total: u32, elapsed: Duration) -> TurnCount {
        let left = match done {
            0 => Duration::ZERO,
            _ => elapsed.mul_f64(f64::from(total.saturating_sub(done)) / f64::from(done)),
        };
        TurnCount { done, total, left }
    }

    fn to_line(self) -> String {
        format!("{} {} {}\n", self.done, self.total, self.left.as_millis())
    }

    fn from_line(line: &str) -> Option<TurnCount> {
        let mut numbers = line.split_whitespace().map(str::parse::<u64>);
        let mut next = || numbers.next()?.ok();
        let (done, total, left) = (next()?, next()?, next()?);
        Some(TurnCount {
            done: u32::try_from(done).ok()?,
            total: u32::try_from(total).ok()?,
            left: Duration::from_millis(left),
        })
    }
}

impl std::fmt::Display for TurnCount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "turn {} of {}", self.done, self.total)?;
        if self.done < self.total {
            let left = bench_core::units::format_seconds(self.left.as_secs_f64().round());
            write!(f, ", about {left} left")?;
        }
        Ok(())
    }
}

/// Where the progress of `phase`'s trial `trial` is kept in the output folder `out`.
pub(crate) fn path(out: &Path, phase: Phase, trial: u32) -> PathBuf {
    out.join("logs")
        .join(format!("progress-{phase}-{trial}.txt"))
}

/// Writes `count` to `path`, replacing what was there.
pub(crate) fn write(path: &Path, count: TurnCount) -> Result<(), bench_core::io::WriteError> {
    bench_core::io::write_atomic(path, count.to_line().as_bytes())
}

/// What `path` holds, `None` when there is nothing (yet) or it is not a count.
pub(crate) fn read(path: &Path) -> Option<TurnCount> {
    let text = bench_core::io::read_input_file(path, 256).ok()?;
    TurnCount::from_line(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_says_the_turn_and_the_time_left_at_the_pace_so_far() {
        let count = TurnCount::after(25, 100, Duration::from_secs(60));
        assert_eq!(count.left, Duration::from_secs(180));
        assert_eq!(count.to_string(), "turn 25 of 100, about 3m 00s left");
        assert_eq!(TurnCount::from_line(&count.to_line()), Some(count));
        let last = TurnCount::after(100, 100, Duration::from_secs(240));
        assert_eq!(last.to_string(), "turn 100 of 100");
        assert_eq!(TurnCount::from_line("garbage"), None);
    }

    #[test]
    fn a_count_goes_to_the_file_and_back() {
        let folder = tempfile::tempdir().unwrap();
        let path = path(folder.path(), Phase::Session, 0);
        assert_eq!(read(&path), None);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let count = TurnCount::after(3, 9, Duration::from_secs(6));
        write(&path, count).unwrap();
        assert_eq!(read(&path), Some(count));
    }
}
