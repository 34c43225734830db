//! What a request asks, read from its method, path and body: which dialect, which
//! model, whether it streams, the tools it advertises, whether it carries tool results,
//! its last user message and any response schema. Pure functions over the request's
//! parts, so every dialect is tested on recorded bodies without a socket.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::BTreeMap;

/// The API dialects the endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    /// Anthropic Messages (`POST /v1/messages`): claude-code, pi, opencode.
    Anthropic,
    /// OpenAI Responses (`POST /v1/responses`): codex.
    OpenaiResponses,
    /// OpenAI Chat Completions (`POST /v1/chat/completions`).
    OpenaiChat,
    /// Gemini (`POST /v1beta/models/M:generateContent`, `:streamGenerateContent`): gemini-cli.
    Gemini,
}

impl Dialect {
    /// The name used in the journal.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Anthropic => "anthropic",
            Dialect::OpenaiResponses => "openai_responses",
            Dialect::OpenaiChat => "openai_chat",
            Dialect::Gemini => "gemini",
        }
    }
}

/// Where a request goes, from its method, path and headers alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// A model call: generate an answer.
    Generate {
        /// Its dialect.
        dialect: Dialect,
        /// Gemini names the model and streaming in the path.
        gemini: Option<GeminiPath>,
    },
    /// A token count (`/v1/messages/count_tokens`, Gemini `:countTokens`).
    CountTokens(Dialect),
    /// A model list (`GET /v1/models`, `GET /v1beta/models`).
    Models(Dialect),
    /// `HEAD /` or `GET /`: a client checking that the endpoint answers.
    Root,
    /// codex's websocket `GET /v1/responses`: refused so that it uses HTTPS at once.
    Websocket,
    /// Anything else, and why it is not understood.
    Unknown(String),
}

/// What a Gemini path says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeminiPath {
    /// The model named in the path.
    pub model: String,
    /// `:streamGenerateContent` rather than `:generateContent`.
    pub stream: bool,
    /// `alt=sse` in the query: server-sent events rather than a streamed JSON array.
    pub sse: bool,
}

/// The route of a request. `path` is without the query; `anthropic` says whether an
/// `anthropic-version` header came (to answer a model list in Anthropic's shape).
pub fn route(method: &str, path: &str, query: &str, websocket: bool, anthropic: bool) -> Route {
    let path = path.trim_end_matches('/');
    let is = |suffix: &str| path.ends_with(suffix);
    match method {
        "HEAD" | "GET" if path.is_empty() => Route::Root,
        "GET" if websocket => Route::Websocket,
        "GET" if is("/models") => Route::Models(if anthropic {
            Dialect::Anthropic
        } else if path.contains("/v1beta") || path.contains("/v1alpha") {
            Dialect::Gemini
        } else {
            Dialect::OpenaiChat
        }),
        "POST" if is("/messages/count_tokens") => Route::CountTokens(Dialect::Anthropic),
        "POST" if is("/messages") => Route::Generate {
            dialect: Dialect::Anthropic,
            gemini: None,
        },
        "POST" if is("/responses") => Route::Generate {
            dialect: Dialect::OpenaiResponses,
            gemini: None,
        },
        "POST" if is("/chat/completions") => Route::Generate {
            dialect: Dialect::OpenaiChat,
            gemini: None,
        },
        "POST" if path.contains("/models/") => {
            let Some((model_path, method_name)) = path.rsplit_once(':') else {
                return Route::Unknown(format!("no `:method` in the Gemini path {path}"));
            };
            let model = model_path.rsplit('/').next().unwrap_or_default().to_owned();
            let sse = query.split('&').any(|pair| pair == "alt=sse");
            match method_name {
                "generateContent" => Route::Generate {
                    dialect: Dialect::Gemini,
                    gemini: Some(GeminiPath {
                        model,
                        stream: false,
                        sse,
                    }),
                },
                "streamGenerateContent" => Route::Generate {
                    dialect: Dialect::Gemini,
                    gemini: Some(GeminiPath {
                        model,
                        stream: true,
                        sse,
                    }),
                },
                "countTokens" => Route::CountTokens(Dialect::Gemini),
                other => Route::Unknown(format!("Gemini method `{other}` is not served")),
            }
        }
        _ => Route::Unknown(format!("no route for {method} {}", path_or_root(path))),
    }
}

