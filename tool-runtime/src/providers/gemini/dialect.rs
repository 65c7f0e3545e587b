//! A tool's schema in Gemini's dialect (V4): the declared rewriting of the neutral schema
//! into what a function declaration's `parametersJsonSchema` (and a typed answer's
//! `responseJsonSchema`) takes.
//!
//! # Why `parametersJsonSchema`
//!
//! The API takes a function's parameters two ways: `parameters`, Google's OpenAPI-derived
//! `Schema` (no `$ref`, so no recursive type; no `additionalProperties` on the Gemini API;
//! `nullable` in place of a `null` type), or `parametersJsonSchema`, JSON Schema itself. The
//! second says more of what the neutral schema says (maps, recursion through `$defs`, `null`
//! in `type` lists, `oneOf`) and needs no translation of the keywords both share, so the
//! driver publishes that. Google's own SDK recommends it over `parameters`.
//!
//! # The rewriting
//!
//! `parametersJsonSchema` takes the keywords of Google's SDK's `JSONSchema` type (listed in
//! [`KEPT`]); the rewriting is checked against that type by the tests. The rest is rewritten:
//!
//! - `const` becomes a one-value `enum` (the dialect has no `const`; a tag of an enum's
//!   variants stays exact).
//! - A schema `true` (anything) becomes `{}`.
//! - A `$ref` to the root (`#`, a recursive type) points instead at a copy of the root kept
//!   in `$defs` (under [`ROOT_DEF`], or that name with a number when taken): Gemini documents
//!   references into `$defs` only.
//! - `$schema`, `$id` and `$comment` are dropped: they say nothing to the model.
//! - Every other keyword without subschemas (`exclusiveMinimum`, `multipleOf`, `examples`,
//!   `deprecated`, …) moves into the node's `description`, as `keyword: value` text.
//!
//! Nothing is widened for the parser: every call is still validated against the neutral
//! schema (R5), so a constraint moved into the description is still enforced.
//!
//! What the dialect cannot express at all fails [`rewrite`] (and so the agent's `build()`,
//! naming the tool), at the JSON pointer of the keyword: the combinators and applicators
//! that hold subschemas the dialect has no keyword for (`allOf`, `not`, `if`/`then`/`else`,
//! `prefixItems`, `patternProperties`, …), a schema `false`, a `$ref` that does not point into
//! the root's `$defs`, a root that is not an object schema, and nesting deeper than
//! [`MAX_DEPTH`].

use serde_json::{Map, Value};

use crate::model::SchemaUnsupported;

/// The keywords `parametersJsonSchema` takes, kept as they are (subschemas rewritten).
pub const KEPT: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "default",
    "items",
    "minItems",
    "maxItems",
    "enum",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "additionalProperties",
    "anyOf",
    "oneOf",
    "uniqueItems",
    "$ref",
    "$defs",
];

/// Keywords dropped: they say nothing to the model.
const DROPPED: &[&str] = &["$schema", "$id", "$comment"];

/// Keywords that hold subschemas the dialect has no place for: a schema using them cannot
/// be expressed.
const INEXPRESSIBLE: &[&str] = &[
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "prefixItems",
    "contains",
    "patternProperties",
    "propertyNames",
    "dependentSchemas",
    "unevaluatedProperties",
    "unevaluatedItems",
    "definitions",
    "$dynamicRef",
    "$anchor",
];

/// The name under which a root that refers to itself is copied into `$defs`.
pub const ROOT_DEF: &str = "Root";

/// The deepest nesting of subschemas the rewriting follows.
pub const MAX_DEPTH: usize = 64;

/// A schema in Gemini's dialect, and what the rewriting changed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Rewritten {
    /// The schema as `parametersJsonSchema` takes it.
    pub schema: Value,
    /// Every keyword the rewriting changed, in the order met.
    pub changes: Vec<Change>,
}

