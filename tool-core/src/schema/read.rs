//! Parsing typed values from the [`Reader`] (S2): what [`Schema::parse_read`] does for
//! derived structs and unit enums, `Vec`, `Option` and `Box`. The rules are those of
//! [`Schema::parse`]: every violation is collected with its JSON pointer, in the order the
//! model sent the members, then a `required` violation for each missing field; duplicate keys
//! and syntax errors end the parse.
//!
//! This code is compiled once in tool-core (or once per item type for `Vec<T>`); a derived
//! struct's own code is one loop over its keys calling [`field_read`] for each.

use super::members::{Keys, absent_field, field_index, unknown_field, unknown_variant};
use super::reader::{Read, ReadError, Reader};
use super::{Rules, Schema};
use crate::json::{DecodeError, Json, argument_text};
use crate::violation::ParseCx;

/// Parses the whole of `text` (a call's arguments, or a value written back as text) through
/// `T`'s [`Schema::parse_read`].
///
/// # Errors
///
/// Returns the decode error: syntax (trailing characters included), duplicate key.
pub(super) fn parse_text<T: Schema>(
    text: &str,
    cx: &mut ParseCx,
) -> Result<Option<T>, DecodeError> {
    let mut reader = Reader::new(text);
    let error = match T::parse_read(&mut reader, cx) {
        Ok(value) => match reader.end() {
            Ok(()) => return Ok(value),
            Err(error) => error,
        },
        Err(error) => error,
    };
    Err(error.into_decode(text))
}

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
    let parsed = parse_text::<T>(text, cx)?;
    if cx.is_clean() { Ok(parsed) } else { Ok(None) }
}

/// Parses a value decoded already by reading its text again with `T`'s [`Schema::parse_read`]:
/// what a derived struct's [`Schema::parse`] does. A decoded struct is rare (a map's values,
/// an enum's variant, a hand-written impl's field; a call's arguments and an elicited answer
/// are read from their text), and writing it back costs one copy of it; parsing the tree
/// directly would compile a second parser for every derived struct, which each edit of a
/// tool's crate would rebuild. So the reader stays the one parser of a struct's members.
pub fn parse_decoded<T: Schema>(value: Json, cx: &mut ParseCx) -> Option<T> {
    let text = written_back(&value, cx)?;
    match parse_text::<T>(&text, cx) {
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

/// Opens the object that must come next; anything else is read to its end and recorded as a
/// type violation (then `false`).
///
/// # Errors
///
/// Syntax, or a duplicate key inside a value of the wrong type.
pub fn open_object(reader: &mut Reader<'_>, cx: &mut ParseCx) -> Read<bool> {
    if reader.open_object()? {
        return Ok(true);
    }
    wrong_type(reader, "an object", cx)
}

/// Reads a value of the wrong type to its end and records a `type` violation.
#[cold]
#[inline(never)]
fn wrong_type(reader: &mut Reader<'_>, expected: &str, cx: &mut ParseCx) -> Read<bool> {
    let value = reader.value()?;
    cx.wrong_type(expected, &value);
    Ok(false)
}

impl Keys<'_> {
    /// The index of the next declared field of the object open in `reader`, its `:` read, or
    /// `None` once the object ends. An undeclared key is recorded as a violation and its value
    /// read and dropped.
    ///
    /// # Errors
    ///
    /// Syntax, or a key sent twice.
    pub fn next_read(&mut self, reader: &mut Reader<'_>, cx: &mut ParseCx) -> Read<Option<usize>> {
        loop {
            let Some(key) = reader.next_key(&mut self.first)? else {
                return Ok(None);
            };
            let expected = self.names.get(self.next).is_some_and(|name| **name == *key);
            let found = if expected {
                Some(self.next)
            } else {
                field_index(self.names, &key)
            };
            if let Some(index) = found {
                if self.mark(index) {
                    return Err(ReadError::DuplicateKey(key.into_owned()));
                }
                self.next = index + 1;
                reader.colon()?;
                return Ok(Some(index));
            }
            self.unknown_read(key.into_owned(), reader, cx)?;
        }
    }

    /// Records an undeclared key and reads its value.
    #[inline(never)]
    fn unknown_read(&mut self, key: String, reader: &mut Reader<'_>, cx: &mut ParseCx) -> Read<()> {
        if self.unknown.contains(&key) {
            return Err(ReadError::DuplicateKey(key));
        }
        unknown_field(&key, self.allowed, cx);
        reader.colon()?;
        // Read to its end: a duplicate key inside is an error here too.
        reader.value()?;
        self.unknown.insert(key);
        Ok(())
    }
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
            None => absent_field::<T>(key, cx),
        },
    }
}

