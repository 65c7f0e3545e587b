//! Support that keeps the code each derive generates small: what every object does alike is
//! done here, once, rather than written out per field in the user's crate.

/// An object's JSON value, its members inserted in the order given: what a struct's
/// `to_json` returns. One call with the fields' values, instead of an insert per field.
pub fn object_json<const N: usize>(
    members: [(&'static str, serde_json::Value); N],
) -> serde_json::Value {
    let mut map = serde_json::Map::new();
    for (key, value) in members {
        map.insert(key.to_owned(), value);
    }
    serde_json::Value::Object(map)
}

/// An example input of `#[tool(examples = …)]` (Q3), from the JSON text the macro already
/// read as an object; text that is not JSON (which the macro refuses) gives `null`, which the
/// tool's parser then refuses when the tool is built.
pub fn example_json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or(serde_json::Value::Null)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn object_json_inserts_the_members_in_order() {
        let value = object_json([("b", json!(1)), ("a", json!("x"))]);
        let mut map = serde_json::Map::new();
        map.insert(String::from("b"), json!(1));
        map.insert(String::from("a"), json!("x"));
        assert_eq!(value, serde_json::Value::Object(map));
        assert_eq!(object_json([]), json!({}));
    }
}
