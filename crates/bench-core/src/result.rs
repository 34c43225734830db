//! The result file: one JSON document per side (one build of the target under test).
//!
//! The format is public and documented by `docs/result.schema.json`, generated
//! from these types. Loading rejects unknown fields and checks every limit below,
//! naming the JSON path of the offending field; saving checks the same limits and
//! writes atomically.
//!
//! ```
//! use bench_core::{record, Metric, Request, ResultFile, Role, Sample};
//!
//! let mut result = ResultFile::new(Request::new("0123abc", Role::Candidate));
//! record(&mut result.side, Metric::Cold, 0, Sample::Value(0.412));
//! record(&mut result.side, Metric::Cold, 1, Sample::Error("timed out".into()));
//! let text = result.to_json_string();
//! assert_eq!(ResultFile::from_json_str(&text).unwrap(), result);
//! ```

use crate::detail::{
    MAX_CHECKPOINT_KEYS, MAX_CHECKPOINTS, MAX_LABEL_CHARS, MAX_POINTS, MAX_SCREEN_CHARS,
    MAX_SCREENS, MAX_SERIES, MAX_STEPS, MAX_TURNS, MemorySeries, Screen, SessionRun, StaircaseRun,
};
use crate::io::{WriteError, write_atomic};
use crate::metric::{Metric, Phase};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

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
/// The longest error message kept, in characters.
pub const MAX_ERROR_CHARS: usize = 500;
/// The longest process name kept, in characters.
pub const MAX_NAME_CHARS: usize = 80;
/// The most processes kept in [`Side::processes`].
pub const MAX_PROCESSES: usize = 128;

/// Which side of a comparison a result describes.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The reference build (usually the target branch).
    Base,
    /// The build under review (usually the pull request's head). A single run is a candidate.
    #[default]
    Candidate,
}

impl Role {
    /// `base` or `candidate`.
    pub fn name(self) -> &'static str {
        match self {
            Role::Base => "base",
            Role::Candidate => "candidate",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The [`Request::config`] key holding the overrides a run was given (`clibench run --set`,
/// `ab --base`/`--head`), described in one line.
pub const OVERRIDES_KEY: &str = "overrides";

/// What was asked for: which build of which repository, and by whom.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// The repository the benchmark runs for (`owner/name`), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// The repository the sources are fetched from, when it differs (a fork).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_repository: Option<String>,
    /// The commit (or other build identifier) under test.
    pub sha: String,
    /// The commit of the harness that measured, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness_sha: Option<String>,
    /// The pull request number, when the run is for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr: Option<u64>,
    /// The CI run that measured, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The CI run's attempt number, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// Base or candidate.
    #[serde(default)]
    pub role: Role,
    /// Free-form settings of the run (spec file, trial count, ...), as strings.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub config: BTreeMap<String, String>,
}

impl Request {
    /// A request for `sha` in `role`, with every optional field empty.
    pub fn new(sha: impl Into<String>, role: Role) -> Request {
        Request {
            sha: sha.into(),
            role,
            ..Request::default()
        }
    }
}

/// One sample of one metric in one trial: exactly one of `value` or `error`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Observation {
    /// The trial, from 0 to 100.
    #[cfg_attr(feature = "schema", schemars(range(min = 0, max = 100)))]
    pub trial: u32,
    /// The measured value in the metric's unit (seconds or bytes): finite and non-negative.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub value: Option<f64>,
    /// Why the measurement failed, at most 500 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(length(max = 500)))]
    pub error: Option<String>,
}

impl Observation {
    /// A successful sample.
    pub fn value(trial: u32, value: f64) -> Observation {
        Observation {
            trial,
            value: Some(value),
            error: None,
        }
    }

    /// A failed sample.
    pub fn error(trial: u32, error: impl Into<String>) -> Observation {
        Observation {
            trial,
            value: None,
            error: Some(error.into()),
        }
    }
}

/// Memory of one process at the last memory measurement. Sizes are in bytes.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ProcessMemory {
    /// Process id.
    pub pid: u32,
    /// The parent's process id, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ppid: Option<u32>,
    /// Process name (`comm`), at most 80 characters.
    #[cfg_attr(feature = "schema", schemars(length(max = 80)))]
    pub name: String,
    /// Resident set size, bytes.
    pub rss: u64,
    /// Proportional set size, bytes; absent when it could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pss: Option<u64>,
    /// Unique set size (private clean + private dirty), bytes; absent when unreadable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uss: Option<u64>,
    /// Swapped-out bytes; absent when unreadable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap: Option<u64>,
    /// User plus system CPU seconds since the process started; absent when unreadable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub cpu_seconds: Option<f64>,
    /// Threads of the process, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    /// The command line, arguments joined with spaces, at most 200 characters; absent in
    /// older results and when it was unreadable. Text from the target: show it inert.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(length(max = 200)))]
    pub cmdline: Option<String>,
    /// What the process is to the program measured; absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<ProcessRole>,
}

/// What a process of the family is to the program clibench started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ProcessRole {
    /// The process clibench started in the terminal.
    Program,
    /// A descendant of the program, in its session.
    Child,
    /// Detached: its own session, or reparented (its parent chain no longer reaches the
    /// program), so it may outlive the program.
    Daemon,
}

impl ProcessRole {
    /// The word a report shows.
    pub fn word(self) -> &'static str {
        match self {
            ProcessRole::Program => "program",
            ProcessRole::Child => "child",
            ProcessRole::Daemon => "daemon",
        }
    }
}

