//! The session phase on the fixture agent (`bench-cli-fixture-agent`): its metrics exist
//! and agree with each other, a known leak per turn comes out as `session_growth`, the
//! endpoint's journal is kept, a request without the secret path gets 404, an agent that
//! never answers ends in the turn timeout, `idle_cpu` agrees with `/proc`, and a session
//! staircase's instances each hold one turn's leak more than idle ones, and a long
//! session's slopes find what the fixture plants per turn.

use crate::{clibench, run};
use bench_core::{Metric, ResultFile};
use std::fs;
use std::path::Path;

const LEAK: u64 = 8 << 20;

fn spec(dir: &Path, env: &str, session: &str) -> std::path::PathBuf {
    let agent = env!("CARGO_BIN_EXE_bench-cli-fixture-agent");
    let path = dir.join("spec.toml");
    fs::write(
        &path,
        format!(
            r#"name = "fixture-agent"

[env]
MODEL_URL = "{{model_url}}"
{env}

[measure]
command = ["{agent}"]
ready = "pattern"
ready_pattern = "(?m)^> $"
settle = "200ms"

[model]
dialect = "anthropic"
physics = {{ first_token = "50ms", tokens_per_second = 400 }}

[model.script]
[[model.script.turns]]
prompt = "list the files"
shell = "ls"
then = "Those are the files of the workspace folder."

[[model.script.turns]]
prompt = "tell me a long story"
tokens = 600

[[model.script.turns]]
prompt = "say hello"
text = "Hello from the scripted model, turn three."

[[model.script.turns]]
prompt = "say bye"
text = "Goodbye from the scripted model, turn four."

[session]
typing_keys = 5
{session}
"#
        ),
    )
    .unwrap();
    path
}

fn session_run(spec: &Path, out: &Path) -> crate::Run {
    run(clibench().arg("run").arg(spec).arg("--out").arg(out).args([
        "--trials",
        "1",
        "--phases",
        "install,session",
    ]))
}

fn value(result: &ResultFile, metric: Metric) -> f64 {
    let observations = &result.side.metrics[&metric];
    match observations[0].value {
        Some(value) => value,
        None => panic!("{metric}: {:?}", observations[0].error),
    }
}

#[test]
fn a_session_measures_every_turn_and_the_known_leak() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(
        dir.path(),
        &format!("FIXTURE_LEAK_BYTES = \"{LEAK}\""),
        "idle = \"1s\"",
    );
    let out = dir.path().join("out");
    let result = session_run(&spec, &out);
    assert_eq!(result.code, Some(0), "{}", result.stderr);
    let result = ResultFile::load(&out.join("result.json")).unwrap();
    let (turn, submit) = (value(&result, Metric::Turn), value(&result, Metric::Submit));
    assert!(0.0 < submit && submit < turn, "submit {submit} turn {turn}");
    let first = value(&result, Metric::FirstToken);
    assert!(first > 0.0 && first < turn, "first_token {first}");
    assert!(value(&result, Metric::StreamRender) >= 0.0);
    assert!(value(&result, Metric::ToolRoundtrip) > 0.0);
    assert!(value(&result, Metric::TurnCpu) > 0.0);
    assert!(value(&result, Metric::TypingLag) > 0.0);
    assert!(value(&result, Metric::SessionPss) <= value(&result, Metric::SessionRss));
    // Four turns, three after the warm-up: too few for `session_growth` as a metric,
    // but the session's record keeps the fit, which finds the leak.
    assert!(!result.side.metrics.contains_key(&Metric::SessionGrowth));
    let growth = result.side.sessions[0].growth_bytes_per_turn.unwrap();
    let error = (growth - LEAK as f64).abs() / LEAK as f64;
    assert!(
        error < 0.05,
        "growth {growth} vs a leak of {LEAK} bytes per turn"
    );
    let idle = value(&result, Metric::IdleCpu);
    assert!((0.0..0.05).contains(&idle), "idle_cpu {idle}");
    let run = &result.side.sessions[0];
    assert_eq!(run.turns.len(), 4);
    assert_eq!(run.turns[1].typing_lag_seconds.len(), 5);
    assert!(run.turns[0].tool_roundtrip_seconds.is_some());
    assert!(run.turns[2].tool_roundtrip_seconds.is_none());
    // The moments of the report's timeline, since Enter, in the order the turn lives
    // them: request, (tool call, its result), first chunk, last chunk, the prompt back.
    for turn in &run.turns {
        let at = |value: Option<f64>| value.unwrap_or_else(|| panic!("turn {}", turn.turn));
        let (first, last) = (
            at(turn.first_chunk_at_seconds),
            at(turn.last_chunk_at_seconds),
        );
        let submit = at(turn.submit_seconds);
        assert!(submit < first && first <= last, "{turn:?}");
        let shown = last + at(turn.stream_render_seconds);
        assert!(shown <= turn.turn_seconds, "{turn:?}");
        match turn.tool_call_at_seconds {
            Some(call) => {
                let result = call + at(turn.tool_roundtrip_seconds);
                assert!(submit < call && result < first, "{turn:?}");
            }
            None => assert!(turn.tool_roundtrip_seconds.is_none(), "{turn:?}"),
        }
    }
    assert!(run.turns[0].tool_call_at_seconds.is_some());
    // The journal is kept, without the secret path.
    let journal = fs::read_to_string(out.join("logs/model-session-0.jsonl")).unwrap();
    assert!(journal.contains("\"event\":\"chunk\""), "{journal}");
    assert!(journal.contains("/m/<token>/v1/messages"), "{journal}");
}