/// One keyword the rewriting changed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Change {
    /// The JSON pointer of the schema node that held it.
    pub pointer: String,
    /// The keyword.
    pub keyword: String,
    /// What became of it.
    pub kind: ChangeKind,
}

/// What became of a keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChangeKind {
    /// Moved into the node's `description` as text.
    Described,
    /// Dropped.
    Dropped,
    /// Said another way (`const` as a one-value `enum`, `true` as `{}`).
    Rewritten,
}

/// A schema Gemini's dialect cannot express.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Gemini's schema dialect cannot express `{keyword}` (at {pointer}): {reason}")]
#[non_exhaustive]
pub struct DialectError {
    /// The JSON pointer of the keyword.
    pub pointer: String,
    /// The keyword.
    pub keyword: String,
    /// Why.
    pub reason: String,
}

impl DialectError {
    fn new(pointer: &str, keyword: &str, reason: impl Into<String>) -> Self {
        Self {
            pointer: if pointer.is_empty() {
                "/".into()
            } else {
                pointer.into()
            },
            keyword: keyword.into(),
            reason: reason.into(),
        }
    }

    /// The same problem as the agent's `build()` reports it.
    pub fn into_unsupported(self) -> SchemaUnsupported {
        let at = format!(
            "{}{}",
            self.pointer.trim_end_matches('/'),
            pointer_token(&self.keyword)
        );
        SchemaUnsupported::new(format!(
            "Gemini's schema dialect cannot express `{}`: {}",
            self.keyword, self.reason
        ))
        .at(at)
    }
}

/// `schema` (a tool's neutral schema, or a typed answer's) in Gemini's dialect.
///
/// # Errors
///
/// Returns a [`DialectError`] naming the keyword and its pointer for what the dialect cannot
/// express (see the module's documentation).
pub fn rewrite(schema: &Value) -> Result<Rewritten, DialectError> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(DialectError::new(
            "",
            "type",
            "a function's parameters must be an object schema",
        ));
    }
    let defs = schema.get("$defs").and_then(Value::as_object);
    let taken = |name: &String| defs.is_some_and(|d| d.contains_key(name));
    let root_name = std::iter::once(ROOT_DEF.to_owned())
        .chain((1..).map(|n| format!("{ROOT_DEF}{n}")))
        .find(|name| !taken(name))
        .unwrap_or_default();
    let mut rewriter = Rewriter {
        root: schema,
        root_name,
        root_referenced: false,
        changes: Vec::new(),
    };
    let mut out = rewriter.node(schema, "", 0)?;
    if rewriter.root_referenced
        && let Value::Object(root) = &mut out
    {
        let mut copy = root.clone();
        copy.remove("$defs");
        let defs = root
            .entry("$defs")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(defs) = defs {
            defs.insert(rewriter.root_name.clone(), Value::Object(copy));
        }
    }
    Ok(Rewritten {
        schema: out,
        changes: rewriter.changes,
    })
}

struct Rewriter<'a> {
    root: &'a Value,
    root_name: String,
    root_referenced: bool,
    changes: Vec<Change>,
}

