//! A value valid for a JSON schema, made deterministically from the schema alone: what
//! the endpoint answers a request that asks for structured output (gemini-cli's routing
//! classifier, OpenAI `json_schema` formats), and the arguments a tool call fills in
//! beyond the ones the script gives.
//!
//! Objects get their required properties (all of them when none is marked required),
//! an `enum` or `const` its first value, `anyOf`/`oneOf` the first branch, strings and
//! arrays their minimum length, numbers their minimum (or 0 when that is allowed).
//! `$ref` to `#/$defs/...` and `#/definitions/...` is followed. Gemini's upper-case type
//! names (`OBJECT`, `STRING`) are understood.
//!
//! The schema comes from the agent, which may be hostile: the value is bounded in total
//! ([`MAX_VALUE_BYTES`] of JSON, whatever `minLength`, `minItems`, `const` or a recursive
//! `$ref` ask), and the work to make it is linear in that bound. Past the bound the value
//! is cut short (`null` for what no longer fits): no longer valid, but answered at once.

use serde_json::{Map, Value, json};
use std::collections::HashSet;

/// How deep nested schemas are followed (a recursive `$ref` stops here with `null`).
const MAX_DEPTH: usize = 24;

/// The most JSON a generated value holds (1 MiB, about): a classifier's answer or a
/// tool call's arguments are a few hundred bytes.
pub const MAX_VALUE_BYTES: usize = 1 << 20;

/// What is left of [`MAX_VALUE_BYTES`]; once something did not fit, nothing more is made.
struct Budget {
    left: usize,
}

impl Budget {
    /// Takes `bytes` if they fit; otherwise spends the rest, so that every later node
    /// returns at once and the whole walk stays linear in the bound.
    fn take(&mut self, bytes: usize) -> bool {
        if bytes <= self.left {
            self.left -= bytes;
            true
        } else {
            self.left = 0;
            false
        }
    }

    fn spent(&self) -> bool {
        self.left == 0
    }
}

/// A value valid for `schema`, within [`MAX_VALUE_BYTES`].
pub fn value_for(schema: &Value) -> Value {
    let mut budget = Budget {
        left: MAX_VALUE_BYTES,
    };
    generate(schema, schema, 0, &mut budget)
}

/// The JSON size of `value`, counted only up to `limit` (then `None`): measuring a huge
/// `const` costs no more than the budget it would spend.
fn size_within(value: &Value, limit: usize) -> Option<usize> {
    let mut size = 0usize;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        size += match value {
            Value::String(text) => text.len() + 2,
            Value::Array(items) => {
                stack.extend(items.iter());
                2 + items.len()
            }
            Value::Object(map) => {
                stack.extend(map.values());
                2 + map.keys().map(|key| key.len() + 4).sum::<usize>()
            }
            _ => 8,
        };
        if size > limit {
            return None;
        }
    }
    Some(size)
}

/// `value` cloned if it fits the budget, else `null`.
fn fitting(value: &Value, budget: &mut Budget) -> Value {
    match size_within(value, budget.left) {
        Some(size) if budget.take(size) => value.clone(),
        _ => {
            budget.take(usize::MAX);
            Value::Null
        }
    }
}

