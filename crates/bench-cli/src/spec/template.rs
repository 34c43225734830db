//! Strings with placeholders: `{home}`, `{source}`, `{version}`, `{origin}`, ...
//!
//! A template is checked when the spec is read: an unknown placeholder or a lone
//! brace is an error naming the key. `{{` and `}}` stand for literal braces.
//! `{json:NAME}` is the value escaped as the inside of a JSON string literal.
//!
//! File contents (`[[install.write]] content`) are read by [`Template::parse_content`]:
//! there only `{name}` and `{json:name}` (a lowercase name) are placeholders and every
//! other brace is literal, so that JSON and TOML contents need no doubled braces.

use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;
use std::fmt;

/// A placeholder a template may use. `docs/spec.md` documents each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Placeholder {
    /// The trial user's home folder.
    Home,
    /// The trial user's name.
    User,
    /// The fixture workspace in the home.
    Workspace,
    /// The output folder (`--out`).
    Out,
    /// The checked-out source folder.
    Source,
    /// The folder holding the collected artifacts and `SHA256SUMS`.
    Artifacts,
    /// Where build steps run and leave their files when the spec has no `[source]`: a
    /// folder in the run's staging area (not under OUT, which may be private).
    Build,
    /// The spec's `version`.
    Version,
    /// The loopback URL that serves the artifacts (install only).
    Origin,
    /// A background session's id (`[measure] stop_session` only).
    Id,
    /// The trial's model endpoint: `http://127.0.0.1:PORT/m/TOKEN`, no `/v1` (with `[model]`).
    ModelUrl,
}

impl Placeholder {
    /// Every placeholder, in documentation order.
    pub const ALL: [Placeholder; 11] = [
        Placeholder::Home,
        Placeholder::User,
        Placeholder::Workspace,
        Placeholder::Out,
        Placeholder::Source,
        Placeholder::Build,
        Placeholder::Artifacts,
        Placeholder::Version,
        Placeholder::Origin,
        Placeholder::Id,
        Placeholder::ModelUrl,
    ];

    /// The name between the braces.
    pub fn name(self) -> &'static str {
        match self {
            Placeholder::Home => "home",
            Placeholder::User => "user",
            Placeholder::Workspace => "workspace",
            Placeholder::Out => "out",
            Placeholder::Source => "source",
            Placeholder::Build => "build",
            Placeholder::Artifacts => "artifacts",
            Placeholder::Version => "version",
            Placeholder::Origin => "origin",
            Placeholder::Id => "id",
            Placeholder::ModelUrl => "model_url",
        }
    }

    fn from_name(name: &str) -> Option<Placeholder> {
        Placeholder::ALL.into_iter().find(|p| p.name() == name)
    }
}

impl fmt::Display for Placeholder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{}}}", self.name())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Placeholder(Placeholder),
    /// `{json:name}`: the value escaped for the inside of a JSON string literal.
    Json(Placeholder),
}

/// Why a template in a spec does not parse. The spec reader adds the file, line and key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// A name between braces that is no placeholder.
    #[error("unknown placeholder '{{{name}}}' (known: {}, each also as {{json:NAME}}){}", known_placeholders(), literal_hint(*.in_content))]
    UnknownPlaceholder {
        /// The name as written, `json:` included.
        name: String,
        /// Whether it was in a file's content, where `{{NAME}}` writes a literal `{NAME}`.
        in_content: bool,
    },
    /// A `{` without its `}`.
    #[error("unclosed '{{' in \"{raw}\" (write '{{{{' for a literal brace)")]
    Unclosed {
        /// The whole template.
        raw: String,
    },
    /// A `}` without its `{`.
    #[error("unmatched '}}' in \"{raw}\" (write '}}}}' for a literal brace)")]
    Unmatched {
        /// The whole template.
        raw: String,
    },
}

/// In a file's content, how to write a literal `{NAME}` instead.
fn literal_hint(in_content: bool) -> &'static str {
    if in_content {
        "; write '{{NAME}}' for a literal '{NAME}'"
    } else {
        ""
    }
}

fn known_placeholders() -> String {
    let known: Vec<String> = Placeholder::ALL.iter().map(|p| p.to_string()).collect();
    known.join(", ")
}

/// The placeholder a name between braces stands for: `name` or `json:name`.
fn placeholder_piece(name: &str, in_content: bool) -> Result<Piece, TemplateError> {
    let (json, bare) = match name.strip_prefix("json:") {
        Some(bare) => (true, bare),
        None => (false, name),
    };
    let Some(placeholder) = Placeholder::from_name(bare) else {
        return Err(TemplateError::UnknownPlaceholder {
            name: name.to_owned(),
            in_content,
        });
    };
    Ok(if json {
        Piece::Json(placeholder)
    } else {
        Piece::Placeholder(placeholder)
    })
}

