//! One self-contained HTML page per result or comparison: the summary table, the
//! charts, the screen at ready, the glossary and the host facts.
//!
//! The page opens offline: no script, no external style, font or image; its CSS is
//! inline and its charts are inline SVG drawn by [`charts`](crate::export::charts). A
//! Content-Security-Policy of `default-src 'none'` makes any fetch a browser error
//! rather than a silent request. Every string that comes from a result (process
//! names, screens, errors, facts) is HTML-escaped: the measured program is not
//! trusted.

mod board;
mod checkpoints;
mod comparison;
mod page;
mod report;
mod screens;
mod session;

pub use board::board;
pub use comparison::comparison;
pub use page::{escape, page};
pub use report::report;
pub use screens::crop_screen;