fn generate(schema: &Value, root: &Value, depth: usize, budget: &mut Budget) -> Value {
    // Every node costs, the nulls past the depth too: they are written out all the same.
    if !budget.take(8) || depth > MAX_DEPTH {
        return Value::Null;
    }
    let Some(object) = schema.as_object() else {
        // `true` (anything) or a malformed schema: a string is as good as anything.
        return Value::String(String::new());
    };
    if let Some(Value::String(reference)) = object.get("$ref")
        && let Some(target) = resolve(reference, root)
    {
        return generate(target, root, depth + 1, budget);
    }
    if let Some(value) = object.get("const") {
        return fitting(value, budget);
    }
    if let Some(Value::Array(values)) = object.get("enum")
        && let Some(first) = values.first()
    {
        return fitting(first, budget);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = object.get(key) {
            // A nullable field is often written `anyOf: [{...}, {type: null}]`: prefer
            // the first branch that is not null, to say something.
            let branch = branches
                .iter()
                .find(|b| b.get("type").and_then(Value::as_str) != Some("null"))
                .or_else(|| branches.first());
            if let Some(branch) = branch {
                return generate(branch, root, depth + 1, budget);
            }
        }
    }
    if let Some(Value::Array(parts)) = object.get("allOf") {
        let mut merged = Map::new();
        for part in parts {
            if budget.spent() {
                break;
            }
            if let Value::Object(part) = generate(part, root, depth + 1, budget) {
                merged.extend(part);
            }
        }
        if !merged.is_empty() {
            return Value::Object(merged);
        }
    }
    match type_of(object).as_deref() {
        Some("object") => generate_object(object, root, depth, budget),
        Some("array") => {
            let count = object.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            let any = json!({});
            let item = object.get("items").unwrap_or(&any);
            let mut items = Vec::new();
            for _ in 0..count.min(64) {
                if budget.spent() {
                    break;
                }
                items.push(generate(item, root, depth + 1, budget));
            }
            Value::Array(items)
        }
        Some("string") => {
            let length = object.get("minLength").and_then(Value::as_u64).unwrap_or(0);
            Value::String(string_of(
                object.get("format").and_then(Value::as_str),
                length,
                budget,
            ))
        }
        Some("integer") => {
            let at_least = lower_bound(object);
            Value::from(at_least.ceil() as i64)
        }
        Some("number") => json!(lower_bound(object)),
        Some("boolean") => Value::Bool(false),
        Some("null") => Value::Null,
        _ if object.contains_key("properties") => generate_object(object, root, depth, budget),
        _ => Value::String(String::new()),
    }
}

/// The schema's type, lower-cased; the first non-null one of a list.
fn type_of(object: &Map<String, Value>) -> Option<String> {
    match object.get("type")? {
        Value::String(name) => Some(name.to_ascii_lowercase()),
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .find(|name| !name.eq_ignore_ascii_case("null"))
            .or_else(|| names.first().and_then(Value::as_str))
            .map(str::to_ascii_lowercase),
        _ => None,
    }
}

fn generate_object(
    object: &Map<String, Value>,
    root: &Value,
    depth: usize,
    budget: &mut Budget,
) -> Value {
    let properties = object.get("properties").and_then(Value::as_object);
    // A set: a schema may list a great many names, each looked up once per property.
    let required: HashSet<&str> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = Map::new();
    let Some(properties) = properties else {
        return Value::Object(out);
    };
    for (name, property) in properties {
        if budget.spent() {
            break;
        }
        if (required.is_empty() || required.contains(name.as_str())) && budget.take(name.len() + 4)
        {
            out.insert(name.clone(), generate(property, root, depth + 1, budget));
        }
    }
    Value::Object(out)
}

fn lower_bound(object: &Map<String, Value>) -> f64 {
    let minimum = object.get("minimum").and_then(Value::as_f64);
    let exclusive = object.get("exclusiveMinimum").and_then(Value::as_f64);
    let maximum = object.get("maximum").and_then(Value::as_f64);
    match (minimum, exclusive) {
        (Some(min), _) => min,
        (None, Some(min)) => min + 1.0,
        // 1 rather than 0: a score or a count of 0 is a value models rarely give.
        (None, None) => maximum.map_or(1.0, |max| max.min(1.0)),
    }
}

