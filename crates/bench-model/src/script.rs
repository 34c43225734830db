//! The script of turns: what the endpoint answers, in a TOML or JSON file of its own
//! or embedded in another document (a spec's `[model]` table).
//!
//! ```toml
//! [physics]
//! first_token = "300ms"
//! tokens_per_second = 80
//!
//! [[turns]]
//! when = "(?i)list"             # optional: a regex on the last user message
//! shell = "ls"                  # a tool call: run a shell command
//! then = "Those are the files." # the reply once the tool results arrive
//!
//! [[turns]]
//! tokens = 500                  # a text reply of 500 tokens, filled deterministically
//! ```
//!
//! [`Script`] is the serde type as written (unknown fields are refused, every error
//! names its field); [`Script::compile`] checks it and returns the [`Compiled`] form
//! the endpoint plays.

// A fault's target is the physics' (its faults hit it); scripts name it here too.
pub use crate::physics::FaultTarget;
use crate::physics::{Fault, FaultKind, Physics, PhysicsOverride};
use bench_core::duration::Duration;
use regex::Regex;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The largest script file read (4 MiB): turns of text, not a corpus.
pub const MAX_SCRIPT_BYTES: u64 = 4 << 20;

/// A script as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// Streaming physics for every turn (a turn may override parts).
    #[serde(default)]
    pub physics: Physics,
    /// The turns, played in order (or picked by their `when`).
    #[serde(default)]
    pub turns: Vec<Turn>,
    /// After the last turn, start again at the first (otherwise a request past the end
    /// gets a short text saying the script is over).
    #[serde(default)]
    pub repeat: bool,
    /// Failures on demand: a status or a cut stream for a given request or turn.
    #[serde(default)]
    pub faults: Vec<FaultSpec>,
}

/// One turn: a text reply, or tool calls followed by what is said once their results
/// arrive. Give exactly one of `text`, `tokens` or tool calls (`shell`, `read`, `write`,
/// `tool_calls`, which may be combined).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// What a person types for this turn (the session phase types it; the endpoint
    /// itself ignores it).
    pub prompt: Option<String>,
    /// A regular expression searched in the last user message; the first turn at or
    /// after the current one that matches (or has no `when`) is played.
    pub when: Option<String>,
    /// The reply as text.
    pub text: Option<String>,
    /// A reply of this many tokens, filled with deterministic words.
    pub tokens: Option<u32>,
    /// A tool call running this shell command (mapped to the request's shell tool).
    pub shell: Option<String>,
    /// A tool call reading this file (the request's read tool, else `cat` in its shell).
    pub read: Option<String>,
    /// A tool call writing a file (the request's write tool, else its shell).
    pub write: Option<WriteFile>,
    /// Tool calls by name, with JSON arguments, rendered as each dialect renders them.
    #[serde(default)]
    pub tool_calls: Vec<ToolCallSpec>,
    /// What is said once a request carries the tool results (default: "Done.").
    pub then: Option<Then>,
    /// Physics for this turn only.
    pub physics: Option<PhysicsOverride>,
}

/// The reply after tool results: a text, or a step of its own (more tool calls).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Then {
    /// `then = "text"`.
    Text(String),
    /// `[turns.then]` with the fields of a step.
    Step(Step),
}

/// A step after tool results: the fields of a [`Turn`] without `when` and `physics`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// The reply as text.
    pub text: Option<String>,
    /// A reply of this many tokens.
    pub tokens: Option<u32>,
    /// A shell command tool call.
    pub shell: Option<String>,
    /// A read-file tool call.
    pub read: Option<String>,
    /// A write-file tool call.
    pub write: Option<WriteFile>,
    /// Tool calls by name.
    #[serde(default)]
    pub tool_calls: Vec<ToolCallSpec>,
    /// What is said after these tool calls' results.
    pub then: Option<Box<Then>>,
}

/// A file to write.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteFile {
    /// Where (as the agent sees paths).
    pub path: String,
    /// What.
    pub content: String,
}

/// A tool call by name.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCallSpec {
    /// The tool's name exactly as the agent advertises it (`Bash`, `read_file`, ...).
    pub name: String,
    /// Its arguments: a JSON object (a TOML table).
    #[serde(default = "empty_object")]
    pub arguments: serde_json::Value,
}

