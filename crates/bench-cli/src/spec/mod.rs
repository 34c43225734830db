//! Target specs: the TOML file that describes a CLI to benchmark.
//!
//! `docs/spec.md` documents every key. [`load`] reads a file into a [`Spec`];
//! errors are `file:line:column: message` and name the key.

mod duration;
mod model;
mod parse;
mod template;

#[allow(
    unused_imports,
    reason = "the spec's whole interface; phases, commands and the tests each use part of it"
)]
pub use duration::Duration;
#[allow(
    unused_imports,
    reason = "the spec's whole interface; phases, commands and the tests each use part of it"
)]
pub use model::{
    ArtifactSet, BuildStep, Disk, HomeFile, Install, Measure, Origin, ReadyMode, Runtime, Source,
    Spec, Staircase, Ui, UiStep, Workspace,
};
#[allow(
    unused_imports,
    reason = "the spec's whole interface; phases, commands and the tests each use part of it"
)]
pub use parse::{SpecError, is_full_sha, load, parse};
#[allow(
    unused_imports,
    reason = "the spec's whole interface; phases, commands and the tests each use part of it"
)]
pub use template::{ExpandError, Placeholder, Template, Values};
