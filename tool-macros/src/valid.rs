//! Every rule the macros check before expanding, in one place. Each problem is reported at the
//! token it is about, and all of them are collected before anything is reported.
//!
//! Mismatches between an attribute and the field's type (`min_len` on a `u32`) are not checked
//! here: the generated code asks the type system, and the error points at the attribute.

use std::collections::BTreeMap;

use proc_macro2::Span;
use syn::spanned::Spanned as _;

use crate::ast::{self, Body, Container, Field, ToolFn, ToolInput};
use crate::attr::Num;

/// Collects errors, so that every problem is reported at once.
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    /// No errors yet.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Adds an error.
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    /// Adds an error at `span`.
    pub(crate) fn at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }

    /// All the errors, if there were any.
    pub(crate) fn finish(self) -> Result<(), syn::Error> {
        self.0.map_or(Ok(()), Err)
    }
}

/// Checks a `#[derive(Schema)]` input.
pub(crate) fn container(input: &Container, errors: &mut Errors) {
    match &input.body {
        Body::Struct(fields) => {
            if let Some(tag) = &input.attrs.tag {
                errors.at(
                    tag.key,
                    "`tag` names the property that tells the variants of an enum apart; a \
                     struct has no variants: remove it",
                );
            }
            object_fields(fields, None, errors);
        }
        Body::UnitEnum(variants) => {
            enum_variants(input, variants, errors);
        }
        Body::TaggedEnum {
            tag,
            tag_span,
            variants,
        } => {
            if tag.is_empty() {
                errors.at(
                    *tag_span,
                    "the tag property needs a name, such as `tag = \"type\"`",
                );
            }
            enum_variants(input, variants, errors);
            for v in variants {
                object_fields(&v.fields, Some((tag, &v.ident)), errors);
            }
        }
    }
}

fn enum_variants(input: &Container, variants: &[ast::Variant], errors: &mut Errors) {
    if variants.is_empty() {
        errors.at(
            input.ident.span(),
            "an enum without variants has no value the model could send: add a variant",
        );
    }
    let mut seen: BTreeMap<&str, &syn::Ident> = BTreeMap::new();
    for v in variants {
        if v.name.is_empty() {
            let span = v
                .attrs
                .rename
                .as_ref()
                .map_or(v.ident.span(), |r| r.value.span());
            errors.at(span, "a variant needs a non-empty name");
        }
        if let Some(first) = seen.insert(&v.name, &v.ident) {
            errors.at(
                v.ident.span(),
                format!(
                    "variants `{first}` and `{}` have the same name \"{}\": rename one with \
                     `#[schema(rename = \"…\")]`",
                    v.ident, v.name
                ),
            );
        }
    }
}

/// Checks the fields of one object: each field's attributes, and that no two share a key (nor
/// the tag of the enum they are in).
fn object_fields(fields: &[Field], tag: Option<(&String, &syn::Ident)>, errors: &mut Errors) {
    let mut seen: BTreeMap<&str, &syn::Ident> = BTreeMap::new();
    for f in fields {
        field(f, errors);
        if let Some((tag, variant)) = tag
            && f.key == *tag
        {
            errors.at(
                f.key_span(),
                format!(
                    "field `{}` of `{variant}` is named \"{tag}\", like the enum's tag: \
                         rename the field, or pick another tag with `#[schema(tag = \"…\")]` on \
                         the enum",
                    f.member
                ),
            );
        }
        if let Some(first) = seen.insert(&f.key, &f.member) {
            errors.at(
                f.key_span(),
                format!(
                    "`{first}` and `{}` have the same JSON name \"{}\": rename one with \
                     `#[schema(rename = \"…\")]`",
                    f.member, f.key
                ),
            );
        }
    }
}

