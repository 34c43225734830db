//! The history: every result kept in one SQLite file, read back as series per metric
//! and testbed, with change points and a check of a new result against its series.
//!
//! Grouped by what they serve:
//! - `store/`: the SQLite file, or a team's PostgreSQL database (add, import, read);
//!   what one result adds ([`Record`]); [`ingest`]: result files into it; [`location`]:
//!   where the store is when no `--store` is given.
//! - `series/`: one point per result, per target, branch and testbed; `context`: a
//!   build just measured against its own earlier values (`ab --history`).
//! - [`change_points`]: change points, the largest t (or E-divisive's energy) with a
//!   permutation test; whether a new result is a change against the recent series.
//! - `report/`: [`render`]: the terminal table and sparkline; [`page`]: the HTML page;
//!   [`bmf`]: Bencher Metric Format
//! - [`bisect`]: the search for the first build whose metric moved, the builds it
//!   searches, its comparisons from the store and what it tells a person.
//! - `links.rs`: within-run ratios and their chains, which the store's runs feed and
//!   bisect's comparisons read.
//!
//! Only what the commands use is public, each under one path: the modules re-exported
//! here and the [`bisect`] and [`change_points`] namespaces.

pub mod bisect;
pub mod change_points;
mod links;
mod report;
mod series;
mod store;

pub use report::{bmf, page, render};
pub(crate) use series::context;
pub use series::points::{Series, series};
pub use store::record::{Record, RecordError, Testbed};
pub use store::{
    Added, BuildKey, Filter, ImportLimits, Store, StoreError, Stored, ingest, location, throwaway,
};
