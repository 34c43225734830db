//! A model request's answer: the turn the conversation decides, mapped to the request's
//! dialect and tools, and the schedule its frames are released on.

use super::body::Out;
use super::respond::{Seen, error_response, fault_response, input_tokens};
use super::state::{State, lock};
use crate::answer::{self, Answer, Content};
use crate::conversation::{Decision, Side};
use crate::dialect::{self, ErrorKind, Render};
use crate::journal::{Outcome, bounded_text, prompt_of};
use crate::physics::{Fault, FaultKind, Physics, Rng};
use crate::request::{Asked, Dialect};
use crate::schedule::{self, Frame};
use crate::schema;
use crate::script::Reply;
use hyper::Response;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// The model name answered when a request names none.
pub const DEFAULT_MODEL: &str = "clibench-scripted";

/// The most of a request's model name that is echoed (in every chunk of a stream) and
/// journaled: a client may name a model of a megabyte.
pub const MAX_MODEL_NAME_BYTES: usize = 256;

pub(super) fn generate(
    state: &State,
    seen: &Seen,
    dialect: Dialect,
    render: Render,
    asked: &Asked,
    body_bytes: u64,
    request_fault: Option<Fault>,
) -> Response<Out> {
    if let Some(refused) = overloaded(state, seen, dialect, body_bytes) {
        return refused;
    }
    let decision = {
        let mut conversation = lock(&state.conversation);
        if request_fault.is_some() {
            conversation.decide_uncommitted(asked)
        } else {
            conversation.decide(asked)
        }
    };
    let (reply, physics, outcome, cut) = match played(state, decision, asked) {
        Ok(played) => played,
        Err(fault) => return fault_response(state, seen, Some(dialect), &fault, body_bytes),
    };
    let cut = cut.or(request_fault.filter(|f| f.kind == FaultKind::Cut));
    let outcome = if cut.is_some() {
        Outcome::Fault(FaultKind::Cut)
    } else {
        outcome
    };
    let content = content_of(&reply, dialect, asked, seen.number);
    let model = asked
        .model
        .as_deref()
        .map(|name| bounded_text(name, MAX_MODEL_NAME_BYTES));
    let answer = Answer {
        content,
        model: model.clone().unwrap_or_else(|| DEFAULT_MODEL.to_owned()),
        input_tokens: input_tokens(body_bytes),
        id: seen.number,
    };
    let tools_called = match &answer.content {
        Content::Tools(calls) => calls.iter().map(|c| c.name.clone()).collect(),
        Content::Text(_) => Vec::new(),
    };
    let output_tokens = answer.output_tokens();
    // Each request's jitter comes from the seed and its number alone, so a replay with
    // the same seed gets the same times whatever else runs at once.
    let mut rng = Rng::new(state.seed ^ seen.number.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let start = Instant::now();
    let (frames, content_type, length) = frames_of(
        &answer,
        dialect,
        render,
        asked.stream,
        &physics,
        &mut rng,
        cut.as_ref(),
    );
    let body = Out::scheduled(
        frames,
        start,
        &state.journal,
        seen.number,
        cut.is_some(),
        &state.pacing,
        length,
    );
    // Journaled once its answer is scheduled: a reader that waits for a request in the
    // journal can count on its answer being under way (and a test on its thread).
    seen.record(&state.journal, |r| {
        r.dialect = Some(dialect);
        r.model = model;
        r.stream = asked.stream;
        r.body_bytes = body_bytes;
        r.tool_count = asked.tools.len();
        r.tool_results = asked.tool_results;
        r.outcome = outcome;
        r.tools_called = tools_called;
        r.output_tokens = output_tokens;
        r.prompt = prompt_of(&asked.last_user_text);
    });
    with_headers(Response::new(body), content_type, seen.number)
}

/// A refusal (503, journaled) beyond twice the connections in answers on schedule: some
/// answers' clients went away and hyper has not yet dropped their bodies; refuse rather
/// than grow.
fn overloaded(
    state: &State,
    seen: &Seen,
    dialect: Dialect,
    body_bytes: u64,
) -> Option<Response<Out>> {
    if state.pacing.live.load(Ordering::SeqCst) < state.limits.max_connections.max(1) * 2 {
        return None;
    }
    let message = "the endpoint is answering too many requests at once";
    seen.record(&state.journal, |r| {
        r.dialect = Some(dialect);
        r.body_bytes = body_bytes;
        r.status = 503;
        r.outcome = Outcome::Rejected(message.to_owned());
    });
    Some(error_response(
        Some(dialect),
        ErrorKind::Overloaded,
        message,
    ))
}

/// The answer's headers: its content type, no caching, and the request's id.
fn with_headers(
    mut response: Response<Out>,
    content_type: &'static str,
    number: u64,
) -> Response<Out> {
    let headers = response.headers_mut();
    headers.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(content_type),
    );
    headers.insert(
        hyper::header::CACHE_CONTROL,
        hyper::header::HeaderValue::from_static("no-cache"),
    );
    if let Ok(id) = hyper::header::HeaderValue::from_str(&format!("clibench-{number}")) {
        headers.insert("request-id", id.clone());
        headers.insert("x-request-id", id);
    }
    response
}

