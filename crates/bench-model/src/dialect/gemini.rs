//! Gemini `generateContent` and `streamGenerateContent`: `candidates[].content.parts`
//! with `text` or `functionCall`, `finishReason` on the last chunk, `usageMetadata`.
//! Streamed as server-sent events (`alt=sse`) or as one JSON array written in pieces.

use super::{ErrorKind, Piece, Render};
use crate::answer::{Answer, Content};
use serde_json::{Value, json};

/// The parts of the whole answer.
pub(super) fn parts(answer: &Answer) -> Vec<Value> {
    match &answer.content {
        Content::Text(_) => vec![json!({"text": answer.text()})],
        Content::Tools(calls) => calls
            .iter()
            .map(|call| json!({"functionCall": {"id": call.id, "name": call.name, "args": call.arguments}}))
            .collect(),
    }
}

/// One response object with `parts`; `last` adds the finish reason.
pub(super) fn chunk(answer: &Answer, parts: &[Value], last: bool) -> Value {
    let mut candidate = json!({
        "content": {"parts": parts, "role": "model"},
        "index": 0,
    });
    if last {
        candidate["finishReason"] = json!("STOP");
    }
    let output = answer.output_tokens();
    json!({
        "candidates": [candidate],
        "usageMetadata": {
            "promptTokenCount": answer.input_tokens,
            "candidatesTokenCount": output,
            "totalTokenCount": answer.input_tokens + output,
        },
        "modelVersion": answer.model,
        "responseId": format!("clibench-{:06}", answer.id),
    })
}

pub(super) fn stream(answer: &Answer, render: Render) -> Vec<Piece> {
    // Gemini sends no framing before the first chunk, and a function call whole.
    let bodies: Vec<(Value, u32)> = match &answer.content {
        Content::Text(tokens) if !tokens.is_empty() => tokens
            .iter()
            .enumerate()
            .map(|(index, token)| {
                (
                    chunk(answer, &[json!({"text": token})], index + 1 == tokens.len()),
                    1,
                )
            })
            .collect(),
        Content::Text(_) => vec![(chunk(answer, &[json!({"text": ""})], true), 0)],
        Content::Tools(_) => vec![(
            chunk(answer, &parts(answer), true),
            answer.output_tokens() as u32,
        )],
    };
    let count = bodies.len();
    let mut pieces = Vec::with_capacity(count + 2);
    if !render.gemini_sse {
        pieces.push(Piece::framing(b"[".to_vec()));
    }
    for (index, (body, tokens)) in bodies.into_iter().enumerate() {
        let bytes = if render.gemini_sse {
            format!("data: {body}\r\n\r\n").into_bytes()
        } else {
            let separator = if index == 0 { "" } else { ",\r\n" };
            format!("{separator}{body}").into_bytes()
        };
        pieces.push(Piece::tokens(bytes, tokens));
    }
    if !render.gemini_sse {
        pieces.push(Piece::framing(b"]".to_vec()));
    }
    pieces
}

pub(super) fn error(kind: ErrorKind, message: &str) -> Value {
    let status = match kind {
        ErrorKind::Invalid | ErrorKind::TooLarge => "INVALID_ARGUMENT",
        ErrorKind::NotFound => "NOT_FOUND",
        ErrorKind::RateLimit => "RESOURCE_EXHAUSTED",
        ErrorKind::Server => "INTERNAL",
        ErrorKind::Overloaded => "UNAVAILABLE",
    };
    json!({"error": {"code": kind.status(), "message": message, "status": status}})
}
