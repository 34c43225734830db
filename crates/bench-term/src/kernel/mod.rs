//! A client for the REPL kernel wire protocol (version 3), the reference kernel, and the
//! runtime measurements built on them.
//!
//! A kernel is a long-lived Python process that runs code cells; requests are JSON lines
//! on its stdin, events are JSON lines on its stdout. The client speaks the protocol
//! exactly, so it drives the prime-agent runtime's `python -m rlm.repl` unchanged, and
//! [`REFERENCE_KERNEL`] (standard-library Python) speaks it too, so everything can run
//! and be tested offline.
//!
//! ```no_run
//! use bench_term::kernel::{Kernel, KernelOptions};
//!
//! let script = std::env::temp_dir().join("kernel.py");
//! std::fs::write(&script, bench_term::kernel::REFERENCE_KERNEL)?;
//! let env = [("PATH", "/usr/bin:/bin")];
//! let mut kernel = Kernel::spawn(KernelOptions::new("python3", [&script], ".", env))?;
//! let ready = kernel.ready()?;
//! let reply = kernel.execute("print(6 * 7)")?;
//! assert_eq!(reply.stdout(), "42\n");
//! println!("ready in {:?} (Python {})", ready.elapsed, ready.python);
//! kernel.close()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Time, as for a [`crate::Terminal`]: a moment is a `Duration` since spawn
//! ([`Ready::elapsed`], the transcript's `t`); [`Reply::elapsed`] and the
//! [`measure`] functions return lengths (from a request's send to its `done`).
//!
//! # Sections
//! - [`protocol`]: events and requests on the wire (pure parsing).
//! - [`Kernel`]: the process, requests, replies, interrupt, close.
//! - [`measure`]: the runtime metrics (batch, mixed, interrupt latency, snapshot and
//!   restore) and [`measure::run_all`], the runtime phase's whole sequence.
//! - The transcript ([`KernelOptions::transcript`]): every frame in both directions,
//!   one JSON object per line: `{"t": <seconds since spawn>, "dir": "send" | "recv" |
//!   "stderr", "frame": <the frame as JSON>}`; a received line that is not JSON is
//!   kept as `"raw": "<the line>"` instead of `frame`, and stderr as `"text"`.

mod client;
mod error;
mod lines;
pub mod measure;
pub mod protocol;
mod reference;
mod transcript;

pub use client::{Kernel, KernelOptions, Ready, Reply};
pub use error::{FrameError, KernelError, KernelExit};
pub use measure::{MeasureError, batch, interrupt_latency, mixed};
pub use protocol::{CellError, Done, Event, Request, Snapshot, Stream};
pub use reference::{REFERENCE_KERNEL, REFERENCE_KERNEL_FILE_NAME};

/// The JSON of the wire protocol ([`Event`] fields, [`Kernel::host_reply`], the
/// fields of a [`Request`]): serde_json's, part of this API on purpose, since the
/// protocol's extra fields are free-form JSON that a copy would only mirror.
pub use serde_json::{Map, Value};
