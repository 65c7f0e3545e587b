//! Support for the code the macros generate. Not public API: anything here may change in any
//! release.

use std::future::{Future, Ready, ready};

pub use inventory;
pub use serde;
pub use serde_json;

pub use crate::context::Context;
pub use crate::error::{BoxError, Site};
pub use crate::json::DecodeError;
pub use crate::json::Json;
pub use crate::policy::{BoxFuture, Policy};
pub use crate::registry::Registration;
pub use crate::schema::{
    ArrayRules, Format, Invalid, Keys, Num, NumberRules, Pattern, Rules, Schema, SchemaGen, Slot,
    StringRules, check_array, check_number, check_string, field_de, field_index, field_tree,
    finish_field, object_de, object_text, parse_decoded, run_validator, variant_de,
};
pub use crate::tool::{IntoTool, Tool};
pub use crate::violation::{ParseCx, Rule};
pub use serde::de::{Deserializer, MapAccess};

/// Looks at a value's type to pick how to use it (autoref specialization): see
/// [`ViaFuture`] and [`ViaReady`].
pub struct Probe<'a, T>(pub &'a T);

/// Marks a value that is a future: it is awaited.
pub struct FutureTag;
/// Marks a value that is not a future: it is ready.
pub struct ReadyTag;

/// Picked for a [`Probe`] of a future.
pub trait ViaFuture {
    /// The tag.
    fn tag(&self) -> FutureTag {
        FutureTag
    }
}
impl<T: Future> ViaFuture for Probe<'_, T> {}

/// Picked for a [`Probe`] of anything else.
pub trait ViaReady {
    /// The tag.
    fn tag(&self) -> ReadyTag {
        ReadyTag
    }
}
impl<T> ViaReady for &Probe<'_, T> {}

impl FutureTag {
    /// The future itself.
    pub fn into_future<F: Future>(self, f: F) -> F {
        f
    }
}

impl ReadyTag {
    /// A future ready with the value.
    pub fn into_future<T>(self, value: T) -> Ready<T> {
        ready(value)
    }
}

/// Marks a `Result`: its error is boxed.
pub struct ResultTag;
/// Marks a plain value: it is a success.
pub struct PlainTag;

/// Picked for a [`Probe`] of a `Result` whose error converts to [`BoxError`].
pub trait ViaResult {
    /// The tag.
    fn result_tag(&self) -> ResultTag {
        ResultTag
    }
}
impl<T, E: Into<BoxError>> ViaResult for Probe<'_, Result<T, E>> {}

/// Picked for a [`Probe`] of anything else.
pub trait ViaPlain {
    /// The tag.
    fn result_tag(&self) -> PlainTag {
        PlainTag
    }
}
impl<T> ViaPlain for &Probe<'_, T> {}

impl ResultTag {
    /// The result with its error boxed.
    pub fn into_result<T, E: Into<BoxError>>(self, r: Result<T, E>) -> Result<T, BoxError> {
        r.map_err(Into::into)
    }
}

impl PlainTag {
    /// The value as a success.
    pub fn into_result<T>(self, value: T) -> Result<T, BoxError> {
        Ok(value)
    }
}

/// The boxed policy error of a policy's output.
pub fn policy_output<E: Into<BoxError>>(out: Result<bool, E>) -> Result<bool, BoxError> {
    out.map_err(Into::into)
}

/// Checks at compile time that a handler's result can be sent to the model.
pub fn assert_serialize<T: serde::Serialize>() {}

/// The value of a field the model left out or sent as `null` (S2): its default, the type's
/// absent value (`None` for `Option`), or a `required` violation.
pub fn absent_field<T: Schema>(key: &str, cx: &mut ParseCx) -> Option<T> {
    let v = T::absent();
    if v.is_none() {
        cx.violate_at(key, Rule::Required, "is required");
    }
    v
}