fn path_or_root(path: &str) -> &str {
    if path.is_empty() { "/" } else { path }
}

/// A tool the request advertises.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    /// Its name, which a scripted call is matched against.
    pub name: String,
    /// The JSON schema of its arguments (`{}` when it has none).
    pub parameters: Value,
    /// A Responses "custom" (freeform) tool, called with a text `input`.
    pub freeform: bool,
}

/// What a model call asks, in any dialect.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Asked {
    /// The model named in the body (or the Gemini path).
    pub model: Option<String>,
    /// Whether the answer streams.
    pub stream: bool,
    /// Chat Completions: `stream_options.include_usage`.
    pub include_usage: bool,
    /// The tools advertised.
    pub tools: Vec<Tool>,
    /// The last message carries tool results.
    pub tool_results: bool,
    /// The text of the last user message (every text part of it, joined by newlines).
    pub last_user_text: String,
    /// The system prompt's text.
    pub system_text: String,
    /// A JSON schema the answer must follow (structured output).
    pub schema: Option<Value>,
    /// JSON asked for without a schema (`json_object`, `application/json`).
    pub json: bool,
    /// `max_tokens` or its dialect's equivalent.
    pub max_tokens: Option<u64>,
}

/// A body that is not a model call of its dialect.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AskError {
    /// Not JSON.
    #[error("the body is not JSON: {0}")]
    NotJson(String),
    /// JSON, but a required field is missing or has the wrong type.
    #[error("{0}")]
    Shape(String),
}

/// Reads a model call's body in `dialect`.
///
/// The conversation (`messages`, `input`, `contents`) is the whole session so far, sent
/// again with every request: a megabyte after a thousand turns of a soak. It is split
/// into its items as raw JSON and only the few items the answer depends on (the last
/// ones, the system messages) are built into values; the rest of the body (tools,
/// settings) is small and read whole. Building the whole conversation into a `Value`
/// took a few times its size in allocations on every request, which is what clibench
/// spent most of its endpoint's time and memory on in a long session.
pub fn read(dialect: Dialect, gemini: Option<&GeminiPath>, body: &[u8]) -> Result<Asked, AskError> {
    let key = match dialect {
        Dialect::Anthropic | Dialect::OpenaiChat => "messages",
        Dialect::OpenaiResponses => "input",
        Dialect::Gemini => "contents",
    };
    let (rest, conversation) = split(body, key)?;
    match dialect {
        Dialect::Anthropic => read_anthropic(&rest, conversation),
        Dialect::OpenaiResponses => read_responses(&rest, conversation),
        Dialect::OpenaiChat => read_chat(&rest, conversation),
        Dialect::Gemini => read_gemini(&rest, conversation, gemini),
    }
}

/// A body's conversation field, kept raw.
enum Conversation<'a> {
    /// An array: its items, each still raw JSON.
    Items(Vec<&'a RawValue>),
    /// Anything else (the Responses API's `input` may be a plain string), read whole.
    Other(Value),
}

/// The body's fields but `key`, read whole, and `key`'s value kept raw.
fn split<'a>(body: &'a [u8], key: &str) -> Result<(Value, Option<Conversation<'a>>), AskError> {
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let fields = serde::Deserializer::deserialize_map(&mut deserializer, FieldsVisitor { key })
        .and_then(|fields| deserializer.end().map(|()| fields))
        .map_err(|error| match error.classify() {
            // Valid JSON of another shape (an array, a number): not an object.
            serde_json::error::Category::Data => {
                AskError::Shape("the body is not a JSON object".to_owned())
            }
            _ => AskError::NotJson(error.to_string()),
        })?;
    let rest = fields
        .rest
        .into_iter()
        .map(|(name, raw)| (name, whole(raw)))
        .collect();
    Ok((Value::Object(rest), fields.conversation))
}

/// A body's top-level fields: `key`'s value split into its items as it is read, the
/// others kept raw. A soak's conversation is most of the body, and reading it raw first
/// and then again for its items scanned it twice on every request: a fifth of
/// clibench's CPU after 650 turns of the demo.
struct Fields<'a> {
    rest: BTreeMap<String, &'a RawValue>,
    conversation: Option<Conversation<'a>>,
}

