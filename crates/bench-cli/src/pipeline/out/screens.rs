//! The names of the files in OUT/logs/ that keep a screen for a person to read.

/// How the file of a failed turn's screen begins: `screen-at-failure-<trial>-session.txt`.
pub const FAILURE_SCREEN_PREFIX: &str = "screen-at-failure-";
