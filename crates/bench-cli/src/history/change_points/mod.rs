//! Where a series moved, and whether a new result moved it.
//!
//! - [`find`]: change points, the largest t (or E-divisive's energy) with a permutation
//!   test.
//! - [`check`]: is a new result a change against the recent series?

pub mod check;
pub mod find;
