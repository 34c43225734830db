//! An answer before it is put in a dialect's shape: text split into tokens, or tool
//! calls mapped to the tools the request advertises, and the usage counts.

use crate::request::{Asked, Tool};
use crate::schema;
use crate::script::ToolCall;
pub use crate::tokens::{arguments_tokens, filler, tokens_of};
use serde_json::{Map, Value, json};

/// What the endpoint says.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// Text or tool calls.
    pub content: Content,
    /// The model named back (the request's, or `clibench-scripted`).
    pub model: String,
    /// Tokens counted in the request (its body bytes / 4, at least 1).
    pub input_tokens: u64,
    /// An id unique to this endpoint's answers (the request number).
    pub id: u64,
}

/// The content of an answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// Text, as tokens (each token keeps the whitespace before it).
    Text(Vec<String>),
    /// Tool calls.
    Tools(Vec<Call>),
}

/// A tool call in the request's own terms.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The call id (`toolu_...`, `call_...`).
    pub id: String,
    /// The tool's name as advertised.
    pub name: String,
    /// The arguments as a JSON object, in the tool's own argument names.
    pub arguments: Value,
    /// A Responses freeform tool: `arguments` is a string `input`.
    pub freeform: bool,
}

impl Answer {
    /// Output tokens: text tokens, or the arguments' JSON length / 4 for tool calls.
    pub fn output_tokens(&self) -> u64 {
        match &self.content {
            Content::Text(tokens) => tokens.len() as u64,
            Content::Tools(calls) => calls
                .iter()
                .map(|call| arguments_tokens(&call.arguments_text()).len() as u64 + 1)
                .sum(),
        }
    }

    /// The whole text of a text answer.
    pub fn text(&self) -> String {
        match &self.content {
            Content::Text(tokens) => tokens.concat(),
            Content::Tools(_) => String::new(),
        }
    }
}

impl Call {
    /// The arguments as JSON text (a freeform tool's input as is).
    pub fn arguments_text(&self) -> String {
        match (&self.arguments, self.freeform) {
            (Value::String(input), true) => input.clone(),
            (arguments, _) => arguments.to_string(),
        }
    }
}

/// The names of shell tools in the agents, most specific first.
const SHELL_TOOLS: &[&str] = &[
    "Bash",
    "bash",
    "shell",
    "shell_command",
    "exec_command",
    "run_shell_command",
    "local_shell",
    "execute",
    "terminal",
];
const READ_TOOLS: &[&str] = &["Read", "read", "read_file", "view", "cat"];
const WRITE_TOOLS: &[&str] = &["Write", "write", "write_file", "create_file"];
const COMMAND_KEYS: &[&str] = &["command", "cmd", "commands", "script"];
const PATH_KEYS: &[&str] = &[
    "file_path",
    "filePath",
    "absolute_path",
    "path",
    "file",
    "filename",
];
const CONTENT_KEYS: &[&str] = &["content", "contents", "text", "file_text"];

/// How a scripted call became a call of the request's tools, for the journal.
#[derive(Debug, Clone, PartialEq)]
pub struct Mapped {
    /// The call as the request's tools take it.
    pub call: Call,
    /// Whether the request advertised the tool (otherwise a generic name was used).
    pub advertised: bool,
}