/// The longest command line kept in [`ProcessMemory::cmdline`], in characters.
pub const MAX_CMDLINE_CHARS: usize = 200;

/// The longest host name kept, in characters.
pub const MAX_HOST_CHARS: usize = 255;
/// The most trial records kept in [`Side::trials`]: one per phase and trial.
pub const MAX_TRIAL_RECORDS: usize = Phase::ALL.len() * (MAX_TRIAL as usize + 1);

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
    /// How long a fixed CPU loop ([`crate::speed_probe::probe`]) took just before the
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
}

/// The most settles kept in one [`TrialRecord`].
pub const MAX_SETTLES: usize = 128;

/// The most starts kept in one [`TrialRecord`].
pub const MAX_STARTS: usize = 8;

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

/// Everything measured about one build.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Side {
    /// The commit (or build identifier) measured.
    pub sha: String,
    /// Every metric's samples, at most one per trial.
    #[serde(default, deserialize_with = "metrics_by_name")]
    #[cfg_attr(feature = "schema", schemars(schema_with = "metrics_schema"))]
    pub metrics: BTreeMap<Metric, Vec<Observation>>,
    /// The per-process memory breakdown of the last memory measurement, at most 128 entries.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(length(max = 128)))]
    pub processes: Vec<ProcessMemory>,
    /// Facts about the run: tool versions, kernel, CPU, artifact and installation formats.
    #[serde(default)]
    pub runtime: BTreeMap<String, String>,
    /// Release artifacts: file name -> size in bytes.
    #[serde(default)]
    pub artifacts: BTreeMap<String, u64>,
    /// Named durations in seconds: phase wall times, `ui:<step>` times.
    #[serde(default)]
    pub timings: BTreeMap<String, f64>,
    /// Why the last phase failed as a whole, at most 500 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(length(max = 500)))]
    pub error: Option<String>,
    /// The circumstances of each trial, at most one record per phase and trial.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(length(max = 707)))]
    pub trials: Vec<TrialRecord>,
    /// Steps that were not run, `<phase>:<trial>` -> why (at most 500 characters each):
    /// "same failure as measure trial 0", "install trial 0 failed". A skipped trial has
    /// no samples; absent when nothing was skipped (files written before this field).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub skipped: BTreeMap<String, String>,
    /// The process family's memory over time during each measured start and UI
    /// session, at most 400 series (optional; drawn by the HTML report).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(length(max = 400)))]
    pub memory_series: Vec<MemorySeries>,
    /// The terminal's screen when the program became ready, at most 16 (optional).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(length(max = 16)))]
    pub screens: Vec<Screen>,
    /// Each trial's staircase steps (optional; the metrics `instance_*` and
    /// `reclaimed_rss` summarize them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(length(max = 101)))]
    pub staircases: Vec<StaircaseRun>,
    /// Each trial's agent session, turn by turn (optional; the session phase's metrics
    /// summarize them: medians over the turns, the growth slope, the idle share).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(length(max = 101)))]
    pub sessions: Vec<SessionRun>,
}

impl Side {
    /// An empty side for `sha`.
    pub fn new(sha: impl Into<String>) -> Side {
        Side {
            sha: sha.into(),
            ..Side::default()
        }
    }

    /// Sets the side's error, cut to [`MAX_ERROR_CHARS`] characters.
    pub fn set_error(&mut self, error: impl Into<String>) {
        self.error = Some(truncate_chars(error.into(), MAX_ERROR_CHARS));
    }

    /// Records that `trial` of `phase` was not run and why (cut to [`MAX_ERROR_CHARS`]
    /// characters).
    pub fn set_skipped(&mut self, phase: crate::Phase, trial: u32, reason: impl Into<String>) {
        self.skipped.insert(
            format!("{phase}:{trial}"),
            truncate_chars(reason.into(), MAX_ERROR_CHARS),
        );
    }

    /// Keeps the [`MAX_PROCESSES`] processes with the most RSS (ties by pid), with
    /// names cut to [`MAX_NAME_CHARS`] characters, so the side stays valid.
    pub fn set_processes(&mut self, mut processes: Vec<ProcessMemory>) {
        processes.sort_by(|a, b| b.rss.cmp(&a.rss).then(a.pid.cmp(&b.pid)));
        processes.truncate(MAX_PROCESSES);
        for process in &mut processes {
            process.name = truncate_chars(std::mem::take(&mut process.name), MAX_NAME_CHARS);
            process.cmdline = process
                .cmdline
                .take()
                .map(|line| truncate_chars(line, MAX_CMDLINE_CHARS));
        }
        self.processes = processes;
    }

    /// The record of `trial` of `phase`, created empty when there is none yet, so
    /// each phase adds the facts it knows (a retried trial overwrites its own).
    pub fn trial_record_mut(&mut self, phase: Phase, trial: u32) -> &mut TrialRecord {
        let index = match self
            .trials
            .iter()
            .position(|record| record.phase == phase && record.trial == trial)
        {
            Some(index) => index,
            None => {
                self.trials.push(TrialRecord::new(phase, trial));
                self.trials.len() - 1
            }
        };
        &mut self.trials[index]
    }

    /// The values of `metric` (errored samples left out), in trial order.
    pub fn values(&self, metric: Metric) -> Vec<f64> {
        let mut samples: Vec<&Observation> =
            self.metrics.get(&metric).into_iter().flatten().collect();
        samples.sort_by_key(|sample| sample.trial);
        samples.iter().filter_map(|sample| sample.value).collect()
    }
}

