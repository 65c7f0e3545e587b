//! The neutral schema rewritten for OpenAI's strict mode (V1), and its limits.
//!
//! Strict mode takes a subset of JSON Schema. The rewrite widens nothing the parser relies
//! on: it only removes constraints (which the parser still enforces, R5) and makes optional
//! properties nullable (the parser reads `null` as absent). What strict mode cannot express
//! at all is reported with the JSON pointer of the keyword.

use std::collections::HashSet;

use serde_json::{Map, Value, json};
use tool_core::schema::nullable;

use crate::model::SchemaUnsupported;

/// The most object properties one strict schema may hold, in all.
pub const MAX_PROPERTIES: usize = 5000;
/// The most levels of object nesting a strict schema may have.
pub const MAX_NESTING: usize = 10;
/// The most `enum` values one strict schema may hold, in all.
pub const MAX_ENUM_VALUES: usize = 1000;
/// The longest total length of the property names, `$defs` names, `enum` and `const` values
/// of one strict schema, in characters.
pub const MAX_SCHEMA_STRING_LENGTH: usize = 120_000;
/// An `enum` with more values than this may hold at most [`LARGE_ENUM_LENGTH`] characters.
const LARGE_ENUM: usize = 250;
const LARGE_ENUM_LENGTH: usize = 15_000;

/// The string formats strict mode takes; others are removed.
const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Keywords kept as they are.
const KEPT: &[&str] = &[
    "type",
    "description",
    "title",
    "enum",
    "const",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// The strict form of `neutral` (an object root).
///
/// # Errors
///
/// Returns [`SchemaUnsupported`], at the pointer of the keyword, for what strict mode cannot
/// express: open maps, values that may be anything, `allOf`, tuples, `$ref`s that do not
/// point into the root's `$defs`, or a schema past the provider's limits.
pub(crate) fn adapt(neutral: &Value) -> Result<Value, SchemaUnsupported> {
    let mut adapter = Adapter {
        root: neutral,
        inlining: Vec::new(),
    };
    let mut out = adapter.node(neutral, "")?;
    if let Some(defs) = neutral.get("$defs") {
        let Some(defs) = defs.as_object() else {
            return Err(unsupported("`$defs` that is not an object", "/$defs"));
        };
        let mut adapted = Map::new();
        for (name, def) in defs {
            adapted.insert(name.clone(), adapter.node(def, &pointer("/$defs", name))?);
        }
        if let Some(root) = out.as_object_mut() {
            root.insert("$defs".into(), Value::Object(adapted));
        }
    }
    check_limits(&out)?;
    Ok(out)
}

fn unsupported(what: &str, at: &str) -> SchemaUnsupported {
    SchemaUnsupported::new(format!("OpenAI strict mode cannot express {what}")).at(at)
}

fn any_value(at: &str) -> SchemaUnsupported {
    unsupported(
        "a value that may be anything (`{}`, as a `serde_json::Value` field renders)",
        at,
    )
}

/// `base` with one more reference token, escaped (RFC 6901).
fn pointer(base: &str, token: &str) -> String {
    format!("{base}/{}", token.replace('~', "~0").replace('/', "~1"))
}

struct Adapter<'r> {
    root: &'r Value,
    /// The `$ref`s being inlined, outermost first (a recursive type is inlined once).
    inlining: Vec<String>,
}

