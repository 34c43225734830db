//! `clibench bisect`: the search for the first build whose metric moved, and what it
//! needs.
//!
//! - [`search`]: the search itself, over builds and the comparisons a [`search::Comparer`]
//!   makes.
//! - [`builds`]: the builds it searches, commits on the first-parent line (`git.rs`) or
//!   published versions (`versions.rs`).
//! - [`paired`]: its comparisons from the store, within runs only, measuring only what
//!   the store lacks; [`ab`]: a step measured as an `ab` run.
//!
//! What `clibench bisect` tells a person is the binary's (`src/text/`).

pub mod ab;
pub mod builds;
mod git;
pub mod paired;
pub mod search;
mod versions;
