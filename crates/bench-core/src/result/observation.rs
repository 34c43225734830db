//! One sample of a metric, and one process's memory.

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
    /// Why the measurement failed, at most 4,000 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(length(max = 4000)))]
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
