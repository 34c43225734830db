//! bench-term integration tests: one binary, one module per concern.

mod terminal;
