//! What a measured session leaves for the HTML report besides its metrics: the family's
//! memory over time (a background sampler from spawn to the end of the measurement) and
//! the screen at ready.

use crate::pipeline::PhaseContext;
use crate::pipeline::file_error::FileError;
use crate::pipeline::program::TargetError;
use crate::pipeline::program::family::Family;
use bench_core::detail::{MAX_POINTS, MAX_SCREENS, MAX_SERIES, MemoryPoint, MemorySeries, Screen};
use bench_core::{Phase, Side};
use bench_proc::{Sampler, SamplerOptions};
use std::time::Duration;

/// Time between two memory samples. Each sample walks the family's `/proc` entries
/// (RSS and PSS); 50 ms draws a start-up of a few hundred milliseconds with several
/// points while costing the target little.
const INTERVAL: Duration = Duration::from_millis(50);

/// Time between two memory samples of a long session ([`LONG_SESSION_TURNS`] turns or
/// more) that the sampler takes itself. Its memory is read after every turn anyway
/// (`session_growth`), and each of those walks is a sample of the series
/// ([`Recording::offer`]), so the sampler only fills the gaps that no turn did: a turn of
/// the demo's soak takes 2 to 6 s, typing included. At 50 ms the sampler was half of what
/// clibench spent in the first 400 s of a 1,000-turn soak (5.1 of 9.8 s of CPU, 1,500
/// samples of 3.4 ms each); at 2 s, without the turns' walks, it was still a sample a
/// turn and 7% of the session phase's CPU in `perf`.
const LONG_SESSION_INTERVAL: Duration = Duration::from_secs(10);

/// From this many turns on a session is long: sampled every [`LONG_SESSION_INTERVAL`].
const LONG_SESSION_TURNS: u32 = 20;

/// The most points the sampler keeps: what a result stores ([`MAX_POINTS`]). A start
/// never reaches it (25 s at 50 ms); a long session does within its first half minute,
/// and from then on the sampler halves its series and its rate each time it fills, so
/// an hour's soak takes about 2,500 samples instead of 72,000. Each sample of a trial
/// user's family costs about 3 ms of CPU on a host of 130 processes (a scan of every
/// `/proc/PID/stat`), which at twice this bound was 12 s of clibench's 30 s of CPU in the
/// first 2,000 s of a 1,000-turn soak of the demo (docs/performance.md).
const MAX_SAMPLES: usize = MAX_POINTS;

/// How often a session phase of `turns` samples its memory.
pub(crate) fn session_interval(turns: Option<u32>) -> Duration {
    if turns.unwrap_or(0) >= LONG_SESSION_TURNS {
        LONG_SESSION_INTERVAL
    } else {
        INTERVAL
    }
}

/// A session's memory being sampled in the background.
pub(crate) struct Recording {
    sampler: Sampler,
    phase: Phase,
    trial: u32,
    session: &'static str,
}

impl Recording {
    /// Starts sampling `family`; call it just before spawning the session's program.
    pub(crate) fn start(family: Family, phase: Phase, trial: u32, session: &'static str) -> Self {
        Recording::start_every(family, phase, trial, session, INTERVAL)
    }

    /// [`Recording::start`], sampling every `interval` until the series fills.
    pub(crate) fn start_every(
        family: Family,
        phase: Phase,
        trial: u32,
        session: &'static str,
        interval: Duration,
    ) -> Self {
        let (selector, exclude_pids) = family.selector();
        let sampler = Sampler::start(SamplerOptions {
            selector,
            interval,
            exclude_pids,
            max_points: Some(MAX_SAMPLES),
        });
        Recording {
            sampler,
            phase,
            trial,
            session,
        }
    }

    /// Keeps `snapshot`, a walk of the recorded family just made, as a sample of now: the
    /// recording's own next walk is an interval later.
    pub(crate) fn offer(&self, snapshot: &bench_proc::Snapshot) {
        self.sampler.offer(snapshot);
    }

    /// Stops sampling and keeps the series (downsampled) in `side`, with the moment the
    /// program was ready, when it was.
    pub(crate) fn finish(self, side: &mut Side, ready: Option<Duration>) {
        let report = self.sampler.stop();
        let points: Vec<MemoryPoint> = report
            .points
            .iter()
            .map(|point| MemoryPoint {
                t_ms: millis(point.elapsed),
                rss_bytes: point.rss_bytes,
                pss_bytes: point.pss_bytes,
            })
            .collect();
        if points.is_empty() {
            return;
        }
        // A rerun of the same trial replaces its series rather than adding a second one.
        side.memory_series.retain(|s| {
            !(s.phase == self.phase && s.trial == self.trial && s.session == self.session)
        });
        if side.memory_series.len() >= MAX_SERIES {
            return;
        }
        side.memory_series.push(MemorySeries::from_points(
            self.phase,
            self.trial,
            self.session,
            ready.map(millis),
            points,
        ));
    }
}

/// Keeps the screen at ready of trial 0's `session` (one screen per session is what a
/// person needs to see; later trials show the same program).
pub(crate) fn keep_screen(side: &mut Side, phase: Phase, trial: u32, session: &str, text: String) {
    if trial != 0 {
        return;
    }
    side.screens
        .retain(|s| !(s.phase == phase && s.trial == trial && s.session == session));
    if side.screens.len() < MAX_SCREENS {
        side.screens.push(Screen::new(phase, trial, session, text));
    }
}

fn millis(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
}

/// Keeps, for each start `<name>-<trial>` of this trial that saved them, the screen at ready
/// as `OUT/logs/screen-at-ready-<trial>-<name>.txt` and the terminal recording as
/// `OUT/transcripts/<name>-<trial>.cast` (asciicast v2, `asciinema play` replays it).
pub(crate) fn keep_start_files(ctx: &PhaseContext, names: &[&str]) -> Result<(), TargetError> {
    let trial = ctx.trial;
    for name in names {
        let folder = ctx.logs_dir().join(format!("{name}-{trial}"));
        let screen = folder.join(bench_term::READY_SCREEN_FILE);
        if screen.is_file() {
            let kept = ctx.log_path(&format!("screen-at-ready-{trial}-{name}.txt"))?;
            std::fs::copy(&screen, &kept).map_err(FileError::doing(format!(
                "copying {} to {}",
                screen.display(),
                kept.display()
            )))?;
        }
        let cast = folder.join(bench_term::CAST_FILE);
        if cast.is_file() {
            let dir = ctx.out.join("transcripts");
            std::fs::create_dir_all(&dir)
                .map_err(FileError::doing(format!("creating {}", dir.display())))?;
            let kept = dir.join(format!("{name}-{trial}.cast"));
            std::fs::copy(&cast, &kept).map_err(FileError::doing(format!(
                "copying {} to {}",
                cast.display(),
                kept.display()
            )))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_session_walks_for_its_memory_every_ten_seconds_and_a_short_one_every_50_ms() {
        assert_eq!(session_interval(None), Duration::from_millis(50));
        assert_eq!(session_interval(Some(4)), Duration::from_millis(50));
        assert_eq!(session_interval(Some(100)), Duration::from_secs(10));
        assert_eq!(session_interval(Some(1000)), Duration::from_secs(10));
    }
}
