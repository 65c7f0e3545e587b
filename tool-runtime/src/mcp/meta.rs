//! What both sides of MCP read and write alike: the `_meta` keys through which our server
//! tells our client a call's outcome kind and violations (T1, T2), and the JSON type names
//! of their messages.

/// The `_meta` key of a `tools/call` result under which our server names the call's outcome
/// kind (`success`, `unavailable`, `invalid_arguments`, `rejected`, `failed`, `timed_out`,
/// `cancelled`, `fatal`, `denied`: the [`OutcomeKind`](tool_core::OutcomeKind) display names), so that
/// the kind survives the transport between our server and our client (T2).
pub(crate) const OUTCOME_META_KEY: &str = "tool-runtime/outcome";

/// The `_meta` key of an `invalid_arguments` result under which our server lists the
/// violations (`[{"path", "rule", "message"}]`, `rule` a [`Rule`](tool_core::Rule) keyword),
/// so that our client reports the same violations as the server found (T1, T2).
pub(crate) const VIOLATIONS_META_KEY: &str = "tool-runtime/violations";

/// The JSON type of `value`, with its article ("a string"), as the messages of both sides
/// name it.
pub(crate) fn json_kind(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
