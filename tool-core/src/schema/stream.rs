//! Parsing straight from the decoder (S2): the arguments are read once, each value parsed as it
//! is decoded, with no intermediate [`Json`] tree for objects and arrays.
//!
//! The rules are those of [`Schema::parse`]: every violation is collected with its JSON
//! pointer, duplicate keys and syntax errors end the parse with a [`DecodeError`], and a typed
//! value is built only when nothing was recorded. Types without a streaming form (strings,
//! numbers, maps, hand-written impls) decode their value into a [`Json`] and parse that.
//!
//! Violations come in the order the model sent the members, then a `required` violation for
//! each missing field in declaration order.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::{Rules, Schema};
use crate::json::{DecodeError, Json, JsonVisitor, argument_text};
use crate::violation::ParseCx;

/// Parses a call's argument bytes into a `T` (S2), reading them once.
///
/// Blank input stands for `{}`. Returns `Ok(Some(value))` when the arguments fit, `Ok(None)`
/// when `cx` holds at least one violation or failure, and an error when the bytes are not one
/// JSON value or an object holds a key twice; violations recorded before such an error are
/// meaningless and should be dropped with `cx`.
///
/// Violations come in the order the model sent the members, then a `required` violation for
/// each missing field, in declaration order.
///
/// Constraints and custom validators (S5) run on each field as soon as it is parsed, so a
/// validator may run before a syntax error later in the bytes ends the parse; the handler
/// never runs on such input.
///
/// ```
/// use tool_core::schema::parse_arguments;
/// use tool_core::violation::ParseCx;
///
/// let mut cx = ParseCx::new();
/// assert_eq!(parse_arguments::<Vec<u8>>(b"[1, 2]", &mut cx), Ok(Some(vec![1, 2])));
///
/// let mut cx = ParseCx::new();
/// assert_eq!(parse_arguments::<Vec<u8>>(b"[1, 300, -1]", &mut cx), Ok(None));
/// let paths: Vec<&str> = cx.violations().iter().map(|v| v.path.as_str()).collect();
/// assert_eq!(paths, ["/1", "/2"]);
///
/// assert!(parse_arguments::<Vec<u8>>(b"[1, 2", &mut ParseCx::new()).is_err());
/// ```
///
/// # Errors
///
/// Returns [`DecodeError::Syntax`] (nesting deeper than 128 levels included) or
/// [`DecodeError::DuplicateKey`].
pub fn parse_arguments<T: Schema>(
    bytes: &[u8],
    cx: &mut ParseCx,
) -> Result<Option<T>, DecodeError> {
    let text = argument_text(bytes)?;
    let parsed = T::parse_text(text, cx)?;
    if cx.is_clean() { Ok(parsed) } else { Ok(None) }
}

/// Parses a value decoded already by reading its text again with `T`'s streaming form: what a
/// derived struct's [`Schema::parse`] does, so that one parser is compiled per struct.
pub fn parse_decoded<T: Schema>(value: Json, cx: &mut ParseCx) -> Option<T> {
    let text = written_back(&value, cx)?;
    match T::parse_text(&text, cx) {
        Ok(parsed) => parsed,
        Err(error) => {
            decode_failed(error, cx);
            None
        }
    }
}

/// Records that a decoded value written back as text did not read again: a failure, since
/// the text of a decoded value is valid JSON without duplicate keys.
#[cold]
#[inline(never)]
fn decode_failed(error: DecodeError, cx: &mut ParseCx) {
    cx.fail(Box::new(error));
}

/// A decoded value written back as text, or `None` with the failure recorded.
fn written_back(value: &Json, cx: &mut ParseCx) -> Option<String> {
    match serde_json::to_string(value) {
        Ok(text) => Some(text),
        Err(e) => {
            cx.fail(Box::new(e));
            None
        }
    }
}

/// Parses an array into a `Vec<T>`, each item at its index, collecting every item's violations.
pub(crate) fn array_de<'de, T: Schema, D: Deserializer<'de>>(
    decoder: D,
    cx: &mut ParseCx,
) -> Result<Option<Vec<T>>, D::Error> {
    decoder.deserialize_any(Expect {
        shape: Array::<T>(PhantomData),
        cx,
    })
}

/// Parses an `Option<T>`: `null` is `None`.
pub(crate) fn option_de<'de, T: Schema, D: Deserializer<'de>>(
    decoder: D,
    cx: &mut ParseCx,
) -> Result<Option<Option<T>>, D::Error> {
    decoder.deserialize_option(OptionVisitor::<T> {
        cx,
        _t: PhantomData,
    })
}

/// What the parse of one field has found so far.
#[derive(Debug)]
pub enum Slot<T> {
    /// The model left the field out.
    Absent,
    /// The model sent `null` for a field whose type has no `null` (it stands for absent, S2).
    Null,
    /// The value broke a rule (recorded in the parse context).
    Invalid,
    /// The parsed, checked value.
    Value(T),
}

