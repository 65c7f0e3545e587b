//! Every rule the macros check before expanding, in one place. Each problem is reported at the
//! token it is about, and all of them are collected before anything is reported.
//!
//! Mismatches between an attribute and the field's type (`min_len` on a `u32`) are not checked
//! here: the generated code asks the type system, and the error points at the attribute.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use darling::error::Accumulator;
use proc_macro2::Span;
use quote::ToTokens as _;
use syn::spanned::Spanned as _;
use tool_rules::{Format, name, pattern};

use crate::ast::{self, Body, Container, Field, Param, ToolFn, ToolInput, Variant};
use crate::attr::{ApprovalArg, FieldAttrs, ItemAttrs, Keyed, Num, NumRange, key_of};
use crate::error;

/// Checks a `#[derive(Schema)]` input.
pub(crate) fn container(input: &Container, errors: &mut Accumulator) {
    match &input.body {
        Body::Struct(fields) => {
            if let Some(tag) = &input.attrs.tag {
                errors.push(error::at(
                    tag.key,
                    "`tag` names the property that tells the variants of an enum apart; a \
                     struct has no variants: remove it",
                ));
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
                errors.push(error::at(
                    *tag_span,
                    "the tag property needs a name, such as `tag = \"type\"`",
                ));
            }
            enum_variants(input, variants, errors);
            for variant in variants {
                object_fields(&variant.fields, Some((tag, &variant.ident)), errors);
            }
        }
    }
}

fn enum_variants(input: &Container, variants: &[Variant], errors: &mut Accumulator) {
    if variants.is_empty() {
        errors.push(error::at(
            input.ident.span(),
            "an enum without variants has no value the model could send: add a variant",
        ));
    }
    let mut seen: BTreeMap<&str, &syn::Ident> = BTreeMap::new();
    for variant in variants {
        if variant.name.is_empty() {
            let span = variant
                .attrs
                .rename
                .as_ref()
                .map_or(variant.ident.span(), |rename| rename.value.span());
            errors.push(error::at(
                span,
                "a variant needs a non-empty name: write one in `rename = \"…\"`, or remove \
                 `rename` to keep the variant's own name",
            ));
        }
        if let Some(first) = seen.insert(&variant.name, &variant.ident) {
            errors.push(error::at(
                variant.ident.span(),
                format!(
                    "variants `{first}` and `{}` have the same name \"{}\": rename one with \
                     `#[schema(rename = \"…\")]`",
                    variant.ident, variant.name
                ),
            ));
        }
    }
}

/// Checks the fields of one object: each field's attributes, and that no two share a key (nor
/// the tag of the enum they are in).
fn object_fields(fields: &[Field], tag: Option<(&String, &syn::Ident)>, errors: &mut Accumulator) {
    let mut seen: BTreeMap<&str, &syn::Ident> = BTreeMap::new();
    for field in fields {
        self::field(field, errors);
        if let Some((tag, variant)) = tag
            && field.key == *tag
        {
            errors.push(error::at(
                field.key_span(),
                format!(
                    "field `{}` of `{variant}` is named \"{tag}\", like the enum's tag: \
                         rename the field, or pick another tag with `#[schema(tag = \"…\")]` on \
                         the enum",
                    field.member
                ),
            ));
        }
        unique_key(field, &mut seen, errors);
    }
}

/// Reports a field whose JSON name an earlier field of the same object has already.
fn unique_key<'a>(
    field: &'a Field,
    seen: &mut BTreeMap<&'a str, &'a syn::Ident>,
    errors: &mut Accumulator,
) {
    if let Some(first) = seen.insert(&field.key, &field.member) {
        errors.push(error::at(
            field.key_span(),
            format!(
                "`{first}` and `{}` have the same JSON name \"{}\": rename one with \
                 `#[schema(rename = \"…\")]`",
                field.member, field.key
            ),
        ));
    }
}

/// Checks one field's attributes against each other.
pub(crate) fn field(field: &Field, errors: &mut Accumulator) {
    let attrs = &field.attrs;
    if let Some(rename) = &attrs.rename
        && rename.value.value().is_empty()
    {
        errors.push(error::at(
            rename.value.span(),
            "a property needs a non-empty name: write one in `rename = \"…\"`, or remove \
             `rename` to keep the field's own name",
        ));
    }
    if let Some(default) = &attrs.default
        && ast::option_inner(&field.ty).is_some()
    {
        errors.push(error::at(
            default.key,
            "an Option field is already optional; remove `default` or make the field \
                 non-optional",
        ));
    }
    sizes(attrs, errors);
    numbers(attrs, errors);
    strings(attrs, errors);
    if let Some(items) = &attrs.items {
        item_rules(&items.value, errors);
    }
}

