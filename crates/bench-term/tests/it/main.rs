//! bench-term integration tests: one binary, one module per concern.

mod descriptors;
mod kernel;
mod terminal;