/// The value of a field once every member was read: the value found, else the field's
/// default, the type's absent value (`None` for `Option`), or a `required` violation.
pub fn finish_field<T: Schema>(
    slot: Slot<T>,
    key: &str,
    cx: &mut ParseCx,
    default: Option<fn() -> T>,
) -> Option<T> {
    match slot {
        Slot::Value(value) => Some(value),
        Slot::Invalid => None,
        Slot::Absent | Slot::Null => match default {
            Some(make) => Some(make()),
            None => super::members::absent_field::<T>(key, cx),
        },
    }
}

/// Parses the decoded value of a field (its key escaped as `segment`) and checks it with
/// `check`.
pub fn field_tree<T: Schema>(
    value: Json,
    segment: &str,
    cx: &mut ParseCx,
    rules: &'static Rules,
    check: fn(&T, &mut ParseCx),
) -> Slot<T> {
    if value.is_null() && !T::ACCEPTS_NULL {
        return Slot::Null;
    }
    Field {
        segment,
        cx,
        rules,
        check,
    }
    .checked(|cx| Ok::<_, std::convert::Infallible>(T::parse(value, cx)))
    .unwrap_or_else(|never| match never {})
}

/// The value of one field: `null` stands for absent unless the type has a `null`.
struct Field<'c, T> {
    /// The field's key as a JSON pointer segment.
    segment: &'c str,
    cx: &'c mut ParseCx,
    /// The field's constraints (its bound stands in for the type's, T1).
    rules: &'static Rules,
    check: fn(&T, &mut ParseCx),
}

impl<T: Schema> Field<'_, T> {
    fn checked<E>(
        self,
        parse: impl FnOnce(&mut ParseCx) -> Result<Option<T>, E>,
    ) -> Result<Slot<T>, E> {
        let cx = self.cx;
        cx.enter_segment(self.segment);
        let outer = cx.swap_field_rules(Some(self.rules));
        let before = cx.error_count();
        let parsed = parse(cx);
        cx.swap_field_rules(outer);
        if let Ok(Some(value)) = &parsed {
            (self.check)(value, cx);
        }
        let clean = cx.error_count() == before;
        cx.leave();
        Ok(match parsed? {
            Some(value) if clean => Slot::Value(value),
            _ => Slot::Invalid,
        })
    }
}

impl<'de, T: Schema> DeserializeSeed<'de> for Field<'_, T> {
    type Value = Slot<T>;

    fn deserialize<D: Deserializer<'de>>(self, decoder: D) -> Result<Slot<T>, D::Error> {
        decoder.deserialize_option(self)
    }
}

impl<'de, T: Schema> Visitor<'de> for Field<'_, T> {
    type Value = Slot<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value")
    }

    fn visit_none<E: de::Error>(self) -> Result<Slot<T>, E> {
        if T::ACCEPTS_NULL {
            self.checked(|cx| Ok(T::parse(Json::Null, cx)))
        } else {
            Ok(Slot::Null)
        }
    }

    fn visit_unit<E: de::Error>(self) -> Result<Slot<T>, E> {
        self.visit_none()
    }

    fn visit_some<D: Deserializer<'de>>(self, decoder: D) -> Result<Slot<T>, D::Error> {
        self.checked(|cx| T::parse_de(decoder, cx))
    }
}

struct OptionVisitor<'c, T> {
    cx: &'c mut ParseCx,
    _t: PhantomData<fn() -> T>,
}

impl<'de, T: Schema> Visitor<'de> for OptionVisitor<'_, T> {
    type Value = Option<Option<T>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value or null")
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Some(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Some(None))
    }

    fn visit_some<D: Deserializer<'de>>(self, decoder: D) -> Result<Self::Value, D::Error> {
        Ok(T::parse_de(decoder, self.cx)?.map(Some))
    }
}

/// One array item.
struct Item<'c, T> {
    cx: &'c mut ParseCx,
    _t: PhantomData<fn() -> T>,
}

impl<'de, T: Schema> DeserializeSeed<'de> for Item<'_, T> {
    type Value = Option<T>;

    fn deserialize<D: Deserializer<'de>>(self, decoder: D) -> Result<Option<T>, D::Error> {
        T::parse_de(decoder, self.cx)
    }
}

/// The JSON type a value must have, and how to read it when it has that type.
trait Shape<'de>: Sized {
    type Out;

    /// The type, as a violation names it ("an object").
    const EXPECTED: &'static str;

    fn map<A: MapAccess<'de>>(
        self,
        map: A,
        cx: &mut ParseCx,
    ) -> Result<Option<Self::Out>, A::Error> {
        JsonVisitor.visit_map(map)?;
        cx.type_mismatch(Self::EXPECTED, "object");
        Ok(None)
    }

    fn seq<A: SeqAccess<'de>>(
        self,
        seq: A,
        cx: &mut ParseCx,
    ) -> Result<Option<Self::Out>, A::Error> {
        JsonVisitor.visit_seq(seq)?;
        cx.type_mismatch(Self::EXPECTED, "array");
        Ok(None)
    }

    fn str(self, _: &str, cx: &mut ParseCx) -> Option<Self::Out> {
        cx.type_mismatch(Self::EXPECTED, "string");
        None
    }
}

