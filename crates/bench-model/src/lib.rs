//! A model endpoint on loopback that speaks the agents' own APIs, so that an agent CLI
//! can be measured at work without the network: scripted turns, tool calls, streaming
//! physics, and a journal of every request and of when each chunk was written.
//!
//! The endpoint is its own crate so that an agent CLI's developers can start it from
//! their own Rust tests, without the rest of clibench: a test starts it on 127.0.0.1,
//! points the agent (or any HTTP client) at [`Endpoint::url`], and reads the
//! [`Journal`] afterwards.
//!
//! ```
//! use bench_model::{Endpoint, Limits, Outcome, Script, Settings};
//! use std::io::{Read, Write};
//! use std::net::TcpStream;
//!
//! // One turn that answers with a fixed text; `[physics]` could slow it down.
//! let script = Script::from_toml("[[turns]]\ntext = \"Hello from the script.\"\n", "inline")?;
//! let endpoint = Endpoint::start(Settings {
//!     port: 0, // a free port on 127.0.0.1
//!     script: script.compile()?,
//!     limits: Limits::default(),
//!     path_token: None,
//!     peer_uid: None,
//! })?;
//!
//! // What an agent would send to `ANTHROPIC_BASE_URL`, as a plain HTTP/1.1 request.
//! let body = r#"{"model":"m","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}"#;
//! let mut client = TcpStream::connect(endpoint.address())?;
//! write!(
//!     client,
//!     "POST /v1/messages HTTP/1.1\r\nhost: localhost\r\nanthropic-version: 2023-06-01\r\n\
//!      content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
//!     body.len(),
//! )?;
//! let mut reply = String::new();
//! client.read_to_string(&mut reply)?;
//! assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
//! assert!(reply.contains("Hello from the script."), "{reply}");
//!
//! // The journal: every request, what it played, and when each chunk was written.
//! let requests = endpoint.journal().requests();
//! assert_eq!(requests[0].path, "/v1/messages");
//! assert!(matches!(requests[0].outcome, Outcome::Turn { index: 0, .. }));
//! endpoint.stop();
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

#![warn(missing_docs)]

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
mod tokens;

pub use journal::{AnswerWritten, ChunkRecord, Event, Journal, Outcome, RequestRecord};
pub use physics::{FaultKind, Physics};
pub use request::Dialect;
pub use script::{Compiled, Script, ScriptError};
pub use server::{Endpoint, Limits, ServeError, Settings};