/// Maps a scripted tool call to the request's tools; `id` is the call's id.
pub fn map_call(call: &ToolCall, asked: &Asked, id: String) -> Mapped {
    let find = |names: &[&str]| -> Option<&Tool> {
        names
            .iter()
            .find_map(|name| asked.tools.iter().find(|tool| tool.name == *name))
    };
    let shell = |command: &str| -> Option<Mapped> {
        if let Some(tool) = find(SHELL_TOOLS) {
            return Some(Mapped {
                call: shell_call(tool, command, id.clone()),
                advertised: true,
            });
        }
        // codex's code mode: its only shell is `tools.exec_command` inside the freeform
        // `exec` tool, which runs JavaScript.
        let exec = asked
            .tools
            .iter()
            .find(|tool| tool.freeform && tool.name == "exec")?;
        Some(Mapped {
            call: Call {
                id: id.clone(),
                name: exec.name.clone(),
                arguments: Value::String(format!(
                    "const r = await tools.exec_command({{cmd: {}}});\ntext(r.output);\n",
                    Value::String(command.to_owned())
                )),
                freeform: true,
            },
            advertised: true,
        })
    };
    let generic = |name: &str, arguments: Value| Mapped {
        call: Call {
            id: id.clone(),
            name: name.to_owned(),
            arguments,
            freeform: false,
        },
        advertised: false,
    };
    match call {
        ToolCall::Shell(command) => {
            shell(command).unwrap_or_else(|| generic("shell", json!({"command": command})))
        }
        ToolCall::Read(path) => match find(READ_TOOLS) {
            Some(tool) => Mapped {
                call: filled(tool, &[(PATH_KEYS, path)], id.clone()),
                advertised: true,
            },
            None => shell(&format!("cat -- {}", quote(path)))
                .unwrap_or_else(|| generic("read_file", json!({"path": path}))),
        },
        ToolCall::Write { path, content } => match find(WRITE_TOOLS) {
            Some(tool) => Mapped {
                call: filled(
                    tool,
                    &[(PATH_KEYS, path), (CONTENT_KEYS, content)],
                    id.clone(),
                ),
                advertised: true,
            },
            None => shell(&format!("printf '%s' {} > {}", quote(content), quote(path)))
                .unwrap_or_else(|| {
                    generic("write_file", json!({"path": path, "content": content}))
                }),
        },
        ToolCall::Named { name, arguments } => {
            let tool = asked.tools.iter().find(|tool| tool.name == *name);
            Mapped {
                call: Call {
                    id,
                    name: name.clone(),
                    arguments: arguments.clone(),
                    freeform: tool.is_some_and(|t| t.freeform),
                },
                advertised: tool.is_some(),
            }
        }
    }
}

/// A shell call in the tool's own argument shape: its command property (an argv array
/// `["bash", "-lc", command]` when the schema wants an array), other required
/// properties filled from the schema.
fn shell_call(tool: &Tool, command: &str, id: String) -> Call {
    let properties = tool.parameters.get("properties").and_then(Value::as_object);
    let key = properties
        .and_then(|p| COMMAND_KEYS.iter().find(|key| p.contains_key(**key)))
        .copied()
        .unwrap_or("command");
    let wants_array = properties
        .and_then(|p| p.get(key))
        .and_then(|p| p.get("type"))
        .and_then(Value::as_str)
        == Some("array");
    let mut arguments = defaults(&tool.parameters);
    arguments.insert(
        key.to_owned(),
        if wants_array {
            json!(["bash", "-lc", command])
        } else {
            json!(command)
        },
    );
    if tool.freeform {
        return Call {
            id,
            name: tool.name.clone(),
            arguments: Value::String(command.to_owned()),
            freeform: true,
        };
    }
    Call {
        id,
        name: tool.name.clone(),
        arguments: Value::Object(arguments),
        freeform: false,
    }
}

/// A call of `tool` with each value under the first of its keys that the schema has.
fn filled(tool: &Tool, values: &[(&[&str], &String)], id: String) -> Call {
    let properties = tool.parameters.get("properties").and_then(Value::as_object);
    let mut arguments = defaults(&tool.parameters);
    for (keys, value) in values {
        let key = properties
            .and_then(|p| keys.iter().find(|key| p.contains_key(**key)))
            .copied()
            .unwrap_or(keys[0]);
        arguments.insert(key.to_owned(), json!(value));
    }
    Call {
        id,
        name: tool.name.clone(),
        arguments: Value::Object(arguments),
        freeform: false,
    }
}

