//! The origin: a small static HTTP/1.1 server on 127.0.0.1 (ephemeral port) that
//! serves the artifacts folder to the installer, so that an installer that downloads its
//! release gets this build's artifacts, never the network's.
//! GET and HEAD only, one flat folder, no directory traversal, no symlinks.
//!
//! Any local user can connect to a loopback port (and find it in `/proc/net/tcp`), so
//! the origin serves only under a secret path prefix, `http://127.0.0.1:PORT/TOKEN`
//! with 128 random bits: the installer is handed it in `{origin}`; a request without it
//! gets the same 404 as a missing file, with no listing. At most `MAX_CONNECTIONS`
//! connections are served at once, each by its own thread; further ones wait in the
//! kernel's backlog until one ends (every read and write has a deadline, so one does).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a connection may take to send its request, in all (a client that
/// trickles a byte at a time gets no longer).
const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one write may wait for the client to read.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// How often the accept loop looks at the stop flag.
const POLL: Duration = Duration::from_millis(10);
/// The largest request head accepted.
const MAX_HEAD: u64 = 16 << 10;
/// The most connections served at once (one thread each). An installer fetches a
/// handful of files; 3,000 connections once made 1,473 threads.
pub(crate) const MAX_CONNECTIONS: usize = 32;

/// A running origin; dropping it stops the server.
#[derive(Debug)]
pub struct Origin {
    url: String,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Origin {
    /// Serves the files directly inside `root` under the URL path `/TOKEN` + `prefix`
    /// (`/0f3a…/releases/v1.0/`), on loopback `port` (0: an ephemeral port), until it
    /// is dropped or `deadline` (the phase's) passes: then the server closes
    /// every connection, however busy, and stops accepting. `token` is the run's
    /// secret (hex digits, see [`bench_core::io::random_hex`]); an empty or non-hex
    /// token is refused, since it would serve everyone.
    pub fn start(
        root: &Path,
        token: &str,
        prefix: &str,
        port: u16,
        deadline: Option<Instant>,
    ) -> std::io::Result<Origin> {
        if token.len() < 32 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the origin's token must be at least 32 hex digits",
            ));
        }
        let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port)))?;
        listener.set_nonblocking(true)?;
        let url = format!("http://{}/{token}", listener.local_addr()?);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let root = root.to_path_buf();
        let prefix = format!("/{token}{}", normalise_prefix(prefix));
        let thread = std::thread::Builder::new()
            .name("clibench-origin".into())
            .spawn(move || accept_loop(&listener, &root, &prefix, &flag, deadline))?;
        Ok(Origin {
            url,
            stop,
            thread: Some(thread),
        })
    }

    /// The base URL, `http://127.0.0.1:PORT/TOKEN` (no trailing slash): `{origin}`.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for Origin {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn normalise_prefix(prefix: &str) -> String {
    let trimmed = prefix.trim_matches('/');
    if trimmed.is_empty() {
        "/".to_owned()
    } else {
        format!("/{trimmed}/")
    }
}

/// Accepts until stopped or `deadline`, then shuts every open connection down
/// (a blocked read or write returns at once) and waits for their threads.
fn accept_loop(
    listener: &TcpListener,
    root: &Path,
    prefix: &str,
    stop: &Arc<AtomicBool>,
    deadline: Option<Instant>,
) {
    let mut workers: Vec<(JoinHandle<()>, TcpStream)> = Vec::new();
    let running = || !stop.load(Ordering::SeqCst) && deadline.is_none_or(|d| Instant::now() < d);
    while running() {
        workers.retain(|(worker, _)| !worker.is_finished());
        if workers.len() >= MAX_CONNECTIONS {
            // Full: the next connections wait in the listen backlog (the kernel's)
            // until a worker ends, which its deadlines make sure of.
            std::thread::sleep(POLL);
            continue;
        }
        match listener.accept() {
            Ok((stream, _)) => {
                let Ok(handle) = stream.try_clone() else {
                    continue;
                };
                let root = root.to_path_buf();
                let prefix = prefix.to_owned();
                let stop = Arc::clone(stop);
                if let Ok(worker) = std::thread::Builder::new()
                    .name("origin-conn".into())
                    .spawn(move || {
                        let _ = serve(&stream, &root, &prefix, &stop, deadline);
                        // The accept loop holds a copy of the socket (to end it
                        // at shutdown), so dropping ours would not close it.
                        let _ = stream.shutdown(std::net::Shutdown::Both);
                    })
                {
                    workers.push((worker, handle));
                }
            }
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(POLL);
            }
            Err(_) => std::thread::sleep(POLL),
        }
    }
    // Workers see the flag before their next read or write; the shutdown ends
    // the one they may be blocked in.
    stop.store(true, Ordering::SeqCst);
    for (_, stream) in &workers {
        let _ = stream.shutdown(std::net::Shutdown::Both);
    }
    for (worker, _) in workers {
        let _ = worker.join();
    }
}

