//! The measured program's life in one trial: opened and closed once ([`trial`]: the trial
//! user, leftovers, model endpoint, spawn options; keep files, stop agents, stop the user,
//! finish the journal), its command started in a terminal as the trial user
//! ([`terminal`]) and timed from its spawn to ready ([`start`]: what `clibench startup`
//! times too), the family of processes its memory is read from ([`family`]), its background sessions listed and stopped through its own commands
//! ([`sessions`]), what a measured session leaves for the report ([`recording`]), one
//! scripted turn of the agent at work ([`turn`]), and the check that the trial user can
//! enter the folders the target needs ([`preflight`]). Shared by measure, ui, session,
//! staircase and runtime; its errors are [`TargetError`], which each phase's error holds in
//! one variant.

mod error;
pub(crate) mod family;
pub(crate) mod model;
pub(crate) mod preflight;
pub(crate) mod recording;
pub(crate) mod sessions;
pub(crate) mod start;
pub(crate) mod terminal;
pub(crate) mod trial;
pub(crate) mod turn;

pub use error::TargetError;
pub(crate) use error::context_error_is_the_programs;
