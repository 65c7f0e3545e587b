//! The schema schemars writes, made into the schema a tool publishes (C3): every `$ref` inlined
//! but those of a recursive type (kept in the root's `$defs`, as a derived type keeps them),
//! objects closed, optional properties nullable, integer formats given their range, and every
//! keyword the parser cannot enforce named.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::schema::{Pattern, SchemaError, Unsupported, nullable};

/// Keywords that only describe: published as they are, never checked.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
    "contentEncoding",
    "contentMediaType",
];

/// Keywords the parser enforces (see `compile`), published as they are.
const CHECKED: &[&str] = &[
    "type",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
    "uniqueItems",
    "required",
];

/// The JSON types a `type` keyword may name.
pub(super) const TYPES: &[&str] = &[
    "null", "boolean", "integer", "number", "string", "array", "object",
];

/// The range of each integer format schemars writes: a value past it cannot be deserialized,
/// so the schema says so (T3) and the parser reports it as a bound (S4).
const INTEGER_FORMATS: &[(&str, i128, i128)] = &[
    ("int8", i8::MIN as i128, i8::MAX as i128),
    ("int16", i16::MIN as i128, i16::MAX as i128),
    ("int32", i32::MIN as i128, i32::MAX as i128),
    ("int64", i64::MIN as i128, i64::MAX as i128),
    ("int", i64::MIN as i128, i64::MAX as i128),
    ("uint8", 0, u8::MAX as i128),
    ("uint16", 0, u16::MAX as i128),
    ("uint32", 0, u32::MAX as i128),
    ("uint64", 0, u64::MAX as i128),
    ("uint", 0, u64::MAX as i128),
];

/// Why a keyword the parser does not enforce cannot be published.
fn unsupported_reason(keyword: &str) -> &'static str {
    match keyword {
        "if" | "then" | "else" => "conditional schemas are not checked",
        "not" => "a negated schema is not checked",
        "allOf" => "schemas are not combined with `allOf`: write the properties on one object",
        "dependentSchemas" | "dependentRequired" | "dependencies" => {
            "properties that depend on others are not checked"
        }
        "patternProperties" | "propertyNames" => {
            "property names are not checked: declare the properties, or use a map of strings"
        }
        "minProperties" | "maxProperties" => "no rule counts an object's properties",
        "unevaluatedProperties" | "unevaluatedItems" => "unevaluated members are not tracked",
        "contains" | "minContains" | "maxContains" => "no rule searches an array's items",
        "$dynamicRef" | "$dynamicAnchor" | "$recursiveRef" | "$anchor" | "$id" => {
            "only `$ref`s into the root's `$defs` are resolved"
        }
        "$defs" | "definitions" => "definitions are read only at the root",
        _ => "no rule of the parser checks it",
    }
}

fn unsupported(keyword: &str, at: &str, reason: impl Into<String>) -> SchemaError {
    let at = if at.is_empty() { "/" } else { at };
    SchemaError::Unsupported(Box::new(Unsupported {
        keyword: keyword.to_owned(),
        at: at.to_owned(),
        reason: reason.into(),
    }))
}

/// `base` with one more reference token, escaped (RFC 6901).
fn pointer(base: &str, token: &str) -> String {
    format!("{base}/{}", token.replace('~', "~0").replace('/', "~1"))
}

/// The schema to publish for the root schema `root` that schemars wrote.
///
/// # Errors
///
/// Returns [`SchemaError::Unsupported`] for the first keyword the parser cannot enforce, a
/// `$ref` that does not resolve, or a malformed keyword, at its pointer in `root`.
pub(super) fn publish(root: &Value) -> Result<Value, SchemaError> {
    let defs = match root.get("$defs").or_else(|| root.get("definitions")) {
        None => Map::new(),
        Some(Value::Object(defs)) => defs.clone(),
        Some(_) => return Err(unsupported("$defs", "/$defs", "it is not an object")),
    };
    let prefix = if root.get("$defs").is_some() {
        "#/$defs/"
    } else {
        "#/definitions/"
    };
    let mut publisher = Publisher {
        defs,
        prefix,
        stack: Vec::new(),
        recursive: BTreeSet::new(),
        kept: BTreeMap::new(),
    };
    let mut out = publisher.node(root, "", true)?;
    if let Some(map) = out.as_object_mut() {
        map.remove("$schema");
        map.remove("title");
        if !publisher.kept.is_empty() {
            map.insert(
                "$defs".into(),
                Value::Object(publisher.kept.into_iter().collect()),
            );
        }
    }
    Ok(out)
}

