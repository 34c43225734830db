//! OpenAI Responses: `response.created`, `response.in_progress`, per output item
//! `response.output_item.added`, for a message `response.content_part.added`,
//! `response.output_text.delta` ... `response.output_text.done`,
//! `response.content_part.done`, for a function call
//! `response.function_call_arguments.delta` ... `.done`, then
//! `response.output_item.done`, and `response.completed` with usage.

use super::{Piece, Render, sse};
use crate::answer::{Answer, Call, Content, arguments_tokens};
use serde_json::{Value, json};

fn id(answer: &Answer) -> String {
    format!("resp_clibench{:06}", answer.id)
}

fn message_id(answer: &Answer) -> String {
    format!("msg_clibench{:06}", answer.id)
}

fn item_id(call: &Call) -> String {
    format!("fc_{}", call.id.trim_start_matches("call_"))
}

/// The finished output items.
fn output(answer: &Answer) -> Vec<Value> {
    match &answer.content {
        Content::Text(_) => vec![message_item(answer, &answer.text(), "completed")],
        Content::Tools(calls) => calls
            .iter()
            .map(|call| call_item(call, &call.arguments_text(), "completed"))
            .collect(),
    }
}

fn message_item(answer: &Answer, text: &str, status: &str) -> Value {
    let content = if status == "completed" {
        json!([{"type": "output_text", "text": text, "annotations": []}])
    } else {
        json!([])
    };
    json!({
        "id": message_id(answer), "type": "message", "status": status,
        "role": "assistant", "content": content,
    })
}

fn call_item(call: &Call, arguments: &str, status: &str) -> Value {
    if call.freeform {
        json!({
            "id": item_id(call), "type": "custom_tool_call", "status": status,
            "call_id": call.id, "name": call.name, "input": arguments,
        })
    } else {
        json!({
            "id": item_id(call), "type": "function_call", "status": status,
            "call_id": call.id, "name": call.name, "arguments": arguments,
        })
    }
}

/// The response object in a given status (`in_progress` has no output yet).
pub(super) fn response(answer: &Answer, render: Render, status: &str) -> Value {
    let done = status == "completed";
    let output_tokens = answer.output_tokens();
    json!({
        "id": id(answer), "object": "response", "created_at": render.created,
        "status": status, "model": answer.model,
        "output": if done { output(answer) } else { vec![] },
        "usage": if done {
            json!({
                "input_tokens": answer.input_tokens,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": output_tokens,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": answer.input_tokens + output_tokens,
            })
        } else {
            Value::Null
        },
    })
}

/// Numbers each event in order, as `sequence_number`.
struct Events {
    next: u64,
}

impl Events {
    fn event(&mut self, name: &str, mut data: Value) -> Vec<u8> {
        data["type"] = json!(name);
        data["sequence_number"] = json!(self.next);
        self.next += 1;
        sse(Some(name), &data)
    }
}

pub(super) fn stream(answer: &Answer, render: Render) -> Vec<Piece> {
    let mut events = Events { next: 0 };
    let mut preamble = events.event(
        "response.created",
        json!({"response": response(answer, render, "in_progress")}),
    );
    preamble.extend(events.event(
        "response.in_progress",
        json!({"response": response(answer, render, "in_progress")}),
    ));
    let mut pieces = Vec::new();
    match &answer.content {
        Content::Text(tokens) => {
            let item = message_id(answer);
            preamble.extend(events.event(
                "response.output_item.added",
                json!({"output_index": 0, "item": message_item(answer, "", "in_progress")}),
            ));
            preamble.extend(events.event(
                "response.content_part.added",
                json!({
                    "item_id": item, "output_index": 0, "content_index": 0,
                    "part": {"type": "output_text", "text": "", "annotations": []},
                }),
            ));
            pieces.push(Piece::framing(preamble));
            for token in tokens {
                pieces.push(Piece::tokens(
                    events.event(
                        "response.output_text.delta",
                        json!({"item_id": item, "output_index": 0, "content_index": 0, "delta": token}),
                    ),
                    1,
                ));
            }
            let text = answer.text();
            let mut end = events.event(
                "response.output_text.done",
                json!({"item_id": item, "output_index": 0, "content_index": 0, "text": text}),
            );
            end.extend(events.event(
                "response.content_part.done",
                json!({
                    "item_id": item, "output_index": 0, "content_index": 0,
                    "part": {"type": "output_text", "text": text, "annotations": []},
                }),
            ));
            end.extend(events.event(
                "response.output_item.done",
                json!({"output_index": 0, "item": message_item(answer, &text, "completed")}),
            ));
            pieces.push(Piece::framing(end));
        }
        Content::Tools(calls) => {
            pieces.push(Piece::framing(preamble));
            for (index, call) in calls.iter().enumerate() {
                let arguments = call.arguments_text();
                let (delta_event, done_event) = if call.freeform {
                    (
                        "response.custom_tool_call_input.delta",
                        "response.custom_tool_call_input.done",
                    )
                } else {
                    (
                        "response.function_call_arguments.delta",
                        "response.function_call_arguments.done",
                    )
                };
                pieces.push(Piece::framing(events.event(
                    "response.output_item.added",
                    json!({"output_index": index, "item": call_item(call, "", "in_progress")}),
                )));
                for part in arguments_tokens(&arguments) {
                    pieces.push(Piece::tokens(
                        events.event(
                            delta_event,
                            json!({"item_id": item_id(call), "output_index": index, "delta": part}),
                        ),
                        1,
                    ));
                }
                let key = if call.freeform { "input" } else { "arguments" };
                let mut end = events.event(
                    done_event,
                    json!({"item_id": item_id(call), "output_index": index, key: arguments}),
                );
                end.extend(events.event(
                    "response.output_item.done",
                    json!({"output_index": index, "item": call_item(call, &arguments, "completed")}),
                ));
                pieces.push(Piece::framing(end));
            }
        }
    }
    pieces.push(Piece::framing(events.event(
        "response.completed",
        json!({"response": response(answer, render, "completed")}),
    )));
    pieces
}
