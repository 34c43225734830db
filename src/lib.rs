//! Examples and tests that embed the clibench library crates; see `examples/` and `tests/`.