#[test]
fn every_key_is_its_own_write_for_an_agent_that_takes_a_burst_for_a_paste() {
    // The fixture inserts a read of several bytes as text, DELs too, as Continue's cn does:
    // four Backspaces written at once left the probe word on the prompt and every turn
    // failed "waiting for the erased key to leave the prompt".
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path(), "FIXTURE_BURST_AS_TEXT = \"1\"", "idle = \"1s\"");
    let out = dir.path().join("out");
    let result = session_run(&spec, &out);
    assert_eq!(result.code, Some(0), "{}", result.stderr);
    let result = ResultFile::load(&out.join("result.json")).unwrap();
    assert_eq!(result.side.sessions[0].turns.len(), 4);
    assert!(value(&result, Metric::Turn) > 0.0);
    assert_eq!(result.side.sessions[0].turns[1].typing_lag_seconds.len(), 5);
}

/// The staircase's per-instance PSS and the kind of instance it recorded.
fn staircase_pss(session: bool) -> (f64, bench_core::detail::StaircaseInstance) {
    let dir = tempfile::tempdir().unwrap();
    // The leak of one turn is all a session instance holds more than an idle one.
    let staircase = format!("\n[staircase]\ncount = 3\nsettle = \"500ms\"\nsession = {session}\n");
    let spec = spec(
        dir.path(),
        &format!("FIXTURE_LEAK_BYTES = \"{LEAK}\""),
        &staircase,
    );
    let out = dir.path().join("out");
    let result = run(clibench()
        .arg("run")
        .arg(&spec)
        .arg("--out")
        .arg(&out)
        .args(["--trials", "1", "--phases", "install,staircase"]));
    assert_eq!(result.code, Some(0), "{}", result.stderr);
    let result = ResultFile::load(&out.join("result.json")).unwrap();
    let journal = fs::read_to_string(out.join("logs/model-staircase-0.jsonl")).unwrap();
    // The warm-up instance and the three measured ones each played the first turn
    // (its tool call and the reply after its result); idle ones sent nothing.
    let calls = journal.matches("\"event\":\"request\"").count();
    assert_eq!(calls, if session { 8 } else { 0 }, "{journal}");
    (
        value(&result, Metric::InstancePss),
        result.side.staircases[0].instance,
    )
}