/// A result file: the request and what was measured for it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", schemars(title = "clibench result"))]
pub struct ResultFile {
    /// The format's version; this clibench reads and writes 1.
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = 1)))]
    pub schema_version: u32,
    /// What was asked for.
    pub request: Request,
    /// What was measured.
    pub side: Side,
}

/// A result file's text could not be turned into a valid [`ResultFile`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Not JSON, or JSON of the wrong shape (a missing or unknown field, a wrong type).
    #[error("at `{path}`: {problem}")]
    Syntax {
        /// The JSON path of the offending value (`side.metrics.cold[2].value`), `.` for the root.
        path: String,
        /// What was wrong, with line and column.
        problem: String,
    },
    /// Well-formed JSON whose `schema_version` is not one this crate reads.
    #[error(
        "at `schema_version`: unsupported version {found} (this clibench reads {SCHEMA_VERSION})"
    )]
    Version {
        /// The version found in the file.
        found: u64,
    },
    /// Well-formed JSON that breaks a limit of the format.
    #[error(transparent)]
    Invalid(#[from] ValidationError),
}

impl ParseError {
    /// The JSON path of the offending field.
    pub fn path(&self) -> &str {
        match self {
            ParseError::Syntax { path, .. } => path,
            ParseError::Version { .. } => "schema_version",
            ParseError::Invalid(error) => &error.path,
        }
    }
}

/// A value that breaks a limit of the format, with its JSON path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at `{path}`: {problem}")]
pub struct ValidationError {
    /// The JSON path of the offending value (`side.metrics.cold[2].trial`).
    pub path: String,
    /// What is wrong with it.
    pub problem: String,
}

/// A result file could not be loaded.
///
/// The message is complete on its own (``invalid result file out/result.json: at
/// `side.metrics.cold[1].trial`: trial 101 is above 100``), because it is what a user
/// sees whether it is printed with `{}` or as an error chain; the cause is kept in
/// a field rather than as the error's `source`, so chains do not repeat it.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("failed to read {path}: {cause}", path = path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        cause: std::io::Error,
    },
    /// The file was read but is not a valid result file.
    #[error("invalid result file {path}: {cause}", path = path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the JSON path.
        cause: ParseError,
    },
    /// The file is a valid result file for another build than the one being measured.
    #[error(
        "{path} holds results for sha `{found}`, not `{expected}`; use another output folder",
        path = path.display()
    )]
    OtherSha {
        /// The file.
        path: PathBuf,
        /// The sha in the file.
        found: String,
        /// The sha being measured.
        expected: String,
    },
}

/// A result file could not be saved. Like [`LoadError`], the message is complete on its own.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    /// The result breaks a limit of the format; nothing was written.
    #[error("refusing to write an invalid result to {path}: {cause}", path = path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        cause: ValidationError,
    },
    /// Writing failed; the earlier file, if any, is unchanged.
    #[error(transparent)]
    Write(#[from] WriteError),
}

impl ResultFile {
    /// A new result with an empty side for the request's sha.
    pub fn new(request: Request) -> ResultFile {
        let side = Side::new(request.sha.clone());
        ResultFile {
            schema_version: SCHEMA_VERSION,
            request,
            side,
        }
    }

