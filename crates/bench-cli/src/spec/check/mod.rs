//! The checks serde cannot make (regexes, zero timeouts, placeholders used where they
//! have no value), one function per section in files of their own. [`check`] runs them
//! in the order of the spec's keys, because a spec's error names its first problem.

mod checker;
mod compare;
mod document;
mod install;
mod measure;
mod model;
mod phases;
mod prepare;
mod session;

pub(super) use document::check;
pub(super) use model::model_script;
