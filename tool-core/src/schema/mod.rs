//! The [`Schema`] trait: one declaration gives the rendered JSON Schema and the parser that
//! enforces it (S1–S5).
//!
//! `#[derive(Schema)]` implements it for structs and enums; this module implements it for the
//! standard types a field can have. Parsing records every violation in a [`ParseCx`] and
//! builds the typed value only when none was found; a call's arguments are parsed as they are
//! decoded ([`parse_arguments`]), a value already decoded into a [`Json`] by [`parse_root`].

mod broken;
mod exact;
#[cfg(feature = "schemars")]
mod from_schemars;
mod generator;
mod impls;
pub mod json;
pub(crate) mod members;
mod nullable;
mod num;
mod pattern;
mod pointer;
pub(crate) mod read;
pub(crate) mod reader;
mod rules;
pub mod violation;

use serde_json::Value;

pub use broken::{Broken, Expected, Listed, Quoted, Sent, type_of};
#[cfg(feature = "schemars")]
pub use from_schemars::{CheckError, MAX_DEPTH, Parameters, schemars_schema};
pub(crate) use generator::root_not_object;
pub use generator::{SchemaError, SchemaGen, Unsupported, render_root};
pub use nullable::{accepts_null, nullable};
pub use num::Num;
pub use pattern::{Pattern, PatternError};
pub use read::parse_arguments;
pub use rules::{ArrayRules, Invalid, ItemRules, NumberRules, Rules, StringRules};
pub use rules::{check_array, check_items, check_number, check_string, run_validator};
pub(crate) use rules::{push_quoted_list, quoted_list};
pub use tool_rules::format::Format;

use crate::json::Json;
use crate::violation::ParseCx;

/// A type the model can send: it renders its JSON Schema and parses untrusted JSON into itself,
/// collecting every violation.
///
/// Derive it with `#[derive(Schema)]`; implement it by hand only for a type with its own wire
/// form. A hand-written `parse` must record a violation in `cx` whenever it returns `None`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be sent by the model: it does not implement `Schema`",
    label = "this type needs `#[derive(Schema)]`",
    note = "add `#[derive(Schema)]` to its definition, or use a supported type: String, bool, \
            integers, f32/f64, Option, Vec, Box, maps with String keys, serde_json::Value"
)]
pub trait Schema: Sized {
    /// Whether a field of this type may be left out (it is then not `required`).
    const OPTIONAL: bool = false;

    /// Whether `null` is a value of this type, rather than "absent" (S2).
    const ACCEPTS_NULL: bool = false;

    /// Whether a value of this type, returned by a tool, is structured output with a schema
    /// of its own (O1): true for derived types and for `Option`, `Vec` and `Box` of them;
    /// false for strings, numbers and the other built-in types, whose results stay plain
    /// text (E1).
    const STRUCTURED: bool = false;

    /// Renders this type's schema. Types with a name register themselves through
    /// [`SchemaGen::named`] so that recursive types render through `$defs`/`$ref`.
    fn schema(generator: &mut SchemaGen) -> Value;

    /// Parses a value the model sent. Returns `None` exactly when it recorded at least one
    /// violation or failure in `cx`; it keeps going after the first to collect them all.
    fn parse(value: Json, cx: &mut ParseCx) -> Option<Self>;

    /// Parses a value from the [`Reader`](reader::Reader) by the rules of
    /// [`parse`](Schema::parse): how a call's arguments are read. The default reads
    /// the value into a [`Json`] and parses that; derived structs and unit enums, `Vec`,
    /// `Option` and `Box` read it in place. Implement [`parse`](Schema::parse), not this.
    ///
    /// # Errors
    ///
    /// Returns the reader's error (syntax, duplicate key), which ends the whole parse.
    #[doc(hidden)]
    fn parse_read(
        reader: &mut reader::Reader<'_>,
        cx: &mut ParseCx,
    ) -> Result<Option<Self>, reader::ReadError> {
        let value = reader.value()?;
        Ok(Self::parse(value, cx))
    }

    /// The value of a field of this type that the model left out, if it may (`None` for
    /// `Option`), or `None` when the field is required.
    fn absent() -> Option<Self> {
        None
    }

    /// This value as JSON: used for defaults and examples in the rendered schema, and by
    /// models that generate arguments.
    fn to_json(&self) -> Value;

    /// The arguments this value was parsed from, as JSON: what a paused call (H2, H5) and a
    /// hook (K1) see. The default is [`to_json`](Schema::to_json); a type that cannot write
    /// itself back (a `Parameters` input, C3) gives the validated argument bytes `args`
    /// decoded.
    #[doc(hidden)]
    fn arguments_json(&self, args: &[u8]) -> Value {
        let _ = args;
        self.to_json()
    }
}

/// Parses a whole input: the root must be an object (S1).
///
/// # Errors
///
/// Returns the parse context with its violations when the value does not fit.
// The context is large (its pending pointer levels are kept inline, so that a parse that
// records nothing allocates nothing for them); it is returned once, on a failed parse.
#[allow(clippy::result_large_err)]
pub fn parse_root<T: Schema>(value: Json) -> Result<T, ParseCx> {
    let mut cx = ParseCx::new();
    match T::parse(value, &mut cx) {
        Some(v) if cx.is_clean() => Ok(v),
        _ => Err(cx),
    }
}