    /// Parses and validates a result file's text.
    pub fn from_json_str(text: &str) -> Result<ResultFile, ParseError> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let parsed: Result<ResultFile, _> = serde_path_to_error::deserialize(&mut deserializer);
        let result = match parsed {
            Ok(result) => result,
            Err(error) => {
                // A file from another format version fails for reasons that would only
                // confuse; say the version instead when it can be read.
                if let Some(found) = schema_version_of(text)
                    && found != u64::from(SCHEMA_VERSION)
                {
                    return Err(ParseError::Version { found });
                }
                return Err(ParseError::Syntax {
                    path: error.path().to_string(),
                    problem: error.into_inner().to_string(),
                });
            }
        };
        deserializer.end().map_err(|error| ParseError::Syntax {
            path: ".".into(),
            problem: error.to_string(),
        })?;
        if result.schema_version != SCHEMA_VERSION {
            return Err(ParseError::Version {
                found: result.schema_version.into(),
            });
        }
        result.validate()?;
        Ok(result)
    }

    /// The result as pretty-printed JSON with a final newline.
    pub fn to_json_string(&self) -> String {
        // Invariant: serde_json fails only on maps whose keys are not strings (ours are
        // strings or unit enum variants) and on failing Serialize impls (ours are
        // derived). Non-finite numbers become `null`, and `validate` rejects them
        // before saving.
        let mut text =
            serde_json::to_string_pretty(self).expect("a ResultFile always serializes to JSON");
        text.push('\n');
        text
    }

    /// Reads and validates the result file at `path`.
    pub fn load(path: &Path) -> Result<ResultFile, LoadError> {
        // Bounded and non-blocking: a FIFO, a device or a huge file is refused,
        // not waited on or read until memory runs out.
        let text =
            crate::io::read_input_file(path, crate::io::MAX_INPUT_BYTES).map_err(|cause| {
                LoadError::Read {
                    path: path.to_path_buf(),
                    cause,
                }
            })?;
        ResultFile::from_json_str(&text).map_err(|cause| LoadError::Parse {
            path: path.to_path_buf(),
            cause,
        })
    }

    /// Loads `path` when it exists, so that phases running as separate processes
    /// merge into one file; otherwise starts a new result for `request`.
    ///
    /// A file that exists but does not parse is an error (and is never touched), as
    /// is a file for another sha. The loaded file keeps its own request.
    pub fn load_or_create(path: &Path, request: &Request) -> Result<ResultFile, LoadError> {
        match std::fs::metadata(path) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(ResultFile::new(request.clone()));
            }
            _ => {}
        }
        let result = ResultFile::load(path)?;
        if result.request.sha != request.sha {
            return Err(LoadError::OtherSha {
                path: path.to_path_buf(),
                found: result.request.sha,
                expected: request.sha.clone(),
            });
        }
        Ok(result)
    }

    /// Validates the result and writes it to `path` atomically.
    pub fn save(&self, path: &Path) -> Result<(), SaveError> {
        self.validate().map_err(|cause| SaveError::Invalid {
            path: path.to_path_buf(),
            cause,
        })?;
        write_atomic(path, self.to_json_string().as_bytes())?;
        Ok(())
    }

    /// Checks every limit of the format, returning the first broken one with its JSON path.
    pub fn validate(&self) -> Result<(), ValidationError> {
        let invalid = |path: String, problem: String| Err(ValidationError { path, problem });
        if self.schema_version != SCHEMA_VERSION {
            return invalid(
                "schema_version".into(),
                format!("schema_version must be {SCHEMA_VERSION}"),
            );
        }
        let side = &self.side;
        for (metric, samples) in &side.metrics {
            let mut seen = std::collections::BTreeSet::new();
            for (index, sample) in samples.iter().enumerate() {
                let at = format!("side.metrics.{metric}[{index}]");
                check_trial(&format!("{at}.trial"), sample.trial)?;
                if !seen.insert(sample.trial) {
                    return invalid(
                        format!("{at}.trial"),
                        format!("trial {} appears twice", sample.trial),
                    );
                }
                match (&sample.value, &sample.error) {
                    (Some(value), None) => {
                        if !value.is_finite() || *value < 0.0 {
                            return invalid(
                                format!("{at}.value"),
                                format!("value {value} is not finite and non-negative"),
                            );
                        }
                    }
                    (None, Some(error)) => {
                        check_length(&format!("{at}.error"), error, MAX_ERROR_CHARS)?
                    }
                    _ => {
                        return invalid(
                            at,
                            "an observation needs exactly one of value or error".into(),
                        );
                    }
                }
            }
        }
        if side.processes.len() > MAX_PROCESSES {
            return invalid(
                "side.processes".into(),
                format!(
                    "{} processes are more than {MAX_PROCESSES}",
                    side.processes.len()
                ),
            );
        }
        for (index, process) in side.processes.iter().enumerate() {
            check_length(
                &format!("side.processes[{index}].name"),
                &process.name,
                MAX_NAME_CHARS,
            )?;
            if let Some(cmdline) = &process.cmdline {
                check_length(
                    &format!("side.processes[{index}].cmdline"),
                    cmdline,
                    MAX_CMDLINE_CHARS,
                )?;
            }
            if let Some(cpu) = process.cpu_seconds
                && (!cpu.is_finite() || cpu < 0.0)
            {
                return invalid(
                    format!("side.processes[{index}].cpu_seconds"),
                    format!("cpu_seconds {cpu} is not finite and non-negative"),
                );
            }
        }
        for (name, seconds) in &side.timings {
            if !seconds.is_finite() || *seconds < 0.0 {
                return invalid(
                    format!("side.timings.{name}"),
                    format!("timing {seconds} is not finite and non-negative"),
                );
            }
        }
        if let Some(error) = &side.error {
            check_length("side.error", error, MAX_ERROR_CHARS)?;
        }
        if side.trials.len() > MAX_TRIAL_RECORDS {
            return invalid(
                "side.trials".into(),
                format!(
                    "{} trial records are more than {MAX_TRIAL_RECORDS}",
                    side.trials.len()
                ),
            );
        }
        let mut seen = std::collections::BTreeSet::new();
        for (index, record) in side.trials.iter().enumerate() {
            let at = format!("side.trials[{index}]");
            check_trial(&format!("{at}.trial"), record.trial)?;
            if !seen.insert((record.phase, record.trial)) {
                return invalid(
                    at,
                    format!("{} trial {} is recorded twice", record.phase, record.trial),
                );
            }
            if let Some(load) = record.load_average
                && load.iter().any(|value| !value.is_finite() || *value < 0.0)
            {
                return invalid(
                    format!("{at}.load_average"),
                    format!("load average {load:?} is not finite and non-negative"),
                );
            }
            if let Some(host) = &record.host {
                check_length(&format!("{at}.host"), host, MAX_HOST_CHARS)?;
            }
            if let Some(seconds) = record.speed_probe_seconds
                && !(seconds.is_finite() && seconds > 0.0)
            {
                return invalid(
                    format!("{at}.speed_probe_seconds"),
                    format!("speed probe {seconds} s is not finite and positive"),
                );
            }
            if record.settles.len() > MAX_SETTLES {
                return invalid(
                    format!("{at}.settles"),
                    format!(
                        "{} settles are more than {MAX_SETTLES}",
                        record.settles.len()
                    ),
                );
            }
            if record.starts.len() > MAX_STARTS {
                return invalid(
                    format!("{at}.starts"),
                    format!("{} starts are more than {MAX_STARTS}", record.starts.len()),
                );
            }
            for (index, start) in record.starts.iter().enumerate() {
                let at = format!("{at}.starts[{index}].session");
                check_length(&at, &start.session, MAX_LABEL_CHARS)?;
            }
            for (index, settle) in record.settles.iter().enumerate() {
                let at = format!("{at}.settles[{index}]");
                check_length(&format!("{at}.session"), &settle.session, MAX_LABEL_CHARS)?;
                let seconds = [
                    ("max_seconds", Some(settle.max_seconds)),
                    ("quiet_seconds", settle.quiet_seconds),
                    ("took_seconds", Some(settle.took_seconds)),
                ];
                for (field, value) in seconds {
                    if let Some(value) = value
                        && (!value.is_finite() || value < 0.0)
                    {
                        return invalid(
                            format!("{at}.{field}"),
                            format!("{value} is not finite and non-negative"),
                        );
                    }
                }
                if let Some(tolerance) = settle.tolerance
                    && !(0.0..=1.0).contains(&tolerance)
                {
                    return invalid(
                        format!("{at}.tolerance"),
                        format!("tolerance {tolerance} is not a fraction from 0 to 1"),
                    );
                }
            }
        }
        validate_details(side)
    }
}

