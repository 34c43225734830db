//! The circumstances of one trial of one phase: its starts, settles, host and load.

use super::{MAX_SETTLES, MAX_STARTS, MAX_TERMINAL_WINDOWS, truncate_chars};
use crate::detail::TerminalOutput;
use crate::metric::Phase;

/// The circumstances of one trial of one phase: when it started, how busy the
/// machine was, where it ran and how many processes the target had. Every field
/// but the trial's identity is optional, because older results and phases that
/// did not measure a fact leave it out; readers show what is there.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct TrialRecord {
    /// The phase the trial belongs to.
    pub phase: Phase,
    /// The trial, from 0 to 100.
    #[cfg_attr(feature = "schema", schemars(range(min = 0, max = 100)))]
    pub trial: u32,
    /// When the trial started, in milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_unix_ms: Option<u64>,
    /// The 1, 5 and 15 minute load averages (`/proc/loadavg`) when the trial started;
    /// finite and non-negative.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_average: Option<[f64; 3]>,
    /// The host name of the machine that ran the trial, at most 255 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(length(max = 255)))]
    pub host: Option<String>,
    /// How long a fixed CPU loop ([`crate::compare::speed_probe::probe`]) took just before the
    /// trial started, in seconds; finite and positive. Two separate runs compare these
    /// to estimate how far the host's speed moved between them. Absent in files
    /// written before this field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub speed_probe_seconds: Option<f64>,
    /// How many processes of the target were found at the trial's memory
    /// measurement; a change between trials means a process (a daemon) came or went.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_count: Option<u32>,
    /// Every settle of the trial (the wait after ready before memory is measured, or
    /// after each staircase step), in order, at most 128: what was asked for and how
    /// long it took. Absent when the trial settled nothing (and in files written
    /// before this field).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(length(max = 128)))]
    pub settles: Vec<SettleRecord>,
    /// The exit code of a program that exited by itself with one (`clibench startup
    /// --ready exit`), for hyperfine's `exit_codes`; absent when clibench stopped it or
    /// a signal ended it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The install whose home a trial of a phase after install used (from 0); with
    /// several installs the trials take them in turn. Absent for prepare and install, and
    /// in files written before this field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(range(min = 0, max = 100)))]
    pub install: Option<u32>,
    /// When each of the trial's timed starts was spawned, in order, at most
    /// [`MAX_STARTS`]: what shows how close an A/B run's tight pair put base's and head's
    /// starts. Absent when the trial started nothing (and in files written before this
    /// field).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(length(max = 8)))]
    pub starts: Vec<StartRecord>,
    /// The CPU this whole trial and the other side's trial of the same number, run at the
    /// same moment (`ab --schedule duet` of a runtime, ui or session trial), were both
    /// confined to; absent for a trial that ran alone (a measure trial's starts say it
    /// per start instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_cpu: Option<u32>,
    /// What the program wrote to its terminal over each window of the trial, in order,
    /// at most [`MAX_TERMINAL_WINDOWS`]: a measure trial's starts until ready and idle
    /// after ready, a ui trial's steps. Absent when the trial counted none (and in files
    /// written before this field).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(length(max = 64)))]
    pub terminal: Vec<TerminalWindow>,
}

/// What a program wrote to its terminal over one window of a trial.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct TerminalWindow {
    /// Which window: `cold to ready`, `cold idle after ready`, `warm to ready`, `warm
    /// idle after ready`, or a ui step's name (`ui: NAME`); at most 40 characters.
    #[cfg_attr(feature = "schema", schemars(length(max = 40)))]
    pub window: String,
    /// How long the window lasted, in seconds.
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub seconds: f64,
    /// What the program wrote.
    pub output: TerminalOutput,
}

/// One timed start of a trial.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct StartRecord {
    /// Which start: `cold` or `warm`; at most 40 characters.
    #[cfg_attr(feature = "schema", schemars(length(max = 40)))]
    pub session: String,
    /// When its program was spawned, in microseconds since the Unix epoch.
    pub spawned_unix_us: u64,
    /// The CPU this start and the other side's, spawned at the same moment (`ab
    /// --schedule duet`), were both confined to; absent for a start that ran alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_cpu: Option<u32>,
}

/// How a settle waited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum SettleUntil {
    /// A fixed time (`settle = "1s"`).
    Fixed,
    /// Until the family's RSS and process count stayed within the tolerance for the
    /// quiet interval, at most `max_seconds` (`settle = "auto"`).
    Quiet,
}

/// How a settle ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum SettleEnded {
    /// A fixed settle waited its whole time.
    Elapsed,
    /// The family was quiet for the interval.
    Quiet,
    /// The maximum passed while the family still changed: measured as it was.
    Max,
    /// The program closed its terminal during the settle.
    Closed,
}

/// One settle: what was asked for and what it took.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SettleRecord {
    /// Which settle of the trial: `cold`, `warm`, `ui`, or for the staircase `warmup`,
    /// `baseline`, `step-N` (from 0) and `teardown`; at most 40 characters.
    #[cfg_attr(feature = "schema", schemars(length(max = 40)))]
    pub session: String,
    /// Fixed or quiet.
    pub until: SettleUntil,
    /// The fixed time, or the quiet settle's maximum, in seconds.
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub max_seconds: f64,
    /// The quiet interval in seconds (quiet settles only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub quiet_seconds: Option<f64>,
    /// The allowed RSS difference as a fraction, 0.01 for 1 % (quiet settles only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(range(min = 0, max = 1)))]
    pub tolerance: Option<f64>,
    /// How long the settle took, in seconds.
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub took_seconds: f64,
    /// How it ended.
    pub ended: SettleEnded,
}

impl TrialRecord {
    /// A record of `trial` of `phase` with no fact yet.
    pub fn new(phase: Phase, trial: u32) -> TrialRecord {
        TrialRecord {
            phase,
            trial,
            started_unix_ms: None,
            load_average: None,
            speed_probe_seconds: None,
            host: None,
            process_count: None,
            settles: Vec::new(),
            exit_code: None,
            install: None,
            starts: Vec::new(),
            shared_cpu: None,
            terminal: Vec::new(),
        }
    }

    /// Adds a terminal window, keeping at most [`MAX_TERMINAL_WINDOWS`] (the first ones).
    pub fn push_terminal(&mut self, mut window: TerminalWindow) {
        if self.terminal.len() < MAX_TERMINAL_WINDOWS {
            window.window = truncate_chars(window.window, crate::detail::MAX_LABEL_CHARS);
            self.terminal.push(window);
        }
    }

    /// Adds a start, keeping at most [`MAX_STARTS`] (the first ones).
    pub fn push_start(&mut self, mut start: StartRecord) {
        if self.starts.len() < MAX_STARTS {
            start.session = truncate_chars(start.session, crate::detail::MAX_LABEL_CHARS);
            self.starts.push(start);
        }
    }

    /// Adds a settle, keeping at most [`MAX_SETTLES`] (the first ones) so the record
    /// stays valid.
    pub fn push_settle(&mut self, mut settle: SettleRecord) {
        if self.settles.len() < MAX_SETTLES {
            settle.session = truncate_chars(settle.session, crate::detail::MAX_LABEL_CHARS);
            self.settles.push(settle);
        }
    }
}