fn empty_object() -> serde_json::Value {
    serde_json::Value::Object(serde_json::Map::new())
}

/// A fault as written: which request or turn, and what happens.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    /// The request number (1 for the first request the endpoint receives, side
    /// requests included).
    pub request: Option<u64>,
    /// The turn number (1 for the first turn): the first request(s) that would play it.
    pub turn: Option<usize>,
    /// `rate_limit` (429 with Retry-After), `server_error` (500) or `cut` (the stream
    /// stops mid-way and the connection closes).
    pub kind: FaultKind,
    /// For `rate_limit`: the Retry-After header (whole seconds; default 1s).
    pub retry_after: Option<Duration>,
    /// For `cut`: how many tokens are sent before the cut (default: half the reply).
    pub after_tokens: Option<u32>,
    /// How many requests the fault hits before the turn plays normally (default 1).
    pub times: Option<u32>,
}

/// A script that was not understood; every message names the field.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The file could not be read.
    #[error("cannot read the script {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The text is not a script (syntax, an unknown field, a wrong type).
    #[error("{origin}: {field}: {message}")]
    Parse {
        /// The file, or "the script".
        origin: String,
        /// The field's path (`turns[1].tokens`), or "(document)".
        field: String,
        /// What was wrong.
        message: String,
    },
    /// The fields parse but do not make a script.
    #[error("{field}: {message}")]
    Invalid {
        /// The field's path (`turns[0].when`).
        field: String,
        /// What was wrong.
        message: String,
    },
}

