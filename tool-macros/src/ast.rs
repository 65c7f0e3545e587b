//! A typed view of the macros' input: the struct or enum of `#[derive(Schema)]`, the fn of
//! `#[tool]`, with their attributes parsed. Shapes the macros cannot handle at all (a tuple
//! struct, a `self` receiver) are reported here; every other rule is checked in `valid.rs`.

use darling::FromMeta as _;
use darling::ast::NestedMeta;
use darling::error::Accumulator;
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens as _, quote};
use syn::spanned::Spanned as _;
use syn::{Attribute, Data, DeriveInput, Expr, ExprLit, Generics, Ident, ItemFn, Lit, Meta, Type};
use tool_rules::name;

use crate::attr::{self, ContainerAttrs, FieldAttrs, RenameRule, ToolArgs, VariantAttrs};
use crate::error;
pub(crate) use crate::field::Field;
use crate::params::{self, Arg, ContextValue, Params};
pub(crate) use crate::params::{Param, ToolInput};

/// The input of `#[derive(Schema)]`.
pub(crate) struct Container {
    pub(crate) ident: Ident,
    pub(crate) generics: Generics,
    /// The facade crate's path: `::tool_runtime` or the `crate = path` override.
    pub(crate) krate: TokenStream,
    pub(crate) attrs: ContainerAttrs,
    pub(crate) description: Option<String>,
    pub(crate) body: Body,
}

/// What kind of schema a container renders as.
pub(crate) enum Body {
    /// A struct with named fields (or none): an object.
    Struct(Vec<Field>),
    /// An enum of unit variants only: a string enum.
    UnitEnum(Vec<Variant>),
    /// An enum with fields (or with `tag = "…"`): an `anyOf` of objects tagged by a property.
    TaggedEnum {
        tag: String,
        tag_span: Span,
        variants: Vec<Variant>,
    },
}

/// An enum variant.
pub(crate) struct Variant {
    pub(crate) ident: Ident,
    /// Its JSON name (the value of the tag, or of the string enum).
    pub(crate) name: String,
    pub(crate) attrs: VariantAttrs,
    pub(crate) description: Option<String>,
    pub(crate) fields: Vec<Field>,
    /// Whether it is written without braces.
    pub(crate) unit: bool,
}

/// The input of `#[tool]`.
pub(crate) struct ToolFn {
    /// The fn as written, minus the `#[schema]` attributes of its parameters.
    pub(crate) func: ItemFn,
    pub(crate) args: ToolArgs,
    pub(crate) krate: TokenStream,
    /// The tool's name, where it comes from, and the span to blame for it.
    pub(crate) name: String,
    pub(crate) name_span: Span,
    pub(crate) name_from_attr: bool,
    pub(crate) description: Option<String>,
    /// Where each argument of the handler comes from, in the order of its parameters.
    pub(crate) params: Vec<Arg>,
    /// The context values it takes (C1).
    pub(crate) values: Vec<ContextValue>,
    pub(crate) input: ToolInput,
}

/// The path of the facade crate.
fn krate_path(over: Option<&syn::Path>) -> TokenStream {
    match over {
        Some(path) => path.to_token_stream(),
        None => quote!(::tool_runtime),
    }
}

impl Container {
    /// Reads a derive input; problems go to `errors`, and a best-effort view is returned.
    pub(crate) fn from_syn(input: &DeriveInput, errors: &mut Accumulator) -> Container {
        let attrs =
            parse_attrs::<ContainerAttrs>(&input.attrs, "schema", attr::CONTAINER_KEYS, errors);
        let description = attrs
            .description
            .as_ref()
            .map(|description| description.value.clone())
            .or_else(|| doc_of(&input.attrs));
        let body = Body::from_data(&input.data, &attrs, errors);
        Container {
            ident: input.ident.clone(),
            generics: input.generics.clone(),
            krate: krate_path(attrs.krate.as_ref()),
            attrs,
            description,
            body,
        }
    }
}

impl Body {
    fn from_data(data: &Data, attrs: &ContainerAttrs, errors: &mut Accumulator) -> Body {
        let rename_all = attrs.rename_all.as_ref().map(|rule| rule.value);
        match data {
            Data::Struct(data) => match &data.fields {
                syn::Fields::Named(named) => {
                    Body::Struct(fields_of(named.named.iter(), rename_all, errors))
                }
                syn::Fields::Unit => Body::Struct(Vec::new()),
                syn::Fields::Unnamed(unnamed) => {
                    errors.push(error::at(
                        unnamed.span(),
                        "`#[derive(Schema)]` needs named fields: each field becomes a property of \
                         a JSON object, so give them names (`struct Query { id: String }`)",
                    ));
                    Body::Struct(Vec::new())
                }
            },
            Data::Enum(data) => {
                let variants = data
                    .variants
                    .iter()
                    .map(|variant| Variant::from_syn(variant, rename_all, errors))
                    .collect();
                Body::enum_of(variants, attrs)
            }
            Data::Union(data) => {
                errors.push(error::at(
                    data.union_token.span(),
                    "`#[derive(Schema)]` does not support unions: use a struct, or an enum with \
                     struct variants",
                ));
                Body::Struct(Vec::new())
            }
        }
    }

