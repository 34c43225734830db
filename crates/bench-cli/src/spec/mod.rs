//! Target specs: the TOML file that describes a CLI to benchmark.
//!
//! `docs/spec.md` documents every key. [`load`] reads a file into a [`Spec`];
//! errors are `file:line:column: message` and name the key.

mod check;
mod long_session;
mod model;
mod overrides;
mod parse;
mod scenario;
mod settle;
mod template;
mod version;
mod words;

// The duration a spec writes ("150ms") is bench-core's, shared with model scripts.
pub use bench_core::duration::Duration;
pub(crate) use model::default_turn_timeout;
pub use model::{
    ArtifactSet, BuildStep, Compare, Disk, HomeFile, Install, Measure, Model, ModelDialect, Origin,
    Runtime, ScriptSource, Session, Source, Spec, Staircase, Ui, UiStep, Workspace,
};
pub use overrides::load_with;
pub use overrides::{Override, OverrideSyntaxError, SyntaxProblem, parse_with};
pub use parse::{SpecError, load, parse};
pub use scenario::tool_of;
pub use scenario::{Scenario, UnknownScenario};
pub use settle::Settle;
pub use template::{ExpandError, Placeholder, Template, TemplateError, Values};
pub use version::CURRENT_SPEC_VERSION;
pub(crate) use words::is_full_sha;
