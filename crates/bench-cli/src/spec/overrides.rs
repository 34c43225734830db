//! `--set KEY=VALUE`: changing a spec's keys from the command line.
//!
//! KEY is a dotted path into the spec (`version`, `source.commit`, `measure.env.FOO`,
//! `build[0].timeout`); VALUE is a TOML value when it parses as one (`90`, `true`,
//! `["a", "b"]`, `{ A = "1" }`, `"quoted"`), otherwise the text itself as a string
//! (`0.63.1`, `90s`, `a0b1...`). Overrides are applied to the parsed TOML document before
//! it is turned into a [`Spec`], so an overridden value is checked exactly as if it were
//! written in the file, and missing tables on the way are created.
//!
//! ```
//! use bench_cli::spec::{Override, parse_with};
//!
//! let text = "name = \"demo\"\n[install]\ncommand = [\"true\"]\n[measure]\ncommand = [\"demo\"]\n";
//! let set: Override = "measure.env.DELAY_MS=300".parse()?;
//! let spec = parse_with(text, "demo.toml", &[set])?;
//! assert_eq!(spec.measure.unwrap().env["DELAY_MS"].to_string(), "300");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::model::Spec;
use super::parse::{SpecError, parse};
use std::fmt;
use std::str::FromStr;
use toml::{Table, Value};

/// One `KEY=VALUE` override, kept as written so it can be passed on and recorded.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Override {
    key: String,
    path: Vec<KeyStep>,
    value: String,
}

/// One step of an override's key: a table key, or an index into an array.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum KeyStep {
    Key(String),
    Index(usize),
}

/// A `KEY=VALUE` that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--set {given:?}: {reason}")]
pub struct OverrideSyntaxError {
    /// What was given.
    pub given: String,
    /// What is wrong with it. Part of the message, not a source: clap shows a flag's
    /// error by its message alone.
    pub reason: SyntaxProblem,
}

/// What is wrong with a `KEY=VALUE`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyntaxProblem {
    /// No `=`.
    #[error("expected KEY=VALUE, e.g. measure.env.FOO=1")]
    NoEquals,
    /// Nothing before the `=`.
    #[error("the key is empty")]
    EmptyKey,
    /// `a..b`, `.a` or `a.`.
    #[error("empty part in key '{key}'")]
    EmptyPart {
        /// The key.
        key: String,
    },
    /// A character a bare TOML key cannot have.
    #[error("'{bad}' in key '{key}'; keys are letters, digits, '_' and '-', joined by '.'")]
    BadCharacter {
        /// The character.
        bad: char,
        /// The key.
        key: String,
    },
    /// An index that is not `[N]`.
    #[error("bad index in key '{key}'; write an array element as name[0]")]
    BadIndex {
        /// The key.
        key: String,
    },
}

impl Override {
    /// The dotted key as written (`measure.env.FOO`).
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The value as written.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// The value as TOML: what it parses as, or else the text as a string.
    pub fn toml_value(&self) -> Value {
        typed_value(&self.value).unwrap_or_else(|| Value::String(self.value.clone()))
    }
}

impl fmt::Display for Override {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.key, self.value)
    }
}

impl Override {
    /// `TABLE.KEY=VALUE`, made from its parts (which are bare keys by construction).
    pub(crate) fn table_key(table: &str, key: &str, value: String) -> Override {
        Override {
            key: format!("{table}.{key}"),
            path: vec![KeyStep::Key(table.to_owned()), KeyStep::Key(key.to_owned())],
            value,
        }
    }
}

impl FromStr for Override {
    type Err = OverrideSyntaxError;

    fn from_str(given: &str) -> Result<Override, OverrideSyntaxError> {
        let error = |reason| OverrideSyntaxError {
            given: given.to_owned(),
            reason,
        };
        let Some((key, value)) = given.split_once('=') else {
            return Err(error(SyntaxProblem::NoEquals));
        };
        let key = key.trim();
        let path = parse_key(key).map_err(error)?;
        Ok(Override {
            key: key.to_owned(),
            path,
            value: value.to_owned(),
        })
    }
}

