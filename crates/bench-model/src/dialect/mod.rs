//! Each dialect's shape of an answer: its server-sent events when streamed (as
//! [`Piece`]s the physics schedules), its JSON when not, and its error body.

mod anthropic;
mod gemini;
mod openai_chat;
mod openai_responses;

use super::answer::Answer;
use super::request::Dialect;
use serde_json::Value;

/// A piece of a streamed answer: bytes written as one unit, and how many of the
/// answer's tokens they carry (0 for framing events such as `message_start`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// The bytes (one or more whole server-sent events).
    pub bytes: Vec<u8>,
    /// Tokens carried.
    pub tokens: u32,
}

impl Piece {
    fn framing(bytes: Vec<u8>) -> Piece {
        Piece { bytes, tokens: 0 }
    }

    fn tokens(bytes: Vec<u8>, tokens: u32) -> Piece {
        Piece { bytes, tokens }
    }
}

/// How an answer is rendered beyond its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Render {
    /// Chat Completions: end with a usage chunk (`stream_options.include_usage`).
    pub include_usage: bool,
    /// Gemini streaming: server-sent events (`alt=sse`) rather than a JSON array.
    pub gemini_sse: bool,
    /// Unix seconds for `created` fields.
    pub created: u64,
}

/// One server-sent event: `event: NAME` (when named) and `data: JSON`.
fn sse(event: Option<&str>, data: &Value) -> Vec<u8> {
    let mut out = String::new();
    if let Some(event) = event {
        out.push_str("event: ");
        out.push_str(event);
        out.push('\n');
    }
    out.push_str("data: ");
    out.push_str(&data.to_string());
    out.push_str("\n\n");
    out.into_bytes()
}

/// The streamed answer as pieces, in order.
pub fn stream(dialect: Dialect, answer: &Answer, render: Render) -> Vec<Piece> {
    match dialect {
        Dialect::Anthropic => anthropic::stream(answer),
        Dialect::OpenaiResponses => openai_responses::stream(answer, render),
        Dialect::OpenaiChat => openai_chat::stream(answer, render),
        Dialect::Gemini => gemini::stream(answer, render),
    }
}

/// The answer as one JSON body.
pub fn whole(dialect: Dialect, answer: &Answer, render: Render) -> Value {
    match dialect {
        Dialect::Anthropic => anthropic::whole(answer),
        Dialect::OpenaiResponses => openai_responses::response(answer, render, "completed"),
        Dialect::OpenaiChat => openai_chat::whole(answer, render),
        Dialect::Gemini => gemini::chunk(answer, &gemini::parts(answer), true),
    }
}

/// The content type of a streamed answer.
pub fn stream_content_type(dialect: Dialect, render: Render) -> &'static str {
    if dialect == Dialect::Gemini && !render.gemini_sse {
        "application/json"
    } else {
        "text/event-stream"
    }
}

/// What an error is about, mapped to each dialect's error type names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// 400: a request the endpoint does not understand.
    Invalid,
    /// 404: no such route.
    NotFound,
    /// 413: the body is larger than the bound.
    TooLarge,
    /// 429: a rate-limit fault.
    RateLimit,
    /// 500: a server-error fault.
    Server,
    /// 503: too many connections at once.
    Overloaded,
}

impl ErrorKind {
    /// The HTTP status.
    pub fn status(self) -> u16 {
        match self {
            ErrorKind::Invalid => 400,
            ErrorKind::NotFound => 404,
            ErrorKind::TooLarge => 413,
            ErrorKind::RateLimit => 429,
            ErrorKind::Server => 500,
            ErrorKind::Overloaded => 503,
        }
    }
}

/// The dialect's error body for `kind` with `message`.
pub fn error_body(dialect: Option<Dialect>, kind: ErrorKind, message: &str) -> Value {
    match dialect {
        Some(Dialect::Anthropic) => anthropic::error(kind, message),
        Some(Dialect::Gemini) => gemini::error(kind, message),
        // OpenAI's shape is the most common one for a request of no known dialect.
        Some(Dialect::OpenaiResponses | Dialect::OpenaiChat) | None => {
            openai_chat::error(kind, message)
        }
    }
}

/// The dialect's answer to a token count.
pub fn count_tokens(dialect: Dialect, tokens: u64) -> Value {
    match dialect {
        Dialect::Gemini => serde_json::json!({"totalTokens": tokens}),
        _ => serde_json::json!({"input_tokens": tokens}),
    }
}

/// The dialect's model list, naming `models`.
pub fn models(dialect: Dialect, models: &[&str]) -> Value {
    use serde_json::json;
    match dialect {
        Dialect::Anthropic => json!({
            "data": models.iter().map(|m| json!({
                "type": "model", "id": m, "display_name": m,
                "created_at": "2025-01-01T00:00:00Z"
            })).collect::<Vec<_>>(),
            "has_more": false,
            "first_id": models.first(),
            "last_id": models.last(),
        }),
        Dialect::Gemini => json!({
            "models": models.iter().map(|m| json!({
                "name": format!("models/{m}"), "displayName": m,
                "supportedGenerationMethods": ["generateContent", "streamGenerateContent", "countTokens"]
            })).collect::<Vec<_>>()
        }),
        Dialect::OpenaiChat | Dialect::OpenaiResponses => json!({
            "object": "list",
            "data": models.iter().map(|m| json!({
                "id": m, "object": "model", "created": 0, "owned_by": "clibench"
            })).collect::<Vec<_>>()
        }),
    }
}

#[cfg(test)]
mod tests;
