//! bench-term integration tests: one binary, one module per concern.

mod kernel;
mod terminal;