impl Script {
    /// Parses a script written in TOML. `origin` names it in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<Script, ScriptError> {
        let deserializer = toml::Deserializer::parse(text).map_err(|error| ScriptError::Parse {
            origin: origin.to_owned(),
            field: "(document)".to_owned(),
            message: error.message().trim().to_owned(),
        })?;
        serde_path_to_error::deserialize(deserializer).map_err(|error| ScriptError::Parse {
            origin: origin.to_owned(),
            field: field_path(error.path()),
            message: toml_message(error.inner()),
        })
    }

    /// Parses a script written in JSON. `origin` names it in errors.
    pub fn from_json(text: &str, origin: &str) -> Result<Script, ScriptError> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(&mut deserializer).map_err(|error| ScriptError::Parse {
            origin: origin.to_owned(),
            field: field_path(error.path()),
            message: error.inner().to_string(),
        })
    }

    /// Reads a script file: JSON when its name ends in `.json`, TOML otherwise; a
    /// regular file of at most [`MAX_SCRIPT_BYTES`].
    pub fn load(path: &Path) -> Result<Script, ScriptError> {
        let text = bench_core::io::read_input_file(path, MAX_SCRIPT_BYTES).map_err(|source| {
            ScriptError::Read {
                path: path.to_owned(),
                source,
            }
        })?;
        let origin = path.display().to_string();
        if path.extension().is_some_and(|ext| ext == "json") {
            Script::from_json(&text, &origin)
        } else {
            Script::from_toml(&text, &origin)
        }
    }

    /// The script the endpoint plays when none is given: a `ls` tool call when the user
    /// asks to list the folder, otherwise a short streamed text, again and again.
    pub fn default_script() -> Script {
        Script {
            repeat: true,
            turns: vec![
                Turn {
                    when: Some(r"(?i)\b(ls|list|files?|folder)\b".to_owned()),
                    shell: Some("ls".to_owned()),
                    then: Some(Then::Text(
                        "That is the listing of this folder, as the tool printed it.".to_owned(),
                    )),
                    ..Turn::default()
                },
                Turn {
                    text: Some(
                        "Hello from clibench's scripted model. This answer was streamed by a \
                         loopback endpoint; ask me to list the folder for a tool call."
                            .to_owned(),
                    ),
                    ..Turn::default()
                },
            ],
            ..Script::default()
        }
    }

    /// Checks the script and returns the form the endpoint plays.
    pub fn compile(&self) -> Result<Compiled, ScriptError> {
        self.physics
            .check()
            .map_err(|(field, message)| invalid(format!("physics.{field}"), &message))?;
        let turns = (self.turns.iter().enumerate())
            .map(|(index, turn)| self.compile_turn(index, turn))
            .collect::<Result<Vec<_>, _>>()?;
        let faults = (self.faults.iter().enumerate())
            .map(|(index, fault)| self.compile_fault(index, fault))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Compiled {
            turns,
            repeat: self.repeat,
            faults,
            physics: self.physics.clone(),
        })
    }

    /// Turn `index` checked: its pattern compiled, its physics patched and checked, its
    /// reply and prompt checked.
    fn compile_turn(&self, index: usize, turn: &Turn) -> Result<CompiledTurn, ScriptError> {
        let at = format!("turns[{index}]");
        let when = match &turn.when {
            Some(pattern) => Some(Arc::new(Regex::new(pattern).map_err(|error| {
                ScriptError::Invalid {
                    field: format!("{at}.when"),
                    message: format!("not a regular expression: {error}"),
                }
            })?)),
            None => None,
        };
        let physics = match &turn.physics {
            Some(patch) => {
                let physics = self.physics.patched(patch);
                physics.check().map_err(|(field, message)| {
                    invalid(format!("{at}.physics.{field}"), &message)
                })?;
                physics
            }
            None => self.physics.clone(),
        };
        let reply = reply_of(
            &at,
            Fields {
                text: &turn.text,
                tokens: turn.tokens,
                shell: &turn.shell,
                read: &turn.read,
                write: &turn.write,
                tool_calls: &turn.tool_calls,
                then: turn.then.as_ref(),
            },
        )?;
        if turn.prompt.as_deref().is_some_and(|p| p.trim().is_empty()) {
            return Err(invalid(format!("{at}.prompt"), "must not be empty"));
        }
        if turn
            .prompt
            .as_deref()
            .is_some_and(|p| p.chars().any(char::is_control))
        {
            return Err(invalid(
                format!("{at}.prompt"),
                "must be one line of text (the session phase presses Enter after it)",
            ));
        }
        Ok(CompiledTurn {
            prompt: turn.prompt.clone(),
            when,
            reply,
            physics,
        })
    }

    /// Fault `index` checked: one target, counted from 1, and only the fields its kind
    /// uses.
    fn compile_fault(&self, index: usize, fault: &FaultSpec) -> Result<Fault, ScriptError> {
        let at = format!("faults[{index}]");
        let target = match (fault.request, fault.turn) {
            (Some(0), _) => return Err(invalid(format!("{at}.request"), "counts from 1")),
            (_, Some(0)) => return Err(invalid(format!("{at}.turn"), "counts from 1")),
            (Some(request), None) => FaultTarget::Request(request),
            (None, Some(turn)) if turn > self.turns.len() => {
                return Err(invalid(
                    format!("{at}.turn"),
                    &format!("the script has {} turn(s)", self.turns.len()),
                ));
            }
            (None, Some(turn)) => FaultTarget::Turn(turn - 1),
            _ => {
                return Err(invalid(at, "give exactly one of `request` or `turn`"));
            }
        };
        if fault.retry_after.is_some() && fault.kind != FaultKind::RateLimit {
            return Err(invalid(
                format!("{at}.retry_after"),
                "only a `rate_limit` fault has a Retry-After",
            ));
        }
        if fault.after_tokens.is_some() && fault.kind != FaultKind::Cut {
            return Err(invalid(
                format!("{at}.after_tokens"),
                "only a `cut` fault stops after some tokens",
            ));
        }
        if fault.times == Some(0) {
            return Err(invalid(format!("{at}.times"), "must be at least 1"));
        }
        Ok(Fault {
            target,
            kind: fault.kind,
            retry_after: fault
                .retry_after
                .map_or(std::time::Duration::from_secs(1), |d| d.0),
            after_tokens: fault.after_tokens,
            times: fault.times.unwrap_or(1),
        })
    }
}

/// A script field that is not valid, and why.
fn invalid(field: String, message: &str) -> ScriptError {
    ScriptError::Invalid {
        field,
        message: message.to_owned(),
    }
}

