//! What the HTML report draws beyond the metrics: the family's memory over time
//! during each measured session, the screen at ready, and the staircase's steps.
//!
//! These are optional parts of a result file (older files have none); each is
//! bounded so that a result stays small: at most [`MAX_POINTS`] points per
//! series (longer series are [downsampled](MemorySeries::from_points)), at most
//! [`MAX_SCREEN_CHARS`] characters per screen.

use crate::metric::Phase;

/// The most points a [`MemorySeries`] keeps.
pub const MAX_POINTS: usize = 500;
/// The most series a side keeps.
pub const MAX_SERIES: usize = 400;
/// The longest screen kept, in characters (a 200×100 terminal with line breaks fits).
pub const MAX_SCREEN_CHARS: usize = 20_300;
/// The most screens a side keeps.
pub const MAX_SCREENS: usize = 16;
/// The most steps a [`StaircaseRun`] keeps.
pub const MAX_STEPS: usize = 100;
/// The longest session label, in characters.
pub const MAX_LABEL_CHARS: usize = 40;

/// The process family's memory at one moment of a session.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct MemoryPoint {
    /// Milliseconds since the session's program was spawned.
    pub t_ms: u64,
    /// Resident bytes of the whole family.
    pub rss_bytes: u64,
    /// Proportional bytes of the whole family; absent when some process's PSS was unreadable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pss_bytes: Option<u64>,
}

/// The family's memory over one measured session (a cold or warm start, a UI
/// session), sampled in the background while it ran.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct MemorySeries {
    /// The phase that measured.
    pub phase: Phase,
    /// The trial, from 0 to 100.
    #[cfg_attr(feature = "schema", schemars(range(min = 0, max = 100)))]
    pub trial: u32,
    /// Which session: `cold`, `warm` or `ui`; at most 40 characters.
    #[cfg_attr(feature = "schema", schemars(length(max = 40)))]
    pub session: String,
    /// Milliseconds from spawn until the program was ready, when it became ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_ms: Option<u64>,
    /// The samples in time order, at most 500 (longer series are downsampled).
    #[cfg_attr(feature = "schema", schemars(length(max = 500)))]
    pub points: Vec<MemoryPoint>,
}

impl MemorySeries {
    /// A series from all the samples taken, downsampled to at most [`MAX_POINTS`]:
    /// the samples are cut into equal runs and the largest RSS of each run is kept,
    /// so peaks survive. The first and last samples are always kept.
    pub fn from_points(
        phase: Phase,
        trial: u32,
        session: &str,
        ready_ms: Option<u64>,
        points: Vec<MemoryPoint>,
    ) -> MemorySeries {
        MemorySeries {
            phase,
            trial,
            session: crate::result::truncate_chars(session.to_string(), MAX_LABEL_CHARS),
            ready_ms,
            points: downsample(points, MAX_POINTS),
        }
    }

    /// The highest RSS of the series, 0 when it is empty.
    pub fn peak_rss_bytes(&self) -> u64 {
        self.points.iter().map(|p| p.rss_bytes).max().unwrap_or(0)
    }
}

/// At most `max` of `points` (`max` >= 2): first, last, and the largest RSS of each
/// of `max - 2` equal runs of the points between them.
fn downsample(points: Vec<MemoryPoint>, max: usize) -> Vec<MemoryPoint> {
    let max = max.max(2);
    if points.len() <= max {
        return points;
    }
    let (first, last) = (points[0], points[points.len() - 1]);
    let inner = &points[1..points.len() - 1];
    let runs = max - 2;
    let mut kept = Vec::with_capacity(max);
    kept.push(first);
    for run in 0..runs {
        let start = run * inner.len() / runs;
        let end = ((run + 1) * inner.len() / runs).max(start + 1);
        if let Some(peak) = inner[start..end.min(inner.len())]
            .iter()
            .max_by_key(|point| point.rss_bytes)
        {
            kept.push(*peak);
        }
    }
    kept.push(last);
    kept
}

/// What the terminal showed when the program became ready.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Screen {
    /// The phase that measured.
    pub phase: Phase,
    /// The trial, from 0 to 100.
    #[cfg_attr(feature = "schema", schemars(range(min = 0, max = 100)))]
    pub trial: u32,
    /// Which session: `cold`, `warm` or `ui`; at most 40 characters.
    #[cfg_attr(feature = "schema", schemars(length(max = 40)))]
    pub session: String,
    /// The screen's text, rows separated by `\n`, trailing blanks trimmed; at most 20300 characters.
    #[cfg_attr(feature = "schema", schemars(length(max = 20300)))]
    pub text: String,
}

