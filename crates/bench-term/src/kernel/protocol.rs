//! Protocol 3 frames: parsing events (pure functions over `&str`) and encoding requests.

use super::error::FrameError;
use serde_json::{Map, Value};

/// The protocol version this client speaks.
pub const PROTOCOL_VERSION: u64 = 3;

/// One event from the kernel's stdout.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The handshake: the first event a kernel sends.
    Ready {
        /// The protocol version the kernel speaks.
        protocol: Value,
        /// The kernel's Python version, e.g. `3.11.7`, when it said.
        python: Option<String>,
    },
    /// Text the cell (or, with `id: None`, a raw file-descriptor write) sent to stdout.
    Stdout(Stream),
    /// Text sent to stderr; `id: None` for raw file-descriptor writes.
    Stderr(Stream),
    /// The repr of a cell's trailing expression.
    Result {
        /// The request id.
        id: Option<String>,
        /// The repr.
        text: String,
    },
    /// Rich output, by MIME type.
    Display {
        /// The request id.
        id: Option<String>,
        /// MIME type to content, e.g. `{"text/plain": "..."}`.
        data: Value,
    },
    /// The kernel asks the client something; answer with a `host_reply` of the same id.
    HostRequest {
        /// The id to answer with.
        id: String,
        /// The question.
        data: Value,
    },
    /// An exception, or a protocol error (`ename` `ProtocolError`).
    Error(CellError),
    /// The end of a request.
    Done(Done),
    /// An event kind this client does not know; kept, not rejected.
    Other {
        /// The `event` field.
        event: String,
        /// The `id` field, when it had one.
        id: Option<String>,
        /// The whole event object.
        fields: Map<String, Value>,
    },
}

/// A `stdout` or `stderr` event.
#[derive(Debug, Clone, PartialEq)]
pub struct Stream {
    /// The request id, or `None` for raw writes to the file descriptor.
    pub id: Option<String>,
    /// What the kernel wrote, as the event carried it.
    pub text: String,
}

/// An `error` event.
#[derive(Debug, Clone, PartialEq)]
pub struct CellError {
    /// The request id, or `None` (protocol errors about unparseable requests).
    pub id: Option<String>,
    /// The exception's type name, e.g. `KeyboardInterrupt`.
    pub ename: String,
    /// The exception's message.
    pub evalue: String,
    /// The formatted traceback, one line per entry.
    pub traceback: Vec<String>,
}

/// A `done` event: the end of one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Done {
    /// The request id.
    pub id: String,
    /// `ok`, `error`, or whatever the kernel said.
    pub status: String,
    /// The extra fields (`saved`, `restored`, `names`, ...), without `event`, `id` and `status`.
    pub fields: Map<String, Value>,
}

impl Done {
    /// True when the status is `ok`.
    pub fn is_ok(&self) -> bool {
        self.status == "ok"
    }

    /// A field that is a list of strings (`saved`, `restored`, `names`); `None` when absent
    /// or not a list. Non-string entries are given as their JSON text.
    pub fn strings(&self, field: &str) -> Option<Vec<String>> {
        let list = self.fields.get(field)?.as_array()?;
        Some(
            list.iter()
                .map(|item| match item {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                })
                .collect(),
        )
    }

    /// The `reason` field, when the kernel gave one.
    pub fn reason(&self) -> Option<&str> {
        self.fields.get("reason").and_then(Value::as_str)
    }
}

impl Event {
    /// The request id the event belongs to, if any.
    pub fn id(&self) -> Option<&str> {
        match self {
            Event::Ready { .. } => None,
            Event::Stdout(stream) | Event::Stderr(stream) => stream.id.as_deref(),
            Event::Result { id, .. } | Event::Display { id, .. } | Event::Other { id, .. } => {
                id.as_deref()
            }
            Event::HostRequest { id, .. } => Some(id),
            Event::Error(error) => error.id.as_deref(),
            Event::Done(done) => Some(&done.id),
        }
    }

    /// The event's kind as on the wire (`stdout`, `done`, ...).
    pub fn kind(&self) -> &str {
        match self {
            Event::Ready { .. } => "ready",
            Event::Stdout(_) => "stdout",
            Event::Stderr(_) => "stderr",
            Event::Result { .. } => "result",
            Event::Display { .. } => "display",
            Event::HostRequest { .. } => "host_request",
            Event::Error(_) => "error",
            Event::Done(_) => "done",
            Event::Other { event, .. } => event,
        }
    }
}

