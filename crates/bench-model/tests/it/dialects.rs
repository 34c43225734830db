//! The model endpoint against the request bodies the five real agents sent (recorded in
//! `tests/fixtures/model/`, secrets removed; see its README), over real sockets: each
//! dialect's streamed answer, a tool-call round trip per agent, side requests, faults,
//! bounds and the journal.

use bench_model::{Endpoint, Event, Journal, Limits, Outcome, Script, Settings};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::time::Duration;

/// A script whose physics is fast: tests check shapes, not speed.
const FAST: &str =
    "[physics]\nfirst_token = \"0ms\"\ntokens_per_second = 100000\nchunk_tokens = 3\n";

fn endpoint(script: &str) -> Endpoint {
    endpoint_with(script, Limits::default())
}

fn endpoint_with(script: &str, limits: Limits) -> Endpoint {
    let script = Script::from_toml(&format!("{FAST}{script}"), "test").unwrap();
    Endpoint::start(Settings {
        port: 0,
        script: script.compile().unwrap(),
        limits,
        path_token: None,
        peer_uid: None,
    })
    .unwrap()
}

/// A response: status, headers (lower-case names), body (chunked encoding removed).
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    /// The `data:` payloads of a server-sent event stream, `[DONE]` left out.
    fn events(&self) -> Vec<Value> {
        self.body
            .lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .filter(|data| *data != "[DONE]")
            .map(|data| serde_json::from_str(data.trim_end()).unwrap())
            .collect()
    }
}

/// Sends one request on a fresh connection (`Connection: close`) and reads the answer.
fn send(
    address: SocketAddr,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Reply {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut head =
        format!("{method} {target} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if !body.is_empty() || method == "POST" {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    read_reply(stream)
}

fn read_reply(stream: TcpStream) -> Reply {
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line).unwrap();
    let status = status_line.split(' ').nth(1).unwrap().parse().unwrap();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').unwrap();
        headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
    }
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            if reader.read_line(&mut size).unwrap_or(0) == 0 {
                break; // cut mid-way: no terminating chunk
            }
            let size = usize::from_str_radix(size.trim(), 16).unwrap();
            if size == 0 {
                break;
            }
            let mut chunk = vec![0; size + 2];
            if reader.read_exact(&mut chunk).is_err() {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else {
        // A cut whole body ends early: keep what came.
        let _ = reader.read_to_end(&mut body);
    }
    Reply {
        status,
        headers,
        body: String::from_utf8(body).unwrap(),
    }
}

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/model")
}

/// Replays a recorded request: its method, path, query and headers, and its body.
fn replay(endpoint: &Endpoint, agent: &str, name: &str) -> Reply {
    let dir = fixtures().join(agent);
    let meta: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join(format!("{name}.headers.json"))).unwrap(),
    )
    .unwrap();
    let body = std::fs::read(dir.join(format!("{name}.json"))).unwrap_or_default();
    let mut target = meta["path"].as_str().unwrap().to_owned();
    if let Some(query) = meta["query"].as_str().filter(|q| !q.is_empty()) {
        target = format!("{target}?{query}");
    }
    let skip = [
        "content-length",
        "connection",
        "host",
        "accept-encoding",
        "transfer-encoding",
    ];
    let headers: Vec<(String, String)> = meta["headers"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(name, _)| !skip.contains(&name.to_ascii_lowercase().as_str()))
        .map(|(name, value)| (name.clone(), value.as_str().unwrap_or_default().to_owned()))
        .collect();
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    send(
        endpoint.address(),
        meta["method"].as_str().unwrap(),
        &target,
        &headers,
        &body,
    )
}

/// The text and tool calls (name, arguments) of an Anthropic stream.
fn anthropic_stream(reply: &Reply) -> (String, Vec<(String, Value)>, Value) {
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.header("content-type"), Some("text/event-stream"));
    let events = reply.events();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"message_start"));
    assert!(kinds.contains(&"ping"));
    assert_eq!(&kinds[kinds.len() - 2..], ["message_delta", "message_stop"]);
    let mut text = String::new();
    let mut calls: Vec<(String, String)> = Vec::new();
    for event in &events {
        match event["type"].as_str().unwrap() {
            "content_block_start" if event["content_block"]["type"] == "tool_use" => {
                calls.push((
                    event["content_block"]["name"].as_str().unwrap().to_owned(),
                    String::new(),
                ));
            }
            "content_block_delta" => match event["delta"]["type"].as_str().unwrap() {
                "text_delta" => text.push_str(event["delta"]["text"].as_str().unwrap()),
                "input_json_delta" => calls
                    .last_mut()
                    .unwrap()
                    .1
                    .push_str(event["delta"]["partial_json"].as_str().unwrap()),
                other => panic!("unexpected delta {other}"),
            },
            _ => {}
        }
    }
    let end = events[events.len() - 2].clone();
    let calls = calls
        .into_iter()
        .map(|(name, json)| (name, serde_json::from_str(&json).unwrap()))
        .collect();
    (text, calls, end)
}