/// One field of an object being read: where its value goes, and its path, rules and check.
#[derive(Debug)]
pub struct FieldSlot<'s, T> {
    slot: &'s mut Slot<T>,
    segment: &'static str,
    rules: &'static Rules,
    check: fn(&T, &mut ParseCx),
    /// [`field_read`] for `T`: kept here so that turning the entry into a `dyn ReadField`
    /// asks nothing of `T` (a field type that is not `Schema` is reported once, at the type).
    read: ReadFn<T>,
}

/// How a field's value is read: [`field_read`] for its type.
type ReadFn<T> = fn(
    &mut Reader<'_>,
    &'static str,
    &mut ParseCx,
    &'static Rules,
    fn(&T, &mut ParseCx),
) -> Read<Slot<T>>;

/// A field of a derived struct, by index in [`read_members`]: compiled once per field type
/// rather than once per struct.
pub trait ReadField {
    /// Reads the field's value from `reader` into its slot.
    ///
    /// # Errors
    ///
    /// Syntax, or a duplicate key.
    fn read(&mut self, reader: &mut Reader<'_>, cx: &mut ParseCx) -> Read<()>;
}

impl<T> ReadField for FieldSlot<'_, T> {
    fn read(&mut self, reader: &mut Reader<'_>, cx: &mut ParseCx) -> Read<()> {
        *self.slot = (self.read)(reader, self.segment, cx, self.rules, self.check)?;
        Ok(())
    }
}

/// The entry of a field in [`read_members`]: its slot, its key escaped as a JSON pointer
/// `segment`, its constraints and its check.
pub fn field<'s, T: Schema>(
    slot: &'s mut Slot<T>,
    segment: &'static str,
    rules: &'static Rules,
    check: fn(&T, &mut ParseCx),
) -> FieldSlot<'s, T> {
    FieldSlot {
        slot,
        segment,
        rules,
        check,
        read: field_read::<T>,
    }
}

/// Reads the members of the object open in `reader` until its end, each declared one into
/// `fields[i]` (the field named `names[i]`); an undeclared key is a violation listing
/// `allowed`.
///
/// # Errors
///
/// Syntax, or a key sent twice.
pub fn read_members(
    reader: &mut Reader<'_>,
    cx: &mut ParseCx,
    names: &[&str],
    allowed: &[&str],
    fields: &mut [&mut dyn ReadField],
) -> Read<()> {
    let mut keys = Keys::new(names, allowed);
    while let Some(index) = keys.next_read(reader, cx)? {
        if let Some(field) = fields.get_mut(index) {
            field.read(reader, cx)?;
        }
    }
    Ok(())
}

/// Parses the value of a field (its key escaped as `segment`), checks it with `check` (its
/// constraints and validator) and returns what was found: `null` stands for absent unless the
/// type has a `null`.
///
/// # Errors
///
/// Syntax, or a duplicate key.
pub fn field_read<T: Schema>(
    reader: &mut Reader<'_>,
    segment: &'static str,
    cx: &mut ParseCx,
    rules: &'static Rules,
    check: fn(&T, &mut ParseCx),
) -> Read<Slot<T>> {
    if reader.null()? {
        if !T::ACCEPTS_NULL {
            return Ok(Slot::Null);
        }
        return checked(segment, cx, rules, check, |cx| Ok(T::parse(Json::Null, cx)));
    }
    checked(segment, cx, rules, check, |cx| T::parse_read(reader, cx))
}

/// Parses the decoded value of a field (its key escaped as `segment`) and checks it with
/// `check`: [`field_read`] for a value decoded already (an enum variant's fields).
pub fn field_tree<T: Schema>(
    value: Json,
    segment: &'static str,
    cx: &mut ParseCx,
    rules: &'static Rules,
    check: fn(&T, &mut ParseCx),
) -> Slot<T> {
    if value.is_null() && !T::ACCEPTS_NULL {
        return Slot::Null;
    }
    // Nothing is read, so nothing fails to read.
    checked(segment, cx, rules, check, |cx| Ok(T::parse(value, cx))).unwrap_or(Slot::Invalid)
}

/// Parses a field's value with `parse` at its path, under its rules, then checks it.
fn checked<T>(
    segment: &'static str,
    cx: &mut ParseCx,
    rules: &'static Rules,
    check: fn(&T, &mut ParseCx),
    parse: impl FnOnce(&mut ParseCx) -> Read<Option<T>>,
) -> Read<Slot<T>> {
    cx.enter_field(segment);
    let outer = cx.swap_field_rules(Some(rules));
    let before = cx.error_count();
    let parsed = parse(cx);
    cx.swap_field_rules(outer);
    if let Ok(Some(value)) = &parsed {
        check(value, cx);
    }
    let clean = cx.error_count() == before;
    cx.leave();
    Ok(match parsed? {
        Some(value) if clean => Slot::Value(value),
        _ => Slot::Invalid,
    })
}