/// A connection whose every read and write is bounded by a deadline and ends
/// when the server stops, however slowly the client sends or reads: a
/// per-call timeout alone lets a client that trickles a byte every few
/// seconds keep it open for ever.
struct Bounded<'a> {
    stream: &'a TcpStream,
    deadline: Option<Instant>,
    stop: &'a AtomicBool,
}

impl Bounded<'_> {
    /// What is left before the deadline, capped at `cap`; an error once the
    /// server stopped or the deadline passed.
    fn remaining(&self, cap: Duration) -> std::io::Result<Duration> {
        let timed_out = || std::io::Error::from(std::io::ErrorKind::TimedOut);
        if self.stop.load(Ordering::SeqCst) {
            return Err(timed_out());
        }
        match self.deadline {
            None => Ok(cap),
            Some(deadline) => match deadline.checked_duration_since(Instant::now()) {
                Some(left) if !left.is_zero() => Ok(left.min(cap)),
                _ => Err(timed_out()),
            },
        }
    }
}

impl Read for Bounded<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.stream
            .set_read_timeout(Some(self.remaining(READ_TIMEOUT)?))?;
        (&mut &*self.stream).read(buf)
    }
}

impl Write for Bounded<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.stream
            .set_write_timeout(Some(self.remaining(WRITE_TIMEOUT)?))?;
        (&mut &*self.stream).write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        (&mut &*self.stream).flush()
    }
}

/// The file name a request target names under `prefix`, or `None` (404). Only one
/// plain path component is accepted: no `/`, no `..`, no `.`, nothing hidden by
/// percent-encoding.
pub(crate) fn resolve(prefix: &str, target: &str) -> Option<String> {
    let path = target.split(['?', '#']).next().unwrap_or("");
    let rest = path.strip_prefix(&normalise_prefix(prefix))?;
    let name = percent_decode(rest)?;
    if name.is_empty()
        || name == "."
        || name == ".."
        || name.contains('/')
        || name.contains('\\')
        || name.contains('\0')
    {
        return None;
    }
    Some(name)
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = text.get(index + 1..index + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn respond(
    stream: &mut impl Write,
    status: &str,
    length: u64,
    head_only: bool,
    body: &[u8],
) -> std::io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Length: {length}\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n"
    )?;
    if !head_only {
        stream.write_all(body)?;
    }
    Ok(())
}

