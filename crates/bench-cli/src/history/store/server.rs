//! A store in PostgreSQL, for a team: where it is, where its password may come from,
//! and the connection.
//!
//! A password never reaches a message, a log, a result or a command line: the store is
//! named by [`label`] (the URL without its password), and clibench passes the URL to no
//! process it starts. It takes the password from the URL only when the URL itself came
//! from the environment (`CLIBENCH_HISTORY`) or standard input, never from a flag, which
//! every local user can read in the process list; else from `PGPASSWORD`, else from a
//! pgpass file (`PGPASSFILE`, else `~/.pgpass`), as libpq does.

use super::StoreError;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long any statement may take: a writer waits this long at most for another's
/// lock, and a server someone else runs cannot hold a command for ever.
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(120);

/// Whether `text` names a PostgreSQL store rather than a file.
pub fn is_url(text: &str) -> bool {
    text.starts_with("postgres://") || text.starts_with("postgresql://")
}

/// Whether the URL `text` carries a password.
pub fn has_password(text: &str) -> bool {
    postgres::Config::from_str(text).is_ok_and(|config| config.get_password().is_some())
}

/// The store's name in messages: the URL's user, hosts, ports and database, never its
/// password or options; a store on a Unix socket is named as libpq's URLs name one
/// (`postgres://user@/db?host=/run/postgresql`), so the name is a URL that reaches it.
pub fn label(config: &postgres::Config) -> String {
    use postgres::config::Host;
    let user = config.get_user().unwrap_or("");
    let database = config.get_dbname().unwrap_or("");
    let ports = config.get_ports();
    let port_of = |index: usize| ports.get(index).or(ports.first()).copied();
    let mut tcp = Vec::new();
    let mut sockets = Vec::new();
    for (index, host) in config.get_hosts().iter().enumerate() {
        match host {
            Host::Tcp(name) => tcp.push(match port_of(index) {
                Some(port) => format!("{name}:{port}"),
                None => name.clone(),
            }),
            Host::Unix(path) => sockets.push(path.display().to_string()),
        }
    }
    if sockets.is_empty() {
        return format!("postgres://{user}@{}/{database}", tcp.join(","));
    }
    let port = match port_of(0) {
        Some(port) if port != 5432 => format!("&port={port}"),
        _ => String::new(),
    };
    format!(
        "postgres://{user}@/{database}?host={}{port}",
        sockets.join(",")
    )
}

fn failed(label: &str, source: postgres::Error) -> StoreError {
    StoreError::Postgres {
        store: label.to_owned(),
        source,
    }
}

/// The URL's TLS options that the driver does not read, taken out of it: libpq's
/// `sslrootcert` (the CA certificates to trust instead of the system's), and `sslmode`
/// `verify-ca` and `verify-full`, which become `require`: rustls always verifies the
/// server's chain and name.
fn tls_options(url: &str) -> (String, Option<PathBuf>) {
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_owned(), None);
    };
    let mut root = None;
    let mut kept = Vec::new();
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some(("sslrootcert", path)) => root = Some(PathBuf::from(percent_decoded(path))),
            Some(("sslmode", "verify-ca" | "verify-full")) => kept.push("sslmode=require"),
            _ => kept.push(pair),
        }
    }
    if kept.is_empty() {
        return (base.to_owned(), root);
    }
    (format!("{base}?{}", kept.join("&")), root)
}

