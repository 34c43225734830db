//! How late each streamed chunk of the model endpoint reaches a client, and what the
//! endpoint costs while it streams.
//!
//! ```sh
//! cargo run --release -p bench-model --example model_schedule -- [TOKENS] [TOKENS_PER_SECOND] [CHUNK_TOKENS]
//! ```
//!
//! Starts the endpoint in this process with a script of one turn of TOKENS tokens
//! (default 10000 at 1000 per second, 1 token per chunk), asks for it with a raw TCP
//! client that decodes the chunked body as it arrives and notes when each HTTP chunk
//! was complete, and compares that with the time the journal scheduled the chunk (both
//! on the same monotonic clock). Prints p50, p99 and max of arrival - schedule and of
//! written - schedule (the journal's own record), and the endpoint's CPU time (the
//! process's, minus this client thread's) and RSS while streaming.

use bench_model::{Endpoint, Limits, Script, Settings};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |index: usize, default: f64| -> f64 {
        args.get(index)
            .and_then(|a| a.parse().ok())
            .unwrap_or(default)
    };
    let tokens = number(0, 10_000.0) as u32;
    let rate = number(1, 1000.0);
    let chunk = number(2, 1.0) as u32;
    let script = Script::from_toml(
        &format!(
            "[physics]\nfirst_token = \"100ms\"\ntokens_per_second = {rate}\nchunk_tokens = {chunk}\n\
             seed = 1\n[[turns]]\ntokens = {tokens}\n"
        ),
        "benchmark",
    )?;
    let rss_before = rss_bytes("VmRSS:");
    let endpoint = Endpoint::start(Settings {
        port: 0,
        script: script.compile()?,
        limits: Limits::default(),
        path_token: None,
        peer_uid: None,
    })?;
    let journal = endpoint.journal();
    let body = format!(
        "{{\"model\":\"m\",\"stream\":true,\"max_tokens\":{tokens},\"messages\":[{{\"role\":\"user\",\"content\":\"go\"}}]}}"
    );
    let cpu_before = process_cpu();
    let thread_before = thread_cpu();
    let mut stream = TcpStream::connect(endpoint.address())?;
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(Duration::from_secs(600)))?;
    write!(
        stream,
        "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Connection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    let arrivals = read_chunk_arrivals(&mut stream)?;
    let cpu = process_cpu().saturating_sub(cpu_before);
    let client_cpu = thread_cpu().saturating_sub(thread_before);
    let rss_peak = rss_bytes("VmHWM:");
    let request = journal
        .requests()
        .first()
        .map(|r| r.number)
        .ok_or("no request")?;
    let chunks = journal.chunks(request);
    if chunks.len() != arrivals.len() {
        return Err(format!(
            "{} chunks in the journal, {} arrived",
            chunks.len(),
            arrivals.len()
        )
        .into());
    }
    let start = journal.start();
    // The preamble goes out at once with the headers; the schedule is about the tokens.
    let mut arrival_late = Vec::new();
    let mut written_late = Vec::new();
    for (chunk, arrived) in chunks.iter().zip(&arrivals).skip(1) {
        let arrived = arrived.saturating_duration_since(start);
        arrival_late.push(signed_micros(arrived, chunk.scheduled));
        written_late.push(signed_micros(chunk.written, chunk.scheduled));
    }
    let streamed = chunks.last().map_or(Duration::ZERO, |c| c.scheduled)
        - chunks.first().map_or(Duration::ZERO, |c| c.scheduled);
    let endpoint_cpu = cpu.saturating_sub(client_cpu);
    println!(
        "{} chunks ({tokens} tokens, {chunk} per chunk, {rate} tokens/s) over {:.2} s",
        chunks.len(),
        streamed.as_secs_f64()
    );
    report("arrival - schedule", &mut arrival_late);
    report("written - schedule", &mut written_late);
    println!(
        "endpoint CPU {:.1} ms ({:.2}% of one core over the stream); client thread {:.1} ms",
        endpoint_cpu.as_secs_f64() * 1e3,
        100.0 * endpoint_cpu.as_secs_f64() / streamed.as_secs_f64().max(1e-9),
        client_cpu.as_secs_f64() * 1e3
    );
    println!(
        "process RSS {:.1} MiB before the endpoint, peak {:.1} MiB while streaming",
        rss_before as f64 / 1048576.0,
        rss_peak as f64 / 1048576.0
    );
    endpoint.stop();
    Ok(())
}

fn signed_micros(at: Duration, scheduled: Duration) -> i64 {
    at.as_micros() as i64 - scheduled.as_micros() as i64
}

fn report(name: &str, values: &mut [i64]) {
    values.sort_unstable();
    let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
    let over_1ms = values.iter().filter(|v| **v > 1000).count();
    println!(
        "{name}: p50 {} us, p99 {} us, max {} us, min {} us; {} of {} later than 1 ms",
        at(0.5),
        at(0.99),
        values[values.len() - 1],
        values[0],
        over_1ms,
        values.len()
    );
}

/// Reads the response and returns when each HTTP chunk of its body was complete.
fn read_chunk_arrivals(stream: &mut TcpStream) -> std::io::Result<Vec<Instant>> {
    let mut buffer = Vec::new();
    let mut scratch = vec![0u8; 1 << 16];
    let mut arrivals = Vec::new();
    let mut at = None; // where the body starts, once the headers are in
    loop {
        let read = stream.read(&mut scratch)?;
        let now = Instant::now();
        if read == 0 {
            return Ok(arrivals);
        }
        buffer.extend_from_slice(&scratch[..read]);
        if at.is_none() {
            at = buffer
                .windows(4)
                .position(|w| w == b"\r\n\r\n")
                .map(|p| p + 4);
        }
        let Some(offset) = at.as_mut() else { continue };
        // Every whole chunk now in the buffer arrived with this read.
        loop {
            let rest = &buffer[*offset..];
            let Some(line_end) = rest.windows(2).position(|w| w == b"\r\n") else {
                break;
            };
            let size =
                usize::from_str_radix(std::str::from_utf8(&rest[..line_end]).unwrap_or("0"), 16)
                    .unwrap_or(0);
            if size == 0 {
                return Ok(arrivals);
            }
            let whole = line_end + 2 + size + 2;
            if rest.len() < whole {
                break;
            }
            arrivals.push(now);
            *offset += whole;
        }
    }
}

fn process_cpu() -> Duration {
    // SAFETY: getrusage fills the struct it is given and nothing else.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a rusage.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    timeval(usage.ru_utime) + timeval(usage.ru_stime)
}

fn timeval(t: libc::timeval) -> Duration {
    Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
}

fn thread_cpu() -> Duration {
    // SAFETY: clock_gettime fills the timespec it is given.
    let mut spec: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut spec) };
    Duration::new(spec.tv_sec as u64, spec.tv_nsec as u32)
}

fn rss_bytes(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kib| kib.parse::<u64>().ok())
        })
        .map_or(0, |kib| kib * 1024)
}