/// Whether `name` looks like a placeholder in file contents: a lowercase name,
/// optionally after `json:`.
fn looks_like_placeholder(name: &str) -> bool {
    let bare = name.strip_prefix("json:").unwrap_or(name);
    bare.starts_with(|c: char| c.is_ascii_lowercase())
        && bare
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// `value` escaped as the inside of a JSON string literal (no surrounding quotes).
fn json_escape(value: &str) -> String {
    let quoted = serde_json::Value::String(value.to_owned()).to_string();
    quoted[1..quoted.len() - 1].to_owned()
}

/// A string with placeholders, checked when read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    raw: String,
    pieces: Vec<Piece>,
}

impl Template {
    /// A template from a string; errors name the offending placeholder.
    pub fn parse(raw: &str) -> Result<Template, TemplateError> {
        let mut pieces = Vec::new();
        let mut text = String::new();
        let mut chars = raw.char_indices().peekable();
        while let Some((index, c)) = chars.next() {
            match c {
                '{' if chars.peek().map(|&(_, next)| next) == Some('{') => {
                    chars.next();
                    text.push('{');
                }
                '}' if chars.peek().map(|&(_, next)| next) == Some('}') => {
                    chars.next();
                    text.push('}');
                }
                '{' => {
                    let rest = &raw[index + 1..];
                    let Some(end) = rest.find('}') else {
                        return Err(TemplateError::Unclosed {
                            raw: raw.to_owned(),
                        });
                    };
                    let name = &rest[..end];
                    let piece = placeholder_piece(name, false)?;
                    if !text.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut text)));
                    }
                    pieces.push(piece);
                    for _ in 0..=end {
                        chars.next();
                    }
                }
                '}' => {
                    return Err(TemplateError::Unmatched {
                        raw: raw.to_owned(),
                    });
                }
                other => text.push(other),
            }
        }
        if !text.is_empty() {
            pieces.push(Piece::Text(text));
        }
        Ok(Template {
            raw: raw.to_owned(),
            pieces,
        })
    }

    /// A file's content: `{name}` and `{json:name}` (a lowercase name) are placeholders,
    /// `{{name}}` is the literal text `{name}`, and every other brace is literal, so JSON
    /// needs no escaping. An unknown lowercase name in braces is an error, as a typo would
    /// otherwise be written into the file unnoticed.
    pub fn parse_content(raw: &str) -> Result<Template, TemplateError> {
        let mut pieces = Vec::new();
        let mut text = String::new();
        let mut rest = raw;
        while let Some(start) = rest.find('{') {
            text.push_str(&rest[..start]);
            let after = &rest[start..];
            // `{{name}}`: the literal `{name}`.
            if let Some(inner) = after.strip_prefix("{{")
                && let Some(end) = inner.find("}}")
                && looks_like_placeholder(&inner[..end])
            {
                text.push('{');
                text.push_str(&inner[..end]);
                text.push('}');
                rest = &inner[end + 2..];
                continue;
            }
            if let Some(end) = after[1..].find('}')
                && looks_like_placeholder(&after[1..1 + end])
            {
                let piece = placeholder_piece(&after[1..1 + end], true)?;
                if !text.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut text)));
                }
                pieces.push(piece);
                rest = &after[end + 2..];
                continue;
            }
            text.push('{');
            rest = &after[1..];
        }
        text.push_str(rest);
        if !text.is_empty() {
            pieces.push(Piece::Text(text));
        }
        Ok(Template {
            raw: raw.to_owned(),
            pieces,
        })
    }

    /// A template without placeholders.
    pub fn literal(text: &str) -> Template {
        Template {
            raw: text.replace('{', "{{").replace('}', "}}"),
            pieces: vec![Piece::Text(text.to_owned())],
        }
    }

    /// The text as written in the spec.
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// The placeholders this template uses.
    pub fn placeholders(&self) -> impl Iterator<Item = Placeholder> + '_ {
        self.pieces.iter().filter_map(|piece| match piece {
            Piece::Placeholder(p) | Piece::Json(p) => Some(*p),
            Piece::Text(_) => None,
        })
    }

    /// Replaces every placeholder by its value.
    pub fn expand(&self, values: &Values) -> Result<String, ExpandError> {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => out.push_str(text),
                Piece::Placeholder(p) | Piece::Json(p) => match values.0.get(p) {
                    Some(value) if matches!(piece, Piece::Json(_)) => {
                        out.push_str(&json_escape(value))
                    }
                    Some(value) => out.push_str(value),
                    None => {
                        return Err(ExpandError {
                            placeholder: *p,
                            template: self.raw.clone(),
                        });
                    }
                },
            }
        }
        Ok(out)
    }
}

impl fmt::Display for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

impl<'de> Deserialize<'de> for Template {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        Template::parse(&raw).map_err(serde::de::Error::custom)
    }
}