/// Records a violation for each member of `members` (an object the model sent) that the
/// schema does not declare.
pub fn unknown_field(key: &str, allowed: &[&str], cx: &mut ParseCx) {
    let short = crate::violation::preview_str(key);
    cx.enter_key(&short);
    cx.violate_with(Rule::AdditionalProperties, || {
        if allowed.is_empty() {
            "is not a property of this object, which takes none".to_owned()
        } else {
            format!(
                "is not a property of this object; its properties are {}",
                crate::schema::quoted_list(allowed)
            )
        }
    });
    cx.leave();
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

/// Renders one property of an object schema into `properties`, and adds it to `required`
/// when it is neither optional nor defaulted (S1).
#[allow(clippy::too_many_arguments)]
pub fn property<T: Schema>(
    generator: &mut SchemaGen,
    properties: &mut serde_json::Map<String, serde_json::Value>,
    required: &mut Vec<serde_json::Value>,
    key: &str,
    description: Option<&str>,
    rules: &Rules,
    default: Option<serde_json::Value>,
    example: Option<serde_json::Value>,
) {
    let mut node = T::schema(generator);
    rules.apply(&mut node);
    if default.is_some() {
        // T3: `null` for a defaulted field means "absent" and takes the default (S2), so the
        // published schema admits it.
        node = crate::schema::nullable(node);
    }
    if let Some(obj) = node.as_object_mut() {
        if let Some(d) = description {
            obj.insert("description".to_owned(), d.into());
        }
        if let Some(example) = example {
            obj.insert(
                "examples".to_owned(),
                serde_json::Value::Array(vec![example]),
            );
        }
    }
    let has_default = default.is_some();
    if let (Some(obj), Some(d)) = (node.as_object_mut(), default) {
        obj.insert("default".to_owned(), d);
    }
    if !T::OPTIONAL && !has_default {
        required.push(key.into());
    }
    properties.insert(key.to_owned(), node);
}

/// An object schema: `properties`, `required`, `additionalProperties: false` (S1).
pub fn object(
    properties: serde_json::Map<String, serde_json::Value>,
    required: Vec<serde_json::Value>,
    description: Option<&str>,
) -> serde_json::Value {
    let mut node = serde_json::Map::new();
    node.insert("type".to_owned(), "object".into());
    if let Some(d) = description {
        node.insert("description".to_owned(), d.into());
    }
    node.insert(
        "properties".to_owned(),
        serde_json::Value::Object(properties),
    );
    node.insert("required".to_owned(), serde_json::Value::Array(required));
    node.insert("additionalProperties".to_owned(), false.into());
    serde_json::Value::Object(node)
}

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

/// Records that `name` is none of the unit variants `names`.
pub fn unknown_variant(name: &str, names: &[&str], cx: &mut ParseCx) {
    cx.violate(Rule::Enum, crate::violation::not_one_of(names, name));
}

/// The schema of an enum of unit variants: a string that is one of `names` (S1). `enum` has
/// no per-value description, so the macro appends the variants' docs to `description`.
pub fn string_enum(names: &[&str], description: Option<&str>) -> serde_json::Value {
    let mut node = serde_json::Map::new();
    node.insert("type".to_owned(), "string".into());
    if let Some(d) = description {
        node.insert("description".to_owned(), d.into());
    }
    node.insert(
        "enum".to_owned(),
        names.iter().map(|n| serde_json::Value::from(*n)).collect(),
    );
    serde_json::Value::Object(node)
}

/// Renders the tag property of one variant of a tagged enum, `{"type": "string", "enum":
/// [variant]}`, and makes it required.
pub fn tag_property(
    properties: &mut serde_json::Map<String, serde_json::Value>,
    required: &mut Vec<serde_json::Value>,
    tag: &str,
    variant: &str,
) {
    let mut node = serde_json::Map::new();
    node.insert("type".to_owned(), "string".into());
    node.insert(
        "enum".to_owned(),
        serde_json::Value::Array(vec![variant.into()]),
    );
    properties.insert(tag.to_owned(), serde_json::Value::Object(node));
    required.push(tag.into());
}

/// The schema of a tagged enum: `anyOf` its variants' object schemas.
pub fn any_of(variants: Vec<serde_json::Value>, description: Option<&str>) -> serde_json::Value {
    let mut node = serde_json::Map::new();
    if let Some(d) = description {
        node.insert("description".to_owned(), d.into());
    }
    node.insert("anyOf".to_owned(), serde_json::Value::Array(variants));
    serde_json::Value::Object(node)
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

/// Renders a handler's success for the model (E1).
///
/// Generated code calls this at the span of the handler's return type, so that a success type
/// that is not `Serialize` is reported there, once. The text it returns renders to itself
/// again in the tool's pipeline (a JSON string goes to the model as its text).
///
/// # Errors
///
/// Returns the handler's error, or the serialization error.
pub fn render_output<T: serde::Serialize>(out: Result<T, BoxError>) -> Result<String, BoxError> {
    out.and_then(|value| crate::tool::render_result(&value))
}

/// What an availability policy returns: `Result<bool, E>` with `E: Into<BoxError>` (A1).
#[diagnostic::on_unimplemented(
    message = "an availability policy returns `Result<bool, E>`, and this one returns `{Self}`",
    label = "this policy must be `async fn(&Context) -> Result<bool, E>` or `fn(&Context) -> Result<bool, E>`",
    note = "`E` is any error that converts into `BoxError`: any std error, `Box<dyn Error + Send + Sync>`, `anyhow::Error`"
)]
pub trait PolicyOutput {
    /// The output with its error boxed.
    fn into_policy_result(self) -> Result<bool, BoxError>;
}

impl<E: Into<BoxError>> PolicyOutput for Result<bool, E> {
    fn into_policy_result(self) -> Result<bool, BoxError> {
        self.map_err(Into::into)
    }
}

/// The boxed output of a policy. Generated code calls this at the span of the policy's path,
/// so that a policy of the wrong signature is reported there.
///
/// # Errors
///
/// Returns the policy's error, boxed.
pub fn policy_result<T: PolicyOutput>(out: T) -> Result<bool, BoxError> {
    out.into_policy_result()
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

/// Calls an availability policy, a fn of `&Context` (A1). Generated code calls this at the
/// span of the policy's path, so a policy that takes anything else is reported there, with
/// the signature it should have.
pub fn call_policy<'a, F, R>(policy: F, ctx: &'a Context) -> R
where
    F: FnOnce(&'a Context) -> R,
{
    policy(ctx)
}
