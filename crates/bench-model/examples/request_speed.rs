//! What the endpoint spends reading a long session's request: the whole conversation,
//! sent again with every turn.
//!
//! ```sh
//! cargo run --release -p bench-model --example request_speed -- [TURNS] [ROUNDS]
//! ```
//!
//! Builds an OpenAI Chat body like the demo agent's after TURNS turns (default 650): each
//! turn a prompt, a tool call, its output (400 lines of `seq`) and a reply. Reads it
//! ROUNDS times (default 200) with `bench_model::request::read` and prints the body's
//! size and the median and best time a read took, and the rate over the body.

use bench_model::Dialect;
use bench_model::request::read;
use serde_json::json;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let turns = args.first().copied().unwrap_or(650);
    let rounds = args.get(1).copied().unwrap_or(200).max(1);
    let body = serde_json::to_vec(&body(turns))?;
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let started = Instant::now();
        let asked = read(Dialect::OpenaiChat, None, &body)?;
        times.push(started.elapsed());
        assert!(!asked.last_user_text.is_empty());
    }
    times.sort();
    let median = times[times.len() / 2];
    let mib = body.len() as f64 / 1048576.0;
    println!(
        "{turns} turns, body {mib:.2} MiB: median {:.2} ms, best {:.2} ms a read ({:.0} MiB/s at the median), {rounds} reads",
        median.as_secs_f64() * 1e3,
        times[0].as_secs_f64() * 1e3,
        mib / median.as_secs_f64(),
    );
    Ok(())
}

/// The demo agent's request after `turns` turns.
fn body(turns: usize) -> serde_json::Value {
    let mut messages = vec![json!({"role": "system", "content": "You are demo-agent."})];
    for turn in 1..=turns {
        let lines = 50 + (turn * 150) % 451;
        let output: String = (1..=lines).map(|n| format!("{n}\n")).collect();
        messages.push(json!({"role": "user", "content": format!("step {turn}: run the command and sum up what it printed")}));
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("call_{turn}"), "type": "function", "function": {"name": "bash", "arguments": format!("{{\"command\": \"seq 1 {lines}\"}}")}}]}));
        messages.push(
            json!({"role": "tool", "tool_call_id": format!("call_{turn}"), "content": output}),
        );
        messages.push(json!({"role": "assistant", "content": format!("The command printed {lines} lines of numbers, one per line. End of step {turn}.")}));
    }
    messages.push(
        json!({"role": "user", "content": "step next: run the command and sum up what it printed"}),
    );
    json!({"model": "demo-agent-model", "stream": true, "messages": messages,
        "tools": [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]})
}
