//! A throwaway PostgreSQL server: `initdb` into a private folder, listening only on a
//! Unix socket there, stopped and removed when dropped. The history's tests run against
//! one, and so can an agent team's own tests of a PostgreSQL store.
//!
//! As root it runs as `nobody` (PostgreSQL refuses to run as root); its folder is the
//! only thing of it on disk, and goes with it. It also dies with the thread that keeps
//! it (`PR_SET_PDEATHSIG`), so a test binary killed at its timeout leaves no server.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The user a server started as root runs as.
const NOBODY: u32 = 65534;
/// How long the server may take to accept connections.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// Why a throwaway server could not be started.
#[derive(Debug, thiserror::Error)]
pub enum ThrowawayError {
    /// No PostgreSQL server binaries (`initdb`, `postgres`) were found.
    #[error(
        "no PostgreSQL server found under /usr/lib/postgresql/*/bin or on PATH \
         (Debian: apt-get install postgresql)"
    )]
    NotInstalled,
    /// A step failed.
    #[error("throwaway PostgreSQL server: {step}")]
    Step {
        /// What was being done.
        step: String,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// `initdb` or the server said no, or the server never took connections.
    #[error("throwaway PostgreSQL server: {0}")]
    Failed(String),
}

fn step(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ThrowawayError {
    let step = what.into();
    move |source| ThrowawayError::Step { step, source }
}

/// How a throwaway server also listens on TCP: on 127.0.0.1, with TLS from these files
/// and a password for user `clibench` (its Unix socket still trusts every local user).
#[derive(Debug, Clone)]
pub struct OverTcp {
    /// The server's certificate (PEM).
    pub certificate: PathBuf,
    /// Its private key (PEM).
    pub key: PathBuf,
    /// The password of user `clibench` over TCP.
    pub password: String,
}

/// A running throwaway server.
#[derive(Debug)]
pub struct Throwaway {
    dir: Option<tempfile::TempDir>,
    socket_dir: PathBuf,
    /// The TCP port, when it listens on one.
    port: Option<u16>,
    stop: Option<mpsc::Sender<()>>,
    keeper: Option<std::thread::JoinHandle<()>>,
    databases: AtomicU32,
}

/// The folder holding `initdb` and `postgres`: the newest Debian cluster version, else
/// the folder of `initdb` on PATH.
fn binaries() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Some(bin);
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .find(|dir| dir.join("initdb").exists() && dir.join("postgres").exists())
}

/// Whether this machine has PostgreSQL's server binaries.
pub fn installed() -> bool {
    binaries().is_some()
}

impl Throwaway {
    /// Starts a server on a Unix socket alone and waits until it takes connections.
    pub fn start() -> Result<Throwaway, ThrowawayError> {
        Throwaway::start_with(None)
    }

