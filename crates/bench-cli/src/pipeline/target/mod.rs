//! The target as the interactive phases meet it: its command started in a terminal as the
//! trial user ([`terminal`]), the family of processes its memory is read from
//! ([`family`]), its background sessions listed and stopped through its own commands
//! ([`sessions`]), and what a measured session leaves for the report ([`recording`]).
//! Shared by measure, ui, staircase and runtime; its errors are [`TargetError`].

mod error;
pub(crate) mod family;
pub(crate) mod model;
pub(crate) mod recording;
pub(crate) mod sessions;
pub(crate) mod terminal;

pub use error::TargetError;