impl<'r> Adapter<'r> {
    fn node(&mut self, schema: &Value, at: &str) -> Result<Value, SchemaUnsupported> {
        let map = match schema {
            Value::Object(map) => map,
            Value::Bool(true) => return Err(any_value(at)),
            _ => return Err(unsupported("a schema that is not an object", at)),
        };
        if let Some(target) = map.get("$ref") {
            return self.reference(map, target, at);
        }
        let mut out = Map::new();
        for (key, value) in map {
            let here = pointer(at, key);
            match key.as_str() {
                k if KEPT.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                "format" if value.as_str().is_some_and(|f| FORMATS.contains(&f)) => {
                    out.insert(key.clone(), value.clone());
                }
                "items" if value.is_array() => {
                    return Err(unsupported("a tuple (`items` as a list)", &here));
                }
                "items" => {
                    out.insert(key.clone(), self.node(value, &here)?);
                }
                "prefixItems" => return Err(unsupported("a tuple (`prefixItems`)", &here)),
                "anyOf" | "oneOf" => {
                    if out.contains_key("anyOf") {
                        return Err(unsupported("both `anyOf` and `oneOf` on one schema", &here));
                    }
                    let Some(branches) = value.as_array() else {
                        return Err(unsupported(&format!("`{key}` that is not a list"), &here));
                    };
                    let adapted = branches
                        .iter()
                        .enumerate()
                        .map(|(i, b)| self.node(b, &pointer(&here, &i.to_string())))
                        .collect::<Result<Vec<_>, _>>()?;
                    out.insert("anyOf".into(), Value::Array(adapted));
                }
                "allOf" => return Err(unsupported("`allOf`", &here)),
                "patternProperties" => {
                    return Err(unsupported(
                        "an open map (`patternProperties` admits undeclared properties)",
                        &here,
                    ));
                }
                "$defs" | "definitions" if at.is_empty() => {}
                "$defs" | "definitions" => {
                    return Err(unsupported("definitions below the root", &here));
                }
                // Object keywords are rewritten below; the rest (`default`, `examples`,
                // `minLength`, `maxLength`, `uniqueItems`, …) is dropped: the parser still
                // enforces what it means (R5).
                _ => {}
            }
        }
        if is_object(map) {
            self.object(map, at, &mut out)?;
        }
        if !["type", "anyOf", "enum", "const"]
            .iter()
            .any(|k| out.contains_key(*k))
        {
            return Err(any_value(at));
        }
        if out.get("type").and_then(Value::as_str) == Some("array") && !out.contains_key("items") {
            return Err(unsupported("an array whose items may be anything", at));
        }
        Ok(Value::Object(out))
    }

    /// `properties`, every one `required` (the optional ones nullable), and
    /// `additionalProperties: false`.
    fn object(
        &mut self,
        map: &Map<String, Value>,
        at: &str,
        out: &mut Map<String, Value>,
    ) -> Result<(), SchemaUnsupported> {
        let closed = match map.get("additionalProperties") {
            None => false,
            Some(Value::Bool(false)) => true,
            Some(_) => {
                return Err(unsupported(
                    "an open map (`additionalProperties` with a schema, as a `HashMap` or \
                     `BTreeMap` field renders)",
                    &pointer(at, "additionalProperties"),
                ));
            }
        };
        let empty = Map::new();
        let properties = match map.get("properties") {
            Some(Value::Object(p)) => p,
            Some(_) => {
                return Err(unsupported(
                    "`properties` that is not an object",
                    &pointer(at, "properties"),
                ));
            }
            None if closed => &empty,
            None => return Err(unsupported("an object that may hold anything", at)),
        };
        let required: HashSet<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let props_at = pointer(at, "properties");
        let mut adapted = Map::new();
        let mut all = Vec::with_capacity(properties.len());
        for (name, schema) in properties {
            let node = self.node(schema, &pointer(&props_at, name))?;
            let node = if required.contains(name.as_str()) {
                node
            } else {
                nullable(node)
            };
            adapted.insert(name.clone(), node);
            all.push(Value::String(name.clone()));
        }
        out.insert("properties".into(), Value::Object(adapted));
        out.insert("required".into(), Value::Array(all));
        out.insert("additionalProperties".into(), false.into());
        Ok(())
    }

    /// A `$ref`, kept as it is; with annotations beside it (which strict mode does not take
    /// there), the target is inlined with them, once per recursion.
    fn reference(
        &mut self,
        map: &Map<String, Value>,
        target: &Value,
        at: &str,
    ) -> Result<Value, SchemaUnsupported> {
        let here = pointer(at, "$ref");
        let Some(target) = target.as_str() else {
            return Err(unsupported("a `$ref` that is not a string", &here));
        };
        let (schema, schema_at) = self.resolve(target, &here)?;
        let annotations: Vec<(&String, &Value)> = map
            .iter()
            .filter(|(k, _)| matches!(k.as_str(), "description" | "title"))
            .collect();
        if annotations.is_empty() || self.inlining.iter().any(|t| t == target) {
            return Ok(json!({ "$ref": target }));
        }
        self.inlining.push(target.to_owned());
        let inlined = self.node(schema, &schema_at);
        self.inlining.pop();
        let mut inlined = inlined?;
        if let Some(obj) = inlined.as_object_mut() {
            for (k, v) in annotations {
                obj.insert(k.clone(), v.clone());
            }
        }
        Ok(inlined)
    }