    /// An enum of unit variants is a string enum unless it has a `tag`; any other enum is
    /// tagged, by `"type"` unless `tag = "…"` says otherwise.
    fn enum_of(variants: Vec<Variant>, attrs: &ContainerAttrs) -> Body {
        let all_unit = variants.iter().all(|variant| variant.unit);
        match (&attrs.tag, all_unit) {
            (None, true) => Body::UnitEnum(variants),
            (Some(tag), _) => Body::TaggedEnum {
                tag: tag.value.value(),
                tag_span: tag.value.span(),
                variants,
            },
            (None, false) => Body::TaggedEnum {
                tag: "type".to_owned(),
                tag_span: Span::call_site(),
                variants,
            },
        }
    }
}

impl Variant {
    fn from_syn(
        variant: &syn::Variant,
        rename_all: Option<RenameRule>,
        errors: &mut Accumulator,
    ) -> Variant {
        let attrs =
            parse_attrs::<VariantAttrs>(&variant.attrs, "schema", attr::VARIANT_KEYS, errors);
        let name = match &attrs.rename {
            Some(rename) => rename.value.value(),
            None => {
                let ident = unraw(&variant.ident);
                rename_all.map_or(ident.clone(), |rule| rule.apply_to_variant(&ident))
            }
        };
        let description = attrs
            .describe
            .as_ref()
            .map(|describe| describe.value.clone())
            .or_else(|| doc_of(&variant.attrs));
        let field_rule = attrs.rename_all.as_ref().map(|rule| rule.value);
        let (fields, unit) = match &variant.fields {
            syn::Fields::Named(named) => (fields_of(named.named.iter(), field_rule, errors), false),
            syn::Fields::Unit => (Vec::new(), true),
            syn::Fields::Unnamed(unnamed) => {
                errors.push(error::at(
                    unnamed.span(),
                    format!(
                        "a tuple variant has no property names: make `{}` a struct variant \
                         (`{} {{ name: T }}`) or a unit variant",
                        variant.ident, variant.ident
                    ),
                ));
                (Vec::new(), false)
            }
        };
        Variant {
            ident: variant.ident.clone(),
            name,
            attrs,
            description,
            fields,
            unit,
        }
    }
}

fn fields_of<'a>(
    fields: impl Iterator<Item = &'a syn::Field>,
    rule: Option<RenameRule>,
    errors: &mut Accumulator,
) -> Vec<Field> {
    fields
        .filter_map(|field| {
            let ident = field.ident.clone()?;
            Some(Field::new(
                ident,
                field.ty.clone(),
                &field.attrs,
                rule,
                field.span(),
                errors,
            ))
        })
        .collect()
}

impl Field {
    pub(crate) fn new(
        member: Ident,
        ty: Type,
        attrs: &[Attribute],
        rule: Option<RenameRule>,
        span: Span,
        errors: &mut Accumulator,
    ) -> Field {
        let field_attrs = parse_attrs::<FieldAttrs>(attrs, "schema", attr::FIELD_KEYS, errors);
        let key = match &field_attrs.rename {
            Some(rename) => rename.value.value(),
            None => {
                let ident = unraw(&member);
                rule.map_or(ident.clone(), |rule| rule.apply_to_field(&ident))
            }
        };
        let description = field_attrs
            .describe
            .as_ref()
            .map(|describe| describe.value.clone())
            .or_else(|| doc_of(attrs));
        Field {
            member,
            ty,
            key,
            attrs: field_attrs,
            description,
            span,
        }
    }

    /// The span that names this field's JSON key: the `rename` literal, or the ident.
    pub(crate) fn key_span(&self) -> Span {
        self.attrs
            .rename
            .as_ref()
            .map_or_else(|| self.member.span(), |rename| rename.value.span())
    }
}