/// Parses one line of the kernel's stdout (without or with its newline).
pub fn parse_event(line: &str) -> Result<Event, FrameError> {
    let value: Value = serde_json::from_str(line).map_err(|error| FrameError::NotJson {
        line: line.to_owned(),
        message: error.to_string(),
    })?;
    event_from_value(value, line)
}

/// Turns a parsed JSON value into an event; `line` is quoted in errors.
fn event_from_value(value: Value, line: &str) -> Result<Event, FrameError> {
    let missing = || FrameError::MissingEvent {
        line: line.to_owned(),
    };
    let Value::Object(object) = value else {
        return Err(missing());
    };
    let event = match object.get("event") {
        Some(Value::String(event)) => event.clone(),
        _ => return Err(missing()),
    };
    let mut fields = Fields {
        object,
        event: event.clone(),
        line,
    };
    Ok(match event.as_str() {
        "ready" => Event::Ready {
            protocol: fields.take("protocol"),
            python: match fields.object.remove("python") {
                Some(Value::String(python)) => Some(python),
                _ => None,
            },
        },
        "stdout" => Event::Stdout(Stream {
            id: fields.optional_id()?,
            text: fields.text()?,
        }),
        "stderr" => Event::Stderr(Stream {
            id: fields.optional_id()?,
            text: fields.text()?,
        }),
        "result" => Event::Result {
            id: fields.optional_id()?,
            text: fields.text()?,
        },
        "display" => Event::Display {
            id: fields.optional_id()?,
            data: fields.take("data"),
        },
        "host_request" => Event::HostRequest {
            id: fields.id()?,
            data: fields.take("data"),
        },
        "error" => Event::Error(fields.cell_error()?),
        "done" => Event::Done(fields.done()?),
        _ => Event::Other {
            id: fields.optional_id()?,
            event,
            fields: fields.object,
        },
    })
}

/// An event's fields, with the event's name and line that its errors quote.
struct Fields<'a> {
    object: Map<String, Value>,
    event: String,
    line: &'a str,
}

impl Fields<'_> {
    /// `field` is missing or of the wrong type.
    fn bad(&self, field: &'static str) -> FrameError {
        FrameError::BadField {
            event: self.event.clone(),
            field,
            line: self.line.to_owned(),
        }
    }

    /// The request id, a string or a number, when there is one.
    fn optional_id(&self) -> Result<Option<String>, FrameError> {
        match self.object.get("id") {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(id)) => Ok(Some(id.clone())),
            Some(Value::Number(id)) => Ok(Some(id.to_string())),
            Some(_) => Err(self.bad("id")),
        }
    }

    /// The request id, which the event must have.
    fn id(&self) -> Result<String, FrameError> {
        self.optional_id()?.ok_or_else(|| self.bad("id"))
    }

    /// The `text` string, which the event must have.
    fn text(&mut self) -> Result<String, FrameError> {
        match self.object.remove("text") {
            Some(Value::String(text)) => Ok(text),
            _ => Err(self.bad("text")),
        }
    }

    /// A field as it is, `null` when absent.
    fn take(&mut self, key: &str) -> Value {
        self.object.remove(key).unwrap_or(Value::Null)
    }

    /// An `error` event's cell error: its name is required, the value and the traceback
    /// lines are text whatever their JSON type.
    fn cell_error(&mut self) -> Result<CellError, FrameError> {
        Ok(CellError {
            id: self.optional_id()?,
            ename: match self.object.remove("ename") {
                Some(Value::String(ename)) => ename,
                _ => return Err(self.bad("ename")),
            },
            evalue: match self.object.remove("evalue") {
                Some(Value::String(evalue)) => evalue,
                None | Some(Value::Null) => String::new(),
                Some(other) => other.to_string(),
            },
            traceback: match self.object.remove("traceback") {
                Some(Value::Array(lines)) => lines
                    .into_iter()
                    .map(|line| match line {
                        Value::String(line) => line,
                        other => other.to_string(),
                    })
                    .collect(),
                _ => Vec::new(),
            },
        })
    }

    /// A `done` event: its id and status, and every other field as it came.
    fn done(mut self) -> Result<Done, FrameError> {
        let id = self.id()?;
        let status = match self.object.remove("status") {
            Some(Value::String(status)) => status,
            _ => return Err(self.bad("status")),
        };
        self.object.remove("event");
        self.object.remove("id");
        Ok(Done {
            id,
            status,
            fields: self.object,
        })
    }
}

