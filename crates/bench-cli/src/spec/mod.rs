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
pub use overrides::{Override, OverrideSyntaxError, SyntaxProblem, load_with, parse_with};
#[cfg(test)]
pub use parse::loads_on_this_thread;
pub use parse::{SpecError, load, parse};
pub use scenario::{Scenario, UnknownScenario, tool_of};
pub use settle::Settle;
pub use template::{ExpandError, Placeholder, Template, TemplateError, Values};
pub use version::CURRENT_SPEC_VERSION;
pub use words::is_full_sha;
