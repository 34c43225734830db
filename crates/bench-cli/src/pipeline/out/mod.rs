//! The output folder `OUT/`: whose it is, its marker and lock ([`folder`]), the run's
//! lock and earlier result ([`run`]), the state file listing everything a run created
//! ([`state`]), removing all of it (`cleanup`), and what `clibench run` tells when it
//! is done ([`summary`]).

pub(crate) mod cited;
pub(crate) mod cleanup;
pub mod folder;
pub mod report;
pub mod run;
pub mod state;
pub mod summary;
