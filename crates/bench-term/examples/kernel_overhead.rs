//! Benchmark of the kernel client against the reference kernel.
//!
//! 1. Client overhead: a `pass` cell round trip through `bench_term::kernel::Kernel`
//!    (with and without a transcript) against the same round trip through a minimal
//!    hand-written pipe client (write one line, read lines until `done`, no thread, no
//!    parsing beyond a substring check; its kernel also runs in a new session). Blocks of cells alternate between the clients
//!    so that drift of a shared machine hits all of them alike. Target: within 10% or
//!    30 µs of the minimal client.
//! 2. Interrupt latency of the reference kernel for a cell stuck in
//!    `await asyncio.sleep(60)` and one stuck in `while True: pass`: time from sending
//!    `interrupt` to `done`. Target: under 50 ms each.
//!
//! Run with `cargo run --release -p bench-term --example kernel_overhead [-- BLOCKS CELLS INTERRUPTS]`
//! (defaults 20 blocks, each with fresh kernels, of 200 cells; 20 interrupts of each
//! kind).

use bench_core::stats::Summary;
use bench_core::units::format_seconds;
use bench_term::kernel::measure::{INTERRUPT_AWAIT, INTERRUPT_BUSY, interrupt_latency};
use bench_term::kernel::{Kernel, KernelOptions, REFERENCE_KERNEL, protocol};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

/// The smallest client that can run a cell: pipes, one thread, substring matching.
struct PipeClient {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
    next: u64,
}

impl PipeClient {
    fn spawn(script: &Path, env: &[(String, String)]) -> PipeClient {
        let mut command = Command::new("python3");
        // The kernel runs in its own session, as the protocol asks and as `Kernel` does:
        // with autogroup scheduling a session is its own scheduling group, so spawning
        // the two kernels differently would measure the scheduler, not the clients.
        // SAFETY: setsid(2) is async-signal-safe and touches no memory of the parent.
        unsafe {
            command.pre_exec(|| {
                rustix::process::setsid().map_err(std::io::Error::from)?;
                Ok(())
            });
        }
        let mut child = command
            .arg(script)
            .env_clear()
            .envs(env.iter().cloned())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn python3");
        let stdin = child.stdin.take().expect("stdin");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("ready");
        assert!(line.contains("\"ready\""), "{line}");
        PipeClient {
            child,
            stdin,
            stdout,
            line,
            next: 0,
        }
    }

    fn pass(&mut self) {
        self.next += 1;
        let request = format!(
            "{{\"type\":\"execute\",\"id\":\"{}\",\"code\":\"pass\"}}\n",
            self.next
        );
        self.stdin.write_all(request.as_bytes()).expect("write");
        loop {
            self.line.clear();
            self.stdout.read_line(&mut self.line).expect("read");
            if self.line.contains("\"done\"") {
                return;
            }
        }
    }

    fn close(mut self) {
        drop(self.stdin);
        self.child.wait().expect("wait");
    }
}

fn summary(label: &str, values: &[f64]) -> Summary {
    let summary = Summary::from_values(values).expect("values");
    println!(
        "{label:<34} median {:>9}  mean {:>9}  min {:>9}  p95 {:>9}  max {:>9}  (n={})",
        format_seconds(summary.median),
        format_seconds(summary.mean),
        format_seconds(summary.min),
        format_seconds(summary.p95),
        format_seconds(summary.max),
        summary.n
    );
    summary
}

