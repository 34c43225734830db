//! OpenAI Chat Completions: `chat.completion.chunk`s with `delta.content` or
//! `delta.tool_calls`, a last chunk with `finish_reason`, an optional usage chunk,
//! then `data: [DONE]`.

use super::{ErrorKind, Piece, Render, sse};
use crate::answer::{Answer, Content, arguments_tokens};
use serde_json::{Value, json};

fn id(answer: &Answer) -> String {
    format!("chatcmpl-clibench{:06}", answer.id)
}

fn finish_reason(answer: &Answer) -> &'static str {
    match answer.content {
        Content::Text(_) => "stop",
        Content::Tools(_) => "tool_calls",
    }
}

fn usage(answer: &Answer) -> Value {
    let output = answer.output_tokens();
    json!({
        "prompt_tokens": answer.input_tokens,
        "completion_tokens": output,
        "total_tokens": answer.input_tokens + output,
    })
}

fn chunk(answer: &Answer, render: Render, delta: Value, finish: Option<&str>) -> Vec<u8> {
    sse(
        None,
        &json!({
            "id": id(answer), "object": "chat.completion.chunk", "created": render.created,
            "model": answer.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }),
    )
}

pub(super) fn stream(answer: &Answer, render: Render) -> Vec<Piece> {
    let mut pieces = vec![Piece::framing(chunk(
        answer,
        render,
        json!({"role": "assistant", "content": ""}),
        None,
    ))];
    match &answer.content {
        Content::Text(tokens) => {
            for token in tokens {
                pieces.push(Piece::tokens(
                    chunk(answer, render, json!({"content": token}), None),
                    1,
                ));
            }
        }
        Content::Tools(calls) => {
            for (index, call) in calls.iter().enumerate() {
                pieces.push(Piece::framing(chunk(
                    answer,
                    render,
                    json!({"tool_calls": [{
                        "index": index, "id": call.id, "type": "function",
                        "function": {"name": call.name, "arguments": ""},
                    }]}),
                    None,
                )));
                for part in arguments_tokens(&call.arguments.to_string()) {
                    pieces.push(Piece::tokens(
                        chunk(
                            answer,
                            render,
                            json!({"tool_calls": [{"index": index, "function": {"arguments": part}}]}),
                            None,
                        ),
                        1,
                    ));
                }
            }
        }
    }
    let mut end = chunk(answer, render, json!({}), Some(finish_reason(answer)));
    if render.include_usage {
        end.extend(sse(
            None,
            &json!({
                "id": id(answer), "object": "chat.completion.chunk", "created": render.created,
                "model": answer.model, "choices": [], "usage": usage(answer),
            }),
        ));
    }
    end.extend(b"data: [DONE]\n\n");
    pieces.push(Piece::framing(end));
    pieces
}

pub(super) fn whole(answer: &Answer, render: Render) -> Value {
    let message = match &answer.content {
        Content::Text(_) => json!({"role": "assistant", "content": answer.text()}),
        Content::Tools(calls) => json!({
            "role": "assistant", "content": null,
            "tool_calls": calls.iter().map(|call| json!({
                "id": call.id, "type": "function",
                "function": {"name": call.name, "arguments": call.arguments.to_string()},
            })).collect::<Vec<_>>(),
        }),
    };
    json!({
        "id": id(answer), "object": "chat.completion", "created": render.created,
        "model": answer.model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason(answer)}],
        "usage": usage(answer),
    })
}

/// OpenAI's error shape, shared by Chat Completions and Responses.
pub(super) fn error(kind: ErrorKind, message: &str) -> Value {
    let (name, code) = match kind {
        ErrorKind::Invalid => ("invalid_request_error", "invalid_request"),
        ErrorKind::NotFound => ("invalid_request_error", "not_found"),
        ErrorKind::TooLarge => ("invalid_request_error", "request_too_large"),
        ErrorKind::RateLimit => ("rate_limit_error", "rate_limit_exceeded"),
        ErrorKind::Server => ("server_error", "server_error"),
        ErrorKind::Overloaded => ("server_error", "overloaded"),
    };
    json!({"error": {"message": message, "type": name, "param": null, "code": code}})
}
