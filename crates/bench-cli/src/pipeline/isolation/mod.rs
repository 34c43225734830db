//! Keeping a trial apart from the machine and from other trials: the trial users
//! ([`users`]; creating one, `user_add`), their homes and the files written into them without following links
//! ([`home`]), the staging folder only the run's trial users read (`staging`), what a
//! trial uid may leave in shared folders, IPC and keyrings (`leftovers`), its setuid files
//! made harmless before they are unlinked (`setid`), which uids
//! are free without walking the shared folders on every install (`uid_ledger`), and running one command
//! as the trial user with a timeout, stopped for good ([`command`]).

pub(crate) mod acl;
pub mod command;
pub mod home;
pub(crate) mod leftovers;
pub(crate) mod mounts;
mod output_cut;
pub(crate) mod setid;
pub(crate) mod staging;
pub(crate) mod uid_ledger;
pub(crate) mod user_add;
pub mod users;