/// Checks one field's attributes against each other.
pub(crate) fn field(f: &Field, errors: &mut Errors) {
    let a = &f.attrs;
    if let Some(rename) = &a.rename
        && rename.value.value().is_empty()
    {
        errors.at(rename.value.span(), "a property needs a non-empty name");
    }
    if let Some(default) = &a.default
        && ast::option_inner(&f.ty).is_some()
    {
        errors.at(
            default.key,
            "an Option field is already optional; remove `default` or make the field \
                 non-optional",
        );
    }
    if let (Some(min), Some(max)) = (&a.min_len, &a.max_len)
        && min.value > max.value
    {
        errors.at(
            min.key,
            format!(
                "`min_len = {}` is greater than `max_len = {}`: no string fits both",
                min.value, max.value
            ),
        );
    }
    if let (Some(min), Some(max)) = (&a.min_items, &a.max_items)
        && min.value > max.value
    {
        errors.at(
            min.key,
            format!(
                "`min_items = {}` is greater than `max_items = {}`: no list fits both",
                min.value, max.value
            ),
        );
    }
    if let Some(range) = &a.range {
        for (other, name) in [
            (ast::key_of(a.min.as_ref()), "min"),
            (ast::key_of(a.max.as_ref()), "max"),
            (ast::key_of(a.exclusive_min.as_ref()), "exclusive_min"),
            (ast::key_of(a.exclusive_max.as_ref()), "exclusive_max"),
        ] {
            if let Some(span) = other {
                errors.at(
                    span,
                    format!(
                        "`range` already sets the bounds of this field: use either `range` or \
                         `{name}`, not both"
                    ),
                );
            }
        }
        let r = range.value;
        if let (Some(lo), Some(hi)) = (r.start, r.end) {
            let empty = match lo.value.partial_cmp(hi.value) {
                Some(std::cmp::Ordering::Greater) => true,
                Some(std::cmp::Ordering::Equal) => !r.inclusive,
                _ => false,
            };
            if empty {
                errors.at(
                    r.span,
                    format!(
                        "this range holds no number: its minimum {} is not below its maximum {}",
                        lo.value, hi.value
                    ),
                );
            }
        }
    }
    bounds_ordered(
        a.min.as_ref().map(|k| (k.key, k.value.value, "min")),
        a.max.as_ref().map(|k| (k.key, k.value.value, "max")),
        true,
        errors,
    );
    bounds_ordered(
        a.exclusive_min
            .as_ref()
            .map(|k| (k.key, k.value.value, "exclusive_min")),
        a.exclusive_max
            .as_ref()
            .map(|k| (k.key, k.value.value, "exclusive_max")),
        false,
        errors,
    );
    if let Some(step) = &a.multiple_of
        && !step.value.value.is_positive()
    {
        errors.at(
            step.value.span,
            "`multiple_of` must be above zero, such as `multiple_of = 5`",
        );
    }
    if let Some(pattern) = &a.pattern
        && let Err(message) = check_pattern(&pattern.value.value())
    {
        errors.at(pattern.value.span(), message);
    }
    if let Some(format) = &a.format {
        let name = format.value.value();
        if tool_core::schema::Format::from_name(&name).is_none() {
            let names: Vec<String> = tool_core::schema::Format::ALL
                .iter()
                .map(|f| format!("\"{}\"", f.as_str()))
                .collect();
            errors.at(
                format.value.span(),
                format!(
                    "unknown `format` {name:?}: the formats that are enforced are {}; for \
                     anything else use `pattern = \"…\"` or `validate = path`",
                    names.join(", ")
                ),
            );
        }
    }
    if let Some(one_of) = &a.one_of
        && one_of.value.0.is_empty()
    {
        errors.at(
            one_of.key,
            "`one_of` needs at least one value, such as `one_of = [\"a\", \"b\"]`",
        );
    }
}

fn bounds_ordered(
    lo: Option<(Span, Num, &str)>,
    hi: Option<(Span, Num, &str)>,
    inclusive: bool,
    errors: &mut Errors,
) {
    let (Some((span, lo, lo_name)), Some((_, hi, hi_name))) = (lo, hi) else {
        return;
    };
    let empty = match lo.partial_cmp(hi) {
        Some(std::cmp::Ordering::Greater) => true,
        Some(std::cmp::Ordering::Equal) => !inclusive,
        _ => false,
    };
    if empty {
        errors.at(
            span,
            format!("`{lo_name} = {lo}` and `{hi_name} = {hi}` leave no number that fits both"),
        );
    }
}

/// Checks a `pattern` in the dialect the parser enforces it in: ECMA-262 (as JSON Schema
/// says), translated for the linear-time engine (S2, issue 10). Returns the message to show.
fn check_pattern(source: &str) -> Result<(), String> {
    // The translation tool-core enforces patterns with: checked here in the same dialect.
    let rust = tool_core::schema::Pattern::translate(source).map_err(|e| match e {
        tool_core::schema::PatternError::Syntax { at, message } => {
            format!("invalid `pattern` at character {}: {message}", at + 1)
        }
        tool_core::schema::PatternError::Unsupported { at, message } => {
            format!("unsupported `pattern` at character {}: {message}", at + 1)
        }
        other => format!("invalid `pattern`: {other}"),
    })?;
    // The translation is valid ECMA-262: what the engine can still refuse is a limit.
    regex_syntax::Parser::new()
        .parse(&rust)
        .map(drop)
        .map_err(|e| {
            let why = match &e {
                regex_syntax::Error::Parse(e) => e.kind().to_string(),
                regex_syntax::Error::Translate(e) => e.kind().to_string(),
                _ => e.to_string(),
            };
            format!(
                "unsupported `pattern`: it is too large or too deeply nested for the \
                 linear-time engine ({why}); simplify it, or check the value in \
                 `validate = path`"
            )
        })
}