impl Screen {
    /// A screen, with the label and text cut to their limits.
    pub fn new(phase: Phase, trial: u32, session: &str, text: String) -> Screen {
        let text = text
            .lines()
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n")
            .trim_end()
            .to_string();
        Screen {
            phase,
            trial,
            session: crate::result::truncate_chars(session.to_string(), MAX_LABEL_CHARS),
            text: crate::result::truncate_chars(text, MAX_SCREEN_CHARS),
        }
    }
}

/// The family's totals after one more instance started and settled.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct StaircaseStep {
    /// Instances running at this step (1 for the first).
    pub instances: u32,
    /// Resident bytes of the whole family.
    pub rss_bytes: u64,
    /// Proportional bytes of the whole family, when every process's PSS was readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pss_bytes: Option<u64>,
    /// What this instance added to the family's RSS, bytes (negative when memory was freed).
    pub rss_delta_bytes: i64,
    /// What this instance added to the family's PSS, bytes, when PSS was readable
    /// before and after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pss_delta_bytes: Option<i64>,
    /// What this instance added to the family's USS, bytes, when USS was readable
    /// before and after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uss_delta_bytes: Option<i64>,
    /// Processes in the family at this step, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_count: Option<u32>,
}

/// What one more instance costs, summarized over a staircase's steps; each in bytes,
/// negative when memory was freed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct InstanceCost {
    /// RSS per instance.
    pub rss_bytes: i64,
    /// PSS per instance, when PSS was readable on every step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pss_bytes: Option<i64>,
    /// USS per instance, when USS was readable on every step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uss_bytes: Option<i64>,
}

/// One trial's staircase: the family before, after each added instance, and after
/// every instance was stopped.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct StaircaseRun {
    /// The trial, from 0 to 100.
    #[cfg_attr(feature = "schema", schemars(range(min = 0, max = 100)))]
    pub trial: u32,
    /// Resident bytes of the family before the first measured instance (after the warm-up).
    pub baseline_rss_bytes: u64,
    /// One entry per added instance, at most 100.
    #[cfg_attr(feature = "schema", schemars(length(max = 100)))]
    pub steps: Vec<StaircaseStep>,
    /// Resident bytes of the family after every instance was stopped.
    pub after_teardown_rss_bytes: u64,
    /// Processes left in the family after every instance was stopped (optional; 0
    /// unless something outlived its instance).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_teardown_process_count: Option<u32>,
    /// Resident bytes given back: the last step's total minus the total after teardown.
    pub reclaimed_rss_bytes: i64,
    /// Proportional bytes given back, when PSS was readable (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reclaimed_pss_bytes: Option<i64>,
    /// The family's growth divided by the instances (optional; the metrics
    /// `instance_*` hold the same values when they are not negative).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub average: Option<InstanceCost>,
    /// The median of the steps after the first: one more instance's cost once what
    /// the first brought along (shared daemons, caches) is paid; absent with one step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<InstanceCost>,
    /// What each instance had done before its step was measured (`idle` in result files
    /// written before sessions existed).
    #[serde(default)]
    pub instance: StaircaseInstance,
}

/// What each instance of a staircase had done before its step was measured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum StaircaseInstance {
    /// Ready and idle at its prompt.
    #[default]
    Idle,
    /// Ready, then one scripted turn (`[staircase] session = true`): typed, answered
    /// by the model endpoint, shown, and the prompt taking input again.
    Session,
}

impl StaircaseInstance {
    /// What the per-instance cost means, for the reports.
    pub fn meaning(self) -> &'static str {
        match self {
            StaircaseInstance::Idle => "per-instance cost, each instance idle at its prompt",
            StaircaseInstance::Session => {
                "per-instance cost, each instance after one scripted turn"
            }
        }
    }
}

/// The most turns a [`SessionRun`] keeps (`[session] turns` is at most this).
pub const MAX_TURNS: usize = 1000;
/// The most checkpoints a [`SessionRun`] keeps.
pub const MAX_CHECKPOINTS: usize = 1000;
/// The most keys a [`SessionCheckpoint`] types.
pub const MAX_CHECKPOINT_KEYS: usize = 20;
/// The most pastes a [`SessionRun`] keeps (`[session] pastes` has at most this many).
pub const MAX_PASTES: usize = 10;
/// The largest paste (`[session] pastes`), bytes.
pub const MAX_PASTE_BYTES: u64 = 4 << 20;