/// A request answered by a `done`: what [`crate::kernel::Kernel::request`] and
/// [`crate::kernel::Kernel::submit`] send (`interrupt`, `host_reply` and `shutdown` have
/// methods of their own).
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// Run a cell.
    Execute {
        /// The cell's code.
        code: String,
    },
    /// Save the user's names.
    Snapshot(Snapshot),
    /// Revive the names saved at `path`.
    Restore {
        /// The snapshot file.
        path: std::path::PathBuf,
    },
    /// List the user's names.
    ListNames,
    /// A request type of a kernel's own (or, in tests, one the kernel does not know).
    Custom {
        /// The `type` field.
        kind: String,
        /// The other fields (`type` and `id` are ignored).
        fields: Map<String, Value>,
    },
}

/// The fields of a `snapshot` request.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Snapshot {
    /// Where the payload goes.
    pub path: std::path::PathBuf,
    /// Where the JSON manifest goes.
    pub manifest_path: std::path::PathBuf,
    /// The most bytes the whole payload may take.
    pub max_bytes: Option<u64>,
    /// The most bytes one name may take.
    pub max_variable_bytes: Option<u64>,
    /// Whether names over the limit are dropped (`pruned`) rather than the snapshot
    /// skipping them (`skipped`).
    pub prune_oversized: bool,
}

impl Request {
    /// An `execute` request for `code`.
    pub fn execute(code: impl Into<String>) -> Request {
        Request::Execute { code: code.into() }
    }

    /// The `type` field.
    pub fn kind(&self) -> &str {
        match self {
            Request::Execute { .. } => "execute",
            Request::Snapshot(_) => "snapshot",
            Request::Restore { .. } => "restore",
            Request::ListNames => "list_names",
            Request::Custom { kind, .. } => kind,
        }
    }

    /// The fields besides `type` and `id`.
    pub fn fields(&self) -> Map<String, Value> {
        let path = |path: &std::path::Path| Value::from(path.to_string_lossy());
        let mut fields = Map::new();
        match self {
            Request::Execute { code } => {
                fields.insert("code".to_owned(), Value::from(code.as_str()));
            }
            Request::Snapshot(snapshot) => {
                fields.insert("path".to_owned(), path(&snapshot.path));
                fields.insert("manifest_path".to_owned(), path(&snapshot.manifest_path));
                if let Some(bytes) = snapshot.max_bytes {
                    fields.insert("max_bytes".to_owned(), Value::from(bytes));
                }
                if let Some(bytes) = snapshot.max_variable_bytes {
                    fields.insert("max_variable_bytes".to_owned(), Value::from(bytes));
                }
                if snapshot.prune_oversized {
                    fields.insert("prune_oversized".to_owned(), Value::from(true));
                }
            }
            Request::Restore { path: file } => {
                fields.insert("path".to_owned(), path(file));
            }
            Request::ListNames => {}
            Request::Custom { fields: extra, .. } => fields = extra.clone(),
        }
        fields
    }
}

