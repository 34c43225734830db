//! The output folder `OUT/`: whose it is, its marker and lock ([`folder`]), the run's
//! lock and earlier result ([`run`]), the state file listing everything a run created
//! ([`state`]), and removing all of it (`cleanup`).

pub(crate) mod cited;
pub(crate) mod cleanup;
pub mod folder;
pub mod report;
pub mod run;
pub mod state;