/// The required properties of a tool's schema, filled with schema-valid values.
fn defaults(parameters: &Value) -> Map<String, Value> {
    if !parameters.is_object() {
        return Map::new();
    }
    // Only required properties: an optional one filled with a made-up value (a
    // timeout of 0, say) would change what the call does.
    let only_required = match parameters.get("required") {
        Some(Value::Array(required)) if !required.is_empty() => parameters.clone(),
        _ => return Map::new(),
    };
    match schema::value_for(&only_required) {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// `text` quoted for a POSIX shell.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_concatenate_to_the_text() {
        let text = "Hello  world,\nthis is\tit ";
        let tokens = tokens_of(text);
        assert_eq!(tokens.concat(), text);
        assert_eq!(tokens, ["Hello", "  world,", "\nthis", " is", "\tit", " "]);
        assert!(tokens_of("").is_empty());
    }

    #[test]
    fn filler_has_the_asked_length_and_is_the_same_every_time() {
        let tokens = filler(30);
        assert_eq!(tokens.len(), 30);
        assert_eq!(tokens, filler(30));
        let text = tokens.concat();
        assert!(text.starts_with("The "), "{text}");
        assert!(text.ends_with('.'), "{text}");
    }

    fn asked_with(tools: Vec<Tool>) -> Asked {
        Asked {
            tools,
            ..Asked::default()
        }
    }

    fn tool(name: &str, parameters: Value) -> Tool {
        Tool {
            name: name.into(),
            parameters,
            freeform: false,
        }
    }

    #[test]
    fn shell_maps_to_each_agents_shell_tool() {
        let claude = tool(
            "Bash",
            json!({"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"number"}},"required":["command"]}),
        );
        let opencode = tool(
            "bash",
            json!({"type":"object","properties":{"command":{"type":"string"},"description":{"type":"string"}},"required":["command","description"]}),
        );
        let codex = tool(
            "shell",
            json!({"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}},"required":["command"]}),
        );
        let ls = ToolCall::Shell("ls".into());
        let call = |t: Tool| map_call(&ls, &asked_with(vec![t]), "id".into());
        assert_eq!(call(claude).call.arguments, json!({"command": "ls"}));
        assert_eq!(
            call(opencode).call.arguments,
            json!({"command": "ls", "description": "clibench"})
        );
        let mapped = call(codex);
        assert_eq!(
            mapped.call.arguments,
            json!({"command": ["bash", "-lc", "ls"]})
        );
        assert!(mapped.advertised);
        let none = map_call(&ls, &asked_with(vec![]), "id".into());
        assert_eq!(none.call.name, "shell");
        assert!(!none.advertised);
    }

    #[test]
    fn read_uses_the_read_tool_or_cat_in_the_shell() {
        let read = ToolCall::Read("README.md".into());
        let gemini = tool(
            "read_file",
            json!({"type":"object","properties":{"absolute_path":{"type":"string"}},"required":["absolute_path"]}),
        );
        let mapped = map_call(&read, &asked_with(vec![gemini]), "id".into());
        assert_eq!(mapped.call.arguments, json!({"absolute_path": "README.md"}));
        let shell_only = tool(
            "exec_command",
            json!({"type":"object","properties":{"cmd":{"type":"string"}}}),
        );
        let mapped = map_call(&read, &asked_with(vec![shell_only]), "id".into());
        assert_eq!(mapped.call.arguments, json!({"cmd": "cat -- 'README.md'"}));
        let write = ToolCall::Write {
            path: "a b".into(),
            content: "it's".into(),
        };
        let pi_write = tool(
            "write",
            json!({"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}}}),
        );
        let mapped = map_call(&write, &asked_with(vec![pi_write]), "id".into());
        assert_eq!(
            mapped.call.arguments,
            json!({"path": "a b", "content": "it's"})
        );
    }

    #[test]
    fn codex_code_mode_runs_the_shell_through_exec() {
        let exec = Tool {
            name: "exec".into(),
            parameters: Value::Null,
            freeform: true,
        };
        let mapped = map_call(
            &ToolCall::Shell("ls -la".into()),
            &asked_with(vec![exec]),
            "call_1".into(),
        );
        assert!(mapped.call.freeform);
        assert_eq!(
            mapped.call.arguments,
            json!("const r = await tools.exec_command({cmd: \"ls -la\"});\ntext(r.output);\n")
        );
    }
}