struct Publisher {
    defs: Map<String, Value>,
    /// `#/$defs/` or `#/definitions/`: how the root's `$ref`s name a definition.
    prefix: &'static str,
    /// The definitions being inlined, outermost first.
    stack: Vec<String>,
    /// The definitions that refer to themselves: kept in `$defs`, used by `$ref`.
    recursive: BTreeSet<String>,
    /// The published form of each recursive definition.
    kept: BTreeMap<String, Value>,
}

impl Publisher {
    fn node(&mut self, schema: &Value, at: &str, root: bool) -> Result<Value, SchemaError> {
        let map = match schema {
            // `true` admits anything, as `{}` does; `false` nothing.
            Value::Bool(true) => return Ok(Value::Object(Map::new())),
            Value::Bool(false) => return Ok(Value::Bool(false)),
            Value::Object(map) => map,
            _ => {
                return Err(unsupported(
                    "schema",
                    at,
                    "a schema is an object or a boolean",
                ));
            }
        };
        let mut out = match map.get("$ref") {
            Some(target) => self.reference(target, &pointer(at, "$ref"))?,
            None => Map::new(),
        };
        for (key, value) in map {
            let here = pointer(at, key);
            match key.as_str() {
                "$ref" => {}
                "$schema" if root => {}
                "$defs" | "definitions" if root => {}
                k if ANNOTATIONS.contains(&k) || k.starts_with("x-") => {
                    out.insert(key.clone(), value.clone());
                }
                k if CHECKED.contains(&k) => {
                    check_value(k, value, &here)?;
                    out.insert(key.clone(), value.clone());
                }
                "items" | "additionalProperties" => {
                    let published = self.node(value, &here, false)?;
                    out.insert(key.clone(), published);
                }
                "prefixItems" | "anyOf" | "oneOf" => {
                    let list = self.list(value, &here)?;
                    out.insert(key.clone(), Value::Array(list));
                }
                "properties" => {
                    let Value::Object(properties) = value else {
                        return Err(unsupported(key, &here, "it is not an object"));
                    };
                    let mut published = Map::new();
                    for (name, property) in properties {
                        let node = self.node(property, &pointer(&here, name), false)?;
                        published.insert(name.clone(), node);
                    }
                    out.insert(key.clone(), Value::Object(published));
                }
                other => return Err(unsupported(other, &here, unsupported_reason(other))),
            }
        }
        finish_node(&mut out, at)?;
        Ok(Value::Object(out))
    }

    fn list(&mut self, value: &Value, at: &str) -> Result<Vec<Value>, SchemaError> {
        let Value::Array(items) = value else {
            return Err(unsupported(
                at.rsplit('/').next().unwrap_or(""),
                at,
                "it is not a list",
            ));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| self.node(item, &pointer(at, &i.to_string()), false))
            .collect()
    }

    /// The members a `$ref` stands for: the definition inlined, or the `$ref` kept when the
    /// definition refers to itself.
    fn reference(&mut self, target: &Value, at: &str) -> Result<Map<String, Value>, SchemaError> {
        let target = target.as_str().unwrap_or_default();
        if target == "#" {
            return Ok(ref_to("#".to_owned()));
        }
        let name = target
            .strip_prefix(self.prefix)
            .map(|name| name.replace("~1", "/").replace("~0", "~"))
            .filter(|name| self.defs.contains_key(name))
            .ok_or_else(|| {
                unsupported(
                    "$ref",
                    at,
                    format!("`{target}` does not name a definition of the root's `$defs`"),
                )
            })?;
        let published_ref = format!("#/$defs/{}", name.replace('~', "~0").replace('/', "~1"));
        if self.stack.contains(&name) || self.kept.contains_key(&name) {
            self.recursive.insert(name);
            return Ok(ref_to(published_ref));
        }
        let def = self.defs.get(&name).cloned().unwrap_or(Value::Bool(true));
        self.stack.push(name.clone());
        let inlined = self.node(&def, &pointer("/$defs", &name), false);
        self.stack.pop();
        let inlined = inlined?;
        if self.recursive.contains(&name) {
            self.kept.insert(name, inlined);
            return Ok(ref_to(published_ref));
        }
        match inlined {
            Value::Object(map) => Ok(map),
            _ => Err(unsupported(
                "$ref",
                at,
                "it names a definition that admits nothing (`false`)",
            )),
        }
    }
}

