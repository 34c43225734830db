//! Integration tests of bench-proc against live processes (the fixture binary).

mod control;
mod disk;
mod memory;
mod oracle;
mod queue;
mod support;
