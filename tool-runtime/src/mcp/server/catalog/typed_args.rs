//! Typed arguments of resource templates and prompts (M7): the strings a client sends (a
//! template's URI variables, a prompt's arguments) read by the type's schema, then parsed
//! and validated like a tool's input (S2), so a handler gets a typed value or never runs.

use std::sync::Arc;

use serde_json::{Map, Value};
use tool_core::Schema;
use tool_core::schema::json::Json;
use tool_core::schema::{parse_root, render_root};
use tool_core::violation::render_violations;

use super::problem::Failure;

/// A type's rendered input schema and its parser, erased.
#[derive(Clone)]
pub(crate) struct Params {
    /// The rendered schema (an object root, S1).
    pub(crate) schema: Arc<Value>,
}

impl Params {
    /// The schema of `P`; `Err` with the reason when it cannot render.
    pub(crate) fn of<P: Schema>() -> Result<Self, String> {
        let schema = render_root::<P>().map_err(|error| error.to_string())?;
        Ok(Self {
            schema: Arc::new(schema),
        })
    }

    /// Each property's name, description and whether it is required, in the schema's order.
    pub(crate) fn properties(&self) -> Vec<(String, Option<String>, bool)> {
        let required: Vec<&str> = (self.schema.get("required"))
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let Some(properties) = self.schema.get("properties").and_then(Value::as_object) else {
            return Vec::new();
        };
        properties
            .iter()
            .map(|(name, property)| {
                let description = (property.get("description"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                (name.clone(), description, required.contains(&name.as_str()))
            })
            .collect()
    }

    /// The values a property's schema enumerates (`enum`), as strings: through a `$ref` into
    /// the schema's `$defs` and the branches of an `anyOf` (an optional enum), one level each.
    pub(crate) fn enumerated(&self, property: &str) -> Vec<String> {
        let Some(schema) = (self.schema.get("properties")).and_then(|p| p.get(property)) else {
            return Vec::new();
        };
        let mut values = Vec::new();
        let branches = schema.get("anyOf").and_then(Value::as_array);
        for branch in branches.map_or_else(|| vec![schema], |b| b.iter().collect()) {
            let branch = self.resolve(branch);
            if let Some(listed) = branch.get("enum").and_then(Value::as_array) {
                values.extend(listed.iter().filter_map(|v| v.as_str().map(str::to_owned)));
            }
        }
        values
    }

    /// `schema`, or what its `$ref` into this schema's `$defs` names.
    fn resolve<'a>(&'a self, schema: &'a Value) -> &'a Value {
        (schema.get("$ref"))
            .and_then(Value::as_str)
            .and_then(|reference| reference.strip_prefix("#/$defs/"))
            .and_then(|name| self.schema.get("$defs").and_then(|defs| defs.get(name)))
            .unwrap_or(schema)
    }

    /// The arguments as the JSON the parser reads: a string sent for a property whose schema
    /// says integer, number or boolean is read as one when it spells one (else it stays a
    /// string, which the parser reports as a type violation).
    pub(crate) fn coerce(&self, arguments: &Map<String, Value>) -> Value {
        let properties = self.schema.get("properties").and_then(Value::as_object);
        let coerced = arguments
            .iter()
            .map(|(name, value)| {
                let kind = properties.and_then(|p| p.get(name)).and_then(scalar_type);
                let value = match (value, kind) {
                    (Value::String(text), Some(kind)) => read_scalar(text, kind),
                    (value, _) => value.clone(),
                };
                (name.clone(), value)
            })
            .collect();
        Value::Object(coerced)
    }
}

/// Parses `arguments` into a `P` (S2): its violations rendered as a model would see them,
/// or the operational error of a custom validator (S5), which is redacted.
pub(crate) fn parse<P: Schema>(
    params: &Params,
    arguments: &Map<String, Value>,
) -> Result<P, Failure> {
    let value = params.coerce(arguments);
    match parse_root::<P>(Json::from_value(value)) {
        Ok(parsed) => Ok(parsed),
        Err(cx) => {
            let (violations, dropped, error) = cx.finish();
            match error {
                Some(error) if violations.is_empty() => Err(Failure::Failed(error)),
                _ => Err(Failure::Invalid(render_violations(&violations, dropped))),
            }
        }
    }
}

/// The scalar type a property's schema names (`integer`, `number`, `boolean`), if one.
fn scalar_type(schema: &Value) -> Option<&'static str> {
    let named = |name: &str| match name {
        "integer" => Some("integer"),
        "number" => Some("number"),
        "boolean" => Some("boolean"),
        _ => None,
    };
    match schema.get("type")? {
        Value::String(name) => named(name),
        Value::Array(names) => names.iter().filter_map(Value::as_str).find_map(named),
        _ => None,
    }
}

/// `text` as a value of `kind`, when it spells one; else `text` itself.
fn read_scalar(text: &str, kind: &str) -> Value {
    let read = match kind {
        "integer" => (text.parse::<i64>().ok().map(Value::from))
            .or_else(|| text.parse::<u64>().ok().map(Value::from)),
        "number" => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number),
        "boolean" => match text {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        _ => None,
    };
    read.unwrap_or_else(|| Value::String(text.to_owned()))
}
