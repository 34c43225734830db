//! A running endpoint: its settings, its thread and runtime, starting and stopping it.

use super::body::Pacing;
use super::limits::Limits;
use super::listener::serve;
use super::state::{State, lock};
use crate::conversation::Conversation;
use crate::journal::{Event, Journal};
use crate::script::Compiled;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How to start an endpoint.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The port on 127.0.0.1; 0 for one the kernel picks.
    pub port: u16,
    /// The script to play.
    pub script: Compiled,
    /// The bounds.
    pub limits: Limits,
    /// A secret path prefix: with `Some(token)` only requests under `/m/<token>` are
    /// served (the prefix is removed before routing) and every other path gets 404, so a
    /// local user who finds the port cannot play the trial's turns. `None`: served at `/`.
    pub path_token: Option<String>,
    /// The only uid served: with `Some(uid)`, a connection whose client socket another
    /// uid owns (asked of the kernel's sock_diag) is closed at once, unanswered and
    /// before it holds a connection slot, so another local user can neither play the
    /// turns (even knowing the token) nor crowd the agent out. `None`: any local user.
    pub peer_uid: Option<u32>,
}

/// The endpoint could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The port could not be bound.
    #[error("cannot listen on 127.0.0.1:{port}")]
    Bind {
        /// The port asked for.
        port: u16,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The runtime or its thread could not start.
    #[error("cannot start the endpoint's {what}")]
    Start {
        /// The runtime or the thread.
        what: &'static str,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// The longest [`Endpoint::stop`] waits for the server's thread to end.
const STOP_WAIT: Duration = Duration::from_secs(5);

/// A running endpoint. Stopped by [`Endpoint::stop`] or when dropped.
#[derive(Debug)]
pub struct Endpoint {
    address: SocketAddr,
    path_token: Option<String>,
    journal: Journal,
    seed: u64,
    conversation: Arc<Mutex<Conversation>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Endpoint {
    /// Binds 127.0.0.1 and starts serving in a thread of its own.
    pub fn start(settings: Settings) -> Result<Endpoint, ServeError> {
        let start = Instant::now();
        let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, settings.port)).map_err(
            |source| ServeError::Bind {
                port: settings.port,
                source,
            },
        )?;
        let bind_error = |source| ServeError::Bind {
            port: settings.port,
            source,
        };
        listener.set_nonblocking(true).map_err(bind_error)?;
        let address = listener.local_addr().map_err(bind_error)?;
        let seed = settings
            .script
            .physics
            .seed
            .unwrap_or_else(crate::physics::fresh_seed);
        let journal = Journal::new(start);
        journal.push(Event::Start {
            seed,
            address,
            unix_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(|source| ServeError::Start {
                what: "runtime",
                source,
            })?;
        let max = settings.limits.max_connections.max(1);
        let path_token = settings.path_token.clone();
        let conversation = Arc::new(Mutex::new(Conversation::new(settings.script)));
        let state = Arc::new(State {
            path_token: settings.path_token,
            peer_uid: settings.peer_uid,
            conversation: Arc::clone(&conversation),
            journal: journal.clone(),
            limits: settings.limits.clone(),
            seed,
            requests: AtomicU64::new(0),
            connections: Arc::new(tokio::sync::Semaphore::new(max)),
            rejections: Arc::new(tokio::sync::Semaphore::new(max)),
            pacing: Pacing {
                answer_timeout: settings.limits.answer_timeout,
                live: Arc::new(AtomicUsize::new(0)),
            },
        });
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("model-endpoint".into())
            .spawn(move || runtime.block_on(serve(listener, state, stopped)))
            .map_err(|source| ServeError::Start {
                what: "thread",
                source,
            })?;
        Ok(Endpoint {
            address,
            path_token,
            journal,
            seed,
            conversation,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Where it listens.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// `http://127.0.0.1:PORT`, or `http://127.0.0.1:PORT/m/TOKEN` with a path token;
    /// without a trailing slash.
    pub fn url(&self) -> String {
        base_url(self.address, self.path_token.as_deref())
    }

    /// The journal, shared with the server.
    pub fn journal(&self) -> Journal {
        self.journal.clone()
    }

    /// The jitter seed in use (the script's, or the one picked and recorded).
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Puts the script back at its first turn, as a fresh agent meets it (a session
    /// staircase rewinds before each instance, so every instance's first prompt plays
    /// the same turn). Faults keep their hit counts: a fault meant once per trial hits
    /// once.
    pub fn rewind(&self) {
        lock(&self.conversation).rewind();
    }

    /// Stops serving: no new connections; those open are closed.
    pub fn stop(mut self) {
        self.shut_down();
    }

    fn shut_down(&mut self) {
        if let Some(stop) = self.stop.take() {
            // The server may have ended already; then there is nobody to tell.
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            // Every answer's work is bounded, so the thread sees the stop at once; should
            // it not, stopping still ends: the thread is left behind, not waited for.
            let give_up = Instant::now() + STOP_WAIT;
            while !thread.is_finished() && Instant::now() < give_up {
                std::thread::sleep(Duration::from_millis(1));
            }
            if thread.is_finished() {
                // A panic in the server thread has nothing left to clean up.
                let _ = thread.join();
            }
        }
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// The endpoint's base URL on `address`, under `/m/<token>` when there is a token.
pub fn base_url(address: SocketAddr, path_token: Option<&str>) -> String {
    match path_token {
        Some(token) => format!("http://{address}/m/{token}"),
        None => format!("http://{address}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::Script;

    #[test]
    fn the_url_carries_the_token_segment_only_when_there_is_one() {
        let address: SocketAddr = "127.0.0.1:8484".parse().unwrap();
        assert_eq!(base_url(address, None), "http://127.0.0.1:8484");
        assert_eq!(
            base_url(address, Some("t0k")),
            "http://127.0.0.1:8484/m/t0k"
        );
    }

    #[test]
    fn an_endpoint_journals_its_start_and_stops() {
        let script = Script::from_toml("[[turns]]\ntext = \"hi\"\n", "s").unwrap();
        let endpoint = Endpoint::start(Settings {
            port: 0,
            script: script.compile().unwrap(),
            limits: Limits::default(),
            path_token: Some("t0k".to_owned()),
            peer_uid: None,
        })
        .unwrap();
        assert!(endpoint.address().ip().is_loopback());
        assert!(endpoint.url().ends_with("/m/t0k"));
        let events = endpoint.journal().events();
        assert!(
            matches!(events.first(), Some(Event::Start { address, .. }) if *address == endpoint.address())
        );
        endpoint.stop();
    }
}