fn outcomes(journal: &Journal) -> Vec<String> {
    journal
        .requests()
        .iter()
        .map(|r| {
            let line = Event::Request(Box::new(r.clone())).to_json();
            let detail = ["turn", "side", "fault", "reason"]
                .iter()
                .find_map(|key| line.get(*key).filter(|v| !v.is_null()).cloned())
                .unwrap_or(Value::Null);
            let part = line
                .get("part")
                .and_then(Value::as_str)
                .map(|p| format!(" {p}"))
                .unwrap_or_default();
            format!("{} {}{}", line["outcome"].as_str().unwrap(), detail, part)
        })
        .collect()
}

const LS_THEN_HELLO: &str = "[[turns]]\nwhen = \"(?i)list\"\nshell = \"ls -la\"\nthen = \"Those are the files.\"\n\
                             [[turns]]\ntext = \"Hello from the script.\"\n";

#[test]
fn claude_code_title_tool_call_round_trip_and_next_turn() {
    let endpoint = endpoint(LS_THEN_HELLO);
    let head = replay(&endpoint, "claude-code", "01-head-head-200");
    assert_eq!(head.status, 200);
    // The title request asks for JSON with a schema: it gets {"title": "..."}.
    let (title, calls, _) = anthropic_stream(&replay(
        &endpoint,
        "claude-code",
        "02-post-anthropic-schema",
    ));
    assert!(calls.is_empty());
    let title: Value = serde_json::from_str(&title).unwrap();
    assert!(title["title"].is_string(), "{title}");
    let (_, calls, end) = anthropic_stream(&replay(
        &endpoint,
        "claude-code",
        "03-post-anthropic-tool_call",
    ));
    assert_eq!(calls, [("Bash".to_owned(), json!({"command": "ls -la"}))]);
    assert_eq!(end["delta"]["stop_reason"], "tool_use");
    let (text, _, end) =
        anthropic_stream(&replay(&endpoint, "claude-code", "04-post-anthropic-final"));
    assert_eq!(text, "Those are the files.");
    assert_eq!(end["delta"]["stop_reason"], "end_turn");
    assert!(end["usage"]["output_tokens"].as_u64().unwrap() > 0);
    let (text, _, _) =
        anthropic_stream(&replay(&endpoint, "claude-code", "05-post-anthropic-text"));
    assert_eq!(text, "Hello from the script.");
    assert_eq!(
        outcomes(&endpoint.journal()),
        [
            "side \"root\"",
            "side \"schema\"",
            "turn 1 start",
            "turn 1 after_tools:1",
            "turn 2 start"
        ]
    );
    let requests = endpoint.journal().requests();
    assert_eq!(requests[2].tool_count, 27);
    assert!(requests[3].tool_results);
    assert_eq!(requests[2].model.as_deref(), Some("claude-opus-4-8"));
}

#[test]
fn pi_tool_call_round_trip_shows_usage() {
    let endpoint = endpoint(LS_THEN_HELLO);
    let reply = replay(&endpoint, "pi", "01-post-anthropic-tool_call");
    let start = &reply.events()[0];
    assert!(start["message"]["usage"]["input_tokens"].as_u64().unwrap() > 100);
    let (_, calls, _) = anthropic_stream(&reply);
    assert_eq!(calls, [("bash".to_owned(), json!({"command": "ls -la"}))]);
    let (text, _, _) = anthropic_stream(&replay(&endpoint, "pi", "02-post-anthropic-final"));
    assert_eq!(text, "Those are the files.");
    let (text, _, _) = anthropic_stream(&replay(&endpoint, "pi", "03-post-anthropic-text"));
    assert_eq!(text, "Hello from the script.");
}

