//! [`Schema`] for the standard types a field can have.

use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;

use serde_json::{Map, Value, json};

use super::num::Num;
use super::read::{array_read, option_read};
use super::reader::{ReadError, Reader};
use super::{Schema, SchemaGen};
use crate::json::Json;
use crate::violation::{ParseCx, Rule};

impl Schema for String {
    fn schema(_: &mut SchemaGen) -> Value {
        json!({"type": "string"})
    }

    fn parse(value: Json, cx: &mut ParseCx) -> Option<Self> {
        match value {
            Json::String(s) => Some(s),
            other => {
                cx.wrong_type("a string", &other);
                None
            }
        }
    }

    /// A string read as [`Reader::value`] would read it, without making a [`Json`] of it;
    /// any other value as [`Schema::parse`] takes it.
    fn parse_read(reader: &mut Reader<'_>, cx: &mut ParseCx) -> Result<Option<Self>, ReadError> {
        match reader.string_if_next()? {
            Some(s) => Ok(Some(s.into_owned())),
            None => Ok(Self::parse(reader.value()?, cx)),
        }
    }

    fn to_json(&self) -> Value {
        Value::String(self.clone())
    }
}

impl Schema for bool {
    fn schema(_: &mut SchemaGen) -> Value {
        json!({"type": "boolean"})
    }

    fn parse(value: Json, cx: &mut ParseCx) -> Option<Self> {
        match value {
            Json::Bool(b) => Some(b),
            other => {
                cx.wrong_type("a boolean", &other);
                None
            }
        }
    }

    fn to_json(&self) -> Value {
        Value::Bool(*self)
    }
}

/// The integer a JSON number holds exactly, if it holds one (`3.0` does, `3.5` does not).
fn integer_of(n: &serde_json::Number) -> Option<i128> {
    if let Some(i) = n.as_i64() {
        return Some(i.into());
    }
    if let Some(u) = n.as_u64() {
        return Some(u.into());
    }
    let f = n.as_f64()?;
    // Floats within ±2^63 convert exactly when they have no fraction.
    #[allow(clippy::cast_possible_truncation)]
    (f.fract() == 0.0 && f.abs() < 9.2e18).then_some(f as i128)
}

/// Records that `n`, a number with no exact integer value in `i128`, is not an integer of
/// `min..=max`: past the range when it is a whole number (`1e300`), else a `type` violation.
#[cold]
#[inline(never)]
fn not_an_integer(n: &serde_json::Number, min: i128, max: i128, cx: &mut ParseCx) {
    let num = Num::of_json(n);
    match num {
        Num::Float(f) if f.is_finite() && f.fract() == 0.0 => out_of_range(num, min, max, cx),
        _ => cx.violate(Rule::Type, format!("expected an integer, found {num}")),
    }
}

/// Records that the integer `n` is outside its type's range `min..=max`: as the bound the
/// field declares where it declares one on that side (the bound its schema shows, T1), else as
/// the type's own.
#[cold]
#[inline(never)]
fn out_of_range(n: Num, min: i128, max: i128, cx: &mut ParseCx) {
    if let Some(rules) = cx.field_rules() {
        let before = cx.error_count();
        crate::schema::check_number(&n, rules, cx);
        if cx.error_count() != before {
            return;
        }
    }
    // Out of range, so below it when under its maximum: compared with the far bound, as a
    // float rounded to the near one (`-9223372036854775809` is `-2^63` as an `f64`) still
    // falls on its side.
    if n.cmp(Num::Int(max)) == Some(std::cmp::Ordering::Less) {
        cx.violate(Rule::Minimum, format!("must be at least {min}, found {n}"));
    } else {
        cx.violate(Rule::Maximum, format!("must be at most {max}, found {n}"));
    }
}

