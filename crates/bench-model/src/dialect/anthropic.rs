//! Anthropic Messages: `message_start`, `content_block_start`, `ping`,
//! `content_block_delta` (`text_delta`, `input_json_delta`), `content_block_stop`,
//! `message_delta` (usage, `stop_reason`), `message_stop`.

use super::{ErrorKind, Piece, sse};
use crate::answer::{Answer, Content, arguments_tokens};
use serde_json::{Value, json};

fn id(answer: &Answer) -> String {
    format!("msg_clibench_{:06}", answer.id)
}

fn stop_reason(answer: &Answer) -> &'static str {
    match answer.content {
        Content::Text(_) => "end_turn",
        Content::Tools(_) => "tool_use",
    }
}

fn usage(answer: &Answer, output_tokens: u64) -> Value {
    json!({
        "input_tokens": answer.input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
    })
}

pub(super) fn stream(answer: &Answer) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut preamble = sse(
        Some("message_start"),
        &json!({
            "type": "message_start",
            "message": {
                "id": id(answer), "type": "message", "role": "assistant",
                "model": answer.model, "content": [],
                "stop_reason": null, "stop_sequence": null,
                "usage": usage(answer, 1),
            }
        }),
    );
    match &answer.content {
        Content::Text(tokens) => {
            preamble.extend(block_start(0, &json!({"type": "text", "text": ""})));
            preamble.extend(sse(Some("ping"), &json!({"type": "ping"})));
            pieces.push(Piece::framing(preamble));
            for token in tokens {
                pieces.push(Piece::tokens(
                    delta(0, &json!({"type": "text_delta", "text": token})),
                    1,
                ));
            }
            pieces.push(Piece::framing(block_stop(0)));
        }
        Content::Tools(calls) => {
            preamble.extend(sse(Some("ping"), &json!({"type": "ping"})));
            pieces.push(Piece::framing(preamble));
            for (index, call) in calls.iter().enumerate() {
                pieces.push(Piece::framing(block_start(
                    index,
                    &json!({"type": "tool_use", "id": call.id, "name": call.name, "input": {}}),
                )));
                for part in arguments_tokens(&call.arguments.to_string()) {
                    pieces.push(Piece::tokens(
                        delta(
                            index,
                            &json!({"type": "input_json_delta", "partial_json": part}),
                        ),
                        1,
                    ));
                }
                pieces.push(Piece::framing(block_stop(index)));
            }
        }
    }
    let mut end = sse(
        Some("message_delta"),
        &json!({
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason(answer), "stop_sequence": null},
            "usage": {"output_tokens": answer.output_tokens()},
        }),
    );
    end.extend(sse(Some("message_stop"), &json!({"type": "message_stop"})));
    pieces.push(Piece::framing(end));
    pieces
}

fn block_start(index: usize, block: &Value) -> Vec<u8> {
    sse(
        Some("content_block_start"),
        &json!({"type": "content_block_start", "index": index, "content_block": block}),
    )
}

fn delta(index: usize, delta: &Value) -> Vec<u8> {
    sse(
        Some("content_block_delta"),
        &json!({"type": "content_block_delta", "index": index, "delta": delta}),
    )
}

fn block_stop(index: usize) -> Vec<u8> {
    sse(
        Some("content_block_stop"),
        &json!({"type": "content_block_stop", "index": index}),
    )
}

pub(super) fn whole(answer: &Answer) -> Value {
    let content: Vec<Value> = match &answer.content {
        Content::Text(_) => vec![json!({"type": "text", "text": answer.text()})],
        Content::Tools(calls) => calls
            .iter()
            .map(|call| json!({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}))
            .collect(),
    };
    json!({
        "id": id(answer), "type": "message", "role": "assistant", "model": answer.model,
        "content": content, "stop_reason": stop_reason(answer), "stop_sequence": null,
        "usage": usage(answer, answer.output_tokens()),
    })
}

pub(super) fn error(kind: ErrorKind, message: &str) -> Value {
    let name = match kind {
        ErrorKind::Invalid => "invalid_request_error",
        ErrorKind::NotFound => "not_found_error",
        ErrorKind::TooLarge => "request_too_large",
        ErrorKind::RateLimit => "rate_limit_error",
        ErrorKind::Server => "api_error",
        ErrorKind::Overloaded => "overloaded_error",
    };
    json!({"type": "error", "error": {"type": name, "message": message}})
}