#[test]
fn opencode_title_is_a_side_request_and_the_tool_call_round_trips() {
    let endpoint = endpoint(LS_THEN_HELLO);
    let (title, calls, _) =
        anthropic_stream(&replay(&endpoint, "opencode", "01-post-anthropic-title"));
    assert!(calls.is_empty());
    assert!(!title.is_empty());
    let (_, calls, _) = anthropic_stream(&replay(
        &endpoint,
        "opencode",
        "02-post-anthropic-tool_call",
    ));
    assert_eq!(calls, [("bash".to_owned(), json!({"command": "ls -la"}))]);
    let (text, _, _) = anthropic_stream(&replay(&endpoint, "opencode", "03-post-anthropic-final"));
    assert_eq!(text, "Those are the files.");
    let (text, _, _) = anthropic_stream(&replay(&endpoint, "opencode", "04-post-anthropic-text"));
    assert_eq!(text, "Hello from the script.");
    assert_eq!(
        outcomes(&endpoint.journal()),
        [
            "side \"title\"",
            "turn 1 start",
            "turn 1 after_tools:1",
            "turn 2 start"
        ]
    );
}

/// The Responses events of a stream: their types, the text, and the finished items.
fn responses_stream(reply: &Reply) -> (Vec<String>, String, Vec<Value>) {
    assert_eq!(reply.status, 200, "{}", reply.body);
    let events = reply.events();
    let kinds: Vec<String> = events
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect();
    for (index, event) in events.iter().enumerate() {
        assert_eq!(event["sequence_number"], index);
    }
    let text = events
        .iter()
        .filter(|e| e["type"] == "response.output_text.delta")
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    let completed = events.last().unwrap();
    assert_eq!(completed["type"], "response.completed");
    assert!(
        completed["response"]["usage"]["total_tokens"]
            .as_u64()
            .unwrap()
            > 0
    );
    let output = completed["response"]["output"].as_array().unwrap().clone();
    (kinds, text, output)
}

#[test]
fn codex_falls_back_from_websocket_and_runs_ls_through_exec() {
    let endpoint = endpoint(LS_THEN_HELLO);
    let upgrade = replay(&endpoint, "codex", "01-get-ws-426");
    assert_eq!(upgrade.status, 426, "{}", upgrade.body);
    let (kinds, _, output) = responses_stream(&replay(
        &endpoint,
        "codex",
        "02-post-responses-custom_tool_call",
    ));
    assert_eq!(kinds[..2], ["response.created", "response.in_progress"]);
    assert!(kinds.contains(&"response.custom_tool_call_input.delta".to_owned()));
    assert_eq!(output.len(), 1);
    assert_eq!(output[0]["type"], "custom_tool_call");
    assert_eq!(output[0]["name"], "exec");
    assert_eq!(
        output[0]["input"],
        "const r = await tools.exec_command({cmd: \"ls -la\"});\ntext(r.output);\n"
    );
    // The title thread's request quotes the user's prompt but asks for a schema.
    let (_, title, _) = responses_stream(&replay(&endpoint, "codex", "04-post-responses-schema"));
    let title: Value = serde_json::from_str(&title).unwrap();
    assert!(!title["title"].as_str().unwrap().is_empty());
    let (kinds, text, output) =
        responses_stream(&replay(&endpoint, "codex", "05-post-responses-final"));
    assert_eq!(text, "Those are the files.");
    assert_eq!(output[0]["type"], "message");
    for kind in [
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
    ] {
        assert!(
            kinds.contains(&kind.to_owned()),
            "{kind} missing from {kinds:?}"
        );
    }
    let (_, text, _) = responses_stream(&replay(&endpoint, "codex", "06-post-responses-text"));
    assert_eq!(text, "Hello from the script.");
    assert_eq!(
        outcomes(&endpoint.journal()),
        [
            "side \"websocket\"",
            "turn 1 start",
            "side \"schema\"",
            "turn 1 after_tools:1",
            "turn 2 start"
        ]
    );
}