/// The next value, read as [`Reader::value`] reads it: a number without the detour through
/// its match of every kind of value.
fn number_or_value(reader: &mut Reader<'_>) -> Result<Json, ReadError> {
    match reader.number_if_next()? {
        Some(n) => Ok(Json::Number(n)),
        None => reader.value(),
    }
}

/// The largest integer a JSON number holds exactly everywhere (2^53 - 1, RFC 8259 §6).
const EXACT_INTEGER: i128 = (1 << 53) - 1;

/// The schema of an integer type of range `min..=max`: each bound of the type's own range is
/// published where a JSON reader holds it exactly (within ±(2^53 - 1)); past that it is left
/// out rather than rounded, and the parser still enforces it (S4).
fn integer_node(min: i128, max: i128) -> Value {
    let mut node = Map::new();
    node.insert("type".to_owned(), "integer".into());
    if min >= -EXACT_INTEGER {
        node.insert("minimum".to_owned(), crate::schema::Num::Int(min).to_json());
    }
    if max <= EXACT_INTEGER {
        node.insert("maximum".to_owned(), crate::schema::Num::Int(max).to_json());
    }
    Value::Object(node)
}

macro_rules! integer_schema {
    ($($t:ty),* $(,)?) => {$(
        impl Schema for $t {
            fn schema(_: &mut SchemaGen) -> Value {
                integer_node(<$t>::MIN as i128, i128::try_from(<$t>::MAX).unwrap_or(i128::MAX))
            }

            fn parse(value: Json, cx: &mut ParseCx) -> Option<Self> {
                let n = match &value {
                    Json::Number(n) => n,
                    other => {
                        cx.wrong_type("an integer", other);
                        return None;
                    }
                };
                let Some(i) = integer_of(n) else {
                    not_an_integer(n, <$t>::MIN as i128, i128::try_from(<$t>::MAX).unwrap_or(i128::MAX), cx);
                    return None;
                };
                match <$t>::try_from(i) {
                    Ok(v) => Some(v),
                    Err(_) => {
                        out_of_range(Num::Int(i), <$t>::MIN as i128, i128::try_from(<$t>::MAX).unwrap_or(i128::MAX), cx);
                        None
                    }
                }
            }

            fn parse_read(reader: &mut Reader<'_>, cx: &mut ParseCx) -> Result<Option<Self>, ReadError> {
                Ok(Self::parse(number_or_value(reader)?, cx))
            }

            fn to_json(&self) -> Value {
                crate::schema::Num::Int(*self as i128).to_json()
            }
        }
    )*};
}

#[allow(clippy::cast_lossless, clippy::cast_possible_wrap)]
mod ints {
    use super::*;
    integer_schema! {
        i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize,
    }
}

macro_rules! float_schema {
    ($($t:ty),*) => {$(
        impl Schema for $t {
            fn schema(_: &mut SchemaGen) -> Value {
                json!({"type": "number"})
            }

            fn parse(value: Json, cx: &mut ParseCx) -> Option<Self> {
                match value {
                    Json::Number(n) => {
                        let f = n.as_f64().unwrap_or(f64::NAN);
                        #[allow(clippy::cast_possible_truncation)]
                        let v = f as $t;
                        if v.is_finite() {
                            Some(v)
                        } else {
                            cx.violate(Rule::Type, format!(
                                "expected a finite number that fits {}, found {}",
                                stringify!($t), Num::of_json(&n)));
                            None
                        }
                    }
                    other => {
                        cx.wrong_type("a number", &other);
                        None
                    }
                }
            }

            fn parse_read(reader: &mut Reader<'_>, cx: &mut ParseCx) -> Result<Option<Self>, ReadError> {
                Ok(Self::parse(number_or_value(reader)?, cx))
            }

            fn to_json(&self) -> Value {
                serde_json::Number::from_f64(f64::from(*self)).map_or(Value::Null, Value::Number)
            }
        }
    )*};
}
float_schema!(f32, f64);

