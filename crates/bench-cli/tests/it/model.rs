//! `clibench model serve`: the endpoint of crate bench-model in the foreground (its own
//! tests, against the agents' recorded requests, are in `crates/bench-model/tests/it/`).

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

const FAST: &str =
    "[physics]\nfirst_token = \"0ms\"\ntokens_per_second = 100000\nchunk_tokens = 3\n";

#[test]
fn model_serve_prints_its_url_and_journal_and_stops_on_sigint() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("turns.toml");
    std::fs::write(
        &script,
        format!("{FAST}[[turns]]\ntext = \"served \\u001b[31m\"\n"),
    )
    .unwrap();
    let journal = dir.path().join("journal.jsonl");
    let mut child = crate::clibench()
        .args(["model", "serve", "--script"])
        .arg(&script)
        .arg("--journal")
        .arg(&journal)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut url = String::new();
    stdout.read_line(&mut url).unwrap();
    let address: SocketAddr = url.trim().strip_prefix("http://").unwrap().parse().unwrap();
    assert!(address.ip().is_loopback());
    let body = json!({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi \u{1b}[2J"}]})
        .to_string();
    let mut client = TcpStream::connect(address).unwrap();
    write!(
        client,
        "POST /v1/messages HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reply = String::new();
    client.read_to_string(&mut reply).unwrap();
    // The answer's JSON escapes the control character; the terminal check is below.
    assert!(reply.contains(r#""text":"served \u001b[31m""#), "{reply}");
    // SAFETY: kill(2) on the child this test started and has not reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains(&format!("ANTHROPIC_BASE_URL={}", url.trim())),
        "{stderr}"
    );
    assert!(stderr.contains("POST /v1/messages anthropic"), "{stderr}");
    assert!(
        !stderr.contains('\u{1b}'),
        "text from a request reached the terminal raw: {stderr}"
    );
    let lines = std::fs::read_to_string(&journal).unwrap();
    let events: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events[0]["event"], "start");
    assert_eq!(events[1]["event"], "request");
    assert_eq!(events[1]["outcome"], "turn");
}

#[test]
fn model_serve_stops_on_sigint_with_answers_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("turns.toml");
    // 1000 tokens at 10 a second: the stream is still going when the signal comes.
    std::fs::write(
        &script,
        "repeat = true\n[physics]\nfirst_token = \"0ms\"\ntokens_per_second = 10\n\
         [[turns]]\ntokens = 1000\n",
    )
    .unwrap();
    let mut child = crate::clibench()
        .args(["model", "serve", "--script"])
        .arg(&script)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut url = String::new();
    stdout.read_line(&mut url).unwrap();
    let address: SocketAddr = url.trim().strip_prefix("http://").unwrap().parse().unwrap();
    let body = json!({"model": "m", "stream": true, "max_tokens": 5,
        "messages": [{"role": "user", "content": "hi"}]})
    .to_string();
    // A stream in flight, an idle keep-alive connection, and a body that never comes.
    let mut streaming = TcpStream::connect(address).unwrap();
    write!(
        streaming,
        "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut first = [0u8; 64];
    streaming.read_exact(&mut first).unwrap();
    let _idle = TcpStream::connect(address).unwrap();
    let mut partial = TcpStream::connect(address).unwrap();
    write!(
        partial,
        "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{{"
    )
    .unwrap();
    // SAFETY: kill(2) on the child this test started and has not reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let sent = std::time::Instant::now();
    // A bound on how long the test waits, not a speed goal: before, it could stay.
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if sent.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("model serve still runs 10 s after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(0), "ended after {:?}", sent.elapsed());
}

#[test]
fn model_serve_names_the_field_of_a_bad_script() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("turns.toml");
    std::fs::write(
        &script,
        "[[turns]]\ntext = \"a\"\n[[turns]]\ntokens = \"many\"\n",
    )
    .unwrap();
    let run = crate::run(
        crate::clibench()
            .args(["model", "serve", "--script"])
            .arg(&script),
    );
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("turns[1].tokens"), "{}", run.stderr);
}