/// The Gemini chunks of a stream: text and function calls; the last has finishReason.
fn gemini_stream(reply: &Reply) -> (String, Vec<Value>) {
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(
        reply.body.contains("\r\n\r\n"),
        "Gemini SSE ends events with CRLF CRLF"
    );
    let events = reply.events();
    assert_eq!(
        events.last().unwrap()["candidates"][0]["finishReason"],
        "STOP"
    );
    let mut text = String::new();
    let mut calls = Vec::new();
    for event in &events {
        assert!(event["usageMetadata"]["totalTokenCount"].as_u64().unwrap() > 0);
        for part in event["candidates"][0]["content"]["parts"]
            .as_array()
            .unwrap()
        {
            if let Some(piece) = part["text"].as_str() {
                text.push_str(piece);
            }
            if part.get("functionCall").is_some() {
                calls.push(part["functionCall"].clone());
            }
        }
    }
    (text, calls)
}

#[test]
fn gemini_cli_classifier_gets_its_schema_and_the_shell_call_round_trips() {
    let endpoint = endpoint(LS_THEN_HELLO);
    let classifier = replay(&endpoint, "gemini-cli", "01-post-gemini-schema").json();
    let text = classifier["candidates"][0]["content"]["parts"][0]["text"]
        .as_str()
        .unwrap();
    let value: Value = serde_json::from_str(text).unwrap();
    assert!(value["complexity_reasoning"].is_string(), "{value}");
    let score = value["complexity_score"].as_i64().unwrap();
    assert!((1..=100).contains(&score), "{value}");
    let (_, calls) = gemini_stream(&replay(&endpoint, "gemini-cli", "02-post-gemini-tool_call"));
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["name"], "run_shell_command");
    assert_eq!(calls[0]["args"]["command"], "ls -la");
    let (text, _) = gemini_stream(&replay(&endpoint, "gemini-cli", "03-post-gemini-final"));
    assert_eq!(text, "Those are the files.");
    replay(&endpoint, "gemini-cli", "04-post-gemini-schema").json();
    let (text, _) = gemini_stream(&replay(&endpoint, "gemini-cli", "05-post-gemini-text"));
    assert_eq!(text, "Hello from the script.");
    let summary = replay(&endpoint, "gemini-cli-summary", "01-post-gemini-text").json();
    assert!(summary["candidates"][0]["content"]["parts"][0]["text"].is_string());
    assert_eq!(
        outcomes(&endpoint.journal()),
        [
            "side \"schema\"",
            "turn 1 start",
            "turn 1 after_tools:1",
            "side \"schema\"",
            "turn 2 start",
            "side \"summary\""
        ]
    );
}