impl Rewriter<'_> {
    fn change(&mut self, pointer: &str, keyword: &str, kind: ChangeKind) {
        self.changes.push(Change {
            pointer: pointer.to_owned(),
            keyword: keyword.to_owned(),
            kind,
        });
    }

    /// One schema node at `at`.
    fn node(&mut self, node: &Value, at: &str, depth: usize) -> Result<Value, DialectError> {
        if depth > MAX_DEPTH {
            return Err(DialectError::new(
                at,
                "$ref",
                format!("the schema nests deeper than {MAX_DEPTH} levels"),
            ));
        }
        let map = match node {
            Value::Object(map) => map,
            Value::Bool(true) => {
                self.change(at, "true", ChangeKind::Rewritten);
                return Ok(Value::Object(Map::new()));
            }
            Value::Bool(false) => {
                return Err(DialectError::new(at, "false", "a schema no value fits"));
            }
            _ => return Err(DialectError::new(at, "", "a schema that is not an object")),
        };
        let mut out = Map::new();
        let mut described: Vec<String> = Vec::new();
        for (keyword, value) in map {
            let here = format!("{at}{}", pointer_token(keyword));
            match keyword.as_str() {
                "properties" | "$defs" => {
                    out.insert(keyword.clone(), self.map_of(value, &here, keyword, depth)?);
                }
                "items" => {
                    out.insert(keyword.clone(), self.node(value, &here, depth + 1)?);
                }
                "additionalProperties" if value.is_boolean() => {
                    out.insert(keyword.clone(), value.clone());
                }
                "additionalProperties" => {
                    out.insert(keyword.clone(), self.node(value, &here, depth + 1)?);
                }
                "anyOf" | "oneOf" => {
                    out.insert(keyword.clone(), self.list_of(value, &here, keyword, depth)?);
                }
                "$ref" if value.as_str() == Some("#") => {
                    self.change(at, keyword, ChangeKind::Rewritten);
                    self.root_referenced = true;
                    let target = format!("#/$defs/{}", self.root_name);
                    out.insert(keyword.clone(), target.into());
                }
                "$ref" => {
                    self.check_ref(value, at)?;
                    out.insert(keyword.clone(), value.clone());
                }
                "const" => {
                    self.change(at, keyword, ChangeKind::Rewritten);
                    out.insert("enum".into(), Value::Array(vec![value.clone()]));
                }
                kept if KEPT.contains(&kept) => {
                    out.insert(keyword.clone(), value.clone());
                }
                dropped if DROPPED.contains(&dropped) => {
                    self.change(at, keyword, ChangeKind::Dropped);
                }
                inexpressible if INEXPRESSIBLE.contains(&inexpressible) => {
                    return Err(DialectError::new(
                        at,
                        keyword,
                        "the dialect has no keyword for what it says",
                    ));
                }
                _ => {
                    self.change(at, keyword, ChangeKind::Described);
                    described.push(format!("{keyword}: {value}"));
                }
            }
        }
        if !described.is_empty() {
            let original = map.get("description").and_then(Value::as_str);
            out.insert("description".into(), describe(original, &described).into());
        }
        Ok(Value::Object(out))
    }

    /// `properties` or `$defs`: a map of names to schemas.
    fn map_of(
        &mut self,
        value: &Value,
        at: &str,
        keyword: &str,
        depth: usize,
    ) -> Result<Value, DialectError> {
        let Some(map) = value.as_object() else {
            return Err(DialectError::new(at, keyword, "it is not an object"));
        };
        let mut out = Map::new();
        for (name, schema) in map {
            let here = format!("{at}{}", pointer_token(name));
            out.insert(name.clone(), self.node(schema, &here, depth + 1)?);
        }
        Ok(Value::Object(out))
    }

    /// `anyOf` or `oneOf`: a list of schemas.
    fn list_of(
        &mut self,
        value: &Value,
        at: &str,
        keyword: &str,
        depth: usize,
    ) -> Result<Value, DialectError> {
        let Some(list) = value.as_array() else {
            return Err(DialectError::new(at, keyword, "it is not an array"));
        };
        let mut out = Vec::with_capacity(list.len());
        for (i, schema) in list.iter().enumerate() {
            out.push(self.node(schema, &format!("{at}/{i}"), depth + 1)?);
        }
        Ok(Value::Array(out))
    }

    /// A `$ref` must point at a schema of the root's `$defs`.
    fn check_ref(&self, value: &Value, at: &str) -> Result<(), DialectError> {
        let target = value
            .as_str()
            .and_then(|r| r.strip_prefix("#/$defs/"))
            .filter(|name| !name.contains('/'));
        let found = target.is_some_and(|name| {
            let name = name.replace("~1", "/").replace("~0", "~");
            self.root
                .pointer("/$defs")
                .and_then(|d| d.get(&name))
                .is_some()
        });
        if found {
            Ok(())
        } else {
            Err(DialectError::new(
                at,
                "$ref",
                format!("{value} does not point at a schema of the root's `$defs`"),
            ))
        }
    }
}