/// A checked script.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The turns in order.
    pub turns: Vec<CompiledTurn>,
    /// Start again after the last turn.
    pub repeat: bool,
    /// Faults on demand.
    pub faults: Vec<Fault>,
    /// The script's physics (side requests use it).
    pub physics: Physics,
}

/// A checked turn.
#[derive(Debug, Clone)]
pub struct CompiledTurn {
    /// What a person types for it (the session phase's prompt).
    pub prompt: Option<String>,
    /// Its `when`, compiled; shared by the copies of the turn a long session plays (a
    /// cloned `Regex` gets a search cache of its own, which grows as it is used: one per
    /// turn of a 1,000-turn session grew clibench's memory with every turn).
    pub when: Option<Arc<Regex>>,
    /// What it answers.
    pub reply: Reply,
    /// Its physics (the script's, patched by the turn's).
    pub physics: Physics,
}

/// What a turn answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// A text.
    Text(String),
    /// A text of this many deterministic tokens.
    Tokens(u32),
    /// Tool calls, and what follows once their results arrive.
    Tools {
        /// The calls, in order.
        calls: Vec<ToolCall>,
        /// The reply to the request that carries their results.
        then: Box<Reply>,
    },
}

impl Reply {
    /// The text the turn finally shows: its text, its deterministic tokens, or (after
    /// tool calls) what follows once their results arrive; the same words the endpoint
    /// streams.
    pub fn final_text(&self) -> String {
        match self {
            Reply::Text(text) => text.clone(),
            Reply::Tokens(count) => crate::tokens::filler(*count).concat(),
            Reply::Tools { then, .. } => then.final_text(),
        }
    }

    /// How many rounds of tool calls come before the final text.
    pub fn tool_rounds(&self) -> usize {
        match self {
            Reply::Text(_) | Reply::Tokens(_) => 0,
            Reply::Tools { then, .. } => 1 + then.tool_rounds(),
        }
    }

    /// How many tokens the final text streams in.
    pub fn final_tokens(&self) -> usize {
        match self {
            Reply::Text(text) => crate::tokens::tokens_of(text).len(),
            Reply::Tokens(count) => *count as usize,
            Reply::Tools { then, .. } => then.final_tokens(),
        }
    }
}

/// One tool call, before it is mapped to the tools a request advertises.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolCall {
    /// Run a shell command.
    Shell(String),
    /// Read a file.
    Read(String),
    /// Write a file.
    Write {
        /// Where.
        path: String,
        /// What.
        content: String,
    },
    /// A named tool with these arguments.
    Named {
        /// The tool's name.
        name: String,
        /// Its arguments (a JSON object).
        arguments: serde_json::Value,
    },
}

/// The reply fields shared by [`Turn`] and [`Step`].
struct Fields<'a> {
    text: &'a Option<String>,
    tokens: Option<u32>,
    shell: &'a Option<String>,
    read: &'a Option<String>,
    write: &'a Option<WriteFile>,
    tool_calls: &'a [ToolCallSpec],
    then: Option<&'a Then>,
}

