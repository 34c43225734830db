//! The benchmark pipeline: prepare -> install -> measure -> runtime -> ui -> staircase,
//! one file per phase.
