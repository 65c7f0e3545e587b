//! Parsing helpers for generated code: object members, tagged and unit enums, field
//! validators (S2, S5) and string-literal defaults.

use crate::json::Json;
use crate::schema::members::{field_index, unknown_variant};
use crate::schema::reader::{ReadError, Reader};
use crate::schema::{Invalid, Schema, run_validator};
use crate::violation::{ParseCx, Rule};

/// The reader of a derived struct's members, which its `Schema::parse_read` calls with
/// `M = ()`. Generic over a marker only so that an incremental build compiles it apart from
/// the user's own code (an instantiation), and recompiles none of it when a tool's body is
/// edited. Only the derive implements it, and only the struct's own `parse_read` calls it.
pub trait ReadBody: Schema {
    /// Reads the struct from `reader`, by the rules of [`Schema::parse`].
    ///
    /// # Errors
    ///
    /// Returns the reader's error (syntax, duplicate key), which ends the whole parse.
    fn read_body<M>(reader: &mut Reader<'_>, cx: &mut ParseCx) -> Result<Option<Self>, ReadError>;
}

/// Takes the members of an object the model sent, or records a type violation.
pub fn object_members(value: Json, cx: &mut ParseCx) -> Option<Vec<(String, Json)>> {
    match value {
        Json::Object(members) => Some(members),
        other => {
            cx.wrong_type("an object", &other);
            None
        }
    }
}

/// A check that checks nothing, for fields without constraints.
pub fn no_check<T>(_: &T, _: &mut ParseCx) {}

/// Records that a tagged enum's tag is missing or unknown.
pub fn bad_tag(tag: &str, found: Option<&Json>, allowed: &[&str], cx: &mut ParseCx) {
    cx.enter_key(tag);
    match found {
        None | Some(Json::Null) => cx.violate(
            Rule::Required,
            format!(
                "is required: one of {}",
                crate::schema::quoted_list(allowed)
            ),
        ),
        Some(Json::String(s)) => cx.violate(Rule::Enum, crate::violation::not_one_of(allowed, s)),
        Some(other) => cx.wrong_type("a string", other),
    }
    cx.leave();
}

/// Parses a unit variant name: one of `names`, else a violation.
pub fn unit_variant(value: Json, names: &[&str], cx: &mut ParseCx) -> Option<usize> {
    match value {
        Json::String(s) => {
            let found = field_index(names, &s);
            if found.is_none() {
                unknown_variant(&s, names, cx);
            }
            found
        }
        other => {
            cx.wrong_type("a string", &other);
            None
        }
    }
}

/// Takes the tag member out of the members of a tagged enum's object and returns the index of
/// the variant it names in `names`; records a violation (see [`bad_tag`]) when it is missing
/// or names no variant.
pub fn take_tag(
    members: &mut Vec<(String, Json)>,
    tag: &str,
    names: &[&str],
    cx: &mut ParseCx,
) -> Option<usize> {
    let found = members
        .iter()
        .position(|(k, _)| k == tag)
        .map(|i| members.remove(i).1);
    let index = match &found {
        Some(Json::String(s)) => field_index(names, s),
        _ => None,
    };
    if index.is_none() {
        bad_tag(tag, found.as_ref(), names, cx);
    }
    index
}

/// What a field's value may be passed to its custom validator as (S5): the value itself,
/// `&str` for a `String`, `&[T]` for a `Vec<T>`, `&T` for a `Box<T>`.
#[diagnostic::on_unimplemented(
    message = "this validator takes `&{T}`, and the field is a `{Self}`",
    label = "a validator of this field is `fn(&{Self}) -> Result<(), Invalid>`",
    note = "a validator takes the field's value by reference (`&str` also works for a \
            `String`, `&[T]` for a `Vec<T>`) and returns `Result<(), Invalid>`"
)]
pub trait ValidatorInput<T: ?Sized> {
    /// The value as the validator takes it.
    fn validator_input(&self) -> &T;
}

impl<T> ValidatorInput<T> for T {
    fn validator_input(&self) -> &T {
        self
    }
}

impl ValidatorInput<str> for String {
    fn validator_input(&self) -> &str {
        self
    }
}

impl<T> ValidatorInput<[T]> for Vec<T> {
    fn validator_input(&self) -> &[T] {
        self
    }
}

impl<T> ValidatorInput<T> for Box<T> {
    fn validator_input(&self) -> &T {
        self
    }
}

/// Runs a custom validator (S5) on a field's value (see [`ValidatorInput`] for what it may
/// take). Generated code calls this at the span of the validator's path, so a validator of
/// the wrong signature is reported there.
pub fn run_field_validator<V, T>(
    value: &V,
    validator: fn(&T) -> Result<(), Invalid>,
    cx: &mut ParseCx,
) where
    V: ValidatorInput<T>,
    T: ?Sized,
{
    run_validator(value.validator_input(), validator, cx);
}

/// A field type a string literal can be the default or example of
/// (`#[schema(default = "standard")]`): `String`, `serde_json::Value`, and boxes of them.
#[diagnostic::on_unimplemented(
    message = "a string literal cannot be the default or example of a `{Self}` field",
    label = "this is a string, and the field is a `{Self}`",
    note = "write a value of the field's type (`default = 7` for a number), or an expression \
            that makes one"
)]
pub trait FromStrLiteral {
    /// The value the literal stands for.
    fn from_str_literal(literal: &'static str) -> Self;
}

impl FromStrLiteral for String {
    fn from_str_literal(literal: &'static str) -> Self {
        literal.to_owned()
    }
}

impl FromStrLiteral for serde_json::Value {
    fn from_str_literal(literal: &'static str) -> Self {
        serde_json::Value::String(literal.to_owned())
    }
}

impl<T: FromStrLiteral> FromStrLiteral for Box<T> {
    fn from_str_literal(literal: &'static str) -> Self {
        Box::new(T::from_str_literal(literal))
    }
}
