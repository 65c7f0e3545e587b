//! The strict JSON decoder for tool arguments (S2, S4).
//!
//! Arguments are decoded into [`Json`], a tree that keeps an object's members in the order the
//! model sent them and rejects duplicate keys, which `serde_json::Value` would silently merge.
//! Nesting is bounded by `serde_json`'s recursion limit (128 levels), so deeply nested input is
//! an error, never a stack overflow.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Number, Value};

/// A decoded JSON value, as the model sent it.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// An object, its members in the order they were sent; keys are unique.
    Object(Vec<(String, Json)>),
}

/// Why argument bytes could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The bytes are not JSON (this includes nesting deeper than 128 levels).
    #[error("arguments are not valid JSON: {0}")]
    Syntax(String),
    /// An object holds the same key twice.
    #[error("arguments hold the key {0:?} twice")]
    DuplicateKey(String),
    /// The bytes are longer than the configured limit.
    #[error("arguments are {len} bytes long; the limit is {limit}")]
    TooLarge {
        /// The length of the arguments.
        len: usize,
        /// The configured limit.
        limit: usize,
    },
}

/// The prefix of a duplicate-key message, used to tell it apart from a syntax error.
const DUPLICATE: &str = "\u{0}duplicate key:";

/// The error a decoder reports for a key that `members` of one object already hold.
pub(crate) fn duplicate_key<E: de::Error>(key: &str) -> E {
    E::custom(format_args!("{DUPLICATE}{key}"))
}

/// Classifies a decoder's error: a duplicate key (see [`duplicate_key`]) or a syntax error.
pub(crate) fn decode_error(message: String) -> DecodeError {
    match message.strip_prefix(DUPLICATE) {
        Some(rest) => {
            let key = rest.rsplit_once(" at line").map_or(rest, |(k, _)| k);
            DecodeError::DuplicateKey(crate::preview::preview_str(key))
        }
        None => DecodeError::Syntax(message),
    }
}

/// Decodes argument bytes into a [`Json`] tree.
///
/// Empty or blank input decodes as `{}`: providers send it for tools without parameters.
///
/// # Errors
///
/// Returns [`DecodeError::Syntax`] for bytes that are not one JSON value (nesting deeper than
/// 128 levels included) and [`DecodeError::DuplicateKey`] for an object with a repeated key.
pub fn decode(bytes: &[u8]) -> Result<Json, DecodeError> {
    decode_text(argument_text(bytes)?)
}

/// Decodes text into a [`Json`] tree with serde_json: how a syntax error is described.
pub(crate) fn decode_text(text: &str) -> Result<Json, DecodeError> {
    serde_json::from_str::<Json>(text).map_err(|e| decode_error(e.to_string()))
}

/// The text of argument bytes: blank input stands for `{}` (providers send it for tools without
/// parameters).
///
/// # Errors
///
/// Returns [`DecodeError::Syntax`] for bytes that are not UTF-8.
pub(crate) fn argument_text(bytes: &[u8]) -> Result<&str, DecodeError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok("{}");
    }
    // One UTF-8 check of the whole input, then a decoder over `str`: one over bytes checks
    // every string (each key and each value) on its own, which costs more than the one pass.
    std::str::from_utf8(bytes)
        .map_err(|e| DecodeError::Syntax(format!("arguments are not valid UTF-8: {e}")))
}

impl Json {
    /// The JSON type of this value, as JSON Schema names it.
    pub fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "boolean",
            Json::Number(n) if n.is_f64() => "number",
            Json::Number(_) => "integer",
            Json::String(_) => "string",
            Json::Array(_) => "array",
            Json::Object(_) => "object",
        }
    }

    /// Whether this value is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    /// Converts into a `serde_json::Value` (member order is kept only with that crate's
    /// `preserve_order` feature).
    pub fn into_value(self) -> Value {
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(b),
            Json::Number(n) => Value::Number(n),
            Json::String(s) => Value::String(s),
            Json::Array(items) => Value::Array(items.into_iter().map(Json::into_value).collect()),
            Json::Object(members) => Value::Object(
                members
                    .into_iter()
                    .map(|(k, v)| (k, v.into_value()))
                    .collect(),
            ),
        }
    }

    /// Converts from a `serde_json::Value`.
    pub fn from_value(value: Value) -> Json {
        match value {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(b),
            Value::Number(n) => Json::Number(n),
            Value::String(s) => Json::String(s),
            Value::Array(items) => Json::Array(items.into_iter().map(Json::from_value).collect()),
            Value::Object(members) => Json::Object(
                members
                    .into_iter()
                    .map(|(k, v)| (k, Json::from_value(v)))
                    .collect(),
            ),
        }
    }
}