    /// The schema a `$ref` points at: the root (`#`) or one of its `$defs`.
    fn resolve(&self, target: &str, at: &str) -> Result<(&'r Value, String), SchemaUnsupported> {
        let root: &'r Value = self.root;
        if target == "#" {
            return Ok((root, String::new()));
        }
        let found = target.strip_prefix("#/$defs/").and_then(|name| {
            let name = name.replace("~1", "/").replace("~0", "~");
            root.get("$defs")?.get(&name)
        });
        match found {
            Some(schema) => Ok((schema, target.trim_start_matches('#').to_owned())),
            None => Err(unsupported(
                &format!("a `$ref` to {target:?}, which is not one of the root's `$defs`"),
                at,
            )),
        }
    }
}

/// Whether a schema node describes objects.
fn is_object(map: &Map<String, Value>) -> bool {
    let typed = match map.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => false,
    };
    typed || map.contains_key("properties")
}

#[derive(Default)]
struct Tally {
    properties: usize,
    enum_values: usize,
    length: usize,
}

/// Checks OpenAI's limits on a strict schema: nesting, properties, enum values and the
/// total length of names and values.
fn check_limits(schema: &Value) -> Result<(), SchemaUnsupported> {
    let mut tally = Tally::default();
    walk(schema, 0, "", &mut tally)?;
    if tally.properties > MAX_PROPERTIES {
        return Err(SchemaUnsupported::new(format!(
            "OpenAI strict mode takes at most {MAX_PROPERTIES} properties in one schema; this \
             one has {}",
            tally.properties
        )));
    }
    if tally.enum_values > MAX_ENUM_VALUES {
        return Err(SchemaUnsupported::new(format!(
            "OpenAI strict mode takes at most {MAX_ENUM_VALUES} enum values in one schema; \
             this one has {}",
            tally.enum_values
        )));
    }
    if tally.length > MAX_SCHEMA_STRING_LENGTH {
        return Err(SchemaUnsupported::new(format!(
            "OpenAI strict mode takes at most {MAX_SCHEMA_STRING_LENGTH} characters of \
             property names, definition names, enum and const values in one schema; this one \
             has {}",
            tally.length
        )));
    }
    Ok(())
}

