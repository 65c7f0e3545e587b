//! A tool's schema as Anthropic's strict tools take it (V4), when the driver is asked for them
//! ([`super::AnthropicBuilder::strict_tools`]).
//!
//! A strict tool's `input_schema` is a subset of JSON Schema; the rewriting is the one
//! Anthropic's own SDK applies (its `transform_schema`), checked against it by the tests:
//!
//! - Kept: `type`, `title`, `description`, `required`, `enum` and `const` of primitive values
//!   (the node's `type` then goes: the values say it), `anyOf` (and `oneOf`, as `anyOf`),
//!   `allOf`, `$ref` (with its description only) and `$defs`, `items`, the string `format`s
//!   strict mode knows, and `minItems` of 0 or 1.
//! - Every object is closed (`additionalProperties: false`).
//! - Everything else (bounds, lengths, patterns, other formats, `default`, examples) moves
//!   into the node's description, as `{keyword: value, …}` text written as the SDK writes it.
//!
//! Where the SDK would send what the API refuses or what changes a tool's meaning, the
//! rewriting says so instead (the declared deviations):
//!
//! - a `type` list (`["integer", "null"]`, an optional field) becomes an `anyOf` of each type,
//!   the constraints kept on the non-null branch (the SDK cannot take a `type` list at all);
//! - an open map (`additionalProperties` a schema, or `true`) fails: closing it, as the SDK
//!   does, would leave the model no way to send the map;
//! - a recursive schema (a `$ref` to the root, or a cycle through `$defs`) fails: strict mode
//!   does not take recursion.
//!
//! A schema without `type`, `anyOf`, `oneOf`, `allOf`, `const` or `enum` (a value that may be
//! anything) fails too, as it does in the SDK. The parser still enforces the whole neutral
//! schema (R5).

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::model::SchemaUnsupported;

/// The string formats strict mode takes; others move into the description.
const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];

/// The deepest nesting of subschemas the rewriting follows.
const MAX_DEPTH: usize = 64;

/// `schema` (a tool's neutral schema, an object root) as a strict tool's `input_schema`.
///
/// # Errors
///
/// Returns [`SchemaUnsupported`] at the pointer of the keyword, for an open map, recursion, a
/// value that may be anything, or nesting past 64 levels.
pub fn rewrite(schema: &Value) -> Result<Value, SchemaUnsupported> {
    check_recursion(schema)?;
    node(schema, "", 0)
}

fn unsupported(reason: &str, at: &str) -> SchemaUnsupported {
    SchemaUnsupported::new(format!("Anthropic's strict tools cannot express {reason}")).at(at)
}

/// Fails on a `$ref` to the root, or a definition that reaches itself through `$ref`s.
fn check_recursion(root: &Value) -> Result<(), SchemaUnsupported> {
    let defs = root.get("$defs").and_then(Value::as_object);
    let mut refs = Vec::new();
    collect_refs(root, "", &mut refs);
    if let Some((at, _)) = refs.iter().find(|(_, target)| target == "#") {
        return Err(unsupported("a recursive schema (a `$ref` to the root)", at));
    }
    let Some(defs) = defs else {
        return Ok(());
    };
    for name in defs.keys() {
        let mut seen = HashSet::new();
        let mut stack = vec![name.clone()];
        while let Some(current) = stack.pop() {
            let mut inner = Vec::new();
            if let Some(def) = defs.get(&current) {
                collect_refs(def, "", &mut inner);
            }
            for (_, target) in inner {
                let Some(next) = target.strip_prefix("#/$defs/") else {
                    continue;
                };
                if next == name {
                    let at = format!("/$defs/{}", name.replace('~', "~0").replace('/', "~1"));
                    return Err(unsupported(
                        "a recursive schema (a cycle through `$defs`)",
                        &at,
                    ));
                }
                if seen.insert(next.to_owned()) {
                    stack.push(next.to_owned());
                }
            }
        }
    }
    Ok(())
}