/// What the program wrote to its terminal over a window (a turn, an idle window).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct TerminalOutput {
    /// Bytes written.
    pub bytes: u64,
    /// Frames: synchronized updates (`CSI ? 2026 l`) when the program uses them, else
    /// write bursts (reads less than 4 ms apart).
    pub frames: u64,
    /// Full clears: `CSI 2 J`, `CSI 3 J`, `ESC c`.
    pub full_clears: u64,
    /// Alternate-screen switches either way (`CSI ? 1049/1047/47 h/l`).
    pub alt_screen_switches: u64,
}

/// One turn of a session, as the session phase measured it. Times are seconds on the
/// terminal's clock (the endpoint's journal times are converted to it).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SessionTurn {
    /// The turn, from 1 (the scripted turn whose prompt was typed).
    pub turn: u32,
    /// Enter until the reply's last text was on the screen and the prompt took input.
    pub turn_seconds: f64,
    /// Enter until the endpoint received the turn's first request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit_seconds: Option<f64>,
    /// First chunk of the reply written until its text was first visible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_token_seconds: Option<f64>,
    /// Last chunk written until the final text was visible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_render_seconds: Option<f64>,
    /// Tool call written until the request carrying its result arrived (tool turns only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_roundtrip_seconds: Option<f64>,
    /// CPU seconds of the whole family during the turn (nanosecond resolution).
    pub cpu_seconds: f64,
    /// Resident bytes of the whole family after the turn.
    pub rss_bytes: u64,
    /// Proportional bytes of the whole family after the turn, when every PSS was readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pss_bytes: Option<u64>,
    /// Keystroke-to-echo latencies (seconds) of the keys typed during this turn's stream.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(length(max = 100)))]
    pub typing_lag_seconds: Vec<f64>,
    /// Enter until the endpoint wrote the final reply's first chunk with text, seconds
    /// (its text was visible `first_token_seconds` later). The report's turn timeline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_chunk_at_seconds: Option<f64>,
    /// Enter until the endpoint wrote the final reply's last chunk, seconds (its text was
    /// visible `stream_render_seconds` later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_chunk_at_seconds: Option<f64>,
    /// Enter until the endpoint wrote the tool call's last chunk, seconds (the request
    /// with its result arrived `tool_roundtrip_seconds` later); tool turns only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_at_seconds: Option<f64>,
    /// What the agent wrote to its terminal from Enter until the prompt took input again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<TerminalOutput>,
    /// `output.bytes` divided by the tokens the turn's replies streamed: the redraw cost
    /// of one streamed token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_token: Option<f64>,
}

/// The idle prompt measured after a turn of a long session: what typing costs there, the
/// family's memory and its CPU and output while nothing happens.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SessionCheckpoint {
    /// The turn (from 1) after which it was measured.
    pub turn: u32,
    /// Keystroke-to-echo seconds of each key of a short word typed at the idle prompt (then
    /// erased); at most 20.
    #[cfg_attr(feature = "schema", schemars(length(max = 20)))]
    pub key_echo_seconds: Vec<f64>,
    /// Bytes the agent wrote to its terminal per key typed (the word's keys and the
    /// backspaces that erased it).
    pub bytes_per_key: f64,
    /// Resident bytes of the whole family.
    pub rss_bytes: u64,
    /// Proportional bytes of the whole family, when every PSS was readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pss_bytes: Option<u64>,
    /// The family's CPU share of one core over the checkpoint's idle window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_cpu_share: Option<f64>,
    /// Bytes per second the agent wrote to its terminal over the idle window (a spinner's cost).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_bytes_per_second: Option<f64>,
}

/// One bracketed paste into the agent's input at the idle prompt (`[session] pastes`),
/// then cleared.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SessionPaste {
    /// Bytes pasted.
    pub bytes: u64,
    /// From the paste's first byte written until the agent showed it accepted it: its last
    /// line on the screen, or (`shown` false) the screen quiet for a second after output
    /// that came after the paste; seconds.
    pub accept_seconds: f64,
    /// Whether the paste's last line was seen on the screen; false for an agent that shows
    /// a placeholder (`[Pasted text +120 lines]`) instead.
    pub shown: bool,
    /// CPU seconds of the whole family from the paste's first byte until its acceptance
    /// was seen: when it showed, or (`shown` false) after the quiet second, which is then
    /// counted too.
    pub cpu_seconds: f64,
    /// What the agent wrote to its terminal over the same time.
    pub output: TerminalOutput,
}

impl SessionCheckpoint {
    /// The median keystroke-to-echo seconds, when a key was echoed.
    pub fn key_echo_median(&self) -> Option<f64> {
        crate::stats::Summary::from_values(&self.key_echo_seconds).map(|s| s.median)
    }
}