/// `text` with its `%XX` escapes decoded (a URL's query value).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let hex = bytes
            .get(index + 1..index + 3)
            .and_then(|pair| std::str::from_utf8(pair).ok())
            .and_then(|pair| u8::from_str_radix(pair, 16).ok());
        match (bytes[index], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                index += 3;
            }
            (byte, _) => {
                out.push(byte);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The TLS connector: rustls, trusting the certificates of `root` when the URL names
/// them (`sslrootcert`), else the system's. The system's are read only when a TCP host
/// may be asked for TLS (`sslmode` not `disable`).
fn tls(
    config: &postgres::Config,
    root: Option<&Path>,
    label: &str,
) -> Result<tokio_postgres_rustls::MakeRustlsConnect, StoreError> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let refuse = |why: String| StoreError::Tls {
        store: label.to_owned(),
        why,
    };
    let mut roots = rustls::RootCertStore::empty();
    let tcp = config
        .get_hosts()
        .iter()
        .any(|host| matches!(host, postgres::config::Host::Tcp(_)));
    let wanted = config.get_ssl_mode() != postgres::config::SslMode::Disable && tcp;
    match root {
        Some(path) => {
            let certs = CertificateDer::pem_file_iter(path)
                .map_err(|error| refuse(format!("sslrootcert {}: {error}", path.display())))?;
            for cert in certs {
                let cert = cert
                    .map_err(|error| refuse(format!("sslrootcert {}: {error}", path.display())))?;
                roots
                    .add(cert)
                    .map_err(|error| refuse(format!("sslrootcert {}: {error}", path.display())))?;
            }
        }
        None if wanted => {
            // A certificate the system store holds but rustls cannot read is left out.
            for cert in rustls_native_certs::load_native_certs().certs {
                let _ = roots.add(cert);
            }
        }
        None => {}
    }
    #[expect(
        deprecated,
        reason = "ring has no post-quantum key exchange; aws-lc-rs, which has, needs cmake \
                  and clang to build, which a user's machine with the Rust toolchain lacks"
    )]
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let client = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| refuse(error.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(client))
}

/// Connects to the store at `url`; returns the client and the store's label.
pub(super) fn connect(url: &str) -> Result<(postgres::Client, String), StoreError> {
    let (url, root) = tls_options(url);
    let mut config = postgres::Config::from_str(&url).map_err(|source| StoreError::Postgres {
        // The URL did not parse, so no part of it is shown: it may hold a password.
        store: "the PostgreSQL URL".into(),
        source,
    })?;
    if config.get_user().is_none() {
        // libpq's default: the name of the user running the program.
        if let Some(user) = std::env::var_os("USER").or_else(|| std::env::var_os("LOGNAME")) {
            config.user(user.to_string_lossy().as_ref());
        }
    }
    let label = label(&config);
    if config.get_password().is_none() {
        if let Some(password) = std::env::var_os("PGPASSWORD").filter(|p| !p.is_empty()) {
            config.password(password.as_encoded_bytes());
        } else if let Some(password) = pgpass_password(&config)? {
            config.password(password);
        }
    }
    config.connect_timeout(CONNECT_TIMEOUT);
    let timeout = format!("-c statement_timeout={}", STATEMENT_TIMEOUT.as_millis());
    let options = match config.get_options() {
        Some(given) => format!("{given} {timeout}"),
        None => timeout,
    };
    config.options(&options);
    let tls = tls(&config, root.as_deref(), &label)?;
    let client = config
        .connect(tls)
        .map_err(|source| failed(&label, source))?;
    Ok((client, label))
}

/// The password for `config` from the pgpass file, as libpq finds it: the first line
/// `host:port:database:user:password` whose fields match (`*` matches anything). The
/// file is read only when it is a plain file of the effective user that neither group
/// nor others can read (libpq ignores it otherwise, and so does clibench).
fn pgpass_password(config: &postgres::Config) -> Result<Option<String>, StoreError> {
    let path = match std::env::var_os("PGPASSFILE") {
        Some(path) => PathBuf::from(path),
        None => match std::env::var_os("HOME") {
            Some(home) => Path::new(&home).join(".pgpass"),
            None => return Ok(None),
        },
    };
    let Ok(meta) = std::fs::metadata(&path) else {
        return Ok(None);
    };
    let private = std::os::unix::fs::MetadataExt::mode(&meta) & 0o077 == 0;
    let own = std::os::unix::fs::MetadataExt::uid(&meta) == rustix::process::geteuid().as_raw();
    if !meta.is_file() || !private || !own {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path).map_err(|source| StoreError::Io {
        path: path.clone(),
        source,
    })?;
    Ok(pgpass_lookup(&text, &candidates(config)))
}