impl<T: Schema> Schema for Option<T> {
    const OPTIONAL: bool = true;
    const ACCEPTS_NULL: bool = true;
    const STRUCTURED: bool = T::STRUCTURED;

    /// `T`'s schema, admitting `null` too (T3): the parser takes `null` for `None`.
    fn schema(generator: &mut SchemaGen) -> Value {
        super::nullable(T::schema(generator))
    }

    fn parse(value: Json, cx: &mut ParseCx) -> Option<Self> {
        match value {
            Json::Null => Some(None),
            other => T::parse(other, cx).map(Some),
        }
    }

    fn parse_read(reader: &mut Reader<'_>, cx: &mut ParseCx) -> Result<Option<Self>, ReadError> {
        option_read(reader, cx)
    }

    fn absent() -> Option<Self> {
        Some(None)
    }

    fn to_json(&self) -> Value {
        self.as_ref().map_or(Value::Null, T::to_json)
    }
}

impl<T: Schema> Schema for Box<T> {
    const OPTIONAL: bool = T::OPTIONAL;
    const ACCEPTS_NULL: bool = T::ACCEPTS_NULL;
    const STRUCTURED: bool = T::STRUCTURED;

    fn schema(generator: &mut SchemaGen) -> Value {
        T::schema(generator)
    }

    fn parse(value: Json, cx: &mut ParseCx) -> Option<Self> {
        T::parse(value, cx).map(Box::new)
    }

    fn parse_read(reader: &mut Reader<'_>, cx: &mut ParseCx) -> Result<Option<Self>, ReadError> {
        Ok(T::parse_read(reader, cx)?.map(Box::new))
    }

    fn absent() -> Option<Self> {
        T::absent().map(Box::new)
    }

    fn to_json(&self) -> Value {
        (**self).to_json()
    }
}

impl<T: Schema> Schema for Vec<T> {
    const STRUCTURED: bool = T::STRUCTURED;

    fn schema(generator: &mut SchemaGen) -> Value {
        json!({"type": "array", "items": T::schema(generator)})
    }

    fn parse(value: Json, cx: &mut ParseCx) -> Option<Self> {
        let items = match value {
            Json::Array(items) => items,
            other => {
                cx.wrong_type("an array", &other);
                return None;
            }
        };
        let mut out = Vec::with_capacity(items.len());
        let mut ok = true;
        // An item's own bound (`items(range = …)`) stands in for its type's (T1).
        let outer = cx.swap_field_rules(cx.field_rules().and_then(|rules| rules.items));
        for (i, item) in items.into_iter().enumerate() {
            cx.enter_index(i);
            match T::parse(item, cx) {
                Some(v) if ok => out.push(v),
                Some(_) => {}
                None => ok = false,
            }
            cx.leave();
        }
        cx.swap_field_rules(outer);
        ok.then_some(out)
    }

    fn parse_read(reader: &mut Reader<'_>, cx: &mut ParseCx) -> Result<Option<Self>, ReadError> {
        array_read(reader, cx)
    }

    fn to_json(&self) -> Value {
        Value::Array(self.iter().map(T::to_json).collect())
    }
}

fn parse_members<T: Schema>(value: Json, cx: &mut ParseCx, mut put: impl FnMut(String, T)) -> bool {
    let members = match value {
        Json::Object(members) => members,
        other => {
            cx.wrong_type("an object", &other);
            return false;
        }
    };
    let mut ok = true;
    for (key, item) in members {
        cx.enter_key(&key);
        match T::parse(item, cx) {
            Some(v) => put(key, v),
            None => ok = false,
        }
        cx.leave();
    }
    ok
}

impl<T: Schema> Schema for BTreeMap<String, T> {
    fn schema(generator: &mut SchemaGen) -> Value {
        json!({"type": "object", "additionalProperties": T::schema(generator)})
    }

    fn parse(value: Json, cx: &mut ParseCx) -> Option<Self> {
        let mut out = BTreeMap::new();
        parse_members(value, cx, |k, v| {
            out.insert(k, v);
        })
        .then_some(out)
    }