/// The answer's frames on their schedule, its content type and (for a whole answer) its
/// length: a stream in the dialect's events, or one body due when all its tokens are.
fn frames_of(
    answer: &Answer,
    dialect: Dialect,
    render: Render,
    stream: bool,
    physics: &Physics,
    rng: &mut Rng,
    cut: Option<&Fault>,
) -> (Vec<Frame>, &'static str, Option<u64>) {
    let output_tokens = answer.output_tokens();
    if stream {
        let pieces = dialect::stream(dialect, answer, render);
        let cut_after = cut
            .as_ref()
            .map(|f| f.after_tokens.unwrap_or((output_tokens / 2).max(1) as u32));
        let frames = schedule::frames(pieces, physics, rng, cut_after);
        (frames, dialect::stream_content_type(dialect, render), None)
    } else {
        let mut bytes = dialect::whole(dialect, answer, render)
            .to_string()
            .into_bytes();
        let length = bytes.len() as u64;
        if cut.is_some() {
            // A cut of a whole reply: half the body, then the connection closes.
            bytes.truncate(bytes.len() / 2);
        }
        let due = schedule::whole_due(output_tokens, physics, rng);
        (
            vec![Frame {
                bytes,
                due,
                tokens: output_tokens as u32,
            }],
            "application/json",
            Some(length),
        )
    }
}

/// What a decision plays: the reply, its physics, its outcome and a cut fault to apply;
/// `Err` with a fault answered as an error status instead.
fn played(
    state: &State,
    decision: Decision,
    asked: &Asked,
) -> Result<(Reply, Physics, Outcome, Option<Fault>), Fault> {
    let physics_of_side = || lock(&state.conversation).physics().clone();
    match decision {
        Decision::Turn {
            index,
            part,
            reply,
            physics,
        } => Ok((reply, physics, Outcome::Turn { index, part }, None)),
        Decision::Side(side) => {
            let text = match side {
                Side::Schema => match &asked.schema {
                    Some(schema) => schema::value_for(schema).to_string(),
                    None => "{}".to_owned(),
                },
                _ => "Scripted session".to_owned(),
            };
            Ok((
                Reply::Text(text),
                physics_of_side(),
                Outcome::Side(side),
                None,
            ))
        }
        Decision::NoTurn(why) => Ok((
            Reply::Text(format!("(clibench's scripted model: {why}.)")),
            physics_of_side(),
            Outcome::NoTurn(why),
            None,
        )),
        Decision::Fault {
            fault,
            turn: Some((_, reply, physics)),
        } if fault.kind == FaultKind::Cut => {
            Ok((reply, physics, Outcome::Fault(FaultKind::Cut), Some(fault)))
        }
        Decision::Fault { fault, .. } => Err(fault),
    }
}