/// Parses an array into a `Vec<T>`, each item at its index, collecting every item's violations.
///
/// # Errors
///
/// Syntax, or a duplicate key.
pub(super) fn array_read<T: Schema>(
    reader: &mut Reader<'_>,
    cx: &mut ParseCx,
) -> Read<Option<Vec<T>>> {
    if !reader.open_array()? {
        wrong_type(reader, "an array", cx)?;
        return Ok(None);
    }
    let mut out = Vec::new();
    let mut ok = true;
    // An item's own bound (`items(range = …)`) stands in for its type's (T1).
    let outer = cx.swap_field_rules(cx.field_rules().and_then(|rules| rules.items));
    let mut first = true;
    let mut index = 0;
    let result = loop {
        match reader.next_item(&mut first) {
            Ok(true) => {}
            Ok(false) => break Ok(()),
            Err(error) => break Err(error),
        }
        cx.enter_index(index);
        let item = T::parse_read(reader, cx);
        cx.leave();
        match item {
            Ok(Some(value)) if ok => out.push(value),
            Ok(Some(_)) => {}
            Ok(None) => ok = false,
            Err(error) => break Err(error),
        }
        index += 1;
    };
    cx.swap_field_rules(outer);
    result.map(|()| ok.then_some(out))
}

/// Parses an `Option<T>`: `null` is `None`.
///
/// # Errors
///
/// Syntax, or a duplicate key.
pub(super) fn option_read<T: Schema>(
    reader: &mut Reader<'_>,
    cx: &mut ParseCx,
) -> Read<Option<Option<T>>> {
    if reader.null()? {
        return Ok(Some(None));
    }
    Ok(T::parse_read(reader, cx)?.map(Some))
}

/// Parses a unit variant's name: the index of one of `names`, else a violation.
///
/// # Errors
///
/// Syntax, or a duplicate key inside a value of the wrong type.
pub fn variant_read(
    reader: &mut Reader<'_>,
    names: &[&str],
    cx: &mut ParseCx,
) -> Read<Option<usize>> {
    let Some(name) = reader.string_if_next()? else {
        wrong_type(reader, "a string", cx)?;
        return Ok(None);
    };
    let found = field_index(names, &name);
    if found.is_none() {
        unknown_variant(&name, names, cx);
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// What reading the members `keys` (each with the value `0`) gives: the declared field of
    /// each member in turn, then how the object ended, and how many violations were recorded.
    fn by_reader(names: &[&str], keys: &[&str]) -> (Vec<usize>, Result<(), ReadError>, usize) {
        let members: Vec<String> = keys.iter().map(|key| format!("{key:?}: 0")).collect();
        let text = format!("{{{}}}", members.join(", "));
        let mut reader = Reader::new(&text);
        let mut cx = ParseCx::new();
        assert_eq!(reader.open_object(), Ok(true));
        let mut keys = Keys::new(names, names);
        let mut found = Vec::new();
        let end = loop {
            match keys.next_read(&mut reader, &mut cx) {
                Ok(Some(index)) => {
                    found.push(index);
                    if let Err(error) = reader.value() {
                        break Err(error);
                    }
                }
                Ok(None) => break Ok(()),
                Err(error) => break Err(error),
            }
        };
        (found, end, cx.violations().len())
    }

    /// The same, found by name one key at a time.
    fn by_name(names: &[&str], keys: &[&str]) -> (Vec<usize>, Result<(), ReadError>, usize) {
        let (mut found, mut unknown, mut seen) = (Vec::new(), 0, HashSet::new());
        for key in keys {
            if !seen.insert(*key) {
                return (
                    found,
                    Err(ReadError::DuplicateKey((*key).to_owned())),
                    unknown,
                );
            }
            match field_index(names, key) {
                Some(index) => found.push(index),
                None => unknown += 1,
            }
        }
        (found, Ok(()), unknown)
    }

    proptest::proptest! {
        /// Keys in any order, undeclared ones and keys sent twice: the field compared first
        /// (the one after the last read) changes nothing.
        #[test]
        fn s4_keys_in_any_order_find_the_fields_their_names_find(
            picks in proptest::collection::vec(0usize..7, 0..10),
        ) {
            const NAMES: [&str; 5] = ["title", "reporter", "priority", "kind", "k~1/"];
            const KEYS: [&str; 7] = ["title", "reporter", "priority", "kind", "k~1/", "other", "titles"];
            let keys: Vec<&str> = picks.iter().map(|&i| KEYS[i]).collect();
            proptest::prop_assert_eq!(by_reader(&NAMES, &keys), by_name(&NAMES, &keys));
        }
    }

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