impl ToolFn {
    /// Where the fn's signature names a type spelt like the handle (an input struct
    /// `AddNote` of the tool `add-note`): both would be declared in the same module, which
    /// the compiler reports as a name defined twice. Found by spelling, the only thing a
    /// macro sees.
    pub(crate) fn handle_collision(&self) -> Option<Span> {
        let handle = self.handle_ident();
        let mut types: Vec<TokenStream> = self
            .func
            .sig
            .inputs
            .iter()
            .filter_map(|input| match input {
                syn::FnArg::Typed(typed) => Some(typed.ty.to_token_stream()),
                syn::FnArg::Receiver(_) => None,
            })
            .collect();
        if let syn::ReturnType::Type(_, ty) = &self.func.sig.output {
            types.push(ty.to_token_stream());
        }
        types
            .into_iter()
            .find_map(|tokens| ident_in(tokens, &handle))
    }

    /// Reads `#[tool(args)]` and the fn it is on; problems go to `errors`.
    pub(crate) fn from_syn(
        args: TokenStream,
        mut func: ItemFn,
        errors: &mut Accumulator,
    ) -> ToolFn {
        let args = tool_args(args, errors);
        let (name, name_span, name_from_attr) = match &args.name {
            Some(name) => (name.value(), name.span(), true),
            None => (
                name::name_from_fn(&func.sig.ident.to_string()),
                func.sig.ident.span(),
                false,
            ),
        };
        let description = match &args.description {
            Some(description) => {
                Some(description.value().trim().to_owned()).filter(|text| !text.is_empty())
            }
            None => doc_of(&func.attrs),
        };
        let Params {
            args: handler_args,
            values,
            input,
        } = params::sort(&mut func, errors);
        check_hints(&args, errors);
        check_examples(&args, &input, errors);
        ToolFn {
            krate: krate_path(args.krate.as_ref()),
            args,
            name,
            name_span,
            name_from_attr,
            description,
            params: handler_args,
            values,
            input,
            func,
        }
    }

    /// The ident of the handle struct: `handle = Name`, else `lookup-window` →
    /// `LookupWindow`, prefixed with `Tool` when that would not be an identifier
    /// (`3d-render` → `Tool3dRender`).
    pub(crate) fn handle_ident(&self) -> Ident {
        if let Some(handle) = &self.args.handle {
            return handle.0.clone();
        }
        let mut name = name::type_name_for(&self.name);
        if name.is_empty()
            || name == "Self"
            || name.starts_with(|first: char| first.is_ascii_digit())
        {
            name = format!("Tool{name}");
        }
        Ident::new(&name, self.name_span)
    }
}

/// The span of the first token of `tokens` that is the identifier `wanted`, searching
/// groups too, and skipping the segments of longer paths (`notes::AddNote` names another
/// module's type).
fn ident_in(tokens: TokenStream, wanted: &Ident) -> Option<Span> {
    use proc_macro2::TokenTree;
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let is_colon =
        |tree: &TokenTree| matches!(tree, TokenTree::Punct(punct) if punct.as_char() == ':');
    trees.iter().enumerate().find_map(|(at, tree)| match tree {
        TokenTree::Group(group) => ident_in(group.stream(), wanted),
        TokenTree::Ident(ident) if ident == wanted => {
            let qualified = at >= 2 && is_colon(&trees[at - 1]) && is_colon(&trees[at - 2]);
            (!qualified).then(|| ident.span())
        }
        _ => None,
    })
}

/// O4: hints that contradict each other are a compile error, at the second of them.
fn check_hints(args: &ToolArgs, errors: &mut Accumulator) {
    fn set(hint: Option<&attr::Keyed<attr::Hint>>) -> Option<&attr::Keyed<attr::Hint>> {
        hint.filter(|keyed| keyed.value.0)
    }
    if let (Some(_), Some(destructive)) =
        (set(args.read_only.as_ref()), set(args.destructive.as_ref()))
    {
        errors.push(error::at(
            destructive.key,
            "a tool cannot be both `read_only` and `destructive`: keep `read_only` if it changes \
             nothing, or drop it and keep `destructive` if it may destroy something",
        ));
    }
    if let Some(title) = &args.title
        && title.value().trim().is_empty()
    {
        errors.push(error::at(
            title.span(),
            "the `title` is empty: write a short human-readable title, or leave `title` out",
        ));
    }
}

/// Q3: an example naming an argument the tool does not take is a compile error, at the
/// example; what else an example must satisfy (required arguments, types, bounds) is checked
/// by the input's own parser when the tool is built.
fn check_examples(args: &ToolArgs, input: &ToolInput, errors: &mut Accumulator) {
    let (Some(examples), ToolInput::Params(params)) = (&args.examples, input) else {
        return;
    };
    let known: Vec<&str> = params.iter().map(|p| p.field.key.as_str()).collect();
    for example in &examples.0 {
        for key in &example.keys {
            if !known.contains(&key.as_str()) {
                let takes = if known.is_empty() {
                    "it takes no arguments".to_owned()
                } else {
                    format!("it takes `{}`", known.join("`, `"))
                };
                errors.push(error::at(
                    example.span,
                    format!(
                        "this example passes `{key}`, which the tool does not take ({takes}): \
                         fix the key or remove it from the example"
                    ),
                ));
            }
        }
    }
}

