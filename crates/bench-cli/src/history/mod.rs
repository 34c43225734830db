//! The history: every result kept in one SQLite file, read back as series per metric
//! and testbed, with change points and a check of a new result against its series.
//!
//! - [`record`]: what one result adds (target, branch, revision, testbed, trials).
//! - [`store`]: the SQLite file (add, import, read); [`ingest`]: result files into it.
//! - [`series`]: one point per result, per target, branch and testbed.
//! - [`changepoint`]: change points, the largest t (or E-divisive's energy) with a
//!   permutation test.
//! - [`check`]: is a new result a change against the recent series?
//! - [`context`]: a build just measured against its own earlier values (`ab --history`).
//! - [`bisect`]: the search for the first build whose metric moved; [`git`]: the
//!   commits it searches; [`paired`]: its comparisons from the store, within runs only,
//!   measuring only what the store lacks; [`links`]: within-run ratios and their chains;
//!   [`versions`]: the published versions it searches; [`bisect_ab`]: a step as an
//!   `ab` run; [`bisect_text`]: what `clibench bisect` tells a person.
//! - [`render`]: the terminal table and sparkline; [`page`]: the HTML page;
//!   [`bmf`]: Bencher Metric Format.
//! - [`location`]: where the store is when no `--store` is given; [`told`]: what
//!   `clibench history` tells a person.

pub mod bisect;
pub mod bisect_ab;
pub mod bisect_text;
pub mod bmf;
pub mod builds;
pub mod changepoint;
pub mod check;
pub mod context;
pub mod git;
pub mod ingest;
pub mod links;
pub mod location;
pub mod page;
pub mod paired;
pub mod record;
pub mod render;
pub mod series;
pub mod store;
pub mod told;
pub mod versions;

pub use record::{Record, RecordError, Testbed};
pub use store::{Added, BuildKey, Filter, ImportLimits, Store, StoreError, Stored};
