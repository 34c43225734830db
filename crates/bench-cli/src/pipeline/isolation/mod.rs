//! Keeping a trial apart from the machine and from other trials: the trial users
//! ([`users`]), their homes and the files written into them without following links
//! ([`home`]), the staging folder only the run's trial users read (`staging`), what a
//! trial uid may leave in shared folders and IPC (`leftovers`), and running one command
//! as the trial user with a timeout, stopped for good ([`command`]).

pub mod command;
pub mod home;
pub(crate) mod leftovers;
pub(crate) mod staging;
pub mod users;