    fn to_json(&self) -> Value {
        Value::Object(self.iter().map(|(k, v)| (k.clone(), v.to_json())).collect())
    }
}

impl<T: Schema, S: BuildHasher + Default> Schema for HashMap<String, T, S> {
    fn schema(generator: &mut SchemaGen) -> Value {
        json!({"type": "object", "additionalProperties": T::schema(generator)})
    }

    fn parse(value: Json, cx: &mut ParseCx) -> Option<Self> {
        let mut out = HashMap::default();
        parse_members(value, cx, |k, v| {
            out.insert(k, v);
        })
        .then_some(out)
    }

    fn to_json(&self) -> Value {
        let mut entries: Vec<_> = self.iter().collect();
        entries.sort_by(|a, b| a.0.cmp(b.0));
        Value::Object(
            entries
                .into_iter()
                .map(|(k, v)| (k.clone(), v.to_json()))
                .collect(),
        )
    }
}

/// Any JSON value; `null` included.
impl Schema for Value {
    const ACCEPTS_NULL: bool = true;

    fn schema(_: &mut SchemaGen) -> Value {
        json!({})
    }

    fn parse(value: Json, _: &mut ParseCx) -> Option<Self> {
        Some(value.into_value())
    }

    fn to_json(&self) -> Value {
        self.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `T::parse_read` gives for `text`, and the violations it records.
    fn read<T: Schema + PartialEq + std::fmt::Debug>(
        text: &str,
        fast: bool,
    ) -> (
        Result<Option<T>, ReadError>,
        Vec<crate::violation::Violation>,
        usize,
    ) {
        let mut cx = ParseCx::new();
        let mut reader = Reader::new(text);
        let parsed = if fast {
            T::parse_read(&mut reader, &mut cx)
        } else {
            // The general path: any value, then `parse`.
            reader.value().map(|value| T::parse(value, &mut cx))
        };
        let parsed = parsed.and_then(|value| reader.end().map(|()| value));
        let (violations, dropped, _) = cx.finish();
        (parsed, violations, dropped)
    }

    /// The strings and numbers read without a detour through `Json` read as `parse` takes
    /// the value: the same value, violations and errors.
    #[test]
    fn scalars_read_directly_as_parsed_from_any_value() {
        let texts = [
            r#""plain""#,
            r#" "with \"escapes\" \u00e9" "#,
            r#""unterminated"#,
            "\"control\u{1}\"",
            "0",
            "-0",
            "7",
            "-129",
            "300",
            "2.5",
            "1e400",
            "-",
            "01",
            "123456789012345678901234567890",
            "true",
            "null",
            "[1, 2]",
            r#"{"a": 1, "a": 2}"#,
            "",
            "x",
        ];
        for text in texts {
            assert_eq!(
                read::<String>(text, true),
                read::<String>(text, false),
                "{text}"
            );
            assert_eq!(read::<u8>(text, true), read::<u8>(text, false), "{text}");
            assert_eq!(read::<i64>(text, true), read::<i64>(text, false), "{text}");
            assert_eq!(read::<f64>(text, true), read::<f64>(text, false), "{text}");
            assert_eq!(read::<f32>(text, true), read::<f32>(text, false), "{text}");
        }
    }

    proptest::proptest! {
        /// Any text, JSON or not: the direct reads agree with the general path.
        #[test]
        fn scalars_read_directly_as_parsed_from_any_text(
            text in r#"[ "\\u0-9a-fnt.eE+\-\[\]{}:,\x01é]{0,14}"#,
        ) {
            proptest::prop_assert_eq!(read::<String>(&text, true), read::<String>(&text, false));
            proptest::prop_assert_eq!(read::<u8>(&text, true), read::<u8>(&text, false));
            proptest::prop_assert_eq!(read::<f64>(&text, true), read::<f64>(&text, false));
        }
    }
}