/// A visitor that reads a value of one [`Shape`] and records a type violation for any other
/// (the value is still decoded to its end, so a duplicate key inside it is found).
struct Expect<'c, S> {
    shape: S,
    cx: &'c mut ParseCx,
}

impl<'de, S: Shape<'de>> Expect<'_, S> {
    fn mismatch<E>(self, found: &str) -> Result<Option<S::Out>, E> {
        self.cx.type_mismatch(S::EXPECTED, found);
        Ok(None)
    }
}

impl<'de, S: Shape<'de>> Visitor<'de> for Expect<'_, S> {
    type Value = Option<S::Out>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(S::EXPECTED)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        self.mismatch("boolean")
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        self.mismatch("integer")
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        self.mismatch("integer")
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        self.mismatch("number")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(self.shape.str(v, self.cx))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.mismatch("null")
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.mismatch("null")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        self.shape.seq(seq, self.cx)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.shape.map(map, self.cx)
    }
}

/// An array of `T`.
struct Array<T>(PhantomData<fn() -> T>);

impl<'de, T: Schema> Shape<'de> for Array<T> {
    type Out = Vec<T>;
    const EXPECTED: &'static str = "an array";

    fn seq<A: SeqAccess<'de>>(
        self,
        mut seq: A,
        cx: &mut ParseCx,
    ) -> Result<Option<Vec<T>>, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        let mut ok = true;
        // An item's own bound (`items(range = …)`) stands in for its type's (T1).
        let outer = cx.swap_field_rules(cx.field_rules().and_then(|rules| rules.items));
        for index in 0.. {
            cx.enter_index(index);
            let item = seq.next_element_seed(Item::<T> {
                cx: &mut *cx,
                _t: PhantomData,
            });
            cx.leave();
            match item {
                Ok(None) => break,
                Ok(Some(Some(value))) if ok => out.push(value),
                Ok(Some(Some(_))) => {}
                Ok(Some(None)) => ok = false,
                Err(error) => {
                    cx.swap_field_rules(outer);
                    return Err(error);
                }
            }
        }
        cx.swap_field_rules(outer);
        Ok(ok.then_some(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse<T: Schema>(text: &str) -> Result<Option<T>, DecodeError> {
        parse_arguments::<T>(text.as_bytes(), &mut ParseCx::new())
    }

    #[test]
    fn s2_arrays_and_options_stream() {
        assert_eq!(parse::<Vec<u8>>("[1, 2, 3]"), Ok(Some(vec![1, 2, 3])));
        assert_eq!(
            parse::<Vec<Option<u8>>>("[null, 2]"),
            Ok(Some(vec![None, Some(2)]))
        );
        assert_eq!(parse::<Option<Vec<u8>>>("null"), Ok(Some(None)));
        let mut cx = ParseCx::new();
        assert_eq!(
            parse_arguments::<Vec<u8>>(b"[1, 300, -1, \"x\"]", &mut cx),
            Ok(None)
        );
        let paths: Vec<&str> = cx.violations().iter().map(|v| v.path.as_str()).collect();
        assert_eq!(paths, ["/1", "/2", "/3"]);
    }

    #[test]
    fn s2_a_wrong_type_is_a_violation_and_the_value_is_still_checked() {
        let mut cx = ParseCx::new();
        assert_eq!(
            parse_arguments::<Vec<u8>>(br#"{"a": 1}"#, &mut cx),
            Ok(None)
        );
        assert_eq!(
            cx.violations()[0].message,
            "expected an array, found object"
        );
        // A duplicate key inside a value of the wrong type is still found.
        assert!(matches!(
            parse::<Vec<u8>>(r#"{"a": 1, "a": 2}"#),
            Err(DecodeError::DuplicateKey(_))
        ));
    }

    #[test]
    fn s2_syntax_after_a_valid_prefix_is_an_error() {
        assert!(matches!(
            parse::<Vec<u8>>("[1, 2"),
            Err(DecodeError::Syntax(_))
        ));
        assert!(matches!(
            parse::<Vec<u8>>("[1] x"),
            Err(DecodeError::Syntax(_))
        ));
        assert!(matches!(
            parse::<Vec<u8>>("\u{0}"),
            Err(DecodeError::Syntax(_))
        ));
    }

    #[test]
    fn s2_deep_nesting_is_an_error_not_an_overflow() {
        let deep = "[".repeat(10_000) + &"]".repeat(10_000);
        assert!(matches!(
            parse::<Vec<serde_json::Value>>(&deep),
            Err(DecodeError::Syntax(_))
        ));
    }
}
