//! Drive programs the way a person does: in a real terminal, or over the REPL
//! kernel protocol.
#![warn(missing_docs)]

pub mod kernel;