fn reply_of(at: &str, fields: Fields<'_>) -> Result<Reply, ScriptError> {
    let invalid = |field: String, message: String| ScriptError::Invalid { field, message };
    let mut calls = Vec::new();
    if let Some(command) = fields.shell {
        calls.push(ToolCall::Shell(command.clone()));
    }
    if let Some(path) = fields.read {
        calls.push(ToolCall::Read(path.clone()));
    }
    if let Some(write) = fields.write {
        calls.push(ToolCall::Write {
            path: write.path.clone(),
            content: write.content.clone(),
        });
    }
    for (index, call) in fields.tool_calls.iter().enumerate() {
        if !call.arguments.is_object() {
            return Err(invalid(
                format!("{at}.tool_calls[{index}].arguments"),
                "must be a table (a JSON object)".to_owned(),
            ));
        }
        if call.name.is_empty() {
            return Err(invalid(
                format!("{at}.tool_calls[{index}].name"),
                "must not be empty".to_owned(),
            ));
        }
        calls.push(ToolCall::Named {
            name: call.name.clone(),
            arguments: call.arguments.clone(),
        });
    }
    let given: Vec<&str> = [
        fields.text.as_ref().map(|_| "text"),
        fields.tokens.map(|_| "tokens"),
        (!calls.is_empty()).then_some("tool calls"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if given.len() != 1 {
        return Err(invalid(
            at.to_owned(),
            format!(
                "give exactly one of `text`, `tokens` or tool calls (`shell`, `read`, `write`, \
                 `tool_calls`); found {}",
                if given.is_empty() {
                    "none".to_owned()
                } else {
                    given.join(" and ")
                }
            ),
        ));
    }
    if calls.is_empty() {
        if fields.then.is_some() {
            return Err(invalid(
                format!("{at}.then"),
                "only tool calls are followed by `then`".to_owned(),
            ));
        }
        return Ok(match (fields.text, fields.tokens) {
            (Some(text), _) => Reply::Text(text.clone()),
            (None, Some(tokens)) => Reply::Tokens(tokens),
            (None, None) => unreachable!("exactly one of text, tokens or calls was checked"),
        });
    }
    let then = match fields.then {
        None => Reply::Text("Done.".to_owned()),
        Some(Then::Text(text)) => Reply::Text(text.clone()),
        Some(Then::Step(step)) => reply_of(
            &format!("{at}.then"),
            Fields {
                text: &step.text,
                tokens: step.tokens,
                shell: &step.shell,
                read: &step.read,
                write: &step.write,
                tool_calls: &step.tool_calls,
                then: step.then.as_deref(),
            },
        )?,
    };
    Ok(Reply::Tools {
        calls,
        then: Box::new(then),
    })
}

/// `turns[1].tokens` from serde_path_to_error's path.
fn field_path(path: &serde_path_to_error::Path) -> String {
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            serde_path_to_error::Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            serde_path_to_error::Segment::Map { key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            serde_path_to_error::Segment::Enum { variant } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(variant);
            }
            serde_path_to_error::Segment::Unknown => out.push_str(".?"),
        }
    }
    if out.is_empty() {
        "(document)".to_owned()
    } else {
        out
    }
}

