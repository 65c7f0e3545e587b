//! Schema rendering for generated code: properties, objects, string enums and tagged enums
//! (S1, T3).

use crate::schema::{Rules, Schema, SchemaGen};

/// Renders one property of an object schema into `properties`, and adds it to `required`
/// when it is neither optional nor defaulted (S1).
#[allow(clippy::too_many_arguments)]
pub fn property<T: Schema>(
    generator: &mut SchemaGen,
    properties: &mut serde_json::Map<String, serde_json::Value>,
    required: &mut Vec<serde_json::Value>,
    key: &str,
    description: Option<&str>,
    rules: &Rules,
    default: Option<serde_json::Value>,
    example: Option<serde_json::Value>,
) {
    let mut node = T::schema(generator);
    rules.apply(&mut node);
    if default.is_some() {
        // T3: `null` for a defaulted field means "absent" and takes the default (S2), so the
        // published schema admits it.
        node = crate::schema::nullable(node);
    }
    if let Some(obj) = node.as_object_mut() {
        if let Some(d) = description {
            obj.insert("description".to_owned(), d.into());
        }
        if let Some(example) = example {
            obj.insert(
                "examples".to_owned(),
                serde_json::Value::Array(vec![example]),
            );
        }
    }
    let has_default = default.is_some();
    if let (Some(obj), Some(d)) = (node.as_object_mut(), default) {
        obj.insert("default".to_owned(), d);
    }
    if !T::OPTIONAL && !has_default {
        required.push(key.into());
    }
    properties.insert(key.to_owned(), node);
}

/// An object schema: `properties`, `required`, `additionalProperties: false` (S1).
pub fn object(
    properties: serde_json::Map<String, serde_json::Value>,
    required: Vec<serde_json::Value>,
    description: Option<&str>,
) -> serde_json::Value {
    let mut node = serde_json::Map::new();
    node.insert("type".to_owned(), "object".into());
    if let Some(d) = description {
        node.insert("description".to_owned(), d.into());
    }
    node.insert(
        "properties".to_owned(),
        serde_json::Value::Object(properties),
    );
    node.insert("required".to_owned(), serde_json::Value::Array(required));
    node.insert("additionalProperties".to_owned(), false.into());
    serde_json::Value::Object(node)
}

/// The schema of an enum of unit variants: a string that is one of `names` (S1). `enum` has
/// no per-value description, so the macro appends the variants' docs to `description`.
pub fn string_enum(names: &[&str], description: Option<&str>) -> serde_json::Value {
    let mut node = serde_json::Map::new();
    node.insert("type".to_owned(), "string".into());
    if let Some(d) = description {
        node.insert("description".to_owned(), d.into());
    }
    node.insert(
        "enum".to_owned(),
        names.iter().map(|n| serde_json::Value::from(*n)).collect(),
    );
    serde_json::Value::Object(node)
}

/// Renders the tag property of one variant of a tagged enum, `{"type": "string", "enum":
/// [variant]}`, and makes it required.
pub fn tag_property(
    properties: &mut serde_json::Map<String, serde_json::Value>,
    required: &mut Vec<serde_json::Value>,
    tag: &str,
    variant: &str,
) {
    let mut node = serde_json::Map::new();
    node.insert("type".to_owned(), "string".into());
    node.insert(
        "enum".to_owned(),
        serde_json::Value::Array(vec![variant.into()]),
    );
    properties.insert(tag.to_owned(), serde_json::Value::Object(node));
    required.push(tag.into());
}

/// The schema of a tagged enum: `anyOf` its variants' object schemas.
pub fn any_of(variants: Vec<serde_json::Value>, description: Option<&str>) -> serde_json::Value {
    let mut node = serde_json::Map::new();
    if let Some(d) = description {
        node.insert("description".to_owned(), d.into());
    }
    node.insert("anyOf".to_owned(), serde_json::Value::Array(variants));
    serde_json::Value::Object(node)
}