/// Reads a file's content with [`Template::parse_content`] (`[[install.write]] content`).
pub(super) fn deserialize_content<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Template, D::Error> {
    let raw = String::deserialize(deserializer)?;
    Template::parse_content(&raw).map_err(serde::de::Error::custom)
}

/// A placeholder had no value where the template was expanded.
#[derive(Debug, Clone, thiserror::Error)]
#[error("placeholder {placeholder} has no value here (in \"{template}\")")]
pub struct ExpandError {
    /// The placeholder without a value.
    pub placeholder: Placeholder,
    /// The template as written.
    pub template: String,
}

/// The values of the placeholders at one point of the pipeline.
#[derive(Debug, Clone, Default)]
pub struct Values(BTreeMap<Placeholder, String>);

impl Values {
    /// Sets one placeholder's value.
    pub fn set(&mut self, placeholder: Placeholder, value: impl Into<String>) -> &mut Self {
        self.0.insert(placeholder, value.into());
        self
    }

    /// A copy with one more value.
    pub fn with(&self, placeholder: Placeholder, value: impl Into<String>) -> Values {
        let mut copy = self.clone();
        copy.set(placeholder, value);
        copy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_expand_and_braces_escape() {
        let template = Template::parse("{home}/x-{version}.json {{\"a\": 1}}").unwrap();
        let mut values = Values::default();
        values
            .set(Placeholder::Home, "/home/u")
            .set(Placeholder::Version, "1.0");
        assert_eq!(
            template.expand(&values).unwrap(),
            "/home/u/x-1.0.json {\"a\": 1}"
        );
    }

    #[test]
    fn unknown_placeholder_is_refused_with_the_known_list() {
        let error = Template::parse("{hoem}/bin").unwrap_err();
        assert_eq!(
            error,
            TemplateError::UnknownPlaceholder {
                name: "hoem".to_owned(),
                in_content: false
            }
        );
        let error = error.to_string();
        assert!(error.starts_with("unknown placeholder '{hoem}'"), "{error}");
        assert!(error.contains("{home}"), "{error}");
    }

    #[test]
    fn lone_braces_are_refused() {
        assert!(matches!(
            Template::parse("{home"),
            Err(TemplateError::Unclosed { .. })
        ));
        assert!(matches!(
            Template::parse("home}"),
            Err(TemplateError::Unmatched { .. })
        ));
    }

    #[test]
    fn missing_value_names_the_placeholder() {
        let template = Template::parse("{origin}/x").unwrap();
        let error = template.expand(&Values::default()).unwrap_err();
        assert_eq!(error.placeholder, Placeholder::Origin);
    }

    fn values() -> Values {
        let mut values = Values::default();
        values
            .set(Placeholder::Home, "/home/u")
            .set(Placeholder::Workspace, "/home/u/my \"ws\"\\x")
            .set(Placeholder::Version, "1.0");
        values
    }

    #[test]
    fn json_placeholders_escape_for_a_json_string() {
        let template = Template::parse("{json:workspace}").unwrap();
        assert_eq!(
            template.expand(&values()).unwrap(),
            "/home/u/my \\\"ws\\\"\\\\x"
        );
        let content = Template::parse_content("{\"p\": \"{json:workspace}\"}").unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&content.expand(&values()).unwrap()).unwrap();
        assert_eq!(json["p"], "/home/u/my \"ws\"\\x");
    }

    #[test]
    fn content_keeps_json_braces_and_expands_placeholders() {
        let content = Template::parse_content(
            "{\"a\": {\"b\": 1}, \"home\": \"{home}\", \"v\": \"{version}\"}\n[{}]",
        )
        .unwrap();
        assert_eq!(
            content.expand(&values()).unwrap(),
            "{\"a\": {\"b\": 1}, \"home\": \"/home/u\", \"v\": \"1.0\"}\n[{}]"
        );
        let placeholders: Vec<Placeholder> = content.placeholders().collect();
        assert_eq!(placeholders, [Placeholder::Home, Placeholder::Version]);
    }

    #[test]
    fn content_writes_a_literal_placeholder_with_doubled_braces() {
        let content = Template::parse_content("{{home}} and {home}").unwrap();
        assert_eq!(content.expand(&values()).unwrap(), "{home} and /home/u");
    }

    #[test]
    fn content_refuses_an_unknown_lowercase_placeholder() {
        let error = Template::parse_content("dir = \"{worksapce}\"")
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("unknown placeholder '{worksapce}'"),
            "{error}"
        );
        assert!(error.contains("{{NAME}}"), "{error}");
        assert!(Template::parse("{json:nope}").is_err());
    }

    #[test]
    fn literal_keeps_braces() {
        let template = Template::literal("{x}");
        assert_eq!(template.expand(&Values::default()).unwrap(), "{x}");
        assert_eq!(Template::parse(template.raw()).unwrap(), template);
    }
}