// No agent of the five speaks Chat Completions: these bodies follow OpenAI's documented
// shape (and that of the OpenAI-compatible CLIs that use it).
fn chat_body(messages: Value, stream: bool) -> Vec<u8> {
    json!({
        "model": "gpt-test", "stream": stream, "stream_options": {"include_usage": true},
        "messages": messages,
        "tools": [{"type": "function", "function": {"name": "shell", "parameters": {
            "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}],
    })
    .to_string()
    .into_bytes()
}

#[test]
fn chat_completions_streams_tool_calls_and_the_follow_up() {
    let endpoint = endpoint(LS_THEN_HELLO);
    let user = json!([{"role": "system", "content": "be brief"}, {"role": "user", "content": "list the files"}]);
    let reply = send(
        endpoint.address(),
        "POST",
        "/v1/chat/completions",
        &[],
        &chat_body(user.clone(), true),
    );
    assert!(reply.body.ends_with("data: [DONE]\n\n"));
    let events = reply.events();
    let mut arguments = String::new();
    let mut name = None;
    for event in &events {
        for call in event["choices"][0]["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if let Some(n) = call["function"]["name"].as_str() {
                name = Some(n.to_owned());
            }
            arguments.push_str(call["function"]["arguments"].as_str().unwrap_or(""));
        }
    }
    assert_eq!(name.as_deref(), Some("shell"));
    assert_eq!(
        serde_json::from_str::<Value>(&arguments).unwrap(),
        json!({"command": "ls -la"})
    );
    let finish = events
        .iter()
        .find_map(|e| e["choices"][0]["finish_reason"].as_str());
    assert_eq!(finish, Some("tool_calls"));
    assert!(
        events.last().unwrap()["usage"]["total_tokens"]
            .as_u64()
            .unwrap()
            > 0
    );
    let mut history = user.as_array().unwrap().clone();
    history.push(
        json!({"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
        "function": {"name": "shell", "arguments": arguments}}]}),
    );
    history.push(json!({"role": "tool", "tool_call_id": "call_1", "content": "README.md"}));
    let reply = send(
        endpoint.address(),
        "POST",
        "/v1/chat/completions",
        &[],
        &chat_body(Value::Array(history), false),
    );
    let whole = reply.json();
    assert_eq!(whole["object"], "chat.completion");
    assert_eq!(
        whole["choices"][0]["message"]["content"],
        "Those are the files."
    );
    assert_eq!(whole["choices"][0]["finish_reason"], "stop");
}

#[test]
fn json_schema_formats_get_schema_valid_answers_without_consuming_turns() {
    let endpoint = endpoint("[[turns]]\ntext = \"only turn\"\n");
    let schema = json!({"type": "object", "properties": {
        "verdict": {"type": "string", "enum": ["yes", "no"]},
        "items": {"type": "array", "minItems": 2, "items": {"type": "integer", "minimum": 5}}},
        "required": ["verdict", "items"]});
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "classify"}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}});
    let reply = send(
        endpoint.address(),
        "POST",
        "/v1/chat/completions",
        &[],
        body.to_string().as_bytes(),
    );
    let text = reply.json()["choices"][0]["message"]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap(),
        json!({"verdict": "yes", "items": [5, 5]})
    );
    let body = json!({"model": "m", "input": "classify", "text": {"format": {"type": "json_schema", "name": "x", "schema": schema}}});
    let reply = send(
        endpoint.address(),
        "POST",
        "/v1/responses",
        &[],
        body.to_string().as_bytes(),
    );
    let text = reply.json()["output"][0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap()["verdict"],
        "yes"
    );
    // Token counts and model lists are side requests too.
    let count = send(
        endpoint.address(),
        "POST",
        "/v1/messages/count_tokens",
        &[("anthropic-version", "2023-06-01")],
        b"{\"messages\":[]}",
    );
    assert!(count.json()["input_tokens"].as_u64().unwrap() >= 1);
    let models = send(endpoint.address(), "GET", "/v1/models", &[], b"");
    assert_eq!(models.json()["object"], "list");
    let body =
        json!({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "go"}]});
    let whole = send(
        endpoint.address(),
        "POST",
        "/v1/messages",
        &[],
        body.to_string().as_bytes(),
    )
    .json();
    assert_eq!(whole["content"][0]["text"], "only turn");
    assert_eq!(whole["type"], "message");
}

fn anthropic_user(text: &str) -> Vec<u8> {
    json!({"model": "m", "stream": true, "max_tokens": 5, "messages": [{"role": "user", "content": text}]})
        .to_string()
        .into_bytes()
}

#[test]
fn faults_answer_429_500_and_cut_without_consuming_the_turn() {
    let endpoint = endpoint(
        "[[turns]]\ntokens = 30\n[[turns]]\ntext = \"second\"\n\
         [[faults]]\nrequest = 1\nkind = \"rate_limit\"\nretry_after = \"3s\"\n\
         [[faults]]\nrequest = 2\nkind = \"server_error\"\n\
         [[faults]]\nturn = 1\nkind = \"cut\"\nafter_tokens = 6\n",
    );
    let address = endpoint.address();
    let headers = [("anthropic-version", "2023-06-01")];
    let limited = send(
        address,
        "POST",
        "/v1/messages",
        &headers,
        &anthropic_user("a"),
    );
    assert_eq!(limited.status, 429);
    assert_eq!(limited.header("retry-after"), Some("3"));
    assert_eq!(limited.json()["error"]["type"], "rate_limit_error");
    let failed = send(
        address,
        "POST",
        "/v1/messages",
        &headers,
        &anthropic_user("a"),
    );
    assert_eq!(failed.status, 500);
    assert_eq!(failed.json()["error"]["type"], "api_error");
    let cut = send(
        address,
        "POST",
        "/v1/messages",
        &headers,
        &anthropic_user("a"),
    );
    assert_eq!(cut.status, 200);
    let deltas = cut
        .events()
        .iter()
        .filter(|e| e["type"] == "content_block_delta")
        .count();
    assert_eq!(deltas, 6, "{}", cut.body);
    assert!(!cut.body.contains("message_stop"));
    // The retry plays turn 1 whole: the faults consumed nothing.
    let (text, _, _) = anthropic_stream(&send(
        address,
        "POST",
        "/v1/messages",
        &headers,
        &anthropic_user("a"),
    ));
    assert_eq!(text.split(' ').count(), 30);
    assert_eq!(
        outcomes(&endpoint.journal()),
        [
            "fault \"rate_limit\"",
            "fault \"server_error\"",
            "fault \"cut\"",
            "turn 1 start"
        ]
    );
}

