//! What a request's handling and a model's answer both build: the record of what a
//! request was, JSON and error responses, a fault's response, and the token count of a
//! body. Apart from both so that neither depends on the other for them.

use super::body::Out;
use super::state::State;
use crate::dialect::{self, ErrorKind};
use crate::journal::{Event, Journal, Outcome, RequestRecord};
use crate::physics::{Fault, FaultKind};
use crate::request::Dialect;
use hyper::{Response, StatusCode};
use std::time::Duration;

/// What a request looked like before its answer, for its journal record.
pub(super) struct Seen {
    pub(super) number: u64,
    pub(super) received: Duration,
    pub(super) method: String,
    pub(super) path: String,
}

impl Seen {
    pub(super) fn record(&self, journal: &Journal, filled: impl FnOnce(&mut RequestRecord)) {
        let mut record = RequestRecord {
            received: self.received,
            method: self.method.clone(),
            path: self.path.clone(),
            status: 200,
            ..RequestRecord::bare(self.number, Outcome::Unrecognised(String::new()))
        };
        filled(&mut record);
        journal.push(Event::Request(Box::new(record)));
    }
}

pub(super) fn json_response(status: u16, body: &serde_json::Value) -> Response<Out> {
    let mut response = Response::new(Out::full(body.to_string().into_bytes()));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

pub(super) fn error_response(
    dialect: Option<Dialect>,
    kind: ErrorKind,
    message: &str,
) -> Response<Out> {
    json_response(kind.status(), &dialect::error_body(dialect, kind, message))
}

pub(super) fn input_tokens(body_bytes: u64) -> u64 {
    (body_bytes / 4).max(1)
}

pub(super) fn fault_response(
    state: &State,
    seen: &Seen,
    dialect: Option<Dialect>,
    fault: &Fault,
    body_bytes: u64,
) -> Response<Out> {
    let (kind, message) = match fault.kind {
        FaultKind::RateLimit => (ErrorKind::RateLimit, "rate limited on demand by the script"),
        _ => (ErrorKind::Server, "server error on demand by the script"),
    };
    seen.record(&state.journal, |r| {
        r.dialect = dialect;
        r.body_bytes = body_bytes;
        r.status = kind.status();
        r.outcome = Outcome::Fault(fault.kind);
    });
    let mut response = error_response(dialect, kind, message);
    if fault.kind == FaultKind::RateLimit {
        let seconds = fault.retry_after.as_secs_f64().ceil() as u64;
        if let Ok(value) = hyper::header::HeaderValue::from_str(&seconds.to_string()) {
            response
                .headers_mut()
                .insert(hyper::header::RETRY_AFTER, value);
        }
    }
    response
}
