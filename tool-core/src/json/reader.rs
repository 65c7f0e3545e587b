//! [`Json`] as a [`Deserializer`], with [`DecodeError`] as its error: a decoded value parsed
//! again (a tagged enum's members, a value a hand-written [`Schema`](crate::Schema) passes on).

use std::fmt;

use serde::de::value::{MapDeserializer, SeqDeserializer};
use serde::de::{self, Deserializer, IntoDeserializer, Visitor};

use super::{DecodeError, Json, decode_error};

impl de::Error for DecodeError {
    fn custom<T: fmt::Display>(message: T) -> Self {
        decode_error(message.to_string())
    }
}

impl<'de> IntoDeserializer<'de, DecodeError> for Json {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

/// The members of an object, read by a visitor as a map.
pub type MembersDeserializer<'de> =
    MapDeserializer<'de, std::vec::IntoIter<(String, Json)>, DecodeError>;

/// A deserializer of an object's members (already free of duplicate keys).
pub fn members<'de>(members: Vec<(String, Json)>) -> MembersDeserializer<'de> {
    MapDeserializer::new(members.into_iter())
}

impl<'de> Deserializer<'de> for Json {
    type Error = DecodeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        match self {
            Json::Null => visitor.visit_unit(),
            Json::Bool(b) => visitor.visit_bool(b),
            Json::Number(n) => {
                if let Some(u) = n.as_u64() {
                    visitor.visit_u64(u)
                } else if let Some(i) = n.as_i64() {
                    visitor.visit_i64(i)
                } else {
                    visitor.visit_f64(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            Json::String(s) => visitor.visit_string(s),
            Json::Array(items) => {
                let mut seq = SeqDeserializer::new(items.into_iter());
                let value = visitor.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(value)
            }
            Json::Object(entries) => {
                let mut map = members(entries);
                let value = visitor.visit_map(&mut map)?;
                map.end()?;
                Ok(value)
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        match self {
            Json::Null => visitor.visit_none(),
            other => visitor.visit_some(other),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
        ignored_any
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;
    use crate::json::decode;

    #[test]
    fn a_tree_reads_back_as_the_value_it_was_decoded_from() {
        let text = r#"{"a":[1,-2,2.5,"x",null,true],"b":{"c":{}}}"#;
        let tree = decode(text.as_bytes()).expect("valid");
        let again = serde_json::Value::deserialize(tree).expect("readable");
        assert_eq!(
            again,
            serde_json::from_str::<serde_json::Value>(text).expect("valid")
        );
    }

    #[test]
    fn errors_keep_their_kind() {
        assert_eq!(
            <DecodeError as de::Error>::custom("nope"),
            DecodeError::Syntax("nope".into())
        );
        assert_eq!(
            crate::json::duplicate_key::<DecodeError>("k"),
            DecodeError::DuplicateKey("k".into())
        );
        let short = bool::deserialize(Json::Null).expect_err("null is not a bool");
        assert!(matches!(short, DecodeError::Syntax(_)));
    }
}
