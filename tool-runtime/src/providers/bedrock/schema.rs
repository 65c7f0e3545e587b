//! A tool's schema in Bedrock's dialect (V4): `$defs` and `$ref` inlined, since not every
//! model behind Converse resolves references.
//!
//! Each `{"$ref": "#/$defs/Name"}` is replaced by the definition it names (its own
//! references inlined in turn), the keywords beside the reference (a `description`) kept
//! over the definition's. A reference that would recur (a recursive type, or `"#"`) cannot
//! be inlined: it stays, and `$defs` stays with it, holding only the definitions such a
//! reference needs, themselves inlined but for the references that recur. Nothing is dropped, so the parser
//! enforces exactly what the model was shown. Data keywords (`enum`, `const`, `default`,
//! `examples`) are not read as schemas. A schema whose inlining would pass
//! [`MAX_NODES`] nodes (definitions used many times, nested deep) is sent as it is.

use serde_json::{Map, Value};

/// The most nodes an inlined schema may visit before inlining is given up.
pub(super) const MAX_NODES: usize = 100_000;

/// Keywords whose values are data, never schemas.
const DATA: [&str; 4] = ["enum", "const", "default", "examples"];

struct Inliner<'d> {
    defs: &'d Map<String, Value>,
    stack: Vec<String>,
    recursive: bool,
    budget: usize,
}

/// `schema` with its `$defs` inlined where they can be.
pub(super) fn inline_defs(schema: &Value) -> Value {
    let Some(defs) = schema.get("$defs").and_then(Value::as_object) else {
        return schema.clone();
    };
    let mut inliner = Inliner {
        defs,
        stack: Vec::new(),
        recursive: false,
        budget: MAX_NODES,
    };
    let Some(mut out) = inliner.node(schema) else {
        return schema.clone();
    };
    if inliner.recursive {
        let Some(kept) = inliner.kept_defs(&out) else {
            return schema.clone();
        };
        if let Some(map) = out.as_object_mut()
            && !kept.is_empty()
        {
            map.insert("$defs".into(), Value::Object(kept));
        }
    }
    out
}

/// The names of the definitions `node` still refers to (`#/$defs/Name`), data keywords
/// aside.
fn referred(node: &Value, names: &mut Vec<String>) {
    match node {
        Value::Object(map) => {
            if let Some(name) = map
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/$defs/"))
            {
                names.push(unescape(name));
            }
            map.iter()
                .filter(|(k, _)| !DATA.contains(&k.as_str()))
                .for_each(|(_, v)| referred(v, names));
        }
        Value::Array(items) => items.iter().for_each(|item| referred(item, names)),
        _ => {}
    }
}

/// A JSON pointer token decoded (`~1` is `/`, `~0` is `~`).
fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