/// `items(...)`: it sets something, and what it sets agrees with itself as a field's own
/// constraints must. Whether the field is a list and its items take these constraints is
/// asked of the type system by the generated code.
fn item_rules(items: &ItemAttrs, errors: &mut Accumulator) {
    let rules = &items.rules;
    let keys = [
        key_of(rules.min_len.as_ref()),
        key_of(rules.max_len.as_ref()),
        key_of(rules.pattern.as_ref()),
        key_of(rules.format.as_ref()),
        key_of(rules.one_of.as_ref()),
        key_of(rules.range.as_ref()),
        key_of(rules.min.as_ref()),
        key_of(rules.max.as_ref()),
        key_of(rules.exclusive_min.as_ref()),
        key_of(rules.exclusive_max.as_ref()),
        key_of(rules.multiple_of.as_ref()),
    ];
    if keys.iter().all(Option::is_none) {
        errors.push(error::at(
            items.span,
            "`items()` sets no constraint on the items: give one, as in \
             `items(pattern = \"^[a-z]+$\")` or `items(range = 1..=9)`, or remove it",
        ));
    }
    sizes(rules, errors);
    numbers(rules, errors);
    strings(rules, errors);
}

/// The bounds of a string's length and of a list's size.
fn sizes(attrs: &FieldAttrs, errors: &mut Accumulator) {
    if let (Some(min), Some(max)) = (&attrs.min_len, &attrs.max_len)
        && min.value > max.value
    {
        errors.push(error::at(
            min.key,
            format!(
                "`min_len = {}` is greater than `max_len = {}`: no string fits both",
                min.value, max.value
            ),
        ));
    }
    if let (Some(min), Some(max)) = (&attrs.min_items, &attrs.max_items)
        && min.value > max.value
    {
        errors.push(error::at(
            min.key,
            format!(
                "`min_items = {}` is greater than `max_items = {}`: no list fits both",
                min.value, max.value
            ),
        ));
    }
}

/// The bounds of a number: `range` alone or the separate bounds, none of them empty, and a
/// positive `multiple_of`.
fn numbers(attrs: &FieldAttrs, errors: &mut Accumulator) {
    if let Some(range) = &attrs.range {
        range_alone(range, attrs, errors);
    }
    bounds_ordered(
        attrs
            .min
            .as_ref()
            .map(|min| (min.key, min.value.value, "min")),
        attrs
            .max
            .as_ref()
            .map(|max| (max.key, max.value.value, "max")),
        true,
        errors,
    );
    bounds_ordered(
        attrs
            .exclusive_min
            .as_ref()
            .map(|min| (min.key, min.value.value, "exclusive_min")),
        attrs
            .exclusive_max
            .as_ref()
            .map(|max| (max.key, max.value.value, "exclusive_max")),
        false,
        errors,
    );
    if let Some(step) = &attrs.multiple_of
        && !step.value.value.is_positive()
    {
        errors.push(error::at(
            step.value.span,
            "`multiple_of` must be above zero, such as `multiple_of = 5`",
        ));
    }
}

/// `range` is the only bound given, and holds a number.
fn range_alone(range: &Keyed<NumRange>, attrs: &FieldAttrs, errors: &mut Accumulator) {
    for (other, name) in [
        (key_of(attrs.min.as_ref()), "min"),
        (key_of(attrs.max.as_ref()), "max"),
        (key_of(attrs.exclusive_min.as_ref()), "exclusive_min"),
        (key_of(attrs.exclusive_max.as_ref()), "exclusive_max"),
    ] {
        if let Some(span) = other {
            errors.push(error::at(
                span,
                format!(
                    "`range` already sets the bounds of this field: use either `range` or \
                     `{name}`, not both"
                ),
            ));
        }
    }
    let range = range.value;
    if let (Some(low), Some(high)) = (range.start, range.end)
        && is_empty(low.value, high.value, range.inclusive)
    {
        errors.push(error::at(
            range.span,
            format!(
                "this range holds no number: its minimum {} is not below its maximum {}",
                low.value, high.value
            ),
        ));
    }
}

/// Whether no number lies between `low` and `high`.
fn is_empty(low: Num, high: Num, inclusive: bool) -> bool {
    match low.partial_cmp(high) {
        Some(Ordering::Greater) => true,
        Some(Ordering::Equal) => !inclusive,
        _ => false,
    }
}