/// `a.b[2].c` -> keys and indexes. Keys are TOML bare keys: letters, digits, `_` and `-`.
fn parse_key(key: &str) -> Result<Vec<KeyStep>, SyntaxProblem> {
    if key.is_empty() {
        return Err(SyntaxProblem::EmptyKey);
    }
    let mut path = Vec::new();
    for part in key.split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(at) => part.split_at(at),
            None => (part, ""),
        };
        if name.is_empty() {
            return Err(SyntaxProblem::EmptyPart {
                key: key.to_owned(),
            });
        }
        if let Some(bad) = name
            .chars()
            .find(|ch| !(ch.is_ascii_alphanumeric() || *ch == '_' || *ch == '-'))
        {
            return Err(SyntaxProblem::BadCharacter {
                bad,
                key: key.to_owned(),
            });
        }
        path.push(KeyStep::Key(name.to_owned()));
        while !rest.is_empty() {
            let index = rest
                .strip_prefix('[')
                .and_then(|inner| inner.split_once(']'))
                .and_then(|(number, after)| Some((number.parse::<usize>().ok()?, after)));
            let Some((index, after)) = index else {
                return Err(SyntaxProblem::BadIndex {
                    key: key.to_owned(),
                });
            };
            path.push(KeyStep::Index(index));
            rest = after;
        }
    }
    Ok(path)
}

/// The value as a TOML value, when it is one.
fn typed_value(text: &str) -> Option<Value> {
    let document: Table = toml::from_str(&format!("value = {text}")).ok()?;
    document.get("value").cloned()
}

/// An override that cannot be set: the document has something else where its key leads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--set {set}: {reason}")]
struct ApplyError {
    /// The override.
    set: Override,
    /// What is in the way. Part of the message, not a source: the message becomes a
    /// [`SpecError`]'s text, which has no chain.
    reason: SetError,
}

/// What is in the way of an override's key (`walked` is the key up to that point).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum SetError {
    /// An index past the end of an array.
    #[error("'{walked}' does not exist: the array has {len} element(s)")]
    NoElement { walked: String, len: usize },
    /// A key below a value that is not a table.
    #[error("'{walked}' is {found}, not a table")]
    NotATable { walked: String, found: &'static str },
    /// An index into a value that is not an array.
    #[error("'{walked}' is {found}, not an array")]
    NotAnArray { walked: String, found: &'static str },
}

/// Sets every override in `document`, creating missing tables; the overrides whose index
/// is in `as_text` are set as their text.
fn apply(
    document: &mut Table,
    overrides: &[Override],
    as_text: &[usize],
) -> Result<(), ApplyError> {
    for (index, set) in overrides.iter().enumerate() {
        let value = if as_text.contains(&index) {
            Value::String(set.value.clone())
        } else {
            set.toml_value()
        };
        set_path(document, &set.path, value).map_err(|reason| ApplyError {
            set: set.clone(),
            reason,
        })?;
    }
    Ok(())
}

fn set_path(document: &mut Table, path: &[KeyStep], value: Value) -> Result<(), SetError> {
    let mut root = Value::Table(std::mem::take(document));
    let result = set_in(&mut root, path, "", value);
    if let Value::Table(table) = root {
        *document = table;
    }
    result
}

/// Sets `path` below `current` (`walked` is the key so far, for errors); missing tables on
/// the way are created.
fn set_in(
    current: &mut Value,
    path: &[KeyStep],
    walked: &str,
    value: Value,
) -> Result<(), SetError> {
    let Some((step, rest)) = path.split_first() else {
        *current = value;
        return Ok(());
    };
    match (current, step) {
        (Value::Table(table), KeyStep::Key(key)) => {
            let walked = if walked.is_empty() {
                key.clone()
            } else {
                format!("{walked}.{key}")
            };
            let next = table
                .entry(key.clone())
                .or_insert_with(|| Value::Table(Table::new()));
            set_in(next, rest, &walked, value)
        }
        (Value::Array(array), KeyStep::Index(index)) => {
            let len = array.len();
            let walked = format!("{walked}[{index}]");
            let Some(next) = array.get_mut(*index) else {
                return Err(SetError::NoElement { walked, len });
            };
            set_in(next, rest, &walked, value)
        }
        (other, KeyStep::Key(_)) => Err(SetError::NotATable {
            walked: walked.to_owned(),
            found: type_words(other),
        }),
        (other, KeyStep::Index(_)) => Err(SetError::NotAnArray {
            walked: walked.to_owned(),
            found: type_words(other),
        }),
    }
}

fn type_words(value: &Value) -> &'static str {
    match value {
        Value::String(_) => "a string",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a float",
        Value::Boolean(_) => "a boolean",
        Value::Datetime(_) => "a date-time",
        Value::Array(_) => "an array",
        Value::Table(_) => "a table",
    }
}