#[test]
fn a_session_staircase_instance_holds_its_turn() {
    use bench_core::detail::StaircaseInstance;
    let (idle, idle_kind) = staircase_pss(false);
    let (session, session_kind) = staircase_pss(true);
    assert_eq!(idle_kind, StaircaseInstance::Idle);
    assert_eq!(session_kind, StaircaseInstance::Session);
    let extra = session - idle;
    // Generous (the instances' own PSS moves by a few hundred KiB between runs), but an
    // instance measured without its turn adds nothing and fails it.
    assert!(
        (0.75 * LEAK as f64..1.25 * LEAK as f64).contains(&extra),
        "per-instance PSS idle {idle}, after one turn {session}: {extra} more, leak {LEAK}"
    );
}

#[test]
fn a_long_session_cycles_the_script_and_measures_each_planted_slope() {
    // Per turn done: 8 MiB kept, 30 ms more before each key's echo, 300 bytes more written
    // with each key. Nine turns cycle the script's four (turn 5 is the first again, a tool
    // call); checkpoints after turns 2, 4, 6, 8 and 9, turn 1 the warm-up.
    const KEY_COST_US: u64 = 30_000;
    const KEY_BYTES: u64 = 300;
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(
        dir.path(),
        &format!(
            "FIXTURE_LEAK_BYTES = \"{LEAK}\"\nFIXTURE_KEY_COST_US_PER_TURN = \"{KEY_COST_US}\"\n\
             FIXTURE_KEY_BYTES_PER_TURN = \"{KEY_BYTES}\""
        ),
        "turns = 9\ncheckpoint_every = 2\ncheckpoint_idle = \"200ms\"\nidle = \"1s\"",
    );
    let out = dir.path().join("out");
    let result = session_run(&spec, &out);
    assert_eq!(result.code, Some(0), "{}", result.stderr);
    let stderr = result.stderr;
    let result = ResultFile::load(&out.join("result.json")).unwrap();
    let run = &result.side.sessions[0];
    assert_eq!(run.turns.len(), 9);
    assert!(
        run.turns[4].tool_roundtrip_seconds.is_some(),
        "{:?}",
        run.turns[4]
    );
    let checkpoints: Vec<u32> = run.checkpoints.iter().map(|c| c.turn).collect();
    assert_eq!(checkpoints, [2, 4, 6, 8, 9]);
    assert_eq!(run.warmup_turns, 1);
    let near = |metric: Metric, expected: f64, tolerance: f64| {
        let measured = value(&result, metric);
        let error = (measured - expected).abs() / expected;
        assert!(
            error < tolerance,
            "{metric} {measured} vs {expected} planted"
        );
    };
    near(Metric::SessionGrowth, LEAK as f64, 0.05);
    // Per 100 turns: 3 s of latency and 30,000 bytes per key. The latency slope is wide:
    // each checkpoint's median echo moves with the machine's load by some milliseconds,
    // against 210 ms planted between the first and the last.
    near(Metric::LagGrowth, KEY_COST_US as f64 * 1e-6 * 100.0, 0.25);
    near(Metric::RenderGrowth, KEY_BYTES as f64 * 100.0, 0.05);
    // What the terminal received during a turn and per streamed token.
    let output = run.turns[1].output.unwrap();
    assert!(output.bytes > 0 && output.frames > 0, "{output:?}");
    assert!(value(&result, Metric::StreamBytes) > 1.0);
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("**Session slopes**"), "{report}");
    // Without a terminal the session told its turns in lines (the last one's count stays
    // up during the idle window after it).
    assert!(stderr.contains("session trial 0: turn 9 of 9"), "{stderr}");
}