struct FieldsVisitor<'k> {
    key: &'k str,
}

impl<'de> serde::de::Visitor<'de> for FieldsVisitor<'_> {
    type Value = Fields<'de>;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Fields<'de>, A::Error> {
        let mut fields = Fields {
            rest: BTreeMap::new(),
            conversation: None,
        };
        // A field given twice counts as its last, as a map read whole keeps it.
        while let Some(name) = map.next_key::<String>()? {
            if name == self.key {
                fields.conversation = Some(map.next_value_seed(ConversationSeed)?);
            } else {
                fields.rest.insert(name, map.next_value()?);
            }
        }
        Ok(fields)
    }
}

/// A conversation field read once: an array into its raw items, anything else whole.
struct ConversationSeed;

impl<'de> serde::de::DeserializeSeed<'de> for ConversationSeed {
    type Value = Conversation<'de>;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(ConversationVisitor)
    }
}

struct ConversationVisitor;

impl<'de> serde::de::Visitor<'de> for ConversationVisitor {
    type Value = Conversation<'de>;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<&'de RawValue>()? {
            items.push(item);
        }
        Ok(Conversation::Items(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let value = Value::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
        Ok(Conversation::Other(value))
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Self::Value, E> {
        Ok(Conversation::Other(Value::String(text.to_owned())))
    }

    fn visit_bool<E: serde::de::Error>(self, flag: bool) -> Result<Self::Value, E> {
        Ok(Conversation::Other(Value::Bool(flag)))
    }

    fn visit_i64<E: serde::de::Error>(self, number: i64) -> Result<Self::Value, E> {
        Ok(Conversation::Other(Value::from(number)))
    }

    fn visit_u64<E: serde::de::Error>(self, number: u64) -> Result<Self::Value, E> {
        Ok(Conversation::Other(Value::from(number)))
    }

    fn visit_f64<E: serde::de::Error>(self, number: f64) -> Result<Self::Value, E> {
        Ok(Conversation::Other(Value::from(number)))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(Conversation::Other(Value::Null))
    }
}

/// A raw JSON value read whole. The body was valid JSON, so every part of it is.
fn whole(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

/// The fields of a conversation item that say what it is, read without building the
/// rest of it (its content is skipped).
#[derive(Default, serde::Deserialize)]
struct Head {
    role: Option<Value>,
    #[serde(rename = "type")]
    kind: Option<Value>,
}

impl Head {
    fn of(raw: &RawValue) -> Head {
        // An item that is not an object (or repeats a field) says nothing of itself, as
        // `Value::get` said nothing of it.
        serde_json::from_str(raw.get()).unwrap_or_default()
    }

    fn role(&self) -> Option<&str> {
        self.role.as_ref().and_then(Value::as_str)
    }

    fn kind(&self) -> Option<&str> {
        self.kind.as_ref().and_then(Value::as_str)
    }
}

fn role_of(raw: &RawValue) -> String {
    Head::of(raw).role().unwrap_or("").to_owned()
}

/// What the person typed in a user message: its last text block that is not an agent's
/// wrapper. Agents put their own wrappers in the same message, before the prompt
/// (claude-code's `<system-reminder>`, gemini-cli's `<session_context>` with a folder tree)
/// or after it (Kilo's `<environment_details>` with the time and the folder), and a script's
/// `when` regex must match the prompt, not a word of the wrapper. A message made only of
/// wrappers gives its last one.
fn typed_text_of(value: &Value) -> String {
    match value {
        Value::Array(parts) => {
            let texts: Vec<String> = parts
                .iter()
                .map(|part| text_of(&Value::Array(vec![part.clone()])))
                .filter(|text| !text.trim().is_empty())
                .collect();
            let typed = texts.iter().rev().find(|text| !is_wrapper(text));
            typed.or(texts.last()).cloned().unwrap_or_default()
        }
        other => text_of(other),
    }
}

/// A text block that is one tag from start to end (`<environment_details>...
/// </environment_details>`, surrounding whitespace aside): what agents wrap their own context
/// in, never what a person types at the prompt.
fn is_wrapper(text: &str) -> bool {
    let text = text.trim();
    let Some((name, _)) = text.strip_prefix('<').and_then(|rest| rest.split_once('>')) else {
        return false;
    };
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && text.ends_with(&format!("</{name}>"))
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| match part {
                Value::String(text) => Some(text.clone()),
                Value::Object(object) => {
                    let kind = object.get("type").and_then(Value::as_str).unwrap_or("text");
                    matches!(kind, "text" | "input_text" | "output_text")
                        .then(|| object.get("text").and_then(Value::as_str))
                        .flatten()
                        .map(str::to_owned)
                }
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn array<'a>(value: &'a Value, key: &str) -> Result<&'a [Value], AskError> {
    match value.get(key) {
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(AskError::Shape(format!("`{key}` is not an array"))),
        None => Ok(&[]),
    }
}

fn str_field(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn read_anthropic(body: &Value, conversation: Option<Conversation>) -> Result<Asked, AskError> {
    let Some(Conversation::Items(messages)) = conversation else {
        return Err(AskError::Shape(
            "`messages` is missing or not an array".to_owned(),
        ));
    };
    // claude-code puts `role: system` messages after the user's: the conversation's
    // state is in the last user or assistant message.
    let last = messages
        .iter()
        .rev()
        .find(|m| matches!(role_of(m).as_str(), "user" | "assistant"));
    let tool_results = last.is_some_and(|message| {
        let message = whole(message);
        message.get("role").and_then(Value::as_str) == Some("user")
            && message
                .get("content")
                .and_then(Value::as_array)
                .is_some_and(|blocks| {
                    blocks
                        .iter()
                        .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
                })
    });
    let last_user_text = messages
        .iter()
        .rev()
        .filter(|m| role_of(m) == "user")
        .map(|m| typed_text_of(whole(m).get("content").unwrap_or(&Value::Null)))
        .find(|text| !text.is_empty())
        .unwrap_or_default();
    let tools = array(body, "tools")?
        .iter()
        .filter_map(|tool| {
            Some(Tool {
                name: str_field(tool, "name")?,
                parameters: tool.get("input_schema").cloned().unwrap_or(Value::Null),
                freeform: false,
            })
        })
        .collect();
    // Structured output: `output_config.format` (claude-code's title request) or the
    // older `output_format`.
    let schema = [
        body.get("output_config").and_then(|c| c.get("format")),
        body.get("output_format"),
    ]
    .into_iter()
    .flatten()
    .find(|f| f.get("type").and_then(Value::as_str) == Some("json_schema"))
    .and_then(|f| f.get("schema"))
    .cloned();
    Ok(Asked {
        model: str_field(body, "model"),
        stream: body.get("stream").and_then(Value::as_bool).unwrap_or(false),
        include_usage: true,
        tools,
        tool_results,
        last_user_text,
        system_text: text_of(body.get("system").unwrap_or(&Value::Null)),
        schema,
        json: false,
        max_tokens: body.get("max_tokens").and_then(Value::as_u64),
    })
}

/// A Responses tool (`function`, `custom`, `local_shell`), or the tools of a
/// `namespace` (codex's code mode nests them so).
fn responses_tools(tool: &Value, out: &mut Vec<Tool>) {
    let kind = tool
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("function");
    if kind == "namespace" {
        for nested in tool
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            responses_tools(nested, out);
        }
        return;
    }
    let name = str_field(tool, "name").or_else(|| (kind == "local_shell").then(|| kind.to_owned()));
    if let Some(name) = name {
        out.push(Tool {
            name,
            parameters: tool.get("parameters").cloned().unwrap_or(Value::Null),
            freeform: kind == "custom",
        });
    }
}

fn read_responses(body: &Value, conversation: Option<Conversation>) -> Result<Asked, AskError> {
    let (items, typed) = match conversation {
        Some(Conversation::Other(Value::String(text))) => (Vec::new(), Some(text)),
        Some(Conversation::Items(items)) => (items, None),
        Some(Conversation::Other(_)) => {
            return Err(AskError::Shape(
                "`input` is neither text nor an array".to_owned(),
            ));
        }
        None => return Err(AskError::Shape("`input` is missing".to_owned())),
    };
    let kind = |item: &RawValue| Head::of(item).kind().unwrap_or("message").to_owned();
    let last_user_text = match typed {
        Some(text) => text,
        None => items
            .iter()
            .rev()
            .filter(|item| kind(item) == "message" && role_of(item) == "user")
            .map(|item| typed_text_of(whole(item).get("content").unwrap_or(&Value::Null)))
            .find(|text| !text.is_empty())
            .unwrap_or_default(),
    };
    // codex appends `configuration_update` items and keeps an `additional_tools` item:
    // neither is part of the conversation.
    let last = items.iter().rev().find(|item| {
        !matches!(
            kind(item).as_str(),
            "configuration_update" | "additional_tools" | "reasoning"
        )
    });
    let tool_results = last.is_some_and(|item| kind(item).ends_with("_call_output"));
    let mut tools = Vec::new();
    for tool in array(body, "tools")? {
        responses_tools(tool, &mut tools);
    }
    for item in items.iter().filter(|item| kind(item) == "additional_tools") {
        let item = whole(item);
        for tool in item
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            responses_tools(tool, &mut tools);
        }
    }
    let mut system_text = str_field(body, "instructions").unwrap_or_default();
    if system_text.is_empty() {
        system_text = items
            .iter()
            .filter(|item| {
                kind(item) == "message" && matches!(role_of(item).as_str(), "developer" | "system")
            })
            .map(|item| text_of(whole(item).get("content").unwrap_or(&Value::Null)))
            .collect::<Vec<_>>()
            .join("\n");
    }
    let format = body.get("text").and_then(|t| t.get("format"));
    let format_kind = format.and_then(|f| f.get("type")).and_then(Value::as_str);
    Ok(Asked {
        model: str_field(body, "model"),
        stream: body.get("stream").and_then(Value::as_bool).unwrap_or(false),
        include_usage: true,
        tools,
        tool_results,
        last_user_text,
        system_text,
        schema: (format_kind == Some("json_schema"))
            .then(|| format.and_then(|f| f.get("schema")).cloned())
            .flatten(),
        json: format_kind == Some("json_object"),
        max_tokens: body.get("max_output_tokens").and_then(Value::as_u64),
    })
}

fn read_chat(body: &Value, conversation: Option<Conversation>) -> Result<Asked, AskError> {
    let Some(Conversation::Items(messages)) = conversation else {
        return Err(AskError::Shape(
            "`messages` is missing or not an array".to_owned(),
        ));
    };
    let role = |m: &RawValue| Head::of(m).role().map(str::to_owned);
    let tool_results = messages
        .last()
        .is_some_and(|m| matches!(role(m).as_deref(), Some("tool" | "function")));
    let last_user_text = messages
        .iter()
        .rev()
        .find(|m| role(m).as_deref() == Some("user"))
        .map(|m| typed_text_of(whole(m).get("content").unwrap_or(&Value::Null)))
        .unwrap_or_default();
    let system_text = messages
        .iter()
        .filter(|m| matches!(role(m).as_deref(), Some("system" | "developer")))
        .map(|m| text_of(whole(m).get("content").unwrap_or(&Value::Null)))
        .collect::<Vec<_>>()
        .join("\n");
    let tools = array(body, "tools")?
        .iter()
        .filter_map(|tool| {
            let function = tool.get("function")?;
            Some(Tool {
                name: str_field(function, "name")?,
                parameters: function.get("parameters").cloned().unwrap_or(Value::Null),
                freeform: false,
            })
        })
        .collect();
    let format = body.get("response_format");
    let format_kind = format.and_then(|f| f.get("type")).and_then(Value::as_str);
    Ok(Asked {
        model: str_field(body, "model"),
        stream: body.get("stream").and_then(Value::as_bool).unwrap_or(false),
        include_usage: body
            .get("stream_options")
            .and_then(|o| o.get("include_usage"))
            .and_then(Value::as_bool)
            .unwrap_or(false),
        tools,
        tool_results,
        last_user_text,
        system_text,
        schema: (format_kind == Some("json_schema"))
            .then(|| {
                format
                    .and_then(|f| f.get("json_schema"))
                    .and_then(|j| j.get("schema"))
                    .cloned()
            })
            .flatten(),
        json: format_kind == Some("json_object"),
        max_tokens: body
            .get("max_completion_tokens")
            .or_else(|| body.get("max_tokens"))
            .and_then(Value::as_u64),
    })
}

fn read_gemini(
    body: &Value,
    conversation: Option<Conversation>,
    path: Option<&GeminiPath>,
) -> Result<Asked, AskError> {
    let Some(Conversation::Items(contents)) = conversation else {
        return Err(AskError::Shape(
            "`contents` is missing or not an array".to_owned(),
        ));
    };
    let parts_of = |content: &Value| -> Vec<Value> {
        content
            .get("parts")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let tool_results = contents.last().is_some_and(|content| {
        parts_of(&whole(content))
            .iter()
            .any(|part| part.get("functionResponse").is_some())
    });
    let last_user_text = contents
        .iter()
        .rev()
        .filter(|c| Head::of(c).role().unwrap_or("user") == "user")
        .map(|c| parts_of(&whole(c)))
        .find(|parts| parts.iter().any(|p| p.get("text").is_some()))
        .map(|parts| typed_text_of(&Value::Array(parts)))
        .unwrap_or_default();
    let system_text = body
        .get("systemInstruction")
        .map(|s| text_of(&Value::Array(parts_of(s))))
        .unwrap_or_default();
    let mut tools = Vec::new();
    for group in array(body, "tools")? {
        for declaration in array(group, "functionDeclarations")? {
            if let Some(name) = str_field(declaration, "name") {
                tools.push(Tool {
                    name,
                    parameters: declaration
                        .get("parametersJsonSchema")
                        .or_else(|| declaration.get("parameters"))
                        .cloned()
                        .unwrap_or(Value::Null),
                    freeform: false,
                });
            }
        }
    }
    let config = body.get("generationConfig");
    let json = config
        .and_then(|c| c.get("responseMimeType"))
        .and_then(Value::as_str)
        == Some("application/json");
    let schema = config
        .and_then(|c| {
            c.get("responseJsonSchema")
                .or_else(|| c.get("responseSchema"))
        })
        .cloned();
    Ok(Asked {
        model: path.map(|p| p.model.clone()),
        stream: path.is_some_and(|p| p.stream),
        include_usage: true,
        tools,
        tool_results,
        last_user_text,
        system_text,
        schema: if json { schema } else { None },
        json,
        max_tokens: config
            .and_then(|c| c.get("maxOutputTokens"))
            .and_then(Value::as_u64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_is_the_last_text_block_not_the_agents_wrapper_before_it() {
        let anthropic = br#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[
            {"type":"text","text":"<system-reminder>list of files</system-reminder>"},
            {"type":"text","text":"say hello"}]}]}"#;
        let asked = read(Dialect::Anthropic, None, anthropic).unwrap();
        assert_eq!(asked.last_user_text, "say hello");
        let gemini = br#"{"contents":[{"role":"user","parts":[
            {"text":"<session_context> files: README.md </session_context>"},
            {"text":"say hello"}]}]}"#;
        let path = GeminiPath {
            model: "g".to_owned(),
            stream: false,
            sse: false,
        };
        let asked = read(Dialect::Gemini, Some(&path), gemini).unwrap();
        assert_eq!(asked.last_user_text, "say hello");
    }

    #[test]
    fn the_prompt_is_not_the_agents_wrapper_after_it() {
        // Kilo 7.7's user message: the prompt, then its environment details.
        let anthropic = br#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[
            {"type":"text","text":"say hello"},
            {"type":"text","text":"\n\n<environment_details>\nMessage time: 2026-12-02T19:28:26Z\nWorking directory: /w\n</environment_details>","cache_control":{"type":"ephemeral"}}]}]}"#;
        let asked = read(Dialect::Anthropic, None, anthropic).unwrap();
        assert_eq!(asked.last_user_text, "say hello");
        // A message of wrappers only still has a text, the last.
        let only = br#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[
            {"type":"text","text":"<a>one</a>"},{"type":"text","text":"<b>two</b>"}]}]}"#;
        let asked = read(Dialect::Anthropic, None, only).unwrap();
        assert_eq!(asked.last_user_text, "<b>two</b>");
        // A prompt that starts with a tag but is more than it is the prompt.
        let typed = br#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[
            {"type":"text","text":"<b>bold</b> list the files"}]}]}"#;
        let asked = read(Dialect::Anthropic, None, typed).unwrap();
        assert_eq!(asked.last_user_text, "<b>bold</b> list the files");
    }

    #[test]
    fn routes_of_the_agents_paths() {
        let generate = |dialect| Route::Generate {
            dialect,
            gemini: None,
        };
        assert_eq!(route("HEAD", "/", "", false, false), Route::Root);
        assert_eq!(
            route("POST", "/v1/messages", "beta=true", false, true),
            generate(Dialect::Anthropic)
        );
        assert_eq!(
            route(
                "POST",
                "/v1/messages/count_tokens",
                "beta=true",
                false,
                true
            ),
            Route::CountTokens(Dialect::Anthropic)
        );
        assert_eq!(
            route("GET", "/v1/responses", "", true, false),
            Route::Websocket
        );
        assert_eq!(
            route("POST", "/v1/responses", "", false, false),
            generate(Dialect::OpenaiResponses)
        );
        assert_eq!(
            route("POST", "/v1/chat/completions", "", false, false),
            generate(Dialect::OpenaiChat)
        );
        assert_eq!(
            route(
                "POST",
                "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
                "alt=sse",
                false,
                false
            ),
            Route::Generate {
                dialect: Dialect::Gemini,
                gemini: Some(GeminiPath {
                    model: "gemini-2.5-flash".into(),
                    stream: true,
                    sse: true
                })
            }
        );
        assert_eq!(
            route("GET", "/v1/models", "", false, true),
            Route::Models(Dialect::Anthropic)
        );
        assert_eq!(
            route("GET", "/v1beta/models", "", false, false),
            Route::Models(Dialect::Gemini)
        );
        assert_eq!(
            route("DELETE", "/v1/messages", "", false, false),
            Route::Unknown("no route for DELETE /v1/messages".into())
        );
    }

    #[test]
    fn a_body_that_is_not_json_or_lacks_messages_is_refused() {
        assert!(matches!(
            read(Dialect::Anthropic, None, b"{nope"),
            Err(AskError::NotJson(_))
        ));
        assert_eq!(
            read(Dialect::OpenaiChat, None, b"{}"),
            Err(AskError::Shape(
                "`messages` is missing or not an array".into()
            ))
        );
    }

    #[test]
    fn the_conversation_is_split_into_its_items_as_the_body_is_read() {
        let body = br#"{"model": "m", "messages": [{"role": "system", "content": "s"},
            {"role": "user", "content": [{"type": "text", "text": "hi \"there\""}]}],
            "stream": true, "model": "last"}"#;
        let (rest, conversation) = split(body, "messages").unwrap();
        // A field given twice is its last, as a map read whole keeps it.
        assert_eq!(rest, serde_json::json!({"model": "last", "stream": true}));
        let Some(Conversation::Items(items)) = conversation else {
            panic!("an array is split into items");
        };
        let roles: Vec<String> = items.iter().map(|item| role_of(item)).collect();
        assert_eq!(roles, ["system", "user"]);
        assert!(items[1].get().contains(r#""hi \"there\"""#));
        // Anything but an array is read whole.
        let (_, other) = split(br#"{"input": "just text"}"#, "input").unwrap();
        assert!(matches!(other, Some(Conversation::Other(Value::String(t))) if t == "just text"));
        let (_, other) = split(br#"{"input": {"a": [1]}}"#, "input").unwrap();
        assert!(
            matches!(other, Some(Conversation::Other(v)) if v == serde_json::json!({"a": [1]}))
        );
        // Not an object, or more after it: refused as before.
        assert!(matches!(split(b"[1]", "messages"), Err(AskError::Shape(_))));
        assert!(matches!(
            split(b"{} {}", "messages"),
            Err(AskError::NotJson(_))
        ));
    }
}