/// One request line: `type`, then `id` when given, then `fields`.
pub fn encode_request(kind: &str, id: Option<&str>, fields: &Map<String, Value>) -> String {
    // Written by hand so that `type` and `id` come first, as in the protocol document.
    let mut line = String::with_capacity(64);
    line.push_str("{\"type\":");
    line.push_str(&Value::from(kind).to_string());
    if let Some(id) = id {
        line.push_str(",\"id\":");
        line.push_str(&Value::from(id).to_string());
    }
    for (key, value) in fields {
        if key == "type" || (key == "id" && id.is_some()) {
            continue;
        }
        line.push(',');
        line.push_str(&Value::from(key.as_str()).to_string());
        line.push(':');
        line.push_str(&value.to_string());
    }
    line.push_str("}\n");
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_requests_encode_as_the_protocol_names_them() {
        let line = |request: Request| encode_request(request.kind(), Some("1"), &request.fields());
        let snapshot = Request::Snapshot(Snapshot {
            path: "/s.pkl".into(),
            manifest_path: "/s.json".into(),
            max_variable_bytes: Some(1000),
            prune_oversized: true,
            ..Snapshot::default()
        });
        insta::assert_snapshot!(
            [
                line(Request::execute("print(1)")),
                line(snapshot),
                line(Request::Restore { path: "/s.pkl".into() }),
                line(Request::ListNames),
            ]
            .concat(),
            @r#"
        {"type":"execute","id":"1","code":"print(1)"}
        {"type":"snapshot","id":"1","manifest_path":"/s.json","max_variable_bytes":1000,"path":"/s.pkl","prune_oversized":true}
        {"type":"restore","id":"1","path":"/s.pkl"}
        {"type":"list_names","id":"1"}
        "#
        );
    }

    #[test]
    fn ready_carries_protocol_and_python() {
        let event = parse_event(r#"{"event":"ready","protocol":3,"python":"3.11.7"}"#).unwrap();
        assert_eq!(
            event,
            Event::Ready {
                protocol: Value::from(3),
                python: Some("3.11.7".into())
            }
        );
    }

    #[test]
    fn raw_output_has_no_id() {
        let event = parse_event(r#"{"event":"stdout","id":null,"text":"x"}"#).unwrap();
        assert_eq!(event.id(), None);
        assert_eq!(event.kind(), "stdout");
    }

    #[test]
    fn done_keeps_its_extras() {
        let event =
            parse_event(r#"{"event":"done","id":"7","status":"ok","saved":["a","b"],"bytes":3}"#)
                .unwrap();
        let Event::Done(done) = event else {
            panic!("not done: {event:?}")
        };
        assert!(done.is_ok());
        assert_eq!(done.strings("saved"), Some(vec!["a".into(), "b".into()]));
        assert_eq!(done.fields.get("bytes"), Some(&Value::from(3)));
        assert!(!done.fields.contains_key("status"));
    }

    #[test]
    fn numeric_ids_become_strings() {
        let event = parse_event(r#"{"event":"done","id":7,"status":"error"}"#).unwrap();
        assert_eq!(event.id(), Some("7"));
    }

    #[test]
    fn non_json_line_is_quoted() {
        let error = parse_event("Traceback (most recent call last):").unwrap_err();
        assert!(matches!(error, FrameError::NotJson { .. }));
        assert!(
            error
                .to_string()
                .contains("Traceback (most recent call last):")
        );
    }

    #[test]
    fn object_without_event_is_rejected() {
        let error = parse_event(r#"{"id":"1","text":"hi"}"#).unwrap_err();
        assert_eq!(
            error,
            FrameError::MissingEvent {
                line: r#"{"id":"1","text":"hi"}"#.into()
            }
        );
        assert!(matches!(
            parse_event("[1,2]").unwrap_err(),
            FrameError::MissingEvent { .. }
        ));
        assert!(matches!(
            parse_event(r#"{"event":5}"#).unwrap_err(),
            FrameError::MissingEvent { .. }
        ));
    }

    #[test]
    fn done_without_status_is_a_bad_field() {
        let error = parse_event(r#"{"event":"done","id":"1"}"#).unwrap_err();
        assert!(matches!(
            error,
            FrameError::BadField {
                field: "status",
                ..
            }
        ));
    }

    #[test]
    fn unknown_events_are_kept() {
        let event = parse_event(r#"{"event":"progress","id":"3","fraction":0.5}"#).unwrap();
        assert_eq!(event.kind(), "progress");
        assert_eq!(event.id(), Some("3"));
    }

    #[test]
    fn error_event_parses_traceback() {
        let event = parse_event(
            r#"{"event":"error","id":"7","ename":"KeyboardInterrupt","evalue":"","traceback":["a","b"]}"#,
        )
        .unwrap();
        let Event::Error(error) = event else {
            panic!("not an error: {event:?}")
        };
        assert_eq!(error.ename, "KeyboardInterrupt");
        assert_eq!(error.traceback, vec!["a", "b"]);
    }

    #[test]
    fn requests_are_one_line_with_type_and_id() {
        let mut fields = Map::new();
        fields.insert("code".into(), Value::from("print('a\nb')"));
        let line = encode_request("execute", Some("4"), &fields);
        assert_eq!(
            line,
            "{\"type\":\"execute\",\"id\":\"4\",\"code\":\"print('a\\nb')\"}\n"
        );
        assert_eq!(
            encode_request("interrupt", None, &Map::new()),
            "{\"type\":\"interrupt\"}\n"
        );
    }
}