fn bounds_ordered(
    low: Option<(Span, Num, &str)>,
    high: Option<(Span, Num, &str)>,
    inclusive: bool,
    errors: &mut Accumulator,
) {
    let (Some((span, low, low_name)), Some((_, high, high_name))) = (low, high) else {
        return;
    };
    if is_empty(low, high, inclusive) {
        errors.push(error::at(
            span,
            format!(
                "`{low_name} = {low}` and `{high_name} = {high}` leave no number that fits both"
            ),
        ));
    }
}

/// A string's `pattern`, `format` and `one_of`.
fn strings(attrs: &FieldAttrs, errors: &mut Accumulator) {
    if let Some(pattern) = &attrs.pattern
        && let Err(message) = check_pattern(&pattern.value.value())
    {
        errors.push(error::at(pattern.value.span(), message));
    }
    if let Some(format) = &attrs.format {
        let name = format.value.value();
        if Format::from_name(&name).is_none() {
            let names: Vec<String> = Format::ALL
                .iter()
                .map(|format| format!("\"{}\"", format.as_str()))
                .collect();
            errors.push(error::at(
                format.value.span(),
                format!(
                    "unknown `format` {name:?}: the formats that are enforced are {}; for \
                     anything else use `pattern = \"…\"` or `validate = path`",
                    names.join(", ")
                ),
            ));
        }
    }
    if let Some(one_of) = &attrs.one_of
        && one_of.value.0.is_empty()
    {
        errors.push(error::at(
            one_of.key,
            "`one_of` needs at least one value, such as `one_of = [\"a\", \"b\"]`",
        ));
    }
}

