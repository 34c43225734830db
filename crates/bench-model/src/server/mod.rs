//! The endpoint: hyper's HTTP/1.1 server on a current-thread tokio runtime in a thread
//! of its own, bound to 127.0.0.1.
//!
//! Timing: a streamed answer's frames are released by a thread per response that
//! sleeps until each is due (the standard library's sleep, with the thread's timer
//! slack set to 1 µs, wakes within tens of microseconds; tokio's timer rounds up to
//! the next millisecond, too coarse for the 1 ms goal) and hands it to the
//! connection's task through a channel; the body records when hyper took it to write.
//!
//! Bounds: at most [`Limits::max_connections`] connections are served at once (more
//! get 503 and are closed; beyond twice as many they are closed unanswered), headers
//! must arrive within [`Limits::header_timeout`] (also the keep-alive idle time), a body
//! within [`Limits::body_timeout`] and at most [`Limits::max_body_bytes`] (413), and a
//! write that makes no progress for [`Limits::write_timeout`] closes the connection.
//! With [`Settings::peer_uid`], a connection whose client socket another uid owns is
//! closed at once, before a byte of it is read.
//!
//! # Sections
//! - `endpoint`: [`Endpoint`], its [`Settings`], starting and stopping it.
//! - `limits`: [`Limits`], and the write deadline of every connection.
//! - `listener`: accepting connections within the bounds, from the allowed uid only.
//! - `peer_linux`: the uid behind a loopback connection, from the kernel's sock_diag.
//! - `handle`: one request: its route, its body, its journal record, error answers.
//! - `generate`: a model request's answer, and its schedule of frames.
//! - `body`: a response body released on that schedule by a timing thread.

mod body;
mod endpoint;
mod generate;
mod handle;
mod limits;
mod listener;
mod peer_linux;
mod respond;
mod state;

pub use body::{BodyError, Out};
pub use endpoint::{Endpoint, ServeError, Settings, base_url};
pub use generate::{DEFAULT_MODEL, MAX_MODEL_NAME_BYTES};
pub use handle::strip_token;
pub use limits::Limits;