/// A `oneOf` of string constants (a unit enum whose variants have doc comments) as the
/// derive writes one: a string `enum`, each variant's doc in the description (`- `low`: …`).
/// Every client reads the violation of an `enum` alike; one of alternatives it may not.
fn string_choices(out: &mut Map<String, Value>) {
    let Some(Value::Array(branches)) = out.get("oneOf").or_else(|| out.get("anyOf")) else {
        return;
    };
    let mut names = Vec::with_capacity(branches.len());
    let mut docs = Vec::new();
    for branch in branches {
        let Value::Object(branch) = branch else {
            return;
        };
        let only_annotated = branch.keys().all(|k| {
            matches!(
                k.as_str(),
                "type" | "const" | "enum" | "description" | "title"
            )
        });
        let typed = match branch.get("type") {
            None => true,
            Some(Value::String(t)) => t == "string",
            Some(_) => false,
        };
        // The undocumented variants come as one `enum`, each documented one as a `const`.
        let listed: Vec<&str> = match (branch.get("const"), branch.get("enum")) {
            (Some(Value::String(name)), None) => vec![name.as_str()],
            (None, Some(Value::Array(values))) => {
                match values.iter().map(Value::as_str).collect::<Option<Vec<_>>>() {
                    Some(listed) => listed,
                    None => return,
                }
            }
            _ => return,
        };
        if !only_annotated || !typed {
            return;
        }
        if let (Some(doc), [name]) = (
            branch.get("description").and_then(Value::as_str),
            listed.as_slice(),
        ) {
            docs.push(format!("- `{name}`: {doc}"));
        }
        names.extend(
            listed
                .into_iter()
                .map(|name| Value::String(name.to_owned())),
        );
    }
    out.remove("oneOf");
    out.remove("anyOf");
    out.insert("type".into(), Value::String("string".into()));
    out.insert("enum".into(), Value::Array(names));
    if !docs.is_empty() {
        let listed = docs.join("\n");
        let description = match out.get("description").and_then(Value::as_str) {
            Some(own) => format!("{own}\n\n{listed}"),
            None => listed,
        };
        out.insert("description".into(), Value::String(description));
    }
}

fn ref_to(target: String) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("$ref".into(), Value::String(target));
    map
}

/// Checks that a keyword the parser enforces has a value it can read.
fn check_value(keyword: &str, value: &Value, at: &str) -> Result<(), SchemaError> {
    let fits = match keyword {
        "type" => match value {
            Value::String(t) => TYPES.contains(&t.as_str()),
            Value::Array(ts) => ts
                .iter()
                .all(|t| t.as_str().is_some_and(|t| TYPES.contains(&t))),
            _ => false,
        },
        "enum" => value.is_array(),
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => value.is_number(),
        "multipleOf" => value.as_f64().is_some_and(|step| step > 0.0),
        "minLength" | "maxLength" | "minItems" | "maxItems" => value.is_u64(),
        "uniqueItems" => value.is_boolean(),
        "format" => value.is_string(),
        "required" => value
            .as_array()
            .is_some_and(|names| names.iter().all(Value::is_string)),
        "pattern" => {
            let source = value.as_str().unwrap_or_default();
            return match Pattern::compile(source) {
                Ok(_) if value.is_string() => Ok(()),
                Ok(_) => Err(unsupported(keyword, at, "it is not a string")),
                Err(error) => Err(unsupported(keyword, at, error.to_string())),
            };
        }
        _ => true,
    };
    if fits {
        Ok(())
    } else {
        Err(unsupported(
            keyword,
            at,
            "its value is not one the keyword takes",
        ))
    }
}