#[test]
fn an_oversized_body_gets_413_and_a_bad_one_400_in_the_dialects_shape() {
    let endpoint = endpoint_with(
        "",
        Limits {
            max_body_bytes: 1000,
            ..Limits::default()
        },
    );
    let big = vec![b' '; 5000];
    let reply = send(endpoint.address(), "POST", "/v1/messages", &[], &big);
    assert_eq!(reply.status, 413);
    assert_eq!(reply.json()["error"]["type"], "request_too_large");
    let reply = send(
        endpoint.address(),
        "POST",
        "/v1beta/models/g:generateContent",
        &[],
        b"{\"nope\": 1}",
    );
    assert_eq!(reply.status, 400);
    assert_eq!(reply.json()["error"]["status"], "INVALID_ARGUMENT");
    let records = endpoint.journal().requests();
    assert!(matches!(&records[0].outcome, Outcome::Rejected(why) if why.contains("1000 bytes")));
    assert!(
        matches!(&records[1].outcome, Outcome::Unrecognised(why) if why.contains("`contents`"))
    );
}

#[test]
fn connections_past_the_bound_get_503() {
    let endpoint = endpoint_with(
        "[[turns]]\ntext = \"a\"\n",
        Limits {
            max_connections: 1,
            ..Limits::default()
        },
    );
    // An open connection that sends nothing holds the only place.
    let holder = TcpStream::connect(endpoint.address()).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let reply = send(endpoint.address(), "GET", "/v1/models", &[], b"");
    assert_eq!(reply.status, 503, "{}", reply.body);
    drop(holder);
    // Once it is gone, the place is free again.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let reply = send(endpoint.address(), "GET", "/v1/models", &[], b"");
        if reply.status == 200 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the place was never freed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_journal_records_every_chunk_on_the_physics_schedule() {
    let script = Script::from_toml(
        "[physics]\nfirst_token = \"50ms\"\ntokens_per_second = 1000\nchunk_tokens = 4\nseed = 7\n\
         [[turns]]\ntokens = 40\n",
        "test",
    )
    .unwrap();
    let endpoint = Endpoint::start(Settings {
        port: 0,
        script: script.compile().unwrap(),
        limits: Limits::default(),
        path_token: None,
        peer_uid: None,
    })
    .unwrap();
    assert_eq!(endpoint.seed(), 7);
    let reply = send(
        endpoint.address(),
        "POST",
        "/v1/messages",
        &[],
        &anthropic_user("go"),
    );
    let (text, _, _) = anthropic_stream(&reply);
    assert_eq!(text.split(' ').count(), 40);
    let journal = endpoint.journal();
    assert!(matches!(journal.events()[0], Event::Start { seed: 7, .. }));
    let request = &journal.requests()[0];
    assert_eq!(request.output_tokens, 40);
    assert!(request.stream);
    let chunks = journal.chunks(request.number);
    // The preamble, then 10 chunks of 4 tokens, the last carrying the closing events.
    assert_eq!(chunks.len(), 11);
    assert_eq!(chunks.iter().map(|c| c.tokens).sum::<u32>(), 40);
    assert!(chunks.last().unwrap().last);
    assert_eq!(
        chunks.iter().map(|c| c.bytes).sum::<usize>(),
        reply.body.len()
    );
    let first = chunks[1].scheduled - chunks[0].scheduled;
    assert!(
        first >= Duration::from_millis(49) && first <= Duration::from_millis(51),
        "{first:?}"
    );
    for pair in chunks[1..].windows(2) {
        let gap = pair[1].scheduled - pair[0].scheduled;
        assert!(
            gap >= Duration::from_micros(3990) && gap <= Duration::from_micros(4010),
            "{gap:?}"
        );
    }
    for chunk in &chunks {
        assert!(chunk.written >= chunk.scheduled, "{chunk:?}");
        assert!(chunk.scheduled >= request.received);
    }
    let lines = journal.to_json_lines();
    assert_eq!(lines.lines().count(), 1 + 1 + 11);
}
