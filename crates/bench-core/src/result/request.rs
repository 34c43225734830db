//! What was asked for: the side's role, its commit and the run's configuration.

use std::collections::BTreeMap;
use std::fmt;

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
    /// The `clibench run` or `ab` invocation that measured this result: a random
    /// identifier, new for each invocation and shared by both sides of one `ab`, so
    /// that results carrying the same one were measured side by side (paired) and their
    /// ratio is free of the offset each run has of its own. Absent in results written
    /// before it existed and in results merged from several invocations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invocation_id: Option<String>,
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