/// What a node needs once its keywords are published: an object that declares properties is
/// closed (S4) and its optional properties admit `null` (T3); an integer format gets its range.
fn finish_node(out: &mut Map<String, Value>, at: &str) -> Result<(), SchemaError> {
    string_choices(out);
    if out.contains_key("properties") {
        if let Some(keyword) = ["anyOf", "oneOf"]
            .into_iter()
            .find(|k| out.contains_key(*k))
        {
            return Err(unsupported(
                keyword,
                &pointer(at, keyword),
                "properties beside alternatives (a flattened enum) are not checked: make the \
                 enum a field of its own",
            ));
        }
        out.entry("additionalProperties")
            .or_insert(Value::Bool(false));
        let required: BTreeSet<String> = out
            .get("required")
            .and_then(Value::as_array)
            .map(|names| {
                names
                    .iter()
                    .filter_map(|n| n.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        if let Some(Value::Object(properties)) = out.get_mut("properties") {
            for (name, property) in properties.iter_mut() {
                if !required.contains(name) {
                    *property = nullable(std::mem::take(property));
                }
            }
        }
    }
    let range = out
        .get("format")
        .and_then(Value::as_str)
        .and_then(|f| INTEGER_FORMATS.iter().find(|(name, ..)| *name == f));
    if let Some(&(_, min, max)) = range {
        let tighter_min = out
            .get("minimum")
            .and_then(Value::as_f64)
            .is_some_and(|m| m >= min as f64);
        if !tighter_min {
            out.insert("minimum".into(), crate::schema::Num::Int(min).to_json());
        }
        let tighter_max = out
            .get("maximum")
            .and_then(Value::as_f64)
            .is_some_and(|m| m <= max as f64);
        if !tighter_max {
            out.insert("maximum".into(), crate::schema::Num::Int(max).to_json());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rejected(schema: &Value) -> (String, String) {
        match publish(schema) {
            Err(SchemaError::Unsupported(found)) => (found.keyword, found.at),
            other => panic!("expected an unsupported keyword, got {other:?}"),
        }
    }

    #[test]
    fn c3_what_the_parser_cannot_enforce_is_named_at_its_pointer() {
        let object = |property: Value| json!({"type": "object", "properties": {"a": property}, "required": ["a"]});
        for keyword in [
            "not",
            "if",
            "allOf",
            "patternProperties",
            "minProperties",
            "contains",
        ] {
            let schema = object(json!({"type": "object", keyword: {}}));
            assert_eq!(
                rejected(&schema),
                (keyword.to_owned(), format!("/properties/a/{keyword}"))
            );
        }
        let dangling = object(json!({"$ref": "#/$defs/Missing"}));
        assert_eq!(
            rejected(&dangling),
            ("$ref".to_owned(), "/properties/a/$ref".to_owned())
        );
        let nested_defs = json!({"type": "object", "$defs": {"A": {"type": "object", "properties": {},
            "$defs": {}}}, "properties": {"a": {"$ref": "#/$defs/A"}}});
        assert_eq!(
            rejected(&nested_defs),
            ("$defs".to_owned(), "/$defs/A/$defs".to_owned())
        );
        let lookaround = object(json!({"type": "string", "pattern": "^(?=a)"}));
        assert_eq!(rejected(&lookaround).0, "pattern");
    }

    #[test]
    fn c3_annotations_pass_refs_inline_and_integers_get_their_range() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Args",
            "type": "object",
            "x-origin": "test",
            "properties": {
                "n": {"type": "integer", "format": "int32", "minimum": 1, "deprecated": true},
                "inner": {"$ref": "#/$defs/Inner", "description": "The field's own."}
            },
            "required": ["inner"],
            "$defs": {"Inner": {"type": "object", "description": "The type's.",
                "properties": {"s": {"type": "string"}}}}
        });
        let published = publish(&schema).expect("publishable");
        assert_eq!(
            published,
            json!({
                "type": "object",
                "x-origin": "test",
                "additionalProperties": false,
                "properties": {
                    "n": {"type": ["integer", "null"], "format": "int32", "minimum": 1,
                        "maximum": i32::MAX, "deprecated": true},
                    "inner": {"type": "object", "description": "The field's own.",
                        "additionalProperties": false,
                        "properties": {"s": {"type": ["string", "null"]}}}
                },
                "required": ["inner"]
            })
        );
    }
}
