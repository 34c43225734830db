//! The endpoint: hyper's HTTP/1.1 server on a current-thread tokio runtime in a thread
//! of its own, bound to 127.0.0.1.
//!
//! Timing: a streamed answer's frames are released by the connection's own task, woken
//! when each is due by a timer of the answer's own (a `timerfd` armed to the
//! nanosecond, which the runtime's reactor watches; tokio's timer rounds up to the next
//! millisecond, too coarse for the 1 ms goal); the body records when hyper took it to
//! write. A thread per answer slept until each frame was due before, and handed it on
//! through a channel: two wake-ups a frame instead of one.
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
//! - `body`: a response body released on that schedule by its timer.

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