/// The limits of the optional parts the HTML report draws.
fn validate_details(side: &Side) -> Result<(), ValidationError> {
    let invalid = |path: String, problem: String| Err(ValidationError { path, problem });
    let too_many = |path: &str, found: usize, max: usize| {
        invalid(
            path.to_string(),
            format!("{found} entries are more than {max}"),
        )
    };
    if side.memory_series.len() > MAX_SERIES {
        return too_many("side.memory_series", side.memory_series.len(), MAX_SERIES);
    }
    for (index, series) in side.memory_series.iter().enumerate() {
        let at = format!("side.memory_series[{index}]");
        check_trial(&format!("{at}.trial"), series.trial)?;
        check_length(&format!("{at}.session"), &series.session, MAX_LABEL_CHARS)?;
        if series.points.len() > MAX_POINTS {
            return too_many(&format!("{at}.points"), series.points.len(), MAX_POINTS);
        }
    }
    if side.screens.len() > MAX_SCREENS {
        return too_many("side.screens", side.screens.len(), MAX_SCREENS);
    }
    for (index, screen) in side.screens.iter().enumerate() {
        let at = format!("side.screens[{index}]");
        check_trial(&format!("{at}.trial"), screen.trial)?;
        check_length(&format!("{at}.session"), &screen.session, MAX_LABEL_CHARS)?;
        check_length(&format!("{at}.text"), &screen.text, MAX_SCREEN_CHARS)?;
    }
    if side.staircases.len() > MAX_TRIAL as usize + 1 {
        return too_many(
            "side.staircases",
            side.staircases.len(),
            MAX_TRIAL as usize + 1,
        );
    }
    for (index, run) in side.staircases.iter().enumerate() {
        let at = format!("side.staircases[{index}]");
        check_trial(&format!("{at}.trial"), run.trial)?;
        if run.steps.len() > MAX_STEPS {
            return too_many(&format!("{at}.steps"), run.steps.len(), MAX_STEPS);
        }
    }
    if side.sessions.len() > MAX_TRIAL as usize + 1 {
        return too_many("side.sessions", side.sessions.len(), MAX_TRIAL as usize + 1);
    }
    for (index, run) in side.sessions.iter().enumerate() {
        let at = format!("side.sessions[{index}]");
        check_trial(&format!("{at}.trial"), run.trial)?;
        check_length(&format!("{at}.dialect"), &run.dialect, MAX_LABEL_CHARS)?;
        if run.turns.len() > MAX_TURNS {
            return too_many(&format!("{at}.turns"), run.turns.len(), MAX_TURNS);
        }
        for (turn, measured) in run.turns.iter().enumerate() {
            if measured.typing_lag_seconds.len() > 100 {
                return too_many(
                    &format!("{at}.turns[{turn}].typing_lag_seconds"),
                    measured.typing_lag_seconds.len(),
                    100,
                );
            }
        }
        if run.checkpoints.len() > MAX_CHECKPOINTS {
            return too_many(
                &format!("{at}.checkpoints"),
                run.checkpoints.len(),
                MAX_CHECKPOINTS,
            );
        }
        if run.pastes.len() > crate::detail::MAX_PASTES {
            return too_many(
                &format!("{at}.pastes"),
                run.pastes.len(),
                crate::detail::MAX_PASTES,
            );
        }
        for (index, checkpoint) in run.checkpoints.iter().enumerate() {
            if checkpoint.key_echo_seconds.len() > MAX_CHECKPOINT_KEYS {
                return too_many(
                    &format!("{at}.checkpoints[{index}].key_echo_seconds"),
                    checkpoint.key_echo_seconds.len(),
                    MAX_CHECKPOINT_KEYS,
                );
            }
        }
    }
    Ok(())
}

fn check_trial(path: &str, trial: u32) -> Result<(), ValidationError> {
    if trial > MAX_TRIAL {
        return Err(ValidationError {
            path: path.to_string(),
            problem: format!("trial {trial} is above {MAX_TRIAL}"),
        });
    }
    Ok(())
}

/// The JSON Schema of result files, generated from the types, as pretty-printed
/// JSON with a final newline. It is checked in at `docs/result.schema.json`.
#[cfg(feature = "schema")]
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(ResultFile);
    // Invariant: a schemars Schema is a serde_json::Value, which always serializes.
    let mut text = serde_json::to_string_pretty(&schema).expect("a JSON Schema serializes");
    text.push('\n');
    text
}

