//! Schemas that say when `null` is a value (T3): what the parser takes as "absent" (`null` for
//! an `Option` or a defaulted field, S2) is published as admitted, so that a validator on the
//! other side of a transport agrees with the parser.

use serde_json::{Map, Value, json};

/// Whether `null` is a value of a node, as far as it says without resolving `$ref`s.
pub fn accepts_null(node: &Value) -> bool {
    match node.get("type") {
        Some(Value::String(t)) if t == "null" => return true,
        Some(Value::Array(ts)) if ts.iter().any(|t| t == "null") => return true,
        _ => {}
    }
    node.get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|bs| bs.iter().any(accepts_null))
        || node
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|vs| vs.contains(&Value::Null))
        || node.get("const") == Some(&Value::Null)
}

/// `node`, also accepting `null`: a type list for a plain scalar (`["integer", "null"]`), else
/// an `anyOf` with a `null` branch and the description and title moved outside. A node that
/// accepts `null` already is returned as it is.
pub fn nullable(mut node: Value) -> Value {
    if accepts_null(&node) {
        return node;
    }
    let Some(map) = node.as_object_mut() else {
        return node;
    };
    let scalar = |t: &str| matches!(t, "string" | "number" | "integer" | "boolean");
    if !map.contains_key("enum") && !map.contains_key("const") {
        match map.get_mut("type") {
            Some(Value::String(t)) if scalar(t) => {
                let t = std::mem::take(t);
                map.insert("type".into(), json!([t, "null"]));
                return node;
            }
            Some(Value::Array(ts)) if ts.iter().all(|t| t.as_str().is_some_and(scalar)) => {
                ts.push("null".into());
                return node;
            }
            _ => {}
        }
    }
    let mut outer = Map::new();
    for key in ["description", "title"] {
        if let Some(v) = map.remove(key) {
            outer.insert(key.into(), v);
        }
    }
    let branches = match map.remove("anyOf") {
        Some(Value::Array(mut branches)) if map.is_empty() => {
            branches.push(json!({"type": "null"}));
            branches
        }
        Some(any_of) => {
            map.insert("anyOf".into(), any_of);
            vec![node, json!({"type": "null"})]
        }
        None => vec![node, json!({"type": "null"})],
    };
    outer.insert("anyOf".into(), Value::Array(branches));
    Value::Object(outer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t3_nullable_widens_each_shape_once() {
        assert_eq!(
            nullable(json!({"type": "integer", "minimum": 1})),
            json!({"type": ["integer", "null"], "minimum": 1})
        );
        assert_eq!(
            nullable(json!({"type": "string", "enum": ["a"], "description": "d"})),
            json!({"description": "d", "anyOf": [{"type": "string", "enum": ["a"]}, {"type": "null"}]})
        );
        assert_eq!(
            nullable(json!({"$ref": "#/$defs/Node"})),
            json!({"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]})
        );
        let once = nullable(json!({"type": "array", "items": {"type": "string"}}));
        assert!(accepts_null(&once));
        assert_eq!(nullable(once.clone()), once, "idempotent");
    }
}