/// The format's example, padded with `x` to `min_length` characters: as much of it as
/// the budget holds, made in one allocation rather than a character at a time.
fn string_of(format: Option<&str>, min_length: u64, budget: &mut Budget) -> String {
    let base = match format {
        Some("date-time") => "2025-01-01T00:00:00Z",
        Some("date") => "2025-01-01",
        Some("time") => "00:00:00",
        Some("email") => "clibench@example.invalid",
        Some("uri") | Some("url") => "http://127.0.0.1/",
        Some("uuid") => "00000000-0000-4000-8000-000000000000",
        _ => "clibench",
    };
    // Every example is ASCII: its length in bytes is its length in characters.
    let wanted = usize::try_from(min_length)
        .unwrap_or(usize::MAX)
        .max(base.len());
    let length = wanted.min(budget.left.saturating_sub(2));
    budget.take(length + 2);
    let mut text = String::with_capacity(length);
    text.push_str(&base[..base.len().min(length)]);
    text.extend(std::iter::repeat_n('x', length - text.len()));
    text
}

fn resolve<'a>(reference: &str, root: &'a Value) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    root.pointer(pointer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_routing_classifier_schema_gets_its_enum_and_reasoning() {
        let schema = json!({
            "type": "OBJECT",
            "properties": {
                "reasoning": {"type": "STRING", "description": "why"},
                "model_choice": {"type": "STRING", "enum": ["flash", "pro"]}
            },
            "required": ["reasoning", "model_choice"]
        });
        assert_eq!(
            value_for(&schema),
            json!({"reasoning": "clibench", "model_choice": "flash"})
        );
    }

    #[test]
    fn required_only_refs_arrays_and_bounds() {
        let schema = json!({
            "type": "object",
            "$defs": {"item": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 3}}}},
            "properties": {
                "list": {"type": "array", "minItems": 2, "items": {"$ref": "#/$defs/item"}},
                "optional": {"type": "string"},
                "flag": {"type": ["boolean", "null"]},
                "when": {"type": "string", "format": "date-time"},
                "name": {"type": "string", "minLength": 12},
                "choice": {"anyOf": [{"type": "null"}, {"type": "number", "exclusiveMinimum": 1}]}
            },
            "required": ["list", "flag", "when", "name", "choice"]
        });
        assert_eq!(
            value_for(&schema),
            json!({
                "list": [{"n": 3}, {"n": 3}],
                "flag": false,
                "when": "2025-01-01T00:00:00Z",
                "name": "clibenchxxxx",
                "choice": 2.0
            })
        );
    }

    /// `value_for` in a thread of its own: a schema that never ends fails the test after
    /// a minute (a bound on the wait, not a speed goal) instead of hanging the run.
    fn bounded(schema: Value) -> Value {
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || sender.send(value_for(&schema)));
        receiver
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("value_for did not end")
    }

    #[test]
    fn a_min_length_of_a_billion_gives_a_bounded_string() {
        let value = bounded(json!({"type": "string", "minLength": 1_000_000_000u64}));
        let text = value.as_str().unwrap();
        assert!(
            text.starts_with("clibench") && text.len() <= 1 << 20,
            "{}",
            text.len()
        );
    }

    #[test]
    fn a_recursive_ref_with_many_children_stays_small() {
        let value = bounded(json!({"type": "array", "minItems": 64, "items": {"$ref": "#"}}));
        assert!(
            value.to_string().len() <= 1 << 20,
            "{}",
            value.to_string().len()
        );
    }

    #[test]
    fn nested_arrays_and_repeated_constants_are_bounded_in_total() {
        let strings = json!({"type": "array", "minItems": 64, "items": {
            "type": "array", "minItems": 64, "items": {
                "type": "array", "minItems": 64, "items": {"type": "string", "minLength": 64}}}});
        let constants = json!({"type": "array", "minItems": 64, "items": {
            "type": "array", "minItems": 64, "items": {"const": "c".repeat(4096)}}});
        for schema in [strings, constants] {
            let size = bounded(schema).to_string().len();
            assert!(size <= 1 << 20, "an answer of {size} bytes");
        }
    }

    #[test]
    fn a_recursive_schema_ends() {
        let schema = json!({"$ref": "#", "type": "object"});
        assert_eq!(value_for(&schema), Value::Null);
    }
}