/// Writes the value back as JSON, members in the order they were sent.
impl Serialize for Json {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => serializer.serialize_unit(),
            Json::Bool(b) => serializer.serialize_bool(*b),
            Json::Number(n) => n.serialize(serializer),
            Json::String(s) => serializer.serialize_str(s),
            Json::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(members) => {
                let mut map = serializer.serialize_map(Some(members.len()))?;
                for (key, value) in members {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

/// Builds a [`Json`] from any decoder, rejecting duplicate keys.
struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Json, E> {
        Number::from_f64(v)
            .map(Json::Number)
            .ok_or_else(|| E::custom("a number is not finite"))
    }

    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        Json::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(item) = seq.next_element::<Json>()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut members: Vec<(String, Json)> =
            Vec::with_capacity(map.size_hint().unwrap_or(8).min(64));
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value::<Json>()?;
            members.push((key, value));
        }
        if let Some(key) = first_duplicate(&members) {
            return Err(duplicate_key(key));
        }
        Ok(Json::Object(members))
    }
}

/// The first key that appears twice, if any.
pub(crate) fn first_duplicate(members: &[(String, Json)]) -> Option<&str> {
    if members.len() <= 16 {
        for (i, (key, _)) in members.iter().enumerate() {
            if members[..i].iter().any(|(k, _)| k == key) {
                return Some(key);
            }
        }
        return None;
    }
    // Hashed, so an object of many keys costs time linear in its size.
    let mut keys = std::collections::HashSet::with_capacity(members.len());
    members
        .iter()
        .map(|(k, _)| k.as_str())
        .find(|key| !keys.insert(*key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s4_duplicate_keys_are_rejected() {
        assert_eq!(
            decode(br#"{"a":1,"a":2}"#),
            Err(DecodeError::DuplicateKey("a".into()))
        );
        let many: String = (0..40).map(|i| format!("\"k{i}\":1,")).collect();
        let body = format!("{{{many}\"k7\":2}}");
        assert_eq!(
            decode(body.as_bytes()),
            Err(DecodeError::DuplicateKey("k7".into()))
        );
        // nested too
        assert!(matches!(
            decode(br#"{"a":{"b":1,"b":1}}"#),
            Err(DecodeError::DuplicateKey(_))
        ));
    }

    #[test]
    fn s2_deep_nesting_is_an_error_not_an_overflow() {
        let deep = "[".repeat(10_000) + &"]".repeat(10_000);
        assert!(matches!(
            decode(deep.as_bytes()),
            Err(DecodeError::Syntax(_))
        ));
        let deep_obj = r#"{"a":"#.repeat(10_000) + "1" + &"}".repeat(10_000);
        assert!(matches!(
            decode(deep_obj.as_bytes()),
            Err(DecodeError::Syntax(_))
        ));
    }

    #[test]
    fn blank_is_an_empty_object_and_order_is_kept() {
        assert_eq!(decode(b"  "), Ok(Json::Object(vec![])));
        let Ok(Json::Object(m)) = decode(br#"{"z":1,"a":2}"#) else {
            panic!("not an object")
        };
        assert_eq!(m[0].0, "z");
    }

    #[test]
    fn a_value_written_back_decodes_to_itself() {
        let text = r#"{"z":[1,-2,2.5,"x\n\"",null,true],"a":{"c":{}}}"#;
        let value = decode(text.as_bytes()).expect("valid");
        let again = serde_json::to_string(&value).expect("serializable");
        assert_eq!(again, text);
        assert_eq!(decode(again.as_bytes()), Ok(value));
    }

    #[test]
    fn garbage_is_a_syntax_error() {
        for bad in [&b"{"[..], b"nul", b"{\"a\":}", b"\xff\xfe", b"1 2"] {
            assert!(matches!(decode(bad), Err(DecodeError::Syntax(_))));
        }
    }
}