fn every_turn() -> u32 {
    1
}

fn is_every_turn(every: &u32) -> bool {
    *every == 1
}

/// The most turns after the warm-up on which a session reads PSS (see
/// [`SessionRun::pss_every`]): enough for the growth slope, and each read walks every page
/// table of the family (a third of what clibench spent at turn 200 of a pi soak).
pub const MAX_PSS_TURNS: u32 = 100;

/// How often a session of `turns` turns, `warmup` of them a warm-up, reads PSS: every
/// turn up to [`MAX_PSS_TURNS`] turns after the warm-up, every `n`th beyond, so that it
/// reads at most that many.
pub fn pss_every(turns: u32, warmup: u32) -> u32 {
    turns.saturating_sub(warmup).div_ceil(MAX_PSS_TURNS).max(1)
}

impl SessionRun {
    /// Whether PSS is read after turn `turn` of `last` (numbered from 1).
    pub fn pss_due(&self, turn: u32, last: u32) -> bool {
        turn <= self.warmup_turns
            || turn == last
            || (turn - self.warmup_turns).is_multiple_of(self.pss_every.max(1))
    }

    /// Whether every turn that read PSS has it (a process whose `smaps_rollup` was
    /// unreadable leaves it unknown): then the memory series is PSS.
    pub fn has_pss(&self) -> bool {
        let last = self.turns.last().map_or(0, |t| t.turn);
        self.turns
            .iter()
            .filter(|t| self.pss_due(t.turn, last))
            .all(|t| t.pss_bytes.is_some())
    }

    /// The family's memory after each turn as one series, (turn, bytes): PSS on the turns
    /// it was read on when `pss`, else RSS after every turn; never a mix of the two.
    pub fn memory_points(&self, pss: bool) -> Vec<(u32, u64)> {
        self.turns
            .iter()
            .filter_map(|t| match (pss, t.pss_bytes) {
                (true, Some(bytes)) => Some((t.turn, bytes)),
                (true, None) => None,
                (false, _) => Some((t.turn, t.rss_bytes)),
            })
            .collect()
    }
}

