//! What a tool declares about itself besides its name, description and input: its hints (O4)
//! and the schema of what it returns (O1).

use std::sync::Arc;

use std::fmt;

use serde_json::{Map, Value, json};

use crate::json::Json;
use crate::schema::{Schema, SchemaGen};
use crate::violation::ParseCx;

/// Hints about a tool that MCP clients and documentation show (O4): a title, and whether it
/// reads only, destroys, can be repeated safely, or reaches outside a closed world.
///
/// Every hint is optional: one left `None` is not sent, and a client assumes the MCP default
/// (not read-only; destructive and open-world unless said otherwise; not idempotent). Hints
/// describe; they guard nothing: availability (A1) and approval decide what runs.
///
/// ```
/// use tool_core::{Annotations, Context, Tool};
///
/// let lookup = Tool::builder("lookup-window", "Finds a maintenance window.")
///     .title("Look up a maintenance window")
///     .read_only()
///     .open_world(false)
///     .handler(|_ctx: Context, _args: std::collections::BTreeMap<String, String>| async move {
///         Ok::<_, std::convert::Infallible>("none")
///     })
///     .build();
/// assert_eq!(lookup.annotations().read_only, Some(true));
/// assert_eq!(lookup.annotations().title.as_deref(), Some("Look up a maintenance window"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Annotations {
    /// A human-readable title.
    pub title: Option<String>,
    /// Whether the tool does not change its environment.
    pub read_only: Option<bool>,
    /// Whether a change it makes may destroy something (meaningful when not read-only).
    pub destructive: Option<bool>,
    /// Whether calling it again with the same arguments changes nothing more.
    pub idempotent: Option<bool>,
    /// Whether it reaches entities outside a closed set (the web, other systems).
    pub open_world: Option<bool>,
}

impl Annotations {
    /// Whether no hint is set.
    pub fn is_empty(&self) -> bool {
        *self == Annotations::default()
    }

    /// Why these hints contradict each other, if they do: a read-only tool cannot be
    /// destructive.
    pub fn contradiction(&self) -> Option<&'static str> {
        (self.read_only == Some(true) && self.destructive == Some(true))
            .then_some("a read-only tool cannot be destructive")
    }
}

/// The key under which an output schema whose root is not an object holds the value (O1):
/// MCP wants an object, so `"fast"` goes as `{"result": "fast"}`.
pub const WRAPPED_OUTPUT_KEY: &str = "result";

/// The schema of what a tool returns (O1), as MCP publishes it: an object root, the result
/// type's own schema when it is an object, else that schema under the single required
/// property [`WRAPPED_OUTPUT_KEY`].
///
/// The schema comes from the result type's `Schema` derive, its text from its `Serialize`: a
/// typed result is parsed back with the type's own parser before it is sent, and one that
/// does not fit (the two derives renamed differently, say) fails the call, redacted (E2),
/// rather than reach a client as structured content that breaks the schema.
#[derive(Clone)]
pub struct OutputSchema {
    schema: Arc<Value>,
    wrapped: bool,
    /// Whether the result's own schema admits strings: its text is then taken as a string.
    strings: bool,
    /// Parses a result (unwrapped) with the result type's parser, for a typed result.
    check: Option<fn(Json, &mut ParseCx) -> bool>,
}

impl PartialEq for OutputSchema {
    fn eq(&self, other: &Self) -> bool {
        self.schema == other.schema && self.wrapped == other.wrapped
    }
}

impl fmt::Debug for OutputSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OutputSchema")
            .field("schema", &self.schema)
            .field("wrapped", &self.wrapped)
            .finish_non_exhaustive()
    }
}

/// Whether `value` parses as a `T` (its violations left in `cx`).
fn parses_as<T: Schema>(value: Json, cx: &mut ParseCx) -> bool {
    T::parse(value, cx).is_some() && cx.is_clean()
}

impl OutputSchema {
    /// The output schema of a result of type `T`, or `None` when `T` declares none (a plain
    /// `Serialize` type, a `String`, a number: [`Schema::STRUCTURED`] is false).
    pub fn of<T: Schema>() -> Option<OutputSchema> {
        T::STRUCTURED.then(Self::render::<T>)
    }

    fn render<T: Schema>() -> OutputSchema {
        let mut generator = SchemaGen::new();
        let root = T::schema(&mut generator);
        let defs: Map<String, Value> = generator.take_defs().into_iter().collect();
        let is_object = root.get("type").and_then(Value::as_str) == Some("object");
        let strings = admits_strings(&root);
        let mut schema = if is_object {
            root
        } else {
            json!({
                "type": "object",
                "properties": {WRAPPED_OUTPUT_KEY: root},
                "required": [WRAPPED_OUTPUT_KEY],
                "additionalProperties": false,
            })
        };
        if !defs.is_empty()
            && let Some(object) = schema.as_object_mut()
        {
            object.insert("$defs".to_owned(), Value::Object(defs));
        }
        OutputSchema {
            schema: Arc::new(schema),
            wrapped: !is_object,
            strings,
            check: Some(parses_as::<T>),
        }
    }

