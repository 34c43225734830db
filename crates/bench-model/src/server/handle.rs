//! One request: its route under the secret prefix, its body within the bounds, its
//! journal record, and the answers that are not a model's (side requests, errors).

use super::body::Out;
use super::generate::{DEFAULT_MODEL, generate};
use super::respond::{Seen, error_response, fault_response, input_tokens, json_response};
use super::state::{State, lock};
use crate::conversation::Side;
use crate::dialect::{self, ErrorKind, Render};
use crate::journal::{MAX_PATH_BYTES, Outcome, bounded_text};
use crate::physics::{Fault, FaultKind};
use crate::request::{self, Dialect, Route};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use std::sync::atomic::Ordering;

/// The path with the secret prefix removed: `None` when the path is not under
/// `/m/<token>` (exactly that segment, then `/` or the end).
pub fn strip_token<'a>(path: &'a str, path_token: Option<&str>) -> Option<&'a str> {
    // `/m/<token>` then `/` or the end: `/m/<token>x` is another path.
    let Some(token) = path_token else {
        return Some(path);
    };
    let rest = path.strip_prefix("/m/")?.strip_prefix(token)?;
    (rest.is_empty() || rest.starts_with('/')).then_some(rest)
}

fn seen(state: &State, request: &Request<Incoming>) -> Seen {
    Seen {
        number: state.requests.fetch_add(1, Ordering::SeqCst) + 1,
        received: state.journal.elapsed(),
        method: bounded_text(request.method().as_str(), 32),
        path: journal_path(
            request.uri().path_and_query().map_or_else(
                || request.uri().path().to_owned(),
                |p| p.as_str().to_owned(),
            ),
            state.path_token.as_deref(),
        ),
    }
}

/// The path (and query) as the journal keeps it: without the secret prefix, since the
/// journal outlives the trial in OUT and the token is reused by the trial's later phases,
/// and at most [`MAX_PATH_BYTES`] of it, since a client may send 400 KB of path.
fn journal_path(full: String, path_token: Option<&str>) -> String {
    let path = match path_token {
        Some(token) => match full.strip_prefix(&format!("/m/{token}")) {
            Some(rest) => format!("/m/<token>{rest}"),
            None => full,
        },
        None => full,
    };
    bounded_text(&path, MAX_PATH_BYTES)
}

pub(super) fn overloaded(state: &State, request: Request<Incoming>) -> Response<Out> {
    let seen = seen(state, &request);
    let message = format!(
        "the endpoint serves at most {} connections at once",
        state.limits.max_connections
    );
    seen.record(&state.journal, |r| {
        r.status = 503;
        r.outcome = Outcome::Rejected(message.clone());
    });
    error_response(None, ErrorKind::Overloaded, &message)
}

pub(super) async fn handle(state: &State, request: Request<Incoming>) -> Response<Out> {
    let seen = seen(state, &request);
    let headers = request.headers();
    let websocket = headers
        .get(hyper::header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    let anthropic = headers.contains_key("anthropic-version");
    let declared = headers
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let Some(path) = strip_token(request.uri().path(), state.path_token.as_deref()) else {
        let message = "no such path (this endpoint serves under its secret path prefix)";
        seen.record(&state.journal, |r| {
            r.status = 404;
            r.outcome = Outcome::Rejected(message.to_owned());
        });
        return error_response(None, ErrorKind::NotFound, message);
    };
    let route = request::route(
        request.method().as_str(),
        path,
        request.uri().query().unwrap_or(""),
        websocket,
        anthropic,
    );
    let dialect_of = |route: &Route| match route {
        Route::Generate { dialect, .. } | Route::CountTokens(dialect) | Route::Models(dialect) => {
            Some(*dialect)
        }
        _ => None,
    };
    let dialect = dialect_of(&route);
    let request_fault = lock(&state.conversation).request_fault(seen.number);
    if let Some(fault) = &request_fault
        && fault.kind != FaultKind::Cut
    {
        return fault_response(state, &seen, dialect, fault, declared.unwrap_or(0));
    }
    let body = match read_body(state, &seen, dialect, request.into_body(), declared).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    answer(state, &seen, route, &body, request_fault)
}

/// The request's body, within [`Limits::max_body_bytes`](super::Limits) and
/// [`Limits::body_timeout`](super::Limits); otherwise the error answer, journaled.
async fn read_body(
    state: &State,
    seen: &Seen,
    dialect: Option<Dialect>,
    body: Incoming,
    declared: Option<u64>,
) -> Result<bytes::Bytes, Response<Out>> {
    let limit = state.limits.max_body_bytes;
    if declared.is_some_and(|length| length > limit as u64) {
        return Err(too_large(state, seen, dialect, declared.unwrap_or(0)));
    }
    let body = http_body_util::Limited::new(body, limit);
    match tokio::time::timeout(state.limits.body_timeout, body.collect()).await {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(error)) if error.is::<http_body_util::LengthLimitError>() => {
            Err(too_large(state, seen, dialect, limit as u64 + 1))
        }
        Ok(Err(error)) => {
            let message = format!("the request body could not be read: {error}");
            seen.record(&state.journal, |r| {
                r.dialect = dialect;
                r.status = 400;
                r.outcome = Outcome::Unrecognised(message.clone());
            });
            Err(error_response(dialect, ErrorKind::Invalid, &message))
        }
        Err(_) => {
            let message = format!(
                "the request body did not arrive within {} s",
                state.limits.body_timeout.as_secs()
            );
            seen.record(&state.journal, |r| {
                r.dialect = dialect;
                r.status = 408;
                r.outcome = Outcome::Rejected(message.clone());
            });
            let mut response = error_response(dialect, ErrorKind::Invalid, &message);
            *response.status_mut() = StatusCode::REQUEST_TIMEOUT;
            Err(response)
        }
    }
}

