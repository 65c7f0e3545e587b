//! The message a direct call answers: one JSON-RPC `tools/call` request whose every member is
//! one this module reads, decoded with the types rmcp's service decodes it with (the
//! arguments as a [`JsonObject`], `_meta` as a [`RequestMetaObject`]), so the call is the one
//! rmcp would have handed the handler. Anything else is not read here ([`read`] is `None`):
//! a batch, a notification, another method, an id rmcp would read differently (a float, a
//! number past `i64`, `null`), an unknown member anywhere in the envelope or the params (the
//! `requestState` of a retry, say), a duplicate member.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, JsonObject, RequestId, RequestMetaObject};
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

/// The `_meta` keys a direct call reads: W3C trace context (K6). Any other key (a progress
/// token, a protocol version, client capabilities, …) changes what rmcp's service does with
/// the request, which it then serves.
const META_KEYS: [&str; 2] = ["traceparent", "tracestate"];

/// A `tools/call` request read whole.
pub(crate) struct Call {
    /// The request's id, as rmcp reads it.
    pub(crate) id: RequestId,
    /// The params without `_meta`: the tool's name and its arguments.
    pub(crate) params: CallToolRequestParams,
    /// `_meta`, as rmcp's service moves it into the request's context (empty without one).
    pub(crate) meta: RequestMetaObject,
}

/// The JSON-RPC envelope, every member required and no other allowed.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    id: Id,
    #[serde(borrow)]
    method: Cow<'a, str>,
    params: Params,
}

/// The params of `tools/call` a direct call reads, typed as rmcp's `CallToolRequestParams`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    name: String,
    arguments: Option<JsonObject>,
    #[serde(rename = "_meta")]
    meta: Option<RequestMetaObject>,
}

/// `body` as a `tools/call` request this module answers, or `None`.
pub(crate) fn read(body: &[u8]) -> Option<Call> {
    let envelope: Envelope<'_> = serde_json::from_slice(body).ok()?;
    if envelope.jsonrpc != "2.0" || envelope.method != "tools/call" {
        return None;
    }
    let Params {
        name,
        arguments,
        meta,
    } = envelope.params;
    let meta = meta.unwrap_or_default();
    if !meta.0.keys().all(|key| META_KEYS.contains(&key.as_str())) {
        return None;
    }
    let mut params = CallToolRequestParams::new(name);
    params.arguments = arguments;
    Some(Call {
        id: envelope.id.0,
        params,
        meta,
    })
}

/// A JSON-RPC id rmcp reads exactly as it is written: a string, or an integer within `i64`.
struct Id(RequestId);

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(IdVisitor)
    }
}

struct IdVisitor;

impl Visitor<'_> for IdVisitor {
    type Value = Id;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or an integer within i64")
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Id, E> {
        Ok(Id(RequestId::Number(n)))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Id, E> {
        i64::try_from(n)
            .map(|n| Id(RequestId::Number(n)))
            .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(n), &self))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Id, E> {
        Ok(Id(RequestId::String(Arc::from(s))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_call_is_read_with_its_arguments_and_trace_context() {
        let call = read(
            br#"{"jsonrpc":"2.0","id":"a\"b","method":"tools/call","params":{"name":"t",
                "arguments":{"n":1},"_meta":{"traceparent":"00-x"}}}"#,
        )
        .expect("a call");
        assert_eq!(call.id, RequestId::String(Arc::from("a\"b")));
        assert_eq!(call.params.name, "t");
        assert_eq!(
            call.params.arguments.map(serde_json::Value::Object),
            Some(serde_json::json!({"n": 1}))
        );
        assert_eq!(call.meta.0.get_traceparent(), Some("00-x"));
    }

    #[test]
    fn anything_rmcp_might_read_otherwise_is_left_to_it() {
        for body in [
            &br#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}]"#[..],
            br#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t"}}"#,
            br#"{"jsonrpc":"2.0","id":1.0,"method":"tools/call","params":{"name":"t"}}"#,
            br#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"t"}}"#,
            br#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"tools/call","params":{"name":"t"}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"t"}}"#,
            br#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"t"}}"#,
            br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"t"}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"},"x":1}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","task":{}}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":[]}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":1}}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
            b"not json",
        ] {
            assert!(read(body).is_none(), "{}", String::from_utf8_lossy(body));
        }
    }
}