    /// The output schema a remote tool publishes (an object root, taken as it is), for a tool
    /// that relays calls to it; `None` when `schema` is not an object.
    pub fn published(schema: Value) -> Option<OutputSchema> {
        schema.is_object().then(|| OutputSchema {
            schema: Arc::new(schema),
            wrapped: false,
            strings: false,
            check: None,
        })
    }

    /// Checks a result whose text is `text` against the result type's own parser: the
    /// violations of one that does not fit. A published schema (a remote tool's) checks
    /// nothing here: the client checks what the server sends.
    ///
    /// # Errors
    ///
    /// Returns the violations, at pointers into the result.
    pub fn check(&self, text: &str) -> Result<(), Vec<crate::violation::Violation>> {
        let Some(parses) = self.check else {
            return Ok(());
        };
        let mut cx = ParseCx::new();
        let fits = match self.structured(text) {
            Some(mut value) => {
                if self.wrapped {
                    value = value
                        .as_object_mut()
                        .and_then(|object| object.remove(WRAPPED_OUTPUT_KEY))
                        .unwrap_or(Value::Null);
                }
                parses(Json::from_value(value), &mut cx)
            }
            None => {
                cx.violate(
                    crate::violation::Rule::Type,
                    "expected JSON, found other text",
                );
                false
            }
        };
        if fits { Ok(()) } else { Err(cx.finish().0) }
    }

    /// The schema, with an object root.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Whether the result type's schema was wrapped under [`WRAPPED_OUTPUT_KEY`].
    pub fn is_wrapped(&self) -> bool {
        self.wrapped
    }

    /// The structured content of a result whose text for the model is `text` (E1: a JSON
    /// string result is its text, anything else its JSON encoding), shaped as this schema
    /// says; `None` when the text is not such a result.
    pub fn structured(&self, text: &str) -> Option<Value> {
        let value = if self.strings {
            // A result that serialized to a string went to the model as its bare text (E1);
            // an absent one (`None`) as `null`.
            if text == "null" {
                Value::Null
            } else {
                Value::String(text.to_owned())
            }
        } else {
            serde_json::from_str::<Value>(text).ok()?
        };
        if self.wrapped {
            let mut object = Map::new();
            object.insert(WRAPPED_OUTPUT_KEY.to_owned(), value);
            Some(Value::Object(object))
        } else {
            value.is_object().then_some(value)
        }
    }
}

/// Whether `schema` admits a string at its root: `"type": "string"` (alone or among others), or
/// a branch of its `anyOf` that does.
fn admits_strings(schema: &Value) -> bool {
    let by_type = match schema.get("type") {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(types)) => types.iter().any(|t| t == "string"),
        _ => false,
    };
    by_type
        || schema
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|branches| branches.iter().any(admits_strings))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wrapped_strings() -> OutputSchema {
        OutputSchema {
            schema: Arc::new(json!({})),
            wrapped: true,
            strings: true,
            check: None,
        }
    }

    #[test]
    fn o1_a_string_result_is_structured_as_the_string_it_is() {
        let schema = wrapped_strings();
        assert_eq!(schema.structured("fast"), Some(json!({"result": "fast"})));
        assert_eq!(schema.structured("42"), Some(json!({"result": "42"})));
        assert_eq!(schema.structured("null"), Some(json!({"result": null})));
        let numbers = OutputSchema {
            strings: false,
            ..wrapped_strings()
        };
        assert_eq!(
            numbers.structured("[1, 2]"),
            Some(json!({"result": [1, 2]}))
        );
        let object = OutputSchema {
            wrapped: false,
            strings: false,
            ..wrapped_strings()
        };
        assert_eq!(object.structured(r#"{"a": 1}"#), Some(json!({"a": 1})));
        assert_eq!(object.structured("not json"), None);
    }

    #[test]
    fn o4_read_only_and_destructive_contradict() {
        let both = Annotations {
            read_only: Some(true),
            destructive: Some(true),
            ..Annotations::default()
        };
        assert!(both.contradiction().is_some());
        let fine = Annotations {
            read_only: Some(true),
            destructive: Some(false),
            ..Annotations::default()
        };
        assert!(fine.contradiction().is_none());
    }
}
