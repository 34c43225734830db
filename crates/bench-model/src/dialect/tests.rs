use super::*;
use crate::answer::{Call, Content, tokens_of};
use serde_json::json;

fn text_answer(text: &str) -> Answer {
    Answer {
        content: Content::Text(tokens_of(text)),
        model: "m".into(),
        input_tokens: 10,
        id: 1,
    }
}

fn render() -> Render {
    Render {
        include_usage: true,
        gemini_sse: true,
        created: 0,
    }
}

/// The `data:` payloads of the pieces, `[DONE]` left out.
fn data(pieces: &[Piece]) -> Vec<Value> {
    let bytes: Vec<u8> = pieces.iter().flat_map(|p| p.bytes.clone()).collect();
    String::from_utf8(bytes)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d.trim_end()).unwrap())
        .collect()
}

#[test]
fn every_dialect_streams_the_whole_text_and_counts_its_tokens() {
    let answer = text_answer("one two three");
    let joined = |dialect, pick: fn(&Value) -> Option<String>| -> String {
        let pieces = stream(dialect, &answer, render());
        assert_eq!(
            pieces.iter().map(|p| p.tokens).sum::<u32>(),
            3,
            "{dialect:?}"
        );
        data(&pieces).iter().filter_map(pick).collect()
    };
    assert_eq!(
        joined(Dialect::Anthropic, |e| e["delta"]["text"]
            .as_str()
            .map(str::to_owned)),
        "one two three"
    );
    assert_eq!(
        joined(Dialect::OpenaiResponses, |e| (e["type"]
            == "response.output_text.delta")
            .then(|| e["delta"].as_str().unwrap().to_owned())),
        "one two three"
    );
    assert_eq!(
        joined(Dialect::OpenaiChat, |e| e["choices"][0]["delta"]["content"]
            .as_str()
            .map(str::to_owned)),
        "one two three"
    );
    assert_eq!(
        joined(Dialect::Gemini, |e| e["candidates"][0]["content"]["parts"]
            [0]["text"]
            .as_str()
            .map(str::to_owned)),
        "one two three"
    );
}

#[test]
fn a_gemini_stream_without_sse_is_one_json_array() {
    let pieces = stream(
        Dialect::Gemini,
        &text_answer("a b"),
        Render {
            gemini_sse: false,
            ..render()
        },
    );
    let bytes: Vec<u8> = pieces.iter().flat_map(|p| p.bytes.clone()).collect();
    let array: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(array.as_array().unwrap().len(), 2);
    assert_eq!(array[1]["candidates"][0]["finishReason"], "STOP");
}

#[test]
fn whole_answers_carry_tool_calls_in_each_dialects_shape() {
    let answer = Answer {
        content: Content::Tools(vec![Call {
            id: "call_1".into(),
            name: "shell".into(),
            arguments: json!({"command": "ls"}),
            freeform: false,
        }]),
        model: "m".into(),
        input_tokens: 4,
        id: 2,
    };
    let anthropic = whole(Dialect::Anthropic, &answer, render());
    assert_eq!(anthropic["stop_reason"], "tool_use");
    assert_eq!(anthropic["content"][0]["input"], json!({"command": "ls"}));
    let chat = whole(Dialect::OpenaiChat, &answer, render());
    assert_eq!(chat["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(
        chat["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"],
        "{\"command\":\"ls\"}"
    );
    let responses = whole(Dialect::OpenaiResponses, &answer, render());
    assert_eq!(responses["output"][0]["type"], "function_call");
    assert_eq!(responses["output"][0]["call_id"], "call_1");
    let gemini = whole(Dialect::Gemini, &answer, render());
    assert_eq!(
        gemini["candidates"][0]["content"]["parts"][0]["functionCall"]["args"],
        json!({"command": "ls"})
    );
}

#[test]
fn error_bodies_follow_each_dialect() {
    assert_eq!(
        error_body(Some(Dialect::Anthropic), ErrorKind::RateLimit, "x"),
        json!({"type": "error", "error": {"type": "rate_limit_error", "message": "x"}})
    );
    assert_eq!(
        error_body(Some(Dialect::Gemini), ErrorKind::Invalid, "x")["error"]["status"],
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        error_body(None, ErrorKind::TooLarge, "x")["error"]["code"],
        "request_too_large"
    );
}