/// Every `$ref` under `value` (not into nested `$defs`), with its pointer.
fn collect_refs(value: &Value, at: &str, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                if key == "$defs" {
                    // Definitions are followed through the `$ref`s that name them.
                    continue;
                }
                let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
                match (key.as_str(), inner) {
                    ("$ref", Value::String(target)) => out.push((here, target.clone())),
                    _ => collect_refs(inner, &here, out),
                }
            }
        }
        Value::Array(items) => {
            for (i, inner) in items.iter().enumerate() {
                collect_refs(inner, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn is_primitive(value: &Value) -> bool {
    !matches!(value, Value::Array(_) | Value::Object(_))
}

/// One node at `at`.
fn node(schema: &Value, at: &str, depth: usize) -> Result<Value, SchemaUnsupported> {
    if depth > MAX_DEPTH {
        return Err(unsupported("nesting deeper than 64 levels", at));
    }
    let Some(map) = schema.as_object() else {
        return Err(unsupported("a schema that is not an object", at));
    };
    if let Some(Value::Array(types)) = map.get("type") {
        return type_list(map, types, at, depth);
    }
    let mut rest = map.clone();
    let mut out = Map::new();
    if let Some(Value::Object(defs)) = rest.remove("$defs") {
        let mut strict = Map::new();
        for (name, def) in &defs {
            strict.insert(
                name.clone(),
                node(def, &format!("{at}/$defs/{name}"), depth + 1)?,
            );
        }
        out.insert("$defs".into(), Value::Object(strict));
    }
    if let Some(target) = rest.remove("$ref") {
        out.insert("$ref".into(), target);
        if let Some(description) = rest.remove("description") {
            out.insert("description".into(), description);
        }
        return Ok(Value::Object(out));
    }
    let kind = rest.remove("type");
    let literals = take_literals(&mut rest, &mut out);
    let kind = if literals { None } else { kind };
    combinators(&mut rest, &mut out, at, depth)?;
    let combined = out.contains_key("anyOf") || out.contains_key("allOf");
    if !combined && !literals {
        let Some(kind) = &kind else {
            return Err(unsupported("a value that may be anything (no `type`)", at));
        };
        out.insert("type".into(), kind.clone());
    }
    for keyword in ["description", "title"] {
        if let Some(value) = rest.remove(keyword) {
            out.insert(keyword.into(), value);
        }
    }
    // The SDK looks at a string's `format` and an array's `minItems` first, and lists them
    // last when it keeps them out; so do we, so that the descriptions read the same.
    let last = match kind.as_ref().and_then(Value::as_str) {
        Some("object") => {
            object(&mut rest, &mut out, at, depth)?;
            None
        }
        Some("string") => {
            string(&mut rest, &mut out);
            Some("format")
        }
        Some("array") => {
            array(&mut rest, &mut out, at, depth)?;
            Some("minItems")
        }
        _ => None,
    };
    describe_rest(&rest, last, &mut out);
    Ok(Value::Object(out))
}

/// `enum` and `const` of primitive values, kept; whether there were any.
fn take_literals(rest: &mut Map<String, Value>, out: &mut Map<String, Value>) -> bool {
    if let Some(Value::Array(values)) = rest.get("enum")
        && !values.is_empty()
        && values.iter().all(is_primitive)
        && let Some(values) = rest.remove("enum")
    {
        out.insert("enum".into(), values);
    }
    if rest.get("const").is_some_and(is_primitive)
        && let Some(value) = rest.remove("const")
    {
        out.insert("const".into(), value);
    }
    out.contains_key("enum") || out.contains_key("const")
}

/// `anyOf` (or else `oneOf`, as `anyOf`, or else `allOf`), each branch rewritten.
fn combinators(
    rest: &mut Map<String, Value>,
    out: &mut Map<String, Value>,
    at: &str,
    depth: usize,
) -> Result<(), SchemaUnsupported> {
    let any_of = rest.remove("anyOf");
    let one_of = rest.remove("oneOf");
    let all_of = rest.remove("allOf");
    let (keyword, from, branches) = match (any_of, one_of, all_of) {
        (Some(Value::Array(b)), _, _) => ("anyOf", "anyOf", b),
        (_, Some(Value::Array(b)), _) => ("anyOf", "oneOf", b),
        (_, _, Some(Value::Array(b))) => ("allOf", "allOf", b),
        _ => return Ok(()),
    };
    let mut strict = Vec::with_capacity(branches.len());
    for (i, branch) in branches.iter().enumerate() {
        strict.push(node(branch, &format!("{at}/{from}/{i}"), depth + 1)?);
    }
    out.insert(keyword.into(), Value::Array(strict));
    Ok(())
}

fn object(
    rest: &mut Map<String, Value>,
    out: &mut Map<String, Value>,
    at: &str,
    depth: usize,
) -> Result<(), SchemaUnsupported> {
    let mut properties = Map::new();
    if let Some(Value::Object(given)) = rest.remove("properties") {
        for (name, schema) in &given {
            let here = format!(
                "{at}/properties/{}",
                name.replace('~', "~0").replace('/', "~1")
            );
            properties.insert(name.clone(), node(schema, &here, depth + 1)?);
        }
    }
    out.insert("properties".into(), Value::Object(properties));
    match rest.remove("additionalProperties") {
        None | Some(Value::Bool(false)) => {}
        Some(_) => {
            return Err(unsupported(
                "an open map (`additionalProperties`)",
                &format!("{at}/additionalProperties"),
            ));
        }
    }
    out.insert("additionalProperties".into(), false.into());
    if let Some(required) = rest.remove("required") {
        out.insert("required".into(), required);
    }
    Ok(())
}

fn string(rest: &mut Map<String, Value>, out: &mut Map<String, Value>) {
    if let Some(Value::String(format)) = rest.get("format")
        && FORMATS.contains(&format.as_str())
        && let Some(format) = rest.remove("format")
    {
        out.insert("format".into(), format);
    }
}

fn array(
    rest: &mut Map<String, Value>,
    out: &mut Map<String, Value>,
    at: &str,
    depth: usize,
) -> Result<(), SchemaUnsupported> {
    if let Some(items) = rest.remove("items") {
        out.insert(
            "items".into(),
            node(&items, &format!("{at}/items"), depth + 1)?,
        );
    }
    if rest
        .get("minItems")
        .and_then(Value::as_u64)
        .is_some_and(|n| n <= 1)
        && let Some(min) = rest.remove("minItems")
    {
        out.insert("minItems".into(), min);
    }
    Ok(())
}

/// A `type` list as an `anyOf` of each type; the node's other keywords go with each branch
/// that is not `null`, its description stays on the node.
fn type_list(
    map: &Map<String, Value>,
    types: &[Value],
    at: &str,
    depth: usize,
) -> Result<Value, SchemaUnsupported> {
    let mut shared = map.clone();
    shared.remove("type");
    let description = shared.remove("description");
    let title = shared.remove("title");
    let mut branches = Vec::with_capacity(types.len());
    for kind in types {
        let mut branch = if kind == "null" {
            Map::new()
        } else {
            shared.clone()
        };
        branch.insert("type".into(), kind.clone());
        branches.push(Value::Object(branch));
    }
    let mut any_of = Map::new();
    any_of.insert("anyOf".into(), Value::Array(branches));
    for (keyword, value) in [("description", description), ("title", title)] {
        if let Some(value) = value {
            any_of.insert(keyword.into(), value);
        }
    }
    node(&Value::Object(any_of), at, depth)
}

/// The keywords strict mode does not take, appended to the description as the SDK writes
/// them: `{keyword: value, …}`, each value as Python prints it, `last` (if left) at the end.
fn describe_rest(rest: &Map<String, Value>, last: Option<&str>, out: &mut Map<String, Value>) {
    if rest.is_empty() {
        return;
    }
    let is_last = |key: &str| Some(key) == last;
    let listed: Vec<String> = rest
        .iter()
        .filter(|(key, _)| !is_last(key))
        .chain(rest.iter().filter(|(key, _)| is_last(key)))
        .map(|(key, value)| format!("{key}: {}", python_str(value)))
        .collect();
    let mut text = out
        .get("description")
        .and_then(Value::as_str)
        .map(|d| format!("{d}\n\n"))
        .unwrap_or_default();
    text.push('{');
    text.push_str(&listed.join(", "));
    text.push('}');
    out.insert("description".into(), text.into());
}

/// A JSON value as Python's `str` prints the value `json.loads` makes of it.
fn python_str(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => python_repr(other),
    }
}

fn python_repr(value: &Value) -> String {
    match value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.to_string(),
            (_, Some(u), _) => u.to_string(),
            (_, _, Some(f)) if f.fract() == 0.0 && f.abs() < 1e16 => format!("{f:.1}"),
            _ => n.to_string(),
        },
        Value::String(s) if s.contains('\'') && !s.contains('"') => format!("\"{s}\""),
        Value::String(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(python_repr).collect();
            format!("[{}]", inner.join(", "))
        }
        Value::Object(map) => {
            let inner: Vec<String> = map
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{}: {}",
                        python_repr(&Value::String(k.clone())),
                        python_repr(v)
                    )
                })
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // V4: the declared rewriting: literals without their type, objects closed, unsupported
    // keywords in the description as the SDK writes them, a type list as an anyOf.
    #[test]
    fn v4_anthropic_strict_rewriting() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": ["integer", "null"], "minimum": 1, "description": "N."},
                "kind": {"type": "string", "enum": ["a", "b"]},
                "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"},
                         "minItems": 2},
            },
            "required": ["kind"],
        });
        let out = rewrite(&schema).expect("expressible");
        assert_eq!(out["additionalProperties"], false);
        assert_eq!(out["properties"]["kind"], json!({"enum": ["a", "b"]}));
        assert_eq!(
            out["properties"]["n"],
            json!({"anyOf": [{"type": "integer", "description": "{minimum: 1}"}, {"type": "null"}],
                   "description": "N."})
        );
        assert_eq!(out["properties"]["tags"]["description"], "{minItems: 2}");
        assert_eq!(
            out["properties"]["tags"]["items"]["description"],
            "{pattern: ^[a-z]+$}"
        );
    }

    // V4: open maps, recursion and values that may be anything fail at their pointer.
    #[test]
    fn v4_what_strict_tools_cannot_express_fails() {
        let map = json!({"type": "object", "properties": {"m": {"type": "object",
            "additionalProperties": {"type": "string"}}}});
        assert_eq!(
            rewrite(&map).map_err(|e| e.path().map(str::to_owned)),
            Err(Some("/properties/m/additionalProperties".into()))
        );
        let root = json!({"type": "object", "properties": {"c": {"$ref": "#"}}});
        assert!(rewrite(&root).is_err());
        let cycle = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}},
            "$defs": {"A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
                      "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}}}});
        assert!(rewrite(&cycle).is_err());
        let any = json!({"type": "object", "properties": {"x": {}}});
        assert_eq!(
            rewrite(&any).map_err(|e| e.path().map(str::to_owned)),
            Err(Some("/properties/x".into()))
        );
        assert_eq!(
            python_repr(&json!([1, "a'b", true, null, 2.0])),
            "[1, \"a'b\", True, None, 2.0]"
        );
    }
}