/// One trial's session: every turn, and the idle window after them.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SessionRun {
    /// The trial, from 0 to 100.
    #[cfg_attr(feature = "schema", schemars(range(min = 0, max = 100)))]
    pub trial: u32,
    /// The dialect the spec says the agent speaks (`anthropic`, ...); at most 40 characters.
    #[cfg_attr(feature = "schema", schemars(length(max = 40)))]
    pub dialect: String,
    /// The turns in order, at most 1000.
    #[cfg_attr(feature = "schema", schemars(length(max = 1000)))]
    pub turns: Vec<SessionTurn>,
    /// Bytes per turn: the least-squares slope of PSS (RSS when PSS is missing) over the
    /// turns after the warm-up ([`SessionRun::memory_points`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub growth_bytes_per_turn: Option<f64>,
    /// The first turns left out of every slope (`[session] warmup_turns`; 0 in files
    /// written before it existed, whose slopes took every turn).
    #[serde(default)]
    pub warmup_turns: u32,
    /// PSS was read after every warm-up turn, after every `pss_every`th turn after it and
    /// after the last; RSS after every turn. 1 (every turn; files written before it
    /// existed) up to 100 turns after the warm-up; a longer session reads PSS on about
    /// 100 of them, since each read walks every page table of the family.
    #[serde(default = "every_turn", skip_serializing_if = "is_every_turn")]
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub pss_every: u32,
    /// The memory fit behind `growth_bytes_per_turn` (bytes per turn), with its error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub growth: Option<crate::stats::Fit>,
    /// The checkpoints' median keystroke-to-echo seconds over the turn, fitted (seconds
    /// per turn) from the checkpoints after the warm-up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag: Option<crate::stats::Fit>,
    /// The checkpoints' bytes per key over the turn, fitted (bytes per key per turn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub render: Option<crate::stats::Fit>,
    /// The idle prompt measured every `[session] checkpoint_every` turns and after the
    /// last, in order; at most 1000.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(length(max = 1000)))]
    pub checkpoints: Vec<SessionCheckpoint>,
    /// The idle window's length, seconds.
    pub idle_seconds: f64,
    /// The family's CPU share of one core over the idle window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_cpu_share: Option<f64>,
    /// When the idle window began and ended on the machine's `CLOCK_MONOTONIC`, in
    /// nanoseconds: the clock of an outside sampler (Python's `time.monotonic_ns()`), so
    /// `idle_cpu` can be checked against the family's `/proc` CPU totals over the same
    /// window (`scripts/idle-cpu-check.py`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_monotonic_ns: Option<[u64; 2]>,
    /// What the agent wrote to its terminal over the idle window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_output: Option<TerminalOutput>,
    /// What the agent wrote to its terminal from spawn until it was ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_output: Option<TerminalOutput>,
    /// The pastes made after the last turn (`[session] pastes`), in order; at most 10.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(length(max = 10)))]
    pub pastes: Vec<SessionPaste>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_reads_pss_on_at_most_a_hundred_turns_after_its_warm_up() {
        assert_eq!(pss_every(3, 1), 1);
        assert_eq!(pss_every(100, 1), 1);
        assert_eq!(pss_every(101, 1), 1);
        assert_eq!(pss_every(102, 1), 2);
        assert_eq!(pss_every(1000, 1), 10);
        assert_eq!(pss_every(0, 5), 1);
        let run = |every| SessionRun {
            trial: 0,
            dialect: String::new(),
            turns: Vec::new(),
            growth_bytes_per_turn: None,
            warmup_turns: 1,
            pss_every: every,
            growth: None,
            lag: None,
            render: None,
            checkpoints: Vec::new(),
            idle_seconds: 0.0,
            idle_cpu_share: None,
            idle_monotonic_ns: None,
            idle_output: None,
            startup_output: None,
            pastes: Vec::new(),
        };
        let due = |every, last| -> Vec<u32> {
            let run = run(every);
            (1..=last).filter(|&t| run.pss_due(t, last)).collect()
        };
        assert_eq!(due(1, 5), [1, 2, 3, 4, 5]);
        // The warm-up, every tenth turn after it, and the last.
        assert_eq!(due(10, 35), [1, 11, 21, 31, 35]);
        assert_eq!(due(10, 1000).len(), 1 + 100);
        // A result written before the field existed read PSS after every turn.
        let json = serde_json::to_value(run(1)).unwrap();
        assert!(json.get("pss_every").is_none());
        let old: SessionRun = serde_json::from_value(json).unwrap();
        assert_eq!(old.pss_every, 1);
    }

    fn point(t_ms: u64, rss_bytes: u64) -> MemoryPoint {
        MemoryPoint {
            t_ms,
            rss_bytes,
            pss_bytes: None,
        }
    }

    #[test]
    fn a_session_written_before_checkpoints_still_loads() {
        let old = r#"{"trial": 0, "dialect": "anthropic", "idle_seconds": 2.0,
            "growth_bytes_per_turn": 5.0,
            "turns": [{"turn": 1, "turn_seconds": 0.5, "cpu_seconds": 0.1, "rss_bytes": 7}]}"#;
        let run: SessionRun = serde_json::from_str(old).unwrap();
        assert_eq!(run.warmup_turns, 0);
        assert!(run.checkpoints.is_empty() && run.lag.is_none());
        assert_eq!(run.turns[0].output, None);
        // What this version adds is written only when present.
        let written = serde_json::to_string(&run).unwrap();
        assert!(!written.contains("checkpoints") && !written.contains("output"));
    }

    #[test]
    fn short_series_are_kept_whole() {
        let points: Vec<_> = (0..10).map(|t| point(t, t * 10)).collect();
        let series = MemorySeries::from_points(Phase::Measure, 0, "cold", None, points.clone());
        assert_eq!(series.points, points);
    }

    #[test]
    fn long_series_are_downsampled_keeping_ends_and_the_peak() {
        let mut points: Vec<_> = (0..5000).map(|t| point(t, 100)).collect();
        points[2345].rss_bytes = 9999;
        let series = MemorySeries::from_points(Phase::Ui, 1, "ui", Some(3), points);
        assert_eq!(series.points.len(), MAX_POINTS);
        assert_eq!(series.points[0].t_ms, 0);
        assert_eq!(series.points[MAX_POINTS - 1].t_ms, 4999);
        assert_eq!(series.peak_rss_bytes(), 9999);
        assert!(series.points.windows(2).all(|w| w[0].t_ms < w[1].t_ms));
    }

    #[test]
    fn screens_lose_trailing_blanks_and_keep_their_limit() {
        let screen = Screen::new(Phase::Measure, 0, "cold", "> ready   \n\n  \n".into());
        assert_eq!(screen.text, "> ready");
        let huge = Screen::new(Phase::Measure, 0, "cold", "x".repeat(MAX_SCREEN_CHARS + 5));
        assert_eq!(huge.text.chars().count(), MAX_SCREEN_CHARS);
    }
}