impl Inliner<'_> {
    /// The node inlined; `None` when the budget ran out.
    fn node(&mut self, node: &Value) -> Option<Value> {
        self.budget = self.budget.checked_sub(1)?;
        match node {
            Value::Object(map) => match map.get("$ref").and_then(Value::as_str) {
                Some(reference) => self.reference(reference, map),
                None => self.object(map),
            },
            Value::Array(items) => items.iter().map(|item| self.node(item)).collect(),
            other => Some(other.clone()),
        }
    }

    fn object(&mut self, map: &Map<String, Value>) -> Option<Value> {
        let mut out = Map::with_capacity(map.len());
        for (key, value) in map {
            if key == "$defs" {
                continue;
            }
            let value = if DATA.contains(&key.as_str()) {
                value.clone()
            } else {
                self.node(value)?
            };
            out.insert(key.clone(), value);
        }
        Some(Value::Object(out))
    }

    fn reference(&mut self, reference: &str, map: &Map<String, Value>) -> Option<Value> {
        let name = reference.strip_prefix("#/$defs/").map(unescape);
        let target = name.as_ref().and_then(|n| self.defs.get(n).map(|d| (n, d)));
        let Some((name, def)) = target else {
            // `#` (the root), or a reference elsewhere: kept as it is.
            self.recursive |= reference == "#";
            return self.object_keeping_ref(map);
        };
        if self.stack.contains(name) {
            self.recursive = true;
            return self.object_keeping_ref(map);
        }
        self.stack.push(name.clone());
        let body = self.node(def);
        self.stack.pop();
        let mut body = body?;
        let siblings = map.iter().filter(|(k, _)| *k != "$ref");
        if let Some(out) = body.as_object_mut() {
            for (key, value) in siblings {
                let value = if DATA.contains(&key.as_str()) {
                    value.clone()
                } else {
                    self.node(value)?
                };
                out.insert(key.clone(), value);
            }
        }
        Some(body)
    }

    /// The definitions a recursive reference of `inlined` still needs, and those they need in
    /// turn, each inlined but for the references that recur through it; `None` when the
    /// budget ran out.
    fn kept_defs(&mut self, inlined: &Value) -> Option<Map<String, Value>> {
        let mut wanted = Vec::new();
        referred(inlined, &mut wanted);
        let mut kept = Map::new();
        while let Some(name) = wanted.pop() {
            let Some(def) = self.defs.get(&name).filter(|_| !kept.contains_key(&name)) else {
                continue;
            };
            self.stack = vec![name.clone()];
            let body = self.node(def)?;
            referred(&body, &mut wanted);
            kept.insert(name, body);
        }
        Some(kept)
    }

    fn object_keeping_ref(&mut self, map: &Map<String, Value>) -> Option<Value> {
        let mut out = self.object(map)?;
        if let (Some(out), Some(reference)) = (out.as_object_mut(), map.get("$ref")) {
            out.insert("$ref".into(), reference.clone());
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn v4_definitions_are_inlined_with_their_siblings() {
        let schema = json!({
            "type": "object",
            "properties": {
                "region": {"$ref": "#/$defs/Region", "description": "Where to look."},
                "regions": {"type": "array", "items": {"$ref": "#/$defs/Region"}},
                "tag": {"enum": [{"$ref": "#/$defs/Region"}]},
            },
            "$defs": {
                "Region": {"type": "object", "properties": {"zone": {"$ref": "#/$defs/a~1b"}}},
                "a/b": {"type": "string", "minLength": 1},
            },
        });
        let zone = json!({"type": "string", "minLength": 1});
        assert_eq!(
            inline_defs(&schema),
            json!({
                "type": "object",
                "properties": {
                    "region": {"type": "object", "properties": {"zone": zone},
                               "description": "Where to look."},
                    "regions": {"type": "array",
                                "items": {"type": "object", "properties": {"zone": zone}}},
                    "tag": {"enum": [{"$ref": "#/$defs/Region"}]},
                },
            })
        );
    }

    #[test]
    fn v4_recursive_references_stay_with_their_defs() {
        let schema = json!({
            "type": "object",
            "properties": {"node": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {"type": "object",
                               "properties": {"next": {"$ref": "#/$defs/Node"}}}},
        });
        let out = inline_defs(&schema);
        assert_eq!(
            out["properties"]["node"]["properties"]["next"],
            json!({"$ref": "#/$defs/Node"})
        );
        assert_eq!(out["$defs"], schema["$defs"]);
        // V4: only the definitions a kept reference needs stay, inlined but for the
        // recursion (as pydantic-ai's Bedrock transform sends them).
        let schema = json!({
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Tree"}, "kind": {"$ref": "#/$defs/Kind"}},
            "$defs": {
                "Kind": {"type": "string"},
                "Tree": {"type": "object", "properties": {
                    "kind": {"$ref": "#/$defs/Kind"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}},
            },
        });
        assert_eq!(
            inline_defs(&schema)["$defs"],
            json!({"Tree": {"type": "object", "properties": {
                "kind": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}}})
        );
        let plain = json!({"type": "object", "properties": {"x": {"type": "integer"}}});
        assert_eq!(inline_defs(&plain), plain);
    }

    #[test]
    fn v4_a_schema_that_would_explode_is_sent_as_it_is() {
        // Each level uses the next twice: 2^40 nodes if inlined.
        let mut defs = Map::new();
        for level in 0..40 {
            let next = json!({"$ref": format!("#/$defs/level{}", level + 1)});
            defs.insert(
                format!("level{level}"),
                json!({"type": "array", "items": [next.clone(), next]}),
            );
        }
        defs.insert("level40".into(), json!({"type": "string"}));
        let schema = json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/level0"}},
                            "$defs": defs});
        assert_eq!(inline_defs(&schema), schema);
    }
}