    /// Starts a server that also listens on TCP with TLS and a password (`tcp`).
    pub fn start_with(tcp: Option<&OverTcp>) -> Result<Throwaway, ThrowawayError> {
        let bin = binaries().ok_or(ThrowawayError::NotInstalled)?;
        let dir = tempfile::Builder::new()
            .prefix("clibench-pg-")
            .tempdir()
            .map_err(step("make its folder"))?;
        let root = rustix::process::geteuid().is_root();
        let data = dir.path().join("data");
        let socket_dir = dir.path().join("socket");
        for folder in [&data, &socket_dir] {
            std::fs::create_dir(folder).map_err(step("make its folders"))?;
            if root {
                let nobody = Some(rustix::fs::Uid::from_raw(NOBODY));
                rustix::fs::chown(folder, nobody, None)
                    .map_err(|errno| step("hand its folders to nobody")(errno.into()))?;
            }
        }
        if root {
            // Only traversed by nobody to reach its two folders, never listed.
            std::fs::set_permissions(
                dir.path(),
                std::os::unix::fs::PermissionsExt::from_mode(0o711),
            )
            .map_err(step("open its folder to nobody"))?;
        }
        let mut initdb = as_server_user(Command::new(bin.join("initdb")), root);
        initdb
            .args([
                "--auth-local=trust",
                "--no-sync",
                "--locale=C",
                "-E",
                "UTF8",
            ])
            .args(["-U", "clibench", "-D"])
            .arg(&data);
        let tcp_files = match tcp {
            Some(tcp) => Some(tcp_files(dir.path(), tcp, root)?),
            None => None,
        };
        match &tcp_files {
            Some(files) => initdb
                .arg("--auth-host=scram-sha-256")
                .arg(format!("--pwfile={}", files.password.display())),
            None => initdb.arg("--auth-host=trust"),
        };
        let initdb = initdb.output().map_err(step("run initdb"))?;
        if !initdb.status.success() {
            return Err(ThrowawayError::Failed(format!(
                "initdb failed: {}",
                String::from_utf8_lossy(&initdb.stderr).trim()
            )));
        }
        let log =
            std::fs::File::create(dir.path().join("server.log")).map_err(step("make its log"))?;
        let mut server = as_server_user(Command::new(bin.join("postgres")), root);
        server.arg("-D").arg(&data).arg("-k").arg(&socket_dir);
        let port = match &tcp_files {
            Some(files) => {
                let port = free_port()?;
                server
                    .args(["-c", "listen_addresses=127.0.0.1", "-c", "ssl=on"])
                    .arg("-p")
                    .arg(port.to_string())
                    .arg("-c")
                    .arg(format!("ssl_cert_file={}", files.certificate.display()))
                    .arg("-c")
                    .arg(format!("ssl_key_file={}", files.key.display()));
                Some(port)
            }
            None => {
                server.args(["-c", "listen_addresses="]);
                None
            }
        };
        server
            .args(["-c", "fsync=off"])
            .args(["-c", "synchronous_commit=off", "-c", "max_connections=60"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        let (stop, keeper) = keep(server)?;
        let throwaway = Throwaway {
            dir: Some(dir),
            socket_dir,
            port,
            stop: Some(stop),
            keeper: Some(keeper),
            databases: AtomicU32::new(0),
        };
        throwaway.wait_ready()?;
        Ok(throwaway)
    }

    /// The TCP port it listens on, when started [`Throwaway::start_with`] TCP.
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    /// The URL of database `name` on this server (a Unix socket, user `clibench`).
    pub fn url(&self, name: &str) -> String {
        // The socket's name carries the port the server listens on.
        let port = self
            .port
            .map(|port| format!("&port={port}"))
            .unwrap_or_default();
        format!(
            "postgres://clibench@/{name}?host={}{port}",
            self.socket_dir.display()
        )
    }

    /// The folder of the server's socket.
    pub fn socket_dir(&self) -> &Path {
        &self.socket_dir
    }

    /// Creates a new empty database and returns its URL.
    pub fn create_database(&self) -> Result<String, ThrowawayError> {
        let name = format!("t{}", self.databases.fetch_add(1, Ordering::Relaxed));
        let mut client = postgres::Client::connect(&self.url("postgres"), postgres::NoTls)
            .map_err(|error| ThrowawayError::Failed(error.to_string()))?;
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .map_err(|error| ThrowawayError::Failed(error.to_string()))?;
        Ok(self.url(&name))
    }

    fn wait_ready(&self) -> Result<(), ThrowawayError> {
        let started = Instant::now();
        loop {
            match postgres::Client::connect(&self.url("postgres"), postgres::NoTls) {
                Ok(_) => return Ok(()),
                Err(error) if started.elapsed() > START_TIMEOUT => {
                    let log = self
                        .dir
                        .as_ref()
                        .and_then(|dir| std::fs::read_to_string(dir.path().join("server.log")).ok())
                        .unwrap_or_default();
                    return Err(ThrowawayError::Failed(format!(
                        "no connection within {}s: {error}; its log: {}",
                        START_TIMEOUT.as_secs(),
                        log.trim()
                    )));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }
}

/// The copies of [`OverTcp`]'s files the server reads: its certificate, its key (mode
/// 0600, as PostgreSQL demands) and the password file for `initdb`, all the server
/// user's.
struct TcpFiles {
    certificate: PathBuf,
    key: PathBuf,
    password: PathBuf,
}

fn tcp_files(dir: &Path, tcp: &OverTcp, root: bool) -> Result<TcpFiles, ThrowawayError> {
    use std::os::unix::fs::PermissionsExt;
    let files = TcpFiles {
        certificate: dir.join("server.crt"),
        key: dir.join("server.key"),
        password: dir.join("password"),
    };
    std::fs::copy(&tcp.certificate, &files.certificate).map_err(step("copy the certificate"))?;
    std::fs::copy(&tcp.key, &files.key).map_err(step("copy the key"))?;
    std::fs::write(&files.password, &tcp.password).map_err(step("write the password"))?;
    for file in [&files.certificate, &files.key, &files.password] {
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o600))
            .map_err(step("close the server's files"))?;
        if root {
            rustix::fs::chown(file, Some(rustix::fs::Uid::from_raw(NOBODY)), None)
                .map_err(|errno| step("hand its files to nobody")(errno.into()))?;
        }
    }
    Ok(files)
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
fn free_port() -> Result<u16, ThrowawayError> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(step("find a free port"))?;
    Ok(listener
        .local_addr()
        .map_err(step("find a free port"))?
        .port())
}

/// `command` run as the server's user (nobody, as root), dying with the thread that
/// started it.
fn as_server_user(mut command: Command, root: bool) -> Command {
    if root {
        command.uid(NOBODY).gid(NOBODY);
    }
    command
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .current_dir("/");
    // SAFETY: prctl is async-signal-safe and touches only the child's own state.
    unsafe {
        command.pre_exec(|| {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
                .map_err(std::io::Error::from)
        });
    }
    command
}

/// Spawns `server` from a thread of its own, which keeps it until told to stop (or
/// until this process dies, which kills it), then stops it (SIGTERM, a grace, SIGKILL)
/// and reaps it.
fn keep(
    mut server: Command,
) -> Result<(mpsc::Sender<()>, std::thread::JoinHandle<()>), ThrowawayError> {
    let (started_tx, started_rx) = mpsc::channel::<std::io::Result<()>>();
    let (stop_tx, stop_rx) = mpsc::channel::<()>();
    let keeper = std::thread::spawn(move || {
        let mut child: Child = match server.spawn() {
            Ok(child) => {
                let _ = started_tx.send(Ok(()));
                child
            }
            Err(error) => {
                let _ = started_tx.send(Err(error));
                return;
            }
        };
        // Told to stop, or the Throwaway is gone: either way, stop.
        let _ = stop_rx.recv();
        if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
            // SIGINT: PostgreSQL's fast shutdown.
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    });
    match started_rx.recv() {
        Ok(Ok(())) => Ok((stop_tx, keeper)),
        Ok(Err(error)) => Err(step("start postgres")(error)),
        Err(_) => Err(ThrowawayError::Failed("its keeper thread died".into())),
    }
}

impl Drop for Throwaway {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(keeper) = self.keeper.take() {
            let _ = keeper.join();
        }
        // The folder goes once the server that wrote into it is gone.
        drop(self.dir.take());
    }
}