/// Checks a `pattern` in the dialect the parser enforces it in: ECMA-262 (as JSON Schema
/// says), translated for the linear-time engine (S2). Returns the message to show.
fn check_pattern(source: &str) -> Result<(), String> {
    // The translation tool-core enforces patterns with: checked here in the same dialect.
    let rust = pattern::translate(source).map_err(|problem| {
        let what = if problem.unsupported {
            "unsupported"
        } else {
            "invalid"
        };
        format!(
            "{what} `pattern` at character {}: {}",
            problem.at + 1,
            problem.message
        )
    })?;
    // The translation is valid ECMA-262: what the engine can still refuse is a limit.
    regex_syntax::Parser::new()
        .parse(&rust)
        .map(drop)
        .map_err(|problem| {
            let why = match &problem {
                regex_syntax::Error::Parse(parse) => parse.kind().to_string(),
                regex_syntax::Error::Translate(translate) => translate.kind().to_string(),
                _ => problem.to_string(),
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
pub(crate) fn tool(tool: &ToolFn, errors: &mut Accumulator) {
    tool_name(tool, errors);
    if tool.description.is_none() {
        let span = tool
            .args
            .description
            .as_ref()
            .map_or(tool.func.sig.ident.span(), syn::LitStr::span);
        errors.push(error::at(
            span,
            format!(
                "the tool `{}` has no description, and the model needs one to know when to call \
                 it: add a `///` doc comment to this fn, or `description = \"…\"` to `#[tool]`",
                tool.name
            ),
        ));
    }
    signature(&tool.func.sig, errors);
    handle(tool, errors);
    match &tool.input {
        ToolInput::Single { ty } => single_input(ty, errors),
        ToolInput::Params(params) => plain_params(params, errors),
    }
    approval(tool, errors);
}

/// An approval predicate sees the handler's input (H1): a tool whose input is plain
/// parameters has no input type the predicate could name.
fn approval(tool: &ToolFn, errors: &mut Accumulator) {
    if let (Some(ApprovalArg::Predicate(path)), ToolInput::Params(_)) =
        (&tool.args.approval, &tool.input)
    {
        errors.push(error::at(
            path.span(),
            "an approval predicate takes the tool's validated input (`fn(&Context, &Input)`), \
             and this tool's input is plain parameters, which have no type to name: gather \
             them in one struct that derives `Schema` and take it as the input, or write \
             `approval = always`",
        ));
    }
}

/// The handle's name is free: no type of the signature is spelt like it (C4).
fn handle(tool: &ToolFn, errors: &mut Accumulator) {
    let Some(span) = tool.handle_collision() else {
        return;
    };
    let handle = tool.handle_ident();
    let message = if tool.args.handle.is_some() {
        format!(
            "`handle = {handle}` names the handle like this type, and both would be declared \
             here: pick another `handle = …`"
        )
    } else {
        format!(
            "`#[tool]` generates a handle struct `{handle}` for the tool \"{}\", next to this \
             fn, and this type has the same name: name the handle with \
             `#[tool(handle = {handle}Tool)]`, or rename the type (`{handle}Input`)",
            tool.name
        )
    };
    errors.push(error::at(span, message));
}

/// Rule N1, with a proposed fix.
fn tool_name(tool: &ToolFn, errors: &mut Accumulator) {
    let Err(problem) = name::check_name(&tool.name) else {
        return;
    };
    let suggestion = name::suggest_name(&tool.name);
    let message = if tool.name_from_attr {
        match suggestion {
            Some(fixed) => format!(
                "invalid tool name {:?}: {problem} (rule N1); try `{fixed}`",
                tool.name
            ),
            None => format!(
                "invalid tool name {:?}: {problem} (rule N1); name it with `a-z`, `0-9` and `-`",
                tool.name
            ),
        }
    } else {
        let fix = suggestion.map_or_else(
            || "name the tool with `#[tool(name = \"…\")]`".to_owned(),
            |fixed| format!("name the tool with `#[tool(name = \"{fixed}\")]`"),
        );
        format!(
            "the tool name {:?}, derived from this fn's name, is invalid: {problem} (rule N1); \
             {fix}",
            tool.name
        )
    };
    errors.push(error::at(tool.name_span, message));
}

/// A handler is neither generic nor `unsafe`.
fn signature(signature: &syn::Signature, errors: &mut Accumulator) {
    let generics = &signature.generics;
    if !generics.params.is_empty() || generics.where_clause.is_some() {
        errors.push(error::at(
            generics.span(),
            "a `#[tool]` handler cannot be generic: the tool needs one concrete input type; \
             write the fn for the concrete types, or build the tool at run time with \
             `Tool::builder`",
        ));
    }
    if let syn::Safety::Unsafe(token) = &signature.safety {
        errors.push(error::at(
            token.span,
            "a `#[tool]` handler cannot be `unsafe`: the model calls it with any arguments that \
             fit the schema; make it a safe fn",
        ));
    }
}

/// One input of a type that implements `Schema`: owned, and an object.
fn single_input(ty: &syn::Type, errors: &mut Accumulator) {
    owned(ty, errors);
    if let Some(segment) = ast::last_segment(ty)
        && NOT_AN_OBJECT.iter().any(|name| segment.ident == name)
    {
        errors.push(error::at(
            ty.span(),
            format!(
                "the model sends a tool's input as a JSON object, and `{}` is not \
                     one: use a struct that derives `Schema`, or describe the \
                     parameter, as in `#[schema(describe = \"…\")] value: {}`",
                ty.to_token_stream(),
                ty.to_token_stream(),
            ),
        ));
    }
}

/// Plain parameters: owned, described, each attribute valid, no two with the same name.
fn plain_params(params: &[Param], errors: &mut Accumulator) {
    let several = params.len() > 1;
    let none_described = params.iter().all(|param| !param.has_attrs);
    let mut seen: BTreeMap<&str, &syn::Ident> = BTreeMap::new();
    for param in params {
        let field = &param.field;
        owned(&field.ty, errors);
        self::field(field, errors);
        if param.pattern.is_some() {
            // Reported already, at the pattern: a name is what it lacks.
            continue;
        }
        if field.description.is_none() && several && none_described {
            if let Some(first) = params.first().filter(|first| !std::ptr::eq(*first, param)) {
                errors.push(error::at(
                    field.span,
                    format!(
                        "this handler takes two inputs, `{}` and `{}`, and the model sends \
                         one: if `{}` comes from the run's context, take it as `&T` (or \
                         clone it with `#[context]`); else gather the inputs in one struct \
                         that derives `Schema`, or describe each with \
                         `#[schema(describe = \"…\")]`",
                        first.field.member, field.member, field.member
                    ),
                ));
            }
        } else if field.description.is_none() {
            let message = if several {
                format!(
                    "a `#[tool]` fn with several parameters describes each one for the \
                     model: add `#[schema(describe = \"…\")]` to `{}`, or gather the \
                     parameters in one struct that derives `Schema`",
                    field.member
                )
            } else {
                format!(
                    "describe `{}` for the model: add `describe = \"…\"` to its \
                     `#[schema(...)]`",
                    field.member
                )
            };
            errors.push(error::at(field.span, message));
        }
        unique_key(field, &mut seen, errors);
    }
}

/// A tool's input is parsed from the model's arguments, so it owns its values.
fn owned(ty: &syn::Type, errors: &mut Accumulator) {
    if let syn::Type::Reference(reference) = ty {
        errors.push(error::at(
            reference.span(),
            "a tool's input owns its values: use an owned type, such as `String` for `&str`",
        ));
    }
}