/// The (host, port, database, user) a pgpass line may match for `config`.
fn candidates(config: &postgres::Config) -> Vec<[String; 4]> {
    use postgres::config::Host;
    let ports = config.get_ports();
    let database = config
        .get_dbname()
        .or(config.get_user())
        .unwrap_or("")
        .to_owned();
    let user = config.get_user().unwrap_or("").to_owned();
    config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(index, host)| {
            let host = match host {
                Host::Tcp(name) => name.clone(),
                // libpq matches a socket's line by the name `localhost`.
                Host::Unix(_) => "localhost".to_owned(),
            };
            let port = ports.get(index).or(ports.first()).copied().unwrap_or(5432);
            [host, port.to_string(), database.clone(), user.clone()]
        })
        .collect()
}

/// The first pgpass password whose four fields match one of `candidates`.
fn pgpass_lookup(text: &str, candidates: &[[String; 4]]) -> Option<String> {
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = pgpass_fields(line);
        let [host, port, database, user, password] = &fields[..] else {
            continue;
        };
        let matches = |pattern: &String, value: &String| pattern == "*" || pattern == value;
        if candidates.iter().any(|[h, p, d, u]| {
            matches(host, h) && matches(port, p) && matches(database, d) && matches(user, u)
        }) {
            return Some(password.clone());
        }
    }
    None
}

/// A pgpass line's fields: `:` separates them, `\` escapes the next character.
fn pgpass_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        let c = match c {
            '\\' => match chars.next() {
                Some(next) => next,
                None => break,
            },
            // The password is the rest of the line, colons and all.
            ':' if fields.len() < 5 => {
                fields.push(String::new());
                continue;
            }
            c => c,
        };
        if let Some(field) = fields.last_mut() {
            field.push(c);
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_label_never_shows_the_password() {
        let config =
            postgres::Config::from_str("postgres://ci:s3cret@db.example:5433/bench?sslmode=prefer")
                .unwrap();
        assert_eq!(label(&config), "postgres://ci@db.example:5433/bench");
        assert!(has_password("postgres://ci:s3cret@db/bench"));
        assert!(!has_password("postgres://ci@db/bench"));
        assert!(is_url("postgresql://db/bench") && !is_url("history.sqlite"));
    }

    #[test]
    fn libpq_tls_options_are_taken_out_of_the_url_for_rustls() {
        let (url, root) = tls_options(
            "postgres://ci@db/bench?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem&application_name=x",
        );
        assert_eq!(
            url,
            "postgres://ci@db/bench?sslmode=require&application_name=x"
        );
        assert_eq!(root, Some(PathBuf::from("/etc/ca.pem")));
        let (url, root) = tls_options("postgres://ci@db/bench?sslrootcert=/ca.pem");
        assert_eq!(
            (url.as_str(), root),
            ("postgres://ci@db/bench", Some("/ca.pem".into()))
        );
        assert_eq!(
            tls_options("postgres://ci@db/bench").0,
            "postgres://ci@db/bench"
        );
    }

    #[test]
    fn pgpass_lines_match_as_libpq_reads_them() {
        let text = "# comment\n\
                    other:5432:bench:ci:wrong\n\
                    db:5432:bench:ci:pa\\:ss:word\n\
                    *:*:*:*:fallback\n";
        let wanted = [[
            "db".to_owned(),
            "5432".to_owned(),
            "bench".to_owned(),
            "ci".to_owned(),
        ]];
        assert_eq!(pgpass_lookup(text, &wanted).as_deref(), Some("pa:ss:word"));
        let elsewhere = [[
            "x".to_owned(),
            "1".to_owned(),
            "y".to_owned(),
            "z".to_owned(),
        ]];
        assert_eq!(pgpass_lookup(text, &elsewhere).as_deref(), Some("fallback"));
        assert_eq!(pgpass_lookup("db:5432:bench:ci", &wanted), None);
    }
}