/// The names of types that cannot be a tool's whole input: the model sends an object.
const NOT_AN_OBJECT: &[&str] = &[
    "String", "str", "bool", "char", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16",
    "u32", "u64", "u128", "usize", "f32", "f64", "Vec", "Option", "Value", "HashMap", "BTreeMap",
];

/// Checks a `#[tool]` fn.
pub(crate) fn tool(t: &ToolFn, errors: &mut Errors) {
    if let Err(e) = tool_core::name::check_name(&t.name) {
        let suggestion = tool_core::name::suggest_name(&t.name);
        let message = if t.name_from_attr {
            match suggestion {
                Some(s) => format!("invalid tool name {:?}: {e} (rule N1); try `{s}`", t.name),
                None => format!(
                    "invalid tool name {:?}: {e} (rule N1); name it with `a-z`, `0-9` and `-`",
                    t.name
                ),
            }
        } else {
            let fix = suggestion.map_or_else(
                || "name the tool with `#[tool(name = \"…\")]`".to_owned(),
                |s| format!("name the tool with `#[tool(name = \"{s}\")]`"),
            );
            format!(
                "the tool name {:?}, derived from this fn's name, is invalid: {e} (rule N1); {fix}",
                t.name
            )
        };
        errors.at(t.name_span, message);
    }
    if t.description.is_none() {
        let span = t
            .args
            .description
            .as_ref()
            .map_or(t.func.sig.ident.span(), syn::LitStr::span);
        errors.at(
            span,
            format!(
                "the tool `{}` has no description, and the model needs one to know when to call \
                 it: add a `///` doc comment to this fn, or `description = \"…\"` to `#[tool]`",
                t.name
            ),
        );
    }
    let generics = &t.func.sig.generics;
    if !generics.params.is_empty() || generics.where_clause.is_some() {
        errors.at(
            generics.span(),
            "a `#[tool]` handler cannot be generic: the tool needs one concrete input type; \
             write the fn for the concrete types, or build the tool at run time with \
             `Tool::builder`",
        );
    }
    if let syn::Safety::Unsafe(token) = &t.func.sig.safety {
        errors.at(
            token.span,
            "a `#[tool]` handler cannot be `unsafe`: the model calls it with any arguments that \
             fit the schema; make it a safe fn",
        );
    }
    match &t.input {
        ToolInput::Single { ty } => {
            owned(ty, errors);
            if let Some(seg) = ast::last_segment(ty)
                && NOT_AN_OBJECT.iter().any(|n| seg.ident == n)
            {
                errors.at(
                    ty.span(),
                    format!(
                        "the model sends a tool's input as a JSON object, and `{}` is not \
                             one: use a struct that derives `Schema`, or describe the \
                             parameter, as in `#[schema(describe = \"…\")] value: {}`",
                        quote::ToTokens::to_token_stream(ty),
                        quote::ToTokens::to_token_stream(ty),
                    ),
                );
            }
        }
        ToolInput::Params(params) => {
            let several = params.len() > 1;
            let mut seen: BTreeMap<&str, &syn::Ident> = BTreeMap::new();
            for p in params {
                owned(&p.field.ty, errors);
                field(&p.field, errors);
                if p.field.description.is_none() {
                    let message = if several {
                        format!(
                            "a `#[tool]` fn with several parameters describes each one for the \
                             model: add `#[schema(describe = \"…\")]` to `{}`, or gather the \
                             parameters in one struct that derives `Schema`",
                            p.field.member
                        )
                    } else {
                        format!(
                            "describe `{}` for the model: add `describe = \"…\"` to its \
                             `#[schema(...)]`",
                            p.field.member
                        )
                    };
                    errors.at(p.field.span, message);
                }
                if let Some(first) = seen.insert(&p.field.key, &p.field.member) {
                    errors.at(
                        p.field.key_span(),
                        format!(
                            "`{first}` and `{}` have the same JSON name \"{}\": rename one with \
                             `#[schema(rename = \"…\")]`",
                            p.field.member, p.field.key
                        ),
                    );
                }
            }
        }
    }
}

/// A tool's input is parsed from the model's arguments, so it owns its values.
fn owned(ty: &syn::Type, errors: &mut Errors) {
    if let syn::Type::Reference(r) = ty {
        errors.at(
            r.span(),
            "a tool's input owns its values: use an owned type, such as `String` for `&str`",
        );
    }
}
