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

use serde_json::{Map, Value, json};

/// How deep nested schemas are followed (a recursive `$ref` stops here with `null`).
const MAX_DEPTH: usize = 24;

/// A value valid for `schema`.
pub fn value_for(schema: &Value) -> Value {
    generate(schema, schema, 0)
}

fn generate(schema: &Value, root: &Value, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return Value::Null;
    }
    let Some(object) = schema.as_object() else {
        // `true` (anything) or a malformed schema: a string is as good as anything.
        return Value::String(String::new());
    };
    if let Some(Value::String(reference)) = object.get("$ref")
        && let Some(target) = resolve(reference, root)
    {
        return generate(target, root, depth + 1);
    }
    if let Some(value) = object.get("const") {
        return value.clone();
    }
    if let Some(Value::Array(values)) = object.get("enum")
        && let Some(first) = values.first()
    {
        return first.clone();
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
                return generate(branch, root, depth + 1);
            }
        }
    }
    if let Some(Value::Array(parts)) = object.get("allOf") {
        let mut merged = Map::new();
        for part in parts {
            if let Value::Object(part) = generate(part, root, depth + 1) {
                merged.extend(part);
            }
        }
        if !merged.is_empty() {
            return Value::Object(merged);
        }
    }
    match type_of(object).as_deref() {
        Some("object") => generate_object(object, root, depth),
        Some("array") => {
            let count = object.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            let item = object.get("items").cloned().unwrap_or(json!({}));
            Value::Array(
                (0..count.min(64))
                    .map(|_| generate(&item, root, depth + 1))
                    .collect(),
            )
        }
        Some("string") => {
            let length = object.get("minLength").and_then(Value::as_u64).unwrap_or(0);
            Value::String(string_of(
                object.get("format").and_then(Value::as_str),
                length,
            ))
        }
        Some("integer") => {
            let at_least = lower_bound(object);
            Value::from(at_least.ceil() as i64)
        }
        Some("number") => json!(lower_bound(object)),
        Some("boolean") => Value::Bool(false),
        Some("null") => Value::Null,
        _ if object.contains_key("properties") => generate_object(object, root, depth),
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

fn generate_object(object: &Map<String, Value>, root: &Value, depth: usize) -> Value {
    let properties = object.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = Map::new();
    let Some(properties) = properties else {
        return Value::Object(out);
    };
    for (name, property) in properties {
        if required.is_empty() || required.contains(&name.as_str()) {
            out.insert(name.clone(), generate(property, root, depth + 1));
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

fn string_of(format: Option<&str>, min_length: u64) -> String {
    let base = match format {
        Some("date-time") => "2025-01-01T00:00:00Z",
        Some("date") => "2025-01-01",
        Some("time") => "00:00:00",
        Some("email") => "clibench@example.invalid",
        Some("uri") | Some("url") => "http://127.0.0.1/",
        Some("uuid") => "00000000-0000-4000-8000-000000000000",
        _ => "clibench",
    };
    let mut text = base.to_owned();
    while (text.chars().count() as u64) < min_length {
        text.push('x');
    }
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

    #[test]
    fn a_recursive_schema_ends() {
        let schema = json!({"$ref": "#", "type": "object"});
        assert_eq!(value_for(&schema), Value::Null);
    }
}
