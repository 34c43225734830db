//! bench-model's integration tests: the endpoint as an agent's test suite embeds it,
//! against the requests the real agents sent (`dialects`), and its bounds under a
//! hostile client (`hostile`), and what a long session costs it in memory
//! (`request_memory`).

mod dialects;
mod hostile;
mod request_memory;