/// A node's description followed by the keywords moved into it, as `keyword: value` text.
fn describe(original: Option<&str>, described: &[String]) -> String {
    let mut text = original.unwrap_or_default().to_owned();
    if !text.is_empty() {
        text.push_str("\n\n");
    }
    text.push_str(&described.join("; "));
    text
}

/// `/name`, escaped as a JSON pointer token.
fn pointer_token(name: &str) -> String {
    format!("/{}", name.replace('~', "~0").replace('/', "~1"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // V4: kept keywords stay, `const` becomes an enum, the rest moves into the description,
    // and each change is listed at its pointer.
    #[test]
    fn v4_the_declared_rewriting() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "kind": {"const": "circle"},
                "radius": {"type": "number", "description": "Its radius.", "exclusiveMinimum": 0},
                "next": {"$ref": "#/$defs/Node"},
                "any": true,
            },
            "required": ["kind"],
            "$defs": {"Node": {"type": "object", "additionalProperties": {"type": "string"}}},
        });
        let out = rewrite(&schema).expect("expressible");
        assert_eq!(
            out.schema["properties"]["kind"],
            json!({"enum": ["circle"]})
        );
        assert_eq!(
            out.schema["properties"]["radius"]["description"],
            "Its radius.\n\nexclusiveMinimum: 0"
        );
        assert_eq!(out.schema["properties"]["any"], json!({}));
        assert_eq!(out.schema.get("$schema"), None);
        assert_eq!(out.schema["$defs"], schema["$defs"]);
        let listed: Vec<(&str, &str)> = out
            .changes
            .iter()
            .map(|c| (c.pointer.as_str(), c.keyword.as_str()))
            .collect();
        assert!(listed.contains(&("", "$schema")));
        assert!(listed.contains(&("/properties/radius", "exclusiveMinimum")));
        assert!(listed.contains(&("/properties/kind", "const")));
    }

    // V4: a reference to the root points at a copy of the root in `$defs`, under a name no
    // definition holds.
    #[test]
    fn v4_a_recursive_root_is_copied_into_defs() {
        let schema = json!({
            "type": "object",
            "properties": {"children": {"type": "array", "items": {"$ref": "#"}}},
            "$defs": {"Root": {"type": "string"}},
        });
        let out = rewrite(&schema).expect("expressible").schema;
        assert_eq!(
            out["properties"]["children"]["items"],
            json!({"$ref": "#/$defs/Root1"})
        );
        assert_eq!(out["$defs"]["Root"], json!({"type": "string"}));
        assert_eq!(out["$defs"]["Root1"]["properties"], out["properties"]);
        assert_eq!(out["$defs"]["Root1"].get("$defs"), None);
    }

    // V4: what the dialect cannot express fails, naming keyword and pointer.
    #[test]
    fn v4_inexpressible_schemas_fail_at_their_pointer() {
        let all_of = json!({"type": "object", "properties": {"a": {"allOf": [{}]}}});
        let e = rewrite(&all_of).expect_err("allOf");
        assert_eq!(
            (e.pointer.as_str(), e.keyword.as_str()),
            ("/properties/a", "allOf")
        );
        assert_eq!(e.into_unsupported().path(), Some("/properties/a/allOf"));
        let dangling = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/B"}}});
        assert_eq!(rewrite(&dangling).expect_err("dangling").keyword, "$ref");
        let not_object = json!({"type": "string"});
        assert_eq!(rewrite(&not_object).expect_err("root").keyword, "type");
        let mut deep = json!({"type": "string"});
        for _ in 0..=MAX_DEPTH {
            deep = json!({"type": "array", "items": deep});
        }
        let deep = json!({"type": "object", "properties": {"d": deep}});
        assert!(rewrite(&deep).is_err(), "nesting is bounded");
    }
}