/// Reads a spec from text with `overrides` applied, checked as if they were in the file.
///
/// A value that parses as TOML but has the wrong type for its key (`version=1.0`,
/// `measure.env.FOO=1`) is taken as its text instead, since that is what a shell user
/// means. Errors caused by an override name the key; they have no line and column, the
/// overridden document being nobody's file.
pub fn parse_with(text: &str, file: &str, overrides: &[Override]) -> Result<Spec, SpecError> {
    if overrides.is_empty() {
        return parse(text, file);
    }
    // A file that is not TOML is reported as it is, with its line and column.
    let document: Table = toml::from_str(text).map_err(|_| match parse(text, file) {
        Err(error) => error,
        Ok(_) => positionless(file, "invalid TOML".to_owned()),
    })?;
    let described = format!(
        "{file} with {}",
        overrides
            .iter()
            .map(|set| format!("--set {set}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let attempt = |as_text: &[usize]| -> Result<Spec, SpecError> {
        let mut document = document.clone();
        apply(&mut document, overrides, as_text)
            .map_err(|error| positionless(file, error.to_string()))?;
        let rewritten = toml::to_string(&document)
            .map_err(|error| positionless(file, format!("cannot apply --set: {error}")))?;
        parse(&rewritten, &described).map_err(|error| positionless(&described, error.message))
    };
    // An override whose key the error names and whose value was read as a TOML value other
    // than a string is retried as its text, one at a time; the first error is the one
    // reported when that does not help.
    let mut as_text = Vec::new();
    let first = match attempt(&as_text) {
        Ok(spec) => return Ok(spec),
        Err(error) => error,
    };
    let mut error = first.clone();
    loop {
        let retry = overrides.iter().enumerate().find(|(index, set)| {
            !as_text.contains(index)
                && !matches!(set.toml_value(), Value::String(_))
                && error.message.contains(&format!("'{}'", set.key))
        });
        let Some((index, _)) = retry else {
            return Err(first);
        };
        as_text.push(index);
        match attempt(&as_text) {
            Ok(spec) => return Ok(spec),
            Err(next) => error = next,
        }
    }
}

/// Reads a spec file with `overrides` applied (see [`parse_with`]).
pub fn load_with(path: &std::path::Path, overrides: &[Override]) -> Result<Spec, SpecError> {
    if overrides.is_empty() {
        return super::parse::load(path);
    }
    let file = path.display().to_string();
    // Read as `load` reads: bounded, and never from a FIFO or a device.
    let text = bench_core::io::read_input_file(path, super::parse::MAX_SPEC_BYTES)
        .map_err(|error| positionless(&file, format!("cannot read the spec: {error}")))?;
    parse_with(&text, &file, overrides)
}

fn positionless(file: &str, message: String) -> SpecError {
    SpecError {
        file: file.to_owned(),
        line: 0,
        column: 0,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = r#"
name = "demo"
version = "1.0.0"

[source]
repository = "/src"
commit = "0000000000000000000000000000000000000000"

[[build]]
command = ["make"]

[install]
command = ["sh", "install.sh"]

[measure]
command = ["demo"]
ready_timeout = "20s"
"#;

    fn set(text: &str) -> Override {
        text.parse().unwrap()
    }

    fn spec_with(sets: &[&str]) -> Result<Spec, SpecError> {
        let sets: Vec<Override> = sets.iter().map(|text| set(text)).collect();
        parse_with(SPEC, "demo.toml", &sets)
    }

    #[test]
    fn key_and_value_split_at_the_first_equals_sign() {
        let set = set("measure.env.OPTS=a=b");
        assert_eq!(set.key(), "measure.env.OPTS");
        assert_eq!(set.value(), "a=b");
        assert_eq!(set.to_string(), "measure.env.OPTS=a=b");
    }

    #[test]
    fn values_are_toml_when_they_parse_as_toml_else_strings() {
        assert_eq!(set("a=90").toml_value(), Value::Integer(90));
        assert_eq!(set("a=true").toml_value(), Value::Boolean(true));
        assert_eq!(set("a=\"90\"").toml_value(), Value::String("90".into()));
        assert_eq!(
            set("a=[\"x\", \"y\"]").toml_value(),
            Value::Array(vec!["x".into(), "y".into()])
        );
        assert!(matches!(set("a={ B = 1 }").toml_value(), Value::Table(_)));
        for text in ["0.63.1", "90s", "hello world", "", "0123abc"] {
            assert_eq!(
                set(&format!("a={text}")).toml_value(),
                Value::String(text.into()),
                "{text}"
            );
        }
    }

    #[test]
    fn malformed_overrides_say_what_is_wrong() {
        let error = |text: &str| text.parse::<Override>().unwrap_err().to_string();
        assert_eq!(
            error("version"),
            "--set \"version\": expected KEY=VALUE, e.g. measure.env.FOO=1"
        );
        assert_eq!(error("=1"), "--set \"=1\": the key is empty");
        assert_eq!(
            error("measure..env=1"),
            "--set \"measure..env=1\": empty part in key 'measure..env'"
        );
        assert!(error("a b=1").contains("' ' in key 'a b'"));
        assert!(error("build[x]=1").contains("bad index in key 'build[x]'"));
        let reason = |text: &str| text.parse::<Override>().unwrap_err().reason;
        assert_eq!(
            reason("a.b[1]x=1"),
            SyntaxProblem::BadIndex {
                key: "a.b[1]x".into()
            }
        );
        assert_eq!(
            reason("a/b=1"),
            SyntaxProblem::BadCharacter {
                bad: '/',
                key: "a/b".into()
            }
        );
    }

    #[test]
    fn overrides_change_the_keys_they_name() {
        let spec = spec_with(&[
            "version=0.63.1",
            "source.commit=1111111111111111111111111111111111111111",
            "measure.ready_timeout=90s",
            "build[0].timeout=5m",
        ])
        .unwrap();
        assert_eq!(spec.version.as_deref(), Some("0.63.1"));
        assert_eq!(spec.source.unwrap().commit, "1".repeat(40));
        let measure = spec.measure.unwrap();
        assert_eq!(measure.ready_timeout.as_secs(), 90);
        assert_eq!(spec.build[0].timeout.as_secs(), 300);
    }

    #[test]
    fn missing_tables_are_created() {
        let spec = spec_with(&["measure.env.DEMO_AGENT_STARTUP_DELAY_MS=300"]).unwrap();
        let env = &spec.measure.unwrap().env;
        assert_eq!(env["DEMO_AGENT_STARTUP_DELAY_MS"].to_string(), "300");
        let spec = spec_with(&["runtime.command=[\"demo\", \"kernel\"]"]).unwrap();
        assert!(spec.runtime.is_some());
    }

    #[test]
    fn a_value_of_the_wrong_toml_type_is_taken_as_its_text() {
        let spec = spec_with(&["version=1.0"]).unwrap();
        assert_eq!(spec.version.as_deref(), Some("1.0"));
    }

    #[test]
    fn only_the_override_of_the_wrong_type_is_taken_as_text() {
        let spec = spec_with(&[
            "runtime.command=[\"demo\", \"kernel\"]",
            "version=1.0",
            "measure.env.A=1",
        ])
        .unwrap();
        assert_eq!(spec.version.as_deref(), Some("1.0"));
        assert_eq!(spec.runtime.unwrap().command.len(), 2);
        assert_eq!(spec.measure.unwrap().env["A"].to_string(), "1");
    }

    #[test]
    fn values_are_checked_as_in_a_file_and_the_error_names_the_key() {
        let error = spec_with(&["measure.ready_timeout=soon"]).unwrap_err();
        assert_eq!(error.line, 0);
        assert!(
            error.to_string().starts_with(
                "demo.toml with --set measure.ready_timeout=soon: key 'measure.ready_timeout'"
            ),
            "{error}"
        );
        let error = spec_with(&["measur.env.A=1"]).unwrap_err();
        assert!(
            error
                .message
                .contains("unknown key 'measur' in the top level; did you mean 'measure'?"),
            "{error}"
        );
        let error = spec_with(&["source.commit=abc"]).unwrap_err();
        assert!(error.message.contains("source.commit"), "{error}");
    }

    #[test]
    fn setting_inside_a_value_that_is_not_a_table_names_the_key() {
        let error = spec_with(&["version.major=1"]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "demo.toml: --set version.major=1: 'version' is a string, not a table"
        );
        let error = spec_with(&["build[3].timeout=1s"]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "demo.toml: --set build[3].timeout=1s: 'build[3]' does not exist: the array has 1 element(s)"
        );
        let error = spec_with(&["name[0]=x"]).unwrap_err();
        assert!(error.message.contains("'name' is a string, not an array"));
    }

    #[test]
    fn an_override_that_cannot_be_set_is_a_typed_error_naming_its_key() {
        let mut document: Table = toml::from_str(SPEC).unwrap();
        let error = apply(
            &mut document,
            &[set("version=2"), set("build[3].timeout=1s")],
            &[],
        )
        .unwrap_err();
        assert_eq!(error.set, set("build[3].timeout=1s"));
        assert_eq!(
            error.reason,
            SetError::NoElement {
                walked: "build[3]".into(),
                len: 1
            }
        );
        let error = apply(&mut document, &[set("measure.command.x=1")], &[]).unwrap_err();
        assert_eq!(
            error.reason,
            SetError::NotATable {
                walked: "measure.command".into(),
                found: "an array"
            }
        );
    }

    #[test]
    fn without_overrides_errors_keep_their_line_and_column() {
        let error = parse_with("name = \n", "bad.toml", &[]).unwrap_err();
        assert_eq!(error.line, 1);
        let error = parse_with("name = \n", "bad.toml", &[set("version=1")]).unwrap_err();
        assert_eq!(error.line, 1, "{error}");
    }
}
