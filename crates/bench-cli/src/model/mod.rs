//! A model endpoint on loopback that speaks the agents' own APIs, so that an agent CLI
//! can be measured at work without the network: scripted turns, tool calls, streaming
//! physics, and a journal of every request and of when each chunk was written.
//!
//! ```no_run
//! use bench_cli::model::{Endpoint, Limits, Script, Settings};
//!
//! let script = Script::from_toml("[[turns]]\nshell = \"ls\"\nthen = \"Listed.\"\n", "inline")?;
//! let endpoint = Endpoint::start(Settings {
//!     port: 0,
//!     script: script.compile()?,
//!     limits: Limits::default(),
//!     path_token: None,
//! })?;
//! println!("ANTHROPIC_BASE_URL={}", endpoint.url());
//! // ... run an agent against it, then:
//! for request in endpoint.journal().requests() {
//!     println!("{} {} -> {:?}", request.method, request.path, request.outcome);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Sections
//! - [`script`]: the turns, as a serde type a spec can embed, and their checks.
//! - [`request`]: dialect and route of a request, and what its body asks.
//! - [`conversation`]: which turn a request plays; side requests; faults.
//! - [`answer`], [`dialect`]: the reply, mapped to the request's tools, in each
//!   dialect's shape; [`schema`]: values valid for a response schema.
//! - [`physics`], [`schedule`]: when each chunk is due.
//! - [`journal`]: what happened, in memory and as JSON lines.
//! - [`server`]: the HTTP server and its bounds.

pub mod answer;
pub mod conversation;
pub mod dialect;
pub mod journal;
pub mod physics;
pub mod request;
pub mod schedule;
pub mod schema;
pub mod script;
pub mod server;

pub use journal::{ChunkRecord, Event, Journal, Outcome, RequestRecord};
pub use physics::{FaultKind, Physics};
pub use request::Dialect;
pub use script::{Compiled, Script, ScriptError};
pub use server::{Endpoint, Limits, ServeError, Settings};
