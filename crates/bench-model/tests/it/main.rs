//! bench-model's integration tests: the endpoint as an agent's test suite embeds it,
//! and its bounds under a hostile client.

mod hostile;