fn serve(
    stream: &TcpStream,
    root: &Path,
    prefix: &str,
    stop: &AtomicBool,
    deadline: Option<Instant>,
) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    // The request head must arrive within READ_TIMEOUT in all; the response
    // may take until the server's deadline.
    let head_deadline = Instant::now() + READ_TIMEOUT;
    let head_deadline = deadline.map_or(head_deadline, |d| d.min(head_deadline));
    let request = Bounded {
        stream,
        deadline: Some(head_deadline),
        stop,
    };
    let mut stream = Bounded {
        stream,
        deadline,
        stop,
    };
    let mut reader = BufReader::new(request.take(MAX_HEAD));
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    // Read (and ignore) the headers up to the blank line.
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
    }
    let mut parts = request_line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let head_only = match method {
        "GET" => false,
        "HEAD" => true,
        _ => {
            let body = b"method not allowed\n";
            return respond(
                &mut stream,
                "405 Method Not Allowed",
                body.len() as u64,
                false,
                body,
            );
        }
    };
    let not_found = |stream: &mut Bounded<'_>| {
        let body = b"not found\n";
        respond(stream, "404 Not Found", body.len() as u64, head_only, body)
    };
    let Some(name) = resolve(prefix, target) else {
        return not_found(&mut stream);
    };
    let path: PathBuf = root.join(&name);
    // A symlink in the folder is not served: only the files clibench put there.
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_file() => {
            // Streamed, so a large artifact is never held in memory.
            let mut file = std::fs::File::open(&path)?;
            respond(&mut stream, "200 OK", meta.len(), true, &[])?;
            if !head_only {
                std::io::copy(&mut file, &mut stream)?;
            }
            Ok(())
        }
        _ => not_found(&mut stream),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusty_fork::rusty_fork_test;

    const TOKEN: &str = "0123456789abcdef0123456789abcdef";

    /// `127.0.0.1:PORT` of an origin's URL.
    fn address(url: &str) -> String {
        let rest = url.trim_start_matches("http://");
        rest.split('/').next().unwrap().to_owned()
    }

    fn get(url: &str, method: &str, path: &str) -> (String, Vec<u8>) {
        let mut stream = TcpStream::connect(address(url)).unwrap();
        write!(stream, "{method} {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut response = Vec::new();
        stream.read_to_end(&mut response).unwrap();
        let split = response.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let head = String::from_utf8_lossy(&response[..split]).into_owned();
        (head, response[split + 4..].to_vec())
    }

    /// Sends one byte of a request head every 100 ms, up to `budget` bytes;
    /// returns how many it sent before the server closed the connection, or
    /// `None` if it never did.
    fn trickle(url: &str, budget: usize) -> std::thread::JoinHandle<Option<usize>> {
        let address = address(url);
        std::thread::spawn(move || {
            let mut stream = TcpStream::connect(address).unwrap();
            for sent in 0..budget {
                if stream.write_all(b"G").is_err() {
                    return Some(sent);
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            None
        })
    }

    #[test]
    fn a_trickling_connection_is_closed_at_the_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let deadline = Instant::now() + Duration::from_millis(300);
        let origin = Origin::start(dir.path(), TOKEN, "/r/", 0, Some(deadline)).unwrap();
        // 1,200 bytes at 10 a second would keep a per-read timeout happy for 2 minutes.
        let closed = trickle(origin.url(), 1200).join().unwrap();
        assert!(closed.is_some(), "the server read the whole trickle");
        drop(origin);
    }

    #[test]
    fn dropping_the_origin_closes_a_trickling_connection() {
        let dir = tempfile::tempdir().unwrap();
        let origin = Origin::start(dir.path(), TOKEN, "/r/", 0, None).unwrap();
        let trickler = trickle(origin.url(), 1200);
        std::thread::sleep(Duration::from_millis(300));
        // Returns only once every connection thread ended.
        drop(origin);
        assert!(
            trickler.join().unwrap().is_some(),
            "the server read the whole trickle"
        );
    }

    #[test]
    fn traversal_and_hidden_names_are_refused() {
        assert_eq!(resolve("/r/", "/r/a.tgz"), Some("a.tgz".into()));
        assert_eq!(resolve("/r", "/r/a%20b.tgz?x=1"), Some("a b.tgz".into()));
        for target in [
            "/r/../etc/passwd",
            "/r/%2e%2e",
            "/r/a/b",
            "/r/%2fetc",
            "/r/",
            "/x/a.tgz",
            "/r/..",
        ] {
            assert_eq!(resolve("/r/", target), None, "{target}");
        }
        assert_eq!(resolve("/", "/a.tgz"), Some("a.tgz".into()));
    }

    #[test]
    fn serves_files_with_get_and_head_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.tgz"), b"hello").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("link")).unwrap();
        let origin = Origin::start(dir.path(), TOKEN, "/releases/v1/", 0, None).unwrap();
        assert!(origin.url().starts_with("http://127.0.0.1:"));
        assert!(
            origin.url().ends_with(&format!("/{TOKEN}")),
            "{}",
            origin.url()
        );
        let (head, body) = get(origin.url(), "GET", &format!("/{TOKEN}/releases/v1/a.tgz"));
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        assert_eq!(body, b"hello");
        let (head, body) = get(origin.url(), "HEAD", &format!("/{TOKEN}/releases/v1/a.tgz"));
        assert!(head.contains("Content-Length: 5"), "{head}");
        assert!(body.is_empty());
        assert!(
            get(origin.url(), "GET", &format!("/{TOKEN}/releases/v1/link"))
                .0
                .starts_with("HTTP/1.1 404")
        );
        assert!(
            get(
                origin.url(),
                "GET",
                &format!("/{TOKEN}/releases/v1/missing")
            )
            .0
            .starts_with("HTTP/1.1 404")
        );
        assert!(
            get(origin.url(), "POST", &format!("/{TOKEN}/releases/v1/a.tgz"))
                .0
                .starts_with("HTTP/1.1 405")
        );
    }

    #[test]
    fn without_the_secret_prefix_nothing_is_served_nor_listed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.tgz"), b"hello").unwrap();
        std::fs::write(dir.path().join("SHA256SUMS"), b"sums").unwrap();
        let origin = Origin::start(dir.path(), TOKEN, "/releases/v1/", 0, None).unwrap();
        let other = "fedcba9876543210fedcba9876543210";
        for path in [
            "/".to_owned(),
            "/SHA256SUMS".to_owned(),
            "/releases/v1/a.tgz".to_owned(),
            "/releases/v1/SHA256SUMS".to_owned(),
            format!("/{other}/releases/v1/a.tgz"),
            format!("/{TOKEN}/"),
            format!("/{TOKEN}"),
            format!("/{}/releases/v1/a.tgz", &TOKEN[..31]),
        ] {
            let (head, body) = get(origin.url(), "GET", &path);
            assert!(head.starts_with("HTTP/1.1 404"), "{path}: {head}");
            assert_eq!(body, b"not found\n", "{path}");
        }
        let (head, body) = get(
            origin.url(),
            "GET",
            &format!("/{TOKEN}/releases/v1/SHA256SUMS"),
        );
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        assert_eq!(body, b"sums");
    }

    #[test]
    fn a_short_or_empty_token_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        for token in ["", "abc", "not-hex-not-hex-not-hex-not-hex-"] {
            assert!(
                Origin::start(dir.path(), token, "/", 0, None).is_err(),
                "{token:?}"
            );
        }
    }

    /// The connection threads of this process (their name, as the kernel keeps it).
    fn connection_threads() -> usize {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(Result::ok)
            .filter(|task| {
                std::fs::read_to_string(task.path().join("comm"))
                    .is_ok_and(|comm| comm.trim_end() == "origin-conn")
            })
            .count()
    }

    rusty_fork_test! {
        // It counts this process's connection threads: under `cargo test` another
        // test's origin would be counted too, so it runs in a process of its own.
        #[test]
        fn connections_beyond_the_cap_wait_and_are_served_once_others_end() {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("a.tgz"), b"hello").unwrap();
            let origin = Origin::start(dir.path(), TOKEN, "/", 0, None).unwrap();
            // Idle connections that never send a request: each would hold a thread.
            let idle: Vec<TcpStream> = (0..MAX_CONNECTIONS * 4)
                .map(|_| TcpStream::connect(address(origin.url())).unwrap())
                .collect();
            // Wait until the server took all it will take (bounded: 5 s).
            let mut threads = 0;
            for _ in 0..500 {
                threads = connection_threads();
                if threads >= MAX_CONNECTIONS {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            std::thread::sleep(Duration::from_millis(200));
            threads = threads.max(connection_threads());
            assert_eq!(threads, MAX_CONNECTIONS, "threads serving connections");
            // A real request queued behind them is served once they go.
            let url = origin.url().to_owned();
            let request = std::thread::spawn(move || get(&url, "GET", &format!("/{TOKEN}/a.tgz")));
            std::thread::sleep(Duration::from_millis(100));
            drop(idle);
            let (head, body) = request.join().unwrap();
            assert!(head.starts_with("HTTP/1.1 200"), "{head}");
            assert_eq!(body, b"hello");
        }
    }
}
