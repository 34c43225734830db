//! Target specs: the TOML file that describes a CLI to benchmark.
