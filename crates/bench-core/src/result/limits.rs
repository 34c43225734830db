//! The format's limits, and cutting text to them.

use crate::metric::Phase;

/// The schema version this crate reads and writes.
///
/// The rules: a change that every file written before it still satisfies keeps the
/// version (a new optional field, a new metric, a new value of an open list); a
/// change that makes an earlier file invalid or changes what a field means (a field
/// removed, renamed, made required, or given another unit) takes the next version.
/// Readers reject unknown fields and metrics, so a file that uses an addition is read
/// only by a clibench that knows it. `docs/result.schema.json` is regenerated from
/// these types by its test.
pub const SCHEMA_VERSION: u32 = 1;
/// The largest trial number (trials are numbered from 0).
pub const MAX_TRIAL: u32 = 100;
/// The longest error message kept, in characters: a message and its hint, and the
/// screen of a 120-column terminal's bottom rows (at 500, a hint was cut mid-word and
/// the screen lost its input line).
pub const MAX_ERROR_CHARS: usize = 4000;
/// The longest process name kept, in characters.
pub const MAX_NAME_CHARS: usize = 80;
/// The most processes kept in [`Side::processes`](crate::Side::processes).
pub const MAX_PROCESSES: usize = 128;

/// The longest command line kept in [`ProcessMemory::cmdline`](crate::ProcessMemory::cmdline), in characters.
pub const MAX_CMDLINE_CHARS: usize = 200;

/// The longest host name kept, in characters.
pub const MAX_HOST_CHARS: usize = 255;
/// The most trial records kept in [`Side::trials`](crate::Side::trials): one per phase and trial.
pub const MAX_TRIAL_RECORDS: usize = Phase::ALL.len() * (MAX_TRIAL as usize + 1);

/// The most settles kept in one [`TrialRecord`](crate::TrialRecord).
pub const MAX_SETTLES: usize = 128;

/// The most starts kept in one [`TrialRecord`](crate::TrialRecord).
pub const MAX_STARTS: usize = 8;

/// The most terminal windows kept in one [`TrialRecord`](super::TrialRecord) (a ui trial has one per step).
pub const MAX_TERMINAL_WINDOWS: usize = 64;

/// Cuts `text` to at most `max` characters, keeping its start (what failed: its whole
/// first line, the message and its hint, when that is at most half of `max`) and its
/// end joined by ` … `: an error that ends with the target's last screen keeps the
/// bottom of the screen, where the prompt and the latest output are, not the banner.
pub(crate) fn truncate_chars(text: String, max: usize) -> String {
    const MARK: &str = " … ";
    let count = text.chars().count();
    if count <= max {
        return text;
    }
    let mark = MARK.chars().count();
    if max <= mark {
        return text.chars().take(max).collect();
    }
    let first_line = text
        .split('\n')
        .next()
        .map_or(0, |line| line.chars().count());
    let head = if first_line <= max / 2 {
        first_line.max(max / 3)
    } else {
        max / 3
    };
    let tail = max - head - mark;
    let mut cut: String = text.chars().take(head).collect();
    cut.push_str(MARK);
    cut.extend(text.chars().skip(count - tail));
    cut
}
