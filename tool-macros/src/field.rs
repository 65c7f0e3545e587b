//! A named field of a struct or variant, or a described parameter of a `#[tool]` fn: what
//! both macros read of one, with its attributes parsed.

use proc_macro2::Span;
use syn::{Ident, Type};

use crate::attr::FieldAttrs;

/// A named field of a struct or variant, or a described parameter of a `#[tool]` fn.
pub(crate) struct Field {
    /// The Rust name.
    pub(crate) member: Ident,
    pub(crate) ty: Type,
    /// The JSON name.
    pub(crate) key: String,
    pub(crate) attrs: FieldAttrs,
    pub(crate) description: Option<String>,
    /// The whole field, for errors about it.
    pub(crate) span: Span,
}
