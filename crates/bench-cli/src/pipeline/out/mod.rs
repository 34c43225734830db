//! The output folder `OUT/`: whose it is, its marker and lock ([`folder`]), the run's
//! lock and earlier result ([`run`]), the state file listing everything a run created
//! ([`state`]), removing all of it (`cleanup`), adding its results to a history store ([`history_add`]) and how far a
//! session is while it runs ([`turns`]).

pub(crate) mod cited;
pub(crate) mod cleanup;
pub mod folder;
pub mod history_add;
pub mod report;
pub mod run;
pub mod screens;
pub mod state;
pub mod turns;