fn check_length(path: &str, text: &str, max: usize) -> Result<(), ValidationError> {
    let chars = text.chars().count();
    if chars > max {
        return Err(ValidationError {
            path: path.to_string(),
            problem: format!("{chars} characters are more than {max}"),
        });
    }
    Ok(())
}

/// Cuts `text` to at most `max` characters, keeping its start (what failed) and its
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
    let head = max / 3;
    let tail = max - head - mark;
    let mut cut: String = text.chars().take(head).collect();
    cut.push_str(MARK);
    cut.extend(text.chars().skip(count - tail));
    cut
}

/// Reads the `metrics` map with string keys first, so that the JSON path of an
/// error inside it names the metric (`side.metrics.cold[1].value`): paths through
/// enum-typed keys are not tracked.
fn metrics_by_name<'de, D>(deserializer: D) -> Result<BTreeMap<Metric, Vec<Observation>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let by_name: BTreeMap<String, Vec<Observation>> =
        serde::Deserialize::deserialize(deserializer)?;
    by_name
        .into_iter()
        .map(|(name, samples)| {
            let metric = name.parse::<Metric>().map_err(serde::de::Error::custom)?;
            Ok((metric, samples))
        })
        .collect()
}

/// The schema of the `metrics` map: keys are metric names, values lists of observations.
#[cfg(feature = "schema")]
fn metrics_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let metric = generator.subschema_for::<Metric>();
    let observations = generator.subschema_for::<Vec<Observation>>();
    schemars::json_schema!({
        "type": "object",
        "propertyNames": metric,
        "additionalProperties": observations,
    })
}