fn walk(node: &Value, depth: usize, at: &str, tally: &mut Tally) -> Result<(), SchemaUnsupported> {
    let Some(map) = node.as_object() else {
        return Ok(());
    };
    if let Some(Value::Object(props)) = map.get("properties") {
        let level = depth + 1;
        let props_at = pointer(at, "properties");
        if level > MAX_NESTING {
            return Err(SchemaUnsupported::new(format!(
                "OpenAI strict mode takes at most {MAX_NESTING} levels of nested objects"
            ))
            .at(props_at));
        }
        tally.properties += props.len();
        for (name, schema) in props {
            tally.length += name.chars().count();
            walk(schema, level, &pointer(&props_at, name), tally)?;
        }
    }
    if let Some(items) = map.get("items") {
        walk(items, depth, &pointer(at, "items"), tally)?;
    }
    if let Some(Value::Array(branches)) = map.get("anyOf") {
        let any_at = pointer(at, "anyOf");
        for (i, b) in branches.iter().enumerate() {
            walk(b, depth, &pointer(&any_at, &i.to_string()), tally)?;
        }
    }
    if let Some(Value::Object(defs)) = map.get("$defs") {
        for (name, def) in defs {
            tally.length += name.chars().count();
            walk(def, 0, &pointer("/$defs", name), tally)?;
        }
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        let length: usize = values
            .iter()
            .filter_map(Value::as_str)
            .map(|s| s.chars().count())
            .sum();
        if values.len() > LARGE_ENUM && length > LARGE_ENUM_LENGTH {
            return Err(SchemaUnsupported::new(format!(
                "OpenAI strict mode takes an enum of more than {LARGE_ENUM} values only if they \
                 hold at most {LARGE_ENUM_LENGTH} characters in all; this one holds {length}"
            ))
            .at(pointer(at, "enum")));
        }
        tally.enum_values += values.len();
        tally.length += length;
    }
    if let Some(Value::String(s)) = map.get("const") {
        tally.length += s.chars().count();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(properties: Value, required: &[&str]) -> Value {
        json!({"type": "object", "properties": properties, "required": required,
               "additionalProperties": false})
    }

    #[test]
    fn v1_one_of_becomes_any_of_and_all_of_is_refused() {
        let schema = object(
            json!({"v": {"oneOf": [{"type": "string"}, {"type": "integer", "default": 1}]}}),
            &["v"],
        );
        let strict = adapt(&schema).expect("strict-capable");
        assert_eq!(
            strict["properties"]["v"],
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})
        );
        let all_of = object(json!({"v": {"allOf": [{"type": "string"}]}}), &["v"]);
        let err = adapt(&all_of).expect_err("allOf");
        assert_eq!(err.path(), Some("/properties/v/allOf"));
    }

    #[test]
    fn v1_optional_properties_become_nullable_in_every_shape() {
        let schema = object(
            json!({
                "s": {"type": "string", "description": "d", "minLength": 2},
                "e": {"type": "string", "enum": ["a", "b"]},
                "o": {"type": "object", "properties": {}, "additionalProperties": false},
                "n": {"type": ["string", "null"]},
                "u": {"anyOf": [{"type": "string"}, {"type": "integer"}], "description": "u"},
                "r": {"$ref": "#/$defs/R"}
            }),
            &[],
        );
        let mut schema = schema;
        schema["$defs"] = json!({"R": {"type": "integer"}});
        let strict = adapt(&schema).expect("strict-capable");
        let p = &strict["properties"];
        assert_eq!(
            p["s"],
            json!({"type": ["string", "null"], "description": "d"})
        );
        assert_eq!(
            p["e"],
            json!({"anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "null"}]})
        );
        assert_eq!(p["o"]["anyOf"][1], json!({"type": "null"}));
        assert_eq!(p["n"], json!({"type": ["string", "null"]}));
        assert_eq!(
            p["u"],
            json!({"description": "u",
                   "anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]})
        );
        assert_eq!(
            p["r"],
            json!({"anyOf": [{"$ref": "#/$defs/R"}, {"type": "null"}]})
        );
        assert_eq!(strict["$defs"]["R"], json!({"type": "integer"}));
        assert_eq!(strict["required"].as_array().map(Vec::len), Some(6));
    }

    #[test]
    fn v1_open_maps_any_values_and_bad_refs_are_refused_with_their_pointer() {
        let cases = [
            (
                object(
                    json!({"m": {"type": "object", "additionalProperties": {"type": "integer"}}}),
                    &["m"],
                ),
                "/properties/m/additionalProperties",
            ),
            (object(json!({"a": {}}), &["a"]), "/properties/a"),
            (object(json!({"a": true}), &["a"]), "/properties/a"),
            (
                object(json!({"a": {"type": "array"}}), &["a"]),
                "/properties/a",
            ),
            (
                object(json!({"a": {"type": "object"}}), &["a"]),
                "/properties/a",
            ),
            (
                object(json!({"a": {"$ref": "#/$defs/Missing"}}), &["a"]),
                "/properties/a/$ref",
            ),
            (
                object(json!({"a/b": {"type": "array", "prefixItems": []}}), &[]),
                "/properties/a~1b/prefixItems",
            ),
        ];
        for (schema, pointer) in cases {
            let err = adapt(&schema).expect_err("not strict-capable");
            assert_eq!(err.path(), Some(pointer), "{err}");
            assert!(
                err.reason()
                    .starts_with("OpenAI strict mode cannot express")
            );
        }
    }

    #[test]
    fn v1_openai_limits_are_checked() {
        let many: Map<String, Value> = (0..=MAX_PROPERTIES)
            .map(|i| (format!("p{i}"), json!({"type": "boolean"})))
            .collect();
        let err = adapt(&object(Value::Object(many), &[])).expect_err("too many properties");
        assert!(err.reason().contains("5000 properties"), "{err}");

        let values: Vec<String> = (0..=MAX_ENUM_VALUES).map(|i| format!("v{i}")).collect();
        let err = adapt(&object(
            json!({"e": {"type": "string", "enum": values}}),
            &["e"],
        ))
        .expect_err("too many enum values");
        assert!(err.reason().contains("enum values"), "{err}");

        let long: Vec<String> = (0..300).map(|i| format!("{i:0>60}")).collect();
        let err = adapt(&object(
            json!({"e": {"type": "string", "enum": long}}),
            &["e"],
        ))
        .expect_err("a large enum too long");
        assert_eq!(err.path(), Some("/properties/e/enum"));

        let name = "n".repeat(MAX_SCHEMA_STRING_LENGTH + 1);
        let err = adapt(&object(json!({ name: {"type": "string"} }), &[])).expect_err("too long");
        assert!(err.reason().contains("characters"), "{err}");
    }
}