/// `#[tool(...)]`'s arguments, or the defaults when they cannot be read.
fn tool_args(args: TokenStream, errors: &mut Accumulator) -> ToolArgs {
    let list = match NestedMeta::parse_meta_list(args) {
        Ok(list) => list,
        Err(syntax) => {
            errors.extend(error::from_syn(syntax));
            return ToolArgs::default();
        }
    };
    ToolArgs::from_list(&list).unwrap_or_else(|problem| {
        errors.extend(attr::reword(problem, "tool", attr::TOOL_KEYS));
        ToolArgs::default()
    })
}

/// Parses the `#[attr(...)]` attributes among `attrs` with darling, reporting problems.
fn parse_attrs<T: darling::FromAttributes + Default>(
    attrs: &[Attribute],
    name: &str,
    keys: &[&str],
    errors: &mut Accumulator,
) -> T {
    T::from_attributes(attrs).unwrap_or_else(|problem| {
        errors.extend(attr::reword(problem, name, keys));
        T::default()
    })
}

/// An identifier without its `r#`.
pub(crate) fn unraw(ident: &Ident) -> String {
    let text = ident.to_string();
    text.strip_prefix("r#")
        .map_or_else(|| text.clone(), str::to_owned)
}

/// The text of the `///` doc comments among `attrs`, or `None` when there are none.
///
/// Lines of a paragraph are joined with spaces (the wrapping of source code means nothing to
/// the model); paragraphs are separated by a blank line, and list items keep their own line.
pub(crate) fn doc_of(attrs: &[Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        if let Meta::NameValue(doc) = &attr.meta
            && let Expr::Lit(ExprLit {
                lit: Lit::Str(text),
                ..
            }) = &doc.value
        {
            // `split`, not `lines`: an empty `///` line is a paragraph break.
            for line in text.value().split('\n') {
                lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end().to_owned());
            }
        }
    }
    let mut out = String::new();
    let mut blank = false;
    for line in &lines {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank {
                "\n\n"
            } else if is_list_item(trimmed) {
                "\n"
            } else {
                " "
            });
        }
        blank = false;
        out.push_str(if is_list_item(trimmed) {
            line.trim_start()
        } else {
            trimmed
        });
    }
    (!out.is_empty()).then_some(out)
}

fn is_list_item(line: &str) -> bool {
    line.starts_with("- ")
        || line.starts_with("* ")
        || line.split_once(". ").is_some_and(|(number, _)| {
            !number.is_empty() && number.bytes().all(|byte| byte.is_ascii_digit())
        })
}

/// The `T` of a type written `Option<T>` (by the last segment of its path).
pub(crate) fn option_inner(ty: &Type) -> Option<&Type> {
    match ty {
        Type::Path(path) if path.qself.is_none() => {
            let last = path.path.segments.last()?;
            if last.ident != "Option" {
                return None;
            }
            match &last.arguments {
                syn::PathArguments::AngleBracketed(args) if args.args.len() == 1 => {
                    match args.args.first()? {
                        syn::GenericArgument::Type(inner) => Some(inner),
                        _ => None,
                    }
                }
                _ => None,
            }
        }
        Type::Group(group) => option_inner(&group.elem),
        Type::Paren(paren) => option_inner(&paren.elem),
        _ => None,
    }
}

/// The last segment of a type's path, if it is a path.
pub(crate) fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last(),
        Type::Group(group) => last_segment(&group.elem),
        Type::Paren(paren) => last_segment(&paren.elem),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    #[test]
    fn doc_comments_become_descriptions() {
        let attrs: Vec<Attribute> = vec![
            parse_quote!(#[doc = " Find the window"]),
            parse_quote!(#[doc = " for a service."]),
            parse_quote!(#[doc = ""]),
            parse_quote!(#[doc = " - one"]),
            parse_quote!(#[doc = " - two"]),
        ];
        assert_eq!(
            doc_of(&attrs).as_deref(),
            Some("Find the window for a service.\n\n- one\n- two")
        );
        assert_eq!(doc_of(&[]), None);
    }

    #[test]
    fn options_are_recognized() {
        let ty: Type = parse_quote!(Option<String>);
        assert!(option_inner(&ty).is_some());
        assert!(option_inner(&parse_quote!(Vec<String>)).is_none());
    }
}
