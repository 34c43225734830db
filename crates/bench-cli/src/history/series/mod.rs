//! A metric's series as the history holds it, and a build just measured set against
//! its own earlier values.
//!
//! - `points.rs`: one point per stored result, per target, branch and testbed.
//! - [`context`]: a build just measured against its own earlier values (`ab --history`).

pub mod context;
pub(crate) mod points;