fn schema_version_of(text: &str) -> Option<u64> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    value.get("schema_version")?.as_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ResultFile {
        let mut request = Request::new("abc123", Role::Base);
        request.repository = Some("owner/agent".into());
        request.pr = Some(42);
        request.config.insert("trials".into(), "3".into());
        let mut result = ResultFile::new(request);
        let side = &mut result.side;
        side.metrics.insert(
            Metric::Cold,
            vec![
                Observation::value(0, 0.412),
                Observation::error(1, "timed out"),
            ],
        );
        side.metrics
            .insert(Metric::Disk, vec![Observation::value(0, 123456789.0)]);
        side.processes.push(ProcessMemory {
            pid: 42,
            ppid: Some(1),
            name: "node".into(),
            rss: 100 << 20,
            pss: Some(80 << 20),
            uss: None,
            swap: Some(0),
            cpu_seconds: Some(1.5),
            threads: Some(11),
            cmdline: Some("node /usr/bin/agent --flag".into()),
            role: Some(ProcessRole::Program),
        });
        side.runtime.insert("kernel".into(), "6.1.0".into());
        side.artifacts.insert("agent.tgz".into(), 4096);
        side.timings.insert("ui:open".into(), 0.25);
        side.error = Some("warm settle: timed out".into());
        result
    }

    fn parse_error(text: &str) -> ParseError {
        ResultFile::from_json_str(text).unwrap_err()
    }

    fn with_observation(observation: &str) -> String {
        format!(
            r#"{{"schema_version":1,"request":{{"sha":"a"}},"side":{{"sha":"a","metrics":{{"cold":[{{"trial":0,"value":1.0}},{observation}]}}}}}}"#
        )
    }

    #[test]
    fn round_trips_through_json() {
        let result = sample();
        let text = result.to_json_string();
        assert_eq!(ResultFile::from_json_str(&text).unwrap(), result);
    }

    #[test]
    fn generated_results_round_trip_exactly() {
        use crate::rng::SplitMix64;
        let mut rng = SplitMix64::new(42);
        let texts = [
            "timed out",
            "quote \" and \\ back",
            "line\nbreak",
            "µs ✓ 日本",
            "",
        ];
        for _ in 0..300 {
            let mut result = ResultFile::new(Request::new("abc", Role::Candidate));
            for metric in Metric::ALL {
                if rng.below(3) == 0 {
                    continue;
                }
                let samples = (0..rng.below(8) as u32)
                    .map(|trial| {
                        if rng.below(5) == 0 {
                            Observation::error(trial, texts[rng.below(texts.len())])
                        } else {
                            // Arbitrary finite, non-negative doubles: every bit pattern of
                            // the mantissa at a wide spread of exponents.
                            let bits = rng.next_u64() & 0x7FEF_FFFF_FFFF_FFFF;
                            Observation::value(trial, f64::from_bits(bits))
                        }
                    })
                    .collect();
                result.side.metrics.insert(metric, samples);
            }
            result
                .side
                .timings
                .insert("t".into(), rng.next_u64() as f64 / 3.0);
            assert_eq!(
                ResultFile::from_json_str(&result.to_json_string()).unwrap(),
                result
            );
        }
    }

    #[test]
    fn reads_explicit_nulls_as_absent_fields() {
        let text = r#"{"schema_version":1,"request":{"sha":"a","role":"candidate"},
            "side":{"sha":"a","metrics":{"cold":[{"trial":0,"value":null,"error":"boom"}]},
            "processes":[{"pid":1,"name":"x","rss":5,"pss":null}],"error":null}}"#;
        let result = ResultFile::from_json_str(text).unwrap();
        assert_eq!(
            result.side.metrics[&Metric::Cold],
            vec![Observation::error(0, "boom")]
        );
    }

    #[test]
    fn rejects_a_trial_above_100_with_its_path() {
        let error = parse_error(&with_observation(r#"{"trial":101,"value":1.0}"#));
        assert_eq!(error.path(), "side.metrics.cold[1].trial");
        assert_eq!(
            error.to_string(),
            "at `side.metrics.cold[1].trial`: trial 101 is above 100"
        );
    }

    #[test]
    fn rejects_both_or_neither_of_value_and_error() {
        let both = parse_error(&with_observation(r#"{"trial":1,"value":1.0,"error":"x"}"#));
        assert_eq!(both.path(), "side.metrics.cold[1]");
        let neither = parse_error(&with_observation(r#"{"trial":1}"#));
        assert!(
            neither
                .to_string()
                .contains("exactly one of value or error")
        );
    }

    #[test]
    fn rejects_negative_values_long_errors_and_repeated_trials() {
        let negative = parse_error(&with_observation(r#"{"trial":1,"value":-0.5}"#));
        assert_eq!(negative.path(), "side.metrics.cold[1].value");
        let long = format!(r#"{{"trial":1,"error":"{}"}}"#, "é".repeat(501));
        assert_eq!(
            parse_error(&with_observation(&long)).path(),
            "side.metrics.cold[1].error"
        );
        let at_limit = format!(r#"{{"trial":1,"error":"{}"}}"#, "é".repeat(500));
        assert!(ResultFile::from_json_str(&with_observation(&at_limit)).is_ok());
        let repeated = parse_error(&with_observation(r#"{"trial":0,"value":2.0}"#));
        assert_eq!(
            repeated.to_string(),
            "at `side.metrics.cold[1].trial`: trial 0 appears twice"
        );
    }

    #[test]
    fn rejects_unknown_fields_and_metrics_with_their_paths() {
        let unknown = parse_error(&with_observation(r#"{"trial":1,"value":1.0,"unit":"s"}"#));
        assert_eq!(unknown.path(), "side.metrics.cold[1].unit");
        assert!(
            unknown.to_string().contains("unknown field `unit`"),
            "{unknown}"
        );
        let metric = parse_error(
            r#"{"schema_version":1,"request":{"sha":"a"},"side":{"sha":"a","metrics":{"colder":[]}}}"#,
        );
        assert_eq!(
            metric.to_string(),
            "at `side.metrics`: unknown metric `colder` at line 1 column 84"
        );
    }

    #[test]
    fn rejects_too_many_processes_and_long_names() {
        let mut result = sample();
        result.side.processes[0].name = "n".repeat(81);
        assert_eq!(
            result.validate().unwrap_err().path,
            "side.processes[0].name"
        );
        let process = result.side.processes[0].clone();
        result.side.processes = vec![process; 129];
        assert_eq!(result.validate().unwrap_err().path, "side.processes");
    }

    #[test]
    fn set_processes_keeps_the_largest_and_cuts_names() {
        let mut side = Side::new("a");
        let processes = (0..200)
            .map(|pid| ProcessMemory {
                pid,
                ppid: None,
                name: "x".repeat(100),
                rss: u64::from(pid) * 10,
                pss: None,
                uss: None,
                swap: None,
                cpu_seconds: None,
                threads: None,
                cmdline: Some("y".repeat(300)),
                role: None,
            })
            .collect();
        side.set_processes(processes);
        assert_eq!(side.processes.len(), MAX_PROCESSES);
        assert_eq!(side.processes[0].pid, 199);
        assert_eq!(side.processes[0].name.chars().count(), MAX_NAME_CHARS);
        let cmdline = side.processes[0].cmdline.as_deref().unwrap_or_default();
        assert_eq!(cmdline.chars().count(), MAX_CMDLINE_CHARS);
        assert_eq!(side.processes[127].pid, 72);
    }

    #[test]
    fn a_cut_error_keeps_what_failed_and_the_bottom_of_the_screen() {
        let screen: String = (1..=40)
            .map(|row| format!("row {row:02} of the screen\n"))
            .collect();
        let error = format!("turn 3: timed out; last screen:\n{screen}> the prompt");
        let cut = truncate_chars(error, MAX_ERROR_CHARS);
        assert_eq!(cut.chars().count(), MAX_ERROR_CHARS);
        assert!(cut.starts_with("turn 3: timed out; last screen:"), "{cut}");
        assert!(cut.ends_with("row 40 of the screen\n> the prompt"), "{cut}");
        assert!(cut.contains(" … "), "{cut}");
        assert_eq!(truncate_chars("short".into(), MAX_ERROR_CHARS), "short");
        assert_eq!(truncate_chars("abcdef".into(), 2), "ab");
    }

    #[test]
    fn truncated_and_malformed_text_names_a_path() {
        let text = sample().to_json_string();
        let cut = &text[..text.len() / 2];
        let error = parse_error(cut);
        assert!(matches!(error, ParseError::Syntax { .. }));
        assert!(error.to_string().contains("EOF"), "{error}");
        let wrong_type = parse_error(&with_observation(r#"{"trial":"one","value":1.0}"#));
        assert_eq!(wrong_type.path(), "side.metrics.cold[1].trial");
        let trailing = parse_error(&format!("{text}x"));
        assert!(trailing.to_string().contains("trailing"), "{trailing}");
    }

    #[test]
    fn another_schema_version_is_named() {
        let error =
            parse_error(r#"{"schema_version":2,"request":{"sha":"a"},"side":{"sha":"a","new":1}}"#);
        assert_eq!(error, ParseError::Version { found: 2 });
        let error = parse_error(r#"{"schema_version":7,"request":{"sha":"a"},"side":{"sha":"a"}}"#);
        assert_eq!(error.path(), "schema_version");
    }

    #[test]
    fn save_refuses_invalid_results_and_writes_valid_ones() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("result.json");
        let mut result = sample();
        result.save(&path).unwrap();
        assert_eq!(ResultFile::load(&path).unwrap(), result);
        result.side.timings.insert("bad".into(), f64::NAN);
        let error = result.save(&path).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("at `side.timings.bad`: timing NaN"),
            "{error}"
        );
        assert_eq!(ResultFile::load(&path).unwrap(), sample());
    }

    #[test]
    fn load_or_create_merges_creates_and_never_overwrites_garbage() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("result.json");
        let request = Request::new("abc123", Role::Base);
        let fresh = ResultFile::load_or_create(&path, &request).unwrap();
        assert_eq!(fresh, ResultFile::new(request.clone()));
        sample().save(&path).unwrap();
        assert_eq!(
            ResultFile::load_or_create(&path, &request).unwrap(),
            sample()
        );
        let other =
            ResultFile::load_or_create(&path, &Request::new("def", Role::Base)).unwrap_err();
        assert!(
            other.to_string().contains("sha `abc123`, not `def`"),
            "{other}"
        );
        std::fs::write(&path, b"{\"schema_version\":1,").unwrap();
        let error = ResultFile::load_or_create(&path, &request).unwrap_err();
        let message = error.to_string();
        let expected = format!("invalid result file {}: at `", path.display());
        assert!(message.starts_with(&expected), "{message}");
        assert!(message.contains("EOF while parsing"), "{message}");
        // The message is complete on its own, so an error chain does not repeat it.
        assert!(std::error::Error::source(&error).is_none());
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"schema_version\":1,");
    }

    #[test]
    fn trial_records_round_trip_and_are_optional() {
        let mut result = sample();
        let record = result.side.trial_record_mut(Phase::Measure, 1);
        record.started_unix_ms = Some(1_764_500_000_000);
        record.load_average = Some([0.5, 0.25, 0.125]);
        record.host = Some("runner-7".into());
        result
            .side
            .trial_record_mut(Phase::Measure, 1)
            .process_count = Some(3);
        result.side.trial_record_mut(Phase::Ui, 0).process_count = Some(2);
        result
            .side
            .trial_record_mut(Phase::Ui, 0)
            .push_settle(SettleRecord {
                session: "ui".into(),
                until: SettleUntil::Quiet,
                max_seconds: 5.0,
                quiet_seconds: Some(0.1),
                tolerance: Some(0.01),
                took_seconds: 0.183,
                ended: SettleEnded::Quiet,
            });
        assert_eq!(result.side.trials.len(), 2);
        assert_eq!(result.side.trials[0].host.as_deref(), Some("runner-7"));
        assert_eq!(result.side.trials[0].process_count, Some(3));
        let text = result.to_json_string();
        assert_eq!(ResultFile::from_json_str(&text).unwrap(), result);
        // Without records the field is left out, so older readers see no change.
        assert!(!sample().to_json_string().contains("\"trials\": ["));
    }

    #[test]
    fn rejects_invalid_trial_records_with_their_paths() {
        let mut result = sample();
        result.side.trial_record_mut(Phase::Measure, 0).load_average = Some([1.0, f64::NAN, 0.0]);
        assert_eq!(
            result.validate().unwrap_err().path,
            "side.trials[0].load_average"
        );
        result.side.trials[0].load_average = None;
        result.side.trials[0].host = Some("h".repeat(256));
        assert_eq!(result.validate().unwrap_err().path, "side.trials[0].host");
        result.side.trials[0].host = None;
        for bad in [0.0, -1.0, f64::INFINITY] {
            result.side.trials[0].speed_probe_seconds = Some(bad);
            assert_eq!(
                result.validate().unwrap_err().path,
                "side.trials[0].speed_probe_seconds"
            );
        }
        result.side.trials[0].speed_probe_seconds = Some(0.002);
        assert!(result.validate().is_ok());
        result.side.trials[0].speed_probe_seconds = None;
        let twice = result.side.trials[0].clone();
        result.side.trials.push(twice);
        assert!(
            result
                .validate()
                .unwrap_err()
                .to_string()
                .contains("measure trial 0 is recorded twice")
        );
        result.side.trials.pop();
        result.side.trials[0].push_settle(SettleRecord {
            session: "cold".into(),
            until: SettleUntil::Fixed,
            max_seconds: 1.0,
            quiet_seconds: None,
            tolerance: Some(1.5),
            took_seconds: 1.0,
            ended: SettleEnded::Elapsed,
        });
        assert_eq!(
            result.validate().unwrap_err().path,
            "side.trials[0].settles[0].tolerance"
        );
        result.side.trials[0].settles[0].tolerance = None;
        result.side.trials[0].settles[0].took_seconds = -1.0;
        assert_eq!(
            result.validate().unwrap_err().path,
            "side.trials[0].settles[0].took_seconds"
        );
        result.side.trials[0].settles.clear();
        result.side.trials[0].trial = 101;
        assert_eq!(result.validate().unwrap_err().path, "side.trials[0].trial");
    }

    #[test]
    fn missing_file_is_a_read_error_naming_it() {
        let error = ResultFile::load(Path::new("/nonexistent/result.json")).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("failed to read /nonexistent/result.json: No such file")
        );
    }
}