/// The content of `reply` for `asked`: text as tokens, or the script's tool calls mapped
/// to the tools the request advertised, with ids in the dialect's style.
fn content_of(reply: &Reply, dialect: Dialect, asked: &Asked, number: u64) -> Content {
    match reply {
        Reply::Text(text) => Content::Text(answer::tokens_of(text)),
        Reply::Tokens(count) => Content::Text(answer::filler(*count)),
        Reply::Tools { calls, .. } => Content::Tools(
            calls
                .iter()
                .enumerate()
                .map(|(index, call)| {
                    let id = match dialect {
                        Dialect::Anthropic => format!("toolu_clibench_{number}_{index}"),
                        _ => format!("call_clibench_{number}_{index}"),
                    };
                    answer::map_call(call, asked, id).call
                })
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::Script;

    fn reply_of(toml: &str) -> Reply {
        let compiled = Script::from_toml(toml, "s").unwrap().compile().unwrap();
        compiled.turns[0].reply.clone()
    }

    #[test]
    fn a_text_reply_is_its_tokens_and_a_token_count_its_filler() {
        let asked = Asked::default();
        let text = content_of(
            &reply_of("[[turns]]\ntext = \"Hello there.\"\n"),
            Dialect::Anthropic,
            &asked,
            1,
        );
        let Content::Text(tokens) = text else {
            panic!("{text:?}")
        };
        assert_eq!(tokens.concat(), "Hello there.");
        let filler = content_of(&Reply::Tokens(7), Dialect::Anthropic, &asked, 1);
        assert_eq!(filler, Content::Text(answer::filler(7)));
    }

    #[test]
    fn tool_call_ids_follow_the_dialect_and_name_the_request() {
        let reply = reply_of("[[turns]]\nshell = \"ls\"\nthen = \"Done.\"\n");
        let asked = Asked::default();
        let ids = |dialect| match content_of(&reply, dialect, &asked, 42) {
            Content::Tools(calls) => calls.into_iter().map(|c| c.id).collect::<Vec<_>>(),
            other => panic!("{other:?}"),
        };
        assert_eq!(ids(Dialect::Anthropic), ["toolu_clibench_42_0"]);
        assert_eq!(ids(Dialect::OpenaiChat), ["call_clibench_42_0"]);
    }

    #[test]
    fn past_twice_the_connections_in_answers_on_schedule_an_answer_is_refused() {
        use super::super::Limits;
        use super::super::body::Pacing;
        use super::super::state::State;
        use crate::conversation::Conversation;
        use crate::journal::Journal;
        use std::sync::atomic::{AtomicU64, AtomicUsize};
        use std::sync::{Arc, Mutex};
        use std::time::Duration;

        let script = Script::from_toml("[[turns]]\ntext = \"hi\"\n", "s").unwrap();
        let limits = Limits {
            max_connections: 2,
            ..Limits::default()
        };
        let state = State {
            path_token: None,
            conversation: Arc::new(Mutex::new(Conversation::new(script.compile().unwrap()))),
            journal: Journal::new(Instant::now()),
            limits: limits.clone(),
            seed: 1,
            requests: AtomicU64::new(0),
            connections: Arc::new(tokio::sync::Semaphore::new(2)),
            rejections: Arc::new(tokio::sync::Semaphore::new(2)),
            pacing: Pacing {
                answer_timeout: limits.answer_timeout,
                // Four answers on schedule still alive: twice the two connections.
                live: Arc::new(AtomicUsize::new(4)),
            },
            peer_uid: None,
        };
        let seen = |number| Seen {
            number,
            received: Duration::ZERO,
            method: "POST".to_owned(),
            path: "/v1/messages".to_owned(),
        };
        let render = Render {
            include_usage: false,
            gemini_sse: true,
            created: 0,
        };
        let asked = Asked::default();
        let refused = generate(
            &state,
            &seen(1),
            Dialect::Anthropic,
            render,
            &asked,
            10,
            None,
        );
        assert_eq!(refused.status(), 503);
        let requests = state.journal.requests();
        assert!(
            matches!(requests[0].outcome, Outcome::Rejected(_)),
            "{requests:?}"
        );
        // One fewer, and the turn (not consumed by the refusal) plays.
        state.pacing.live.store(3, Ordering::SeqCst);
        let played = generate(
            &state,
            &seen(2),
            Dialect::Anthropic,
            render,
            &asked,
            10,
            None,
        );
        assert_eq!(played.status(), 200);
        let requests = state.journal.requests();
        assert!(
            matches!(requests[1].outcome, Outcome::Turn { index: 0, .. }),
            "{requests:?}"
        );
    }
}