#[test]
fn an_agent_that_never_answers_ends_in_the_turn_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path(), "FIXTURE_HANG = \"1\"", "turn_timeout = \"2s\"");
    let out = dir.path().join("out");
    let result = session_run(&spec, &out);
    assert_ne!(result.code, Some(0));
    let result = ResultFile::load(&out.join("result.json")).unwrap();
    let error = result.side.metrics[&Metric::Turn][0].error.clone().unwrap();
    assert!(
        error.contains("turn 1 (2s turn_timeout): waiting for the reply's final text"),
        "{error}"
    );
    assert!(out.join("logs/model-session-0.jsonl").is_file());
}

#[test]
fn a_turn_the_agent_stops_on_a_question_fails_by_the_question() {
    // The fixture asks before its tool call; a tip at start-up is no dialog.
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(
        dir.path(),
        "FIXTURE_ASK = \"1\"\nFIXTURE_TIP = \"1\"",
        "turn_timeout = \"120s\"",
    );
    let out = dir.path().join("out");
    let result = session_run(&spec, &out);
    assert_ne!(result.code, Some(0));
    let result = ResultFile::load(&out.join("result.json")).unwrap();
    let error = result.side.metrics[&Metric::Turn][0].error.clone().unwrap();
    // Not the turn's timeout: the question, and where approvals are set.
    assert!(
        error.starts_with(
            "turn 1: the agent stopped to ask its user (permission prompt: \"Allow execution of: 'ls'?\")"
        ),
        "{error}"
    );
    assert!(error.contains("Letting the agent work"), "{error}");
    // The screen it stopped on is kept, and --show-screen would print it.
    let screen = fs::read_to_string(out.join("logs/screen-at-failure-0-session.txt")).unwrap();
    assert!(screen.contains("1. Yes, allow once"), "{screen}");
}

#[test]
fn idle_cpu_finds_a_known_busy_share() {
    // An agent that burns 100 ms of every second at the prompt: a share of about 0.1.
    let dir = tempfile::tempdir().unwrap();
    // Over a 5 s window the 1 s period's phase lets 4 to 6 spins fall inside (a share of
    // 0.08 to 0.12), and a spin the machine's load stretches can straddle an edge: the
    // bounds allow that, not a reading of another process or of wall time.
    let spec = spec(dir.path(), "FIXTURE_BUSY_MS = \"100\"", "idle = \"5s\"");
    let out = dir.path().join("out");
    let result = session_run(&spec, &out);
    assert_eq!(result.code, Some(0), "{}", result.stderr);
    let result = ResultFile::load(&out.join("result.json")).unwrap();
    let idle = value(&result, Metric::IdleCpu);
    assert!((0.06..0.16).contains(&idle), "idle_cpu {idle}");
}

#[test]
fn a_request_without_the_secret_path_gets_404() {
    use bench_model::{Endpoint, Limits, Script, Settings};
    use std::io::{Read, Write};
    let script = Script::from_toml("[[turns]]\ntext = \"only for the trial\"\n", "t").unwrap();
    let endpoint = Endpoint::start(Settings {
        port: 0,
        script: script.compile().unwrap(),
        limits: Limits::default(),
        path_token: Some("0123456789abcdef0123456789abcdef".to_owned()),
        peer_uid: None,
    })
    .unwrap();
    let ask = |path: &str| {
        let body = r#"{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}"#;
        let mut stream = std::net::TcpStream::connect(endpoint.address()).unwrap();
        write!(
            stream,
            "POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    };
    for hostile in [
        "/v1/messages",
        "/m/0123456789abcdef0123456789abcdeX/v1/messages",
        "/m//v1/messages",
    ] {
        let answer = ask(hostile);
        assert!(answer.starts_with("HTTP/1.1 404"), "{hostile}: {answer}");
    }
    assert!(
        endpoint
            .journal()
            .requests()
            .iter()
            .all(|r| r.status == 404)
    );
    let answer = ask(&format!(
        "{}/v1/messages",
        endpoint
            .url()
            .trim_start_matches(&format!("http://{}", endpoint.address()))
    ));
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("only for the trial"), "{answer}");
}
