//! Asking the user for typed data in the middle of a call (M3): [`Context::elicit`](crate::Context::elicit), and the
//! [`Elicitor`] a transport or an agent puts in the call's context to carry the question.
//!
//! Over MCP the question is an `elicitation/create` to the client, whose user answers; in an
//! agent run it is the application's elicitation handler. The requested schema is `T`'s, limited
//! to what elicitation allows (a flat object of strings, numbers, integers, booleans and
//! enums); an accepted answer is parsed by `T`'s own parser, so a handler gets a validated `T`
//! or an error, never unchecked data.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use crate::schema::{Schema, SchemaGen};
use crate::violation::Violation;

/// A boxed future, as an [`Elicitor`] returns.
pub type ElicitFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ElicitAnswer, ElicitError>> + Send + 'a>>;

/// Carries a call's question to whoever can answer it (M3): an MCP server's client, an agent's
/// elicitation handler. Transports and agents put one in a call's context
/// ([`Context::with_elicitor`](crate::Context::with_elicitor)); handlers ask through [`Context::elicit`](crate::Context::elicit).
pub trait Elicitor: Send + Sync {
    /// Asks `message`, wanting data that fits `schema` (a flat object, checked before).
    fn elicit<'a>(&'a self, message: &'a str, schema: &'a Value) -> ElicitFuture<'a>;

    /// Asks `message` as [`Elicitor::elicit`] does, under the name `key` the handler gave the
    /// question ([`Context::elicit_named`](crate::Context::elicit_named), checked by
    /// [`check_key`]): over MCP 2026-07-28, the key of its input request. An elicitor that
    /// names no questions asks as `elicit` does, which is the default.
    fn elicit_named<'a>(
        &'a self,
        key: &'a str,
        message: &'a str,
        schema: &'a Value,
    ) -> ElicitFuture<'a> {
        let _ = key;
        self.elicit(message, schema)
    }
}

/// The longest name a question may have ([`check_key`]).
pub const MAX_KEY_LEN: usize = 64;

/// The start of the names a transport gives the questions their handler did not name
/// (`question-0`, `question-1`, …): a handler cannot choose one ([`check_key`]).
pub const UNNAMED_KEY_PREFIX: &str = "question-";

/// Whether `key` can name a question: 1 to [`MAX_KEY_LEN`] ASCII letters, digits, `_`, `-`
/// and `.`, which every transport carries as they are, and not a name of the form
/// `question-N`, which unnamed questions get (so that no two questions of a call share a
/// name, M10).
///
/// # Errors
///
/// [`ElicitError::Key`] naming the rule `key` breaks.
pub fn check_key(key: &str) -> Result<(), ElicitError> {
    let fits = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    if key.is_empty() || key.len() > MAX_KEY_LEN || !key.chars().all(fits) {
        return Err(ElicitError::Key {
            key: crate::violation::preview_str(key),
            reason: "a question's name is 1 to 64 ASCII letters, digits, `_`, `-` and `.`",
        });
    }
    let unnamed = key
        .strip_prefix(UNNAMED_KEY_PREFIX)
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if unnamed {
        return Err(ElicitError::Key {
            key: key.to_owned(),
            reason: "names of the form `question-N` are given to unnamed questions: choose another",
        });
    }
    Ok(())
}

impl<F, Fut> Elicitor for F
where
    F: Fn(String, Value) -> Fut + Send + Sync,
    Fut: Future<Output = Result<ElicitAnswer, ElicitError>> + Send + 'static,
{
    fn elicit<'a>(&'a self, message: &'a str, schema: &'a Value) -> ElicitFuture<'a> {
        Box::pin(self(message.to_owned(), schema.clone()))
    }
}

/// What the user answered, as the transport carries it.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitAnswer {
    /// The user gave this data.
    Accept(Value),
    /// The user said no.
    Decline,
    /// The user dismissed the question.
    Cancel,
}

/// What the user answered, parsed (M3).
#[derive(Debug, Clone, PartialEq)]
pub enum Elicited<T> {
    /// The user gave this data, which fits `T`.
    Accepted(T),
    /// The user said no.
    Declined,
    /// The user dismissed the question.
    Cancelled,
}

/// Why a question could not be asked or answered (M3). A handler that returns it fails as any
/// handler failure does: redacted for the model (E2).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ElicitError {
    /// Nobody in this call can be asked: the MCP client declared no elicitation, or the agent
    /// has no elicitation handler.
    #[error(
        "nobody can be asked here: the client declared no elicitation, or the agent has no elicitation handler"
    )]
    Unsupported,
    /// The type asked for is not something elicitation can ask for.
    #[error("`{type_name}` cannot be elicited: {reason}")]
    Schema {
        /// The type.
        type_name: &'static str,
        /// Why not.
        reason: String,
    },
    /// The user's answer does not fit the type asked for.
    #[error("the answer does not fit `{type_name}`: {}", violations.iter().map(|v| v.message.as_str()).collect::<Vec<_>>().join("; "))]
    Invalid {
        /// The type.
        type_name: &'static str,
        /// What does not fit.
        violations: Vec<Violation>,
    },
    /// The transport failed to ask or to bring the answer back.
    #[error("the question could not be asked: {0}")]
    Failed(String),
    /// The name the handler gave a question cannot name it
    /// ([`Context::elicit_named`](crate::Context::elicit_named)).
    #[error("the question cannot be named `{key}`: {reason}")]
    Key {
        /// The name (a preview of it, when long).
        key: String,
        /// Why not.
        reason: &'static str,
    },
}

/// `T`'s schema as elicitation allows it: an object whose properties are each a string
/// (possibly an enum or of a format), a number, an integer, a boolean, or an array of enum
/// values (SEP-1330 multi-select); no nesting and no references.
pub fn elicitation_schema<T: Schema>() -> Result<Value, String> {
    let mut generator = SchemaGen::new();
    let root = T::schema(&mut generator);
    if !generator.take_defs().is_empty() {
        return Err("its schema refers to definitions; elicitation takes a flat object".into());
    }
    if root.get("type").and_then(Value::as_str) != Some("object") {
        return Err("elicitation asks for an object".into());
    }
    let mut root = root;
    let Some(properties) = root.get_mut("properties").and_then(Value::as_object_mut) else {
        return Ok(root);
    };
    for (name, property) in properties.iter_mut() {
        // A defaulted field's schema also admits `null` (T3); elicitation names one type:
        // `["integer", "null"]` becomes `"integer"`, `anyOf: [{…}, {"type": "null"}]` the
        // one branch.
        if let Some(Value::Array(branches)) = property.get("anyOf") {
            let named: Vec<&Value> = branches
                .iter()
                .filter(|b| b.get("type") != Some(&Value::from("null")))
                .collect();
            if let [Value::Object(one)] = named.as_slice() {
                let one = one.clone();
                if let Value::Object(property) = property {
                    property.remove("anyOf");
                    for (key, value) in one {
                        property.entry(key).or_insert(value);
                    }
                }
            }
        }
        if let Some(Value::Array(types)) = property.get("type") {
            let named: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
            if let [one] = named.as_slice() {
                let one = (*one).clone();
                property["type"] = one;
            }
        }
        let kind = property.get("type").and_then(Value::as_str);
        let fits = match kind {
            Some("string" | "number" | "integer" | "boolean") => true,
            Some("array") => property
                .get("items")
                .is_some_and(|items| items.get("enum").is_some() || items.get("anyOf").is_some()),
            _ => property.get("enum").is_some(),
        };
        if !fits {
            return Err(format!(
                "field `{name}` is not a string, number, integer, boolean or enum"
            ));
        }
    }
    Ok(root)
}
