//! Approval with edited arguments over MCP (B3, H6), on a server that offers it
//! ([`McpServerBuilder::approval_edits`](super::McpServerBuilder::approval_edits)).
//!
//! An elicitation form holds flat fields of primitive types only, so the form offers what the
//! protocol can carry: each top-level argument of the call whose value is a string, a number
//! or a boolean, its value the field's default. The user's accepted content may change those
//! fields and nothing else; a field the form did not offer, or a value of another type, refuses
//! the approval (nothing runs). The edited arguments are the call's from then on: validated
//! again against the tool's schema before the handler runs (S2), what the handler gets and
//! what the outcome records. Arguments the form cannot carry (objects, arrays, long text) stay
//! as the model sent them.

use std::collections::BTreeMap;

use rmcp::model::{
    BooleanSchema, ElicitationSchema, IntegerSchema, NumberSchema, PrimitiveSchemaDefinition,
    StringSchema,
};
use serde_json::{Map, Value};
use tool_core::{Outcome, Tool};

/// The most fields an approval form offers.
const MOST_FIELDS: usize = 32;

/// The longest text an approval form offers for editing, in bytes.
const LONGEST_TEXT: usize = 4096;

/// Why a user's edits were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum EditRefused {
    /// The answer's content is not an object of fields.
    #[error("the user's answer is not an object of fields")]
    NotFields,
    /// A field the form did not offer.
    #[error("the user's answer sets `{0}`, which the question did not offer")]
    NotOffered(String),
    /// A value of another type than the field's.
    #[error("the user's answer gives `{0}` a value of another type than its own")]
    WrongType(String),
    /// The edited arguments could not be written out.
    #[error("the edited arguments could not be serialized: {0}")]
    Unwritable(String),
}

/// The kind of an offered field, by the model's value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    Text,
    Integer,
    Number,
    Flag,
}

impl Field {
    /// The field a value can be offered as, if any.
    fn of(value: &Value) -> Option<Field> {
        match value {
            Value::String(text) if text.len() <= LONGEST_TEXT => Some(Field::Text),
            Value::Number(n) if n.is_i64() => Some(Field::Integer),
            Value::Number(n) if n.is_f64() => Some(Field::Number),
            Value::Bool(_) => Some(Field::Flag),
            _ => None,
        }
    }

    /// Whether `value` is one this field takes.
    fn takes(self, value: &Value) -> bool {
        match self {
            Field::Text => value.is_string(),
            Field::Integer => value.is_i64(),
            Field::Number => value.is_number(),
            Field::Flag => value.is_boolean(),
        }
    }
}

/// The call's validated arguments, when they are an object.
fn arguments(pending: &Outcome) -> Option<&Map<String, Value>> {
    pending.validated_arguments().and_then(Value::as_object)
}

/// The fields the form offers: each top-level argument a form can carry, in the arguments'
/// order, at most [`MOST_FIELDS`].
fn offered(pending: &Outcome) -> Vec<(&str, &Value, Field)> {
    let Some(arguments) = arguments(pending) else {
        return Vec::new();
    };
    arguments
        .iter()
        .filter_map(|(name, value)| Some((name.as_str(), value, Field::of(value)?)))
        .take(MOST_FIELDS)
        .collect()
}

/// The approval form for the call `pending` of `tool`: its editable arguments, each with the
/// model's value as its default and the schema's description.
pub(super) fn form(tool: &Tool, pending: &Outcome) -> ElicitationSchema {
    let described = |name: &str| {
        tool.schema()
            .pointer(&format!("/properties/{}/description", pointer_escape(name)))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let mut fields = BTreeMap::new();
    for (name, value, field) in offered(pending) {
        let description = described(name).unwrap_or_default();
        let schema = match (field, value) {
            (Field::Text, Value::String(text)) => PrimitiveSchemaDefinition::String(
                StringSchema::new()
                    .title(name.to_owned())
                    .description(description)
                    .with_default(text.clone()),
            ),
            (Field::Integer, value) => PrimitiveSchemaDefinition::Integer(
                IntegerSchema::new()
                    .title(name.to_owned())
                    .description(description)
                    .with_default(value.as_i64().unwrap_or_default()),
            ),
            (Field::Flag, value) => PrimitiveSchemaDefinition::Boolean(
                BooleanSchema::new()
                    .title(name.to_owned())
                    .description(description)
                    .with_default(value.as_bool().unwrap_or_default()),
            ),
            (_, value) => PrimitiveSchemaDefinition::Number(
                NumberSchema::new()
                    .title(name.to_owned())
                    .description(description)
                    .with_default(value.as_f64().unwrap_or_default()),
            ),
        };
        fields.insert(name.to_owned(), schema);
    }
    ElicitationSchema::new(fields)
}

/// A name as one token of a JSON pointer.
fn pointer_escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// The call's arguments as the user's accepted `content` edits them: `None` when it changes
/// nothing (no content, or every field as offered).
pub(super) fn edited(
    pending: &Outcome,
    content: Option<&Value>,
) -> Result<Option<Vec<u8>>, EditRefused> {
    let fields = match content {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(fields)) => fields,
        Some(_) => return Err(EditRefused::NotFields),
    };
    let offered = offered(pending);
    let mut changed = false;
    let mut arguments = arguments(pending).cloned().unwrap_or_default();
    for (name, value) in fields {
        let Some((_, was, field)) = offered.iter().find(|(offered, ..)| offered == name) else {
            return Err(EditRefused::NotOffered(name.clone()));
        };
        if !field.takes(value) {
            return Err(EditRefused::WrongType(name.clone()));
        }
        if value != *was {
            changed = true;
            arguments.insert(name.clone(), value.clone());
        }
    }
    if !changed {
        return Ok(None);
    }
    serde_json::to_vec(&Value::Object(arguments))
        .map(Some)
        .map_err(|e| EditRefused::Unwritable(e.to_string()))
}