/// The answer to a request whose body was read: by its route.
fn answer(
    state: &State,
    seen: &Seen,
    route: Route,
    body: &[u8],
    request_fault: Option<Fault>,
) -> Response<Out> {
    let body_bytes = body.len() as u64;
    match route {
        Route::Root => {
            seen.record(&state.journal, |r| {
                r.body_bytes = body_bytes;
                r.outcome = Outcome::Side(Side::Root);
            });
            let text = if seen.method == "HEAD" {
                Vec::new()
            } else {
                b"clibench model endpoint\n".to_vec()
            };
            Response::new(Out::full(text))
        }
        Route::Websocket => {
            seen.record(&state.journal, |r| {
                r.status = 426;
                r.outcome = Outcome::Side(Side::Websocket);
            });
            // 426 says the websocket transport is not spoken here: codex takes it as
            // "use HTTPS" and falls back at once instead of retrying the upgrade.
            let mut response = error_response(
                Some(Dialect::OpenaiResponses),
                ErrorKind::Invalid,
                "websocket transport is not served here; use HTTP",
            );
            *response.status_mut() = StatusCode::UPGRADE_REQUIRED;
            response
        }
        Route::Models(dialect) => {
            seen.record(&state.journal, |r| {
                r.dialect = Some(dialect);
                r.outcome = Outcome::Side(Side::Models);
            });
            json_response(200, &dialect::models(dialect, &[DEFAULT_MODEL]))
        }
        Route::CountTokens(dialect) => {
            seen.record(&state.journal, |r| {
                r.dialect = Some(dialect);
                r.body_bytes = body_bytes;
                r.outcome = Outcome::Side(Side::CountTokens);
            });
            json_response(
                200,
                &dialect::count_tokens(dialect, input_tokens(body_bytes)),
            )
        }
        Route::Unknown(why) => {
            seen.record(&state.journal, |r| {
                r.body_bytes = body_bytes;
                r.status = 404;
                r.outcome = Outcome::Unrecognised(why.clone());
            });
            error_response(None, ErrorKind::NotFound, &why)
        }
        Route::Generate { dialect, gemini } => {
            let asked = match request::read(dialect, gemini.as_ref(), body) {
                Ok(asked) => asked,
                Err(error) => {
                    let message = error.to_string();
                    seen.record(&state.journal, |r| {
                        r.dialect = Some(dialect);
                        r.body_bytes = body_bytes;
                        r.status = 400;
                        r.outcome = Outcome::Unrecognised(message.clone());
                    });
                    return error_response(Some(dialect), ErrorKind::Invalid, &message);
                }
            };
            let render = Render {
                include_usage: asked.include_usage,
                gemini_sse: gemini.as_ref().is_none_or(|g| g.sse),
                created: std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs()),
            };
            generate(
                state,
                seen,
                dialect,
                render,
                &asked,
                body_bytes,
                request_fault,
            )
        }
    }
}

fn too_large(state: &State, seen: &Seen, dialect: Option<Dialect>, bytes: u64) -> Response<Out> {
    let message = format!(
        "the request body is larger than the endpoint's bound of {} bytes",
        state.limits.max_body_bytes
    );
    seen.record(&state.journal, |r| {
        r.dialect = dialect;
        r.body_bytes = bytes;
        r.status = 413;
        r.outcome = Outcome::Rejected(message.clone());
    });
    let mut response = error_response(dialect, ErrorKind::TooLarge, &message);
    // The rest of the body is not read: the connection cannot carry another request.
    response.headers_mut().insert(
        hyper::header::CONNECTION,
        hyper::header::HeaderValue::from_static("close"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_under_the_exact_token_segment_are_served() {
        assert_eq!(
            strip_token("/m/abc/v1/messages", Some("abc")),
            Some("/v1/messages")
        );
        assert_eq!(strip_token("/m/abc", Some("abc")), Some(""));
        assert_eq!(strip_token("/m/abcd/v1/messages", Some("abc")), None);
        assert_eq!(strip_token("/v1/messages", Some("abc")), None);
        assert_eq!(strip_token("/v1/messages", None), Some("/v1/messages"));
    }

    #[test]
    fn the_journal_never_keeps_the_token() {
        let kept = journal_path("/m/secret/v1/messages?beta=true".to_owned(), Some("secret"));
        assert_eq!(kept, "/m/<token>/v1/messages?beta=true");
        assert_eq!(
            journal_path("/elsewhere".to_owned(), Some("secret")),
            "/elsewhere"
        );
        assert_eq!(journal_path("/v1/models".to_owned(), None), "/v1/models");
        let long = journal_path(format!("/{}", "é".repeat(1000)), None);
        assert!(
            long.len() <= MAX_PATH_BYTES + 20 && long.ends_with("...(2001 bytes)"),
            "{long}"
        );
    }

    #[test]
    fn input_tokens_are_a_quarter_of_the_body_and_never_zero() {
        assert_eq!(input_tokens(0), 1);
        assert_eq!(input_tokens(4000), 1000);
    }
}