fn main() {
    let mut args = std::env::args()
        .skip(1)
        .map(|a| a.parse::<usize>().expect("a number"));
    let blocks = args.next().unwrap_or(20);
    let cells = args.next().unwrap_or(200);
    let interrupts = args.next().unwrap_or(20);

    let folder = tempfile::tempdir().expect("tempdir");
    let script = folder.path().join("kernel.py");
    std::fs::write(&script, REFERENCE_KERNEL).expect("write kernel");
    let env = vec![
        ("PATH".to_owned(), std::env::var("PATH").unwrap_or_default()),
        ("LANG".to_owned(), "C.UTF-8".to_owned()),
    ];
    let options = |transcript: Option<&str>| {
        let mut options = KernelOptions::new("python3", [&script], folder.path(), env.clone());
        options.transcript = transcript.map(|name| folder.path().join(name));
        options
    };

    // Every block starts three fresh kernels (one per client), so that how the
    // scheduler happens to treat one kernel process does not pass for client overhead.
    // Within a block, cells alternate between the clients one by one (rotating who goes
    // first) and every cell is timed on its own, so load from other processes falls on
    // all alike.
    let (mut pipe_times, mut plain_times, mut traced_times) = (Vec::new(), Vec::new(), Vec::new());
    for block in 0..blocks {
        let mut pipe = PipeClient::spawn(&script, &env);
        let mut plain = Kernel::spawn(options(None)).expect("spawn");
        plain.ready().expect("ready");
        let mut traced =
            Kernel::spawn(options(Some(&format!("transcript-{block}.jsonl")))).expect("spawn");
        traced.ready().expect("ready");
        // Warm-up: compile paths, page caches, CPU frequency.
        for _ in 0..50 {
            pipe.pass();
            plain.execute("pass").expect("pass");
            traced.execute("pass").expect("pass");
        }
        for round in 0..cells {
            for turn in 0..3 {
                let started = Instant::now();
                match (round + turn) % 3 {
                    0 => {
                        pipe.pass();
                        pipe_times.push(started.elapsed().as_secs_f64());
                    }
                    1 => {
                        assert!(plain.execute("pass").expect("pass").is_ok());
                        plain_times.push(started.elapsed().as_secs_f64());
                    }
                    _ => {
                        assert!(traced.execute("pass").expect("pass").is_ok());
                        traced_times.push(started.elapsed().as_secs_f64());
                    }
                }
            }
        }
        pipe.close();
        plain.close().expect("close");
        traced.close().expect("close");
    }
    println!(
        "`pass` round trip, each cell timed, clients alternating ({blocks} blocks of fresh \
         kernels x {cells} cells = {} cells per client):",
        blocks * cells
    );
    let pipe_summary = summary("minimal pipe client", &pipe_times);
    let plain_summary = summary("bench_term Kernel", &plain_times);
    let traced_summary = summary("bench_term Kernel + transcript", &traced_times);
    for (label, client, times) in [
        ("Kernel", &plain_summary, &plain_times),
        ("Kernel + transcript", &traced_summary, &traced_times),
    ] {
        let overhead = client.median - pipe_summary.median;
        let relative = overhead / pipe_summary.median * 100.0;
        // Cells of the same round ran back to back, so their difference cancels most of
        // what other processes did to the machine at that moment.
        let paired: Vec<f64> = times
            .iter()
            .zip(&pipe_times)
            .map(|(client, pipe)| client - pipe)
            .collect();
        let paired = Summary::from_values(&paired).expect("values").median;
        let within = |overhead: f64| {
            if overhead <= 30e-6 || overhead / pipe_summary.median <= 0.10 {
                "within target (10% or 30 µs)"
            } else {
                "OVER target (10% or 30 µs)"
            }
        };
        println!(
            "overhead of {label}: medians differ by {} ({relative:+.1}%) -> {}; \
             median of paired differences {} -> {}; minimums differ by {}",
            format_seconds(overhead),
            within(overhead),
            format_seconds(paired),
            within(paired),
            format_seconds(client.min - pipe_summary.min),
        );
    }
    // The client's own CPU work per `pass` cell, without any process: encoding the
    // request and parsing the `done` line.
    let iterations = 100_000;
    let mut fields = serde_json::Map::new();
    fields.insert("code".to_owned(), serde_json::Value::from("pass"));
    let started = Instant::now();
    for index in 0..iterations {
        let line = protocol::encode_request("execute", Some(&index.to_string()), &fields);
        let event = protocol::parse_event(r#"{"event":"done","id":"17","status":"ok"}"#);
        let _ = std::hint::black_box((line, event));
    }
    println!(
        "client CPU work per cell (encode request + parse `done`): {}",
        format_seconds(started.elapsed().as_secs_f64() / f64::from(iterations))
    );
    let mut plain = Kernel::spawn(options(None)).expect("spawn");
    plain.ready().expect("ready");

    println!("\ninterrupt latency, interrupt to `done` ({interrupts} each):");
    for (label, code) in [
        ("await asyncio.sleep(60)", INTERRUPT_AWAIT),
        ("while True: pass", INTERRUPT_BUSY),
    ] {
        let latencies: Vec<f64> = (0..interrupts)
            .map(|_| {
                interrupt_latency(&mut plain, code)
                    .expect("interrupt")
                    .as_secs_f64()
            })
            .collect();
        let summary = summary(label, &latencies);
        let verdict = |value: f64| {
            if value < 0.050 {
                "under the 50 ms target"
            } else {
                "OVER the 50 ms target"
            }
        };
        println!(
            "  -> median {} {}; p95 {} {}",
            format_seconds(summary.median),
            verdict(summary.median),
            format_seconds(summary.p95),
            verdict(summary.p95)
        );
    }
    plain.close().expect("close");
}