fn toml_message(error: &toml::de::Error) -> String {
    error.message().trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(text: &str) -> String {
        match Script::from_toml(text, "s.toml") {
            Ok(script) => script.compile().map(|_| ()).unwrap_err().to_string(),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn a_script_with_text_tokens_and_tools_compiles() {
        let script = Script::from_toml(
            r#"
            [physics]
            first_token = "250ms"
            tokens_per_second = 50
            [[turns]]
            when = "(?i)list"
            shell = "ls"
            then = "Listed."
            [[turns]]
            tokens = 12
            [[turns]]
            [[turns.tool_calls]]
            name = "Read"
            arguments = { file_path = "README.md" }
            [turns.then]
            write = { path = "out.txt", content = "hi" }
            then = "Written."
            "#,
            "s.toml",
        )
        .unwrap();
        let compiled = script.compile().unwrap();
        assert_eq!(compiled.turns.len(), 3);
        assert_eq!(
            compiled.turns[0].reply,
            Reply::Tools {
                calls: vec![ToolCall::Shell("ls".into())],
                then: Box::new(Reply::Text("Listed.".into())),
            }
        );
        assert_eq!(compiled.turns[1].reply, Reply::Tokens(12));
        let Reply::Tools { then, .. } = &compiled.turns[2].reply else {
            panic!("tools expected")
        };
        assert!(matches!(**then, Reply::Tools { .. }));
        assert_eq!(
            compiled.turns[0].physics.first_token.0,
            std::time::Duration::from_millis(250)
        );
    }

    #[test]
    fn an_unknown_field_is_named_with_its_path() {
        let message = error_of("[[turns]]\ntext = \"a\"\n[[turns]]\ntxet = \"b\"\n");
        assert!(message.starts_with("s.toml: turns[1].txet: "), "{message}");
        assert!(message.contains("unknown field `txet`"), "{message}");
    }

    #[test]
    fn a_wrong_type_is_named_with_its_path() {
        let message = error_of("[[turns]]\ntokens = \"many\"\n");
        assert!(
            message.starts_with("s.toml: turns[0].tokens: "),
            "{message}"
        );
        let message = error_of("[physics]\ntokens_per_second = \"fast\"\n");
        assert!(
            message.starts_with("s.toml: physics.tokens_per_second: "),
            "{message}"
        );
    }

    #[test]
    fn a_turn_needs_exactly_one_kind_of_reply() {
        assert_eq!(
            error_of("[[turns]]\ntext = \"a\"\ntokens = 3\n"),
            "turns[0]: give exactly one of `text`, `tokens` or tool calls (`shell`, `read`, \
             `write`, `tool_calls`); found text and tokens"
        );
        assert!(error_of("[[turns]]\nwhen = \"x\"\n").contains("found none"));
        assert_eq!(
            error_of("[[turns]]\ntext = \"a\"\nthen = \"b\"\n"),
            "turns[0].then: only tool calls are followed by `then`"
        );
    }

    #[test]
    fn a_bad_regex_and_bad_faults_name_their_field() {
        assert!(error_of("[[turns]]\nwhen = \"(\"\ntext = \"a\"\n").starts_with("turns[0].when: "));
        assert_eq!(
            error_of("[[turns]]\ntext = \"a\"\n[[faults]]\nturn = 2\nkind = \"cut\"\n"),
            "faults[0].turn: the script has 1 turn(s)"
        );
        assert_eq!(
            error_of("[[faults]]\nrequest = 1\nkind = \"cut\"\nretry_after = \"2s\"\n"),
            "faults[0].retry_after: only a `rate_limit` fault has a Retry-After"
        );
        assert!(
            error_of("[[faults]]\nrequest = 1\nkind = \"boom\"\n")
                .starts_with("s.toml: faults[0].kind: ")
        );
        assert_eq!(
            error_of("[[faults]]\nkind = \"cut\"\n"),
            "faults[0]: give exactly one of `request` or `turn`"
        );
    }

    #[test]
    fn json_scripts_name_fields_too() {
        let error = Script::from_json(r#"{"turns":[{"text":"a"},{"tokens":-1}]}"#, "s.json")
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("s.json: turns[1].tokens: "), "{error}");
        let script = Script::from_json(
            r#"{"turns":[{"shell":"ls","then":"ok"}],"physics":{"seed":7}}"#,
            "s.json",
        )
        .unwrap();
        assert_eq!(script.physics.seed, Some(7));
        script.compile().unwrap();
    }

    #[test]
    fn bad_physics_is_refused_with_its_field() {
        assert_eq!(
            error_of("[physics]\ntokens_per_second = 0\n"),
            "physics.tokens_per_second: must be more than 0"
        );
        assert_eq!(
            error_of("[[turns]]\ntext = \"a\"\nphysics = { chunk_tokens = 0 }\n"),
            "turns[0].physics.chunk_tokens: must be at least 1"
        );
    }

    #[test]
    fn prompts_are_kept_and_final_texts_are_what_streams() {
        let script = Script::from_toml(
            "[[turns]]\nprompt = \"list\"\nshell = \"ls\"\nthen = \"Listed it.\"\n\
             [[turns]]\ntokens = 5\n",
            "s.toml",
        )
        .unwrap();
        let compiled = script.compile().unwrap();
        assert_eq!(compiled.turns[0].prompt.as_deref(), Some("list"));
        assert_eq!(compiled.turns[0].reply.final_text(), "Listed it.");
        assert_eq!(compiled.turns[0].reply.tool_rounds(), 1);
        assert_eq!(
            compiled.turns[1].reply.final_text(),
            crate::tokens::filler(5).concat()
        );
        assert_eq!(compiled.turns[1].reply.final_tokens(), 5);
        assert_eq!(
            error_of("[[turns]]\nprompt = \"a\\nb\"\ntext = \"x\"\n"),
            "turns[0].prompt: must be one line of text (the session phase presses Enter after it)"
        );
    }

    #[test]
    fn the_default_script_compiles() {
        let compiled = Script::default_script().compile().unwrap();
        assert!(compiled.repeat);
        assert_eq!(compiled.turns.len(), 2);
    }
}
