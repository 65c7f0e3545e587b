//! The parameters of a `#[tool]` handler, sorted by where their values come from (C1): the
//! call's `Context`, a value of the run's context looked up by type (`op: &Operator`, or a
//! clone with `#[context] pool: Pool`), or the model's arguments (one input type, or plain
//! described parameters). A parameter that can come from nowhere is reported here, at its
//! token, with the fix.

use darling::error::Accumulator;
use proc_macro2::Span;
use quote::ToTokens as _;
use syn::spanned::Spanned as _;
use syn::{Attribute, FnArg, Ident, ItemFn, Meta, Pat, PatType, Type};

use crate::error;
use crate::field::Field;

/// How the handler takes the model's arguments.
pub(crate) enum ToolInput {
    /// One parameter whose type implements `Schema`.
    Single { ty: Box<Type> },
    /// Plain parameters, each described, gathered into a hidden input struct (none at all
    /// gives an empty input object).
    Params(Vec<Param>),
}

/// A described parameter.
pub(crate) struct Param {
    pub(crate) field: Field,
    /// Whether it had `#[schema(...)]` at all.
    pub(crate) has_attrs: bool,
    /// The span of its pattern when it is not a plain name (`Parameters(args)`): allowed for
    /// the one input type, which the fn destructures itself (C3).
    pub(crate) pattern: Option<Span>,
}

/// Where one argument of the handler comes from, in the order of its parameters.
#[derive(Clone, Copy)]
pub(crate) enum Arg {
    /// The call's `Context`, by value or by reference.
    Context { by_ref: bool },
    /// A value of the context (an index into `Params::values`).
    Value(usize),
    /// The model's input (an index into the input's arguments).
    Input(usize),
}

/// A parameter whose value the context holds (C1).
pub(crate) struct ContextValue {
    /// `T` of `&T`, or the type of a `#[context]` parameter.
    pub(crate) ty: Type,
    /// Taken by value (`#[context]`): a clone.
    pub(crate) cloned: bool,
}

/// The handler's parameters, sorted.
pub(crate) struct Params {
    pub(crate) args: Vec<Arg>,
    pub(crate) values: Vec<ContextValue>,
    pub(crate) input: ToolInput,
}

/// Sorts the handler's parameters, taking the `#[schema]` and `#[context]` attributes off
/// them (the fn is emitted as written otherwise).
pub(crate) fn sort(func: &mut ItemFn, errors: &mut Accumulator) -> Params {
    let mut args = Vec::new();
    let mut values: Vec<ContextValue> = Vec::new();
    let mut inputs = Vec::new();
    let mut has_ctx = false;
    for input in &mut func.sig.inputs {
        let typed = match input {
            FnArg::Receiver(receiver) => {
                errors.push(error::at(
                    receiver.span(),
                    "a `#[tool]` handler is a free fn: it cannot take `self`; move it out \
                     of the `impl` block, and take shared state from the run's context \
                     (`state: &State`)",
                ));
                continue;
            }
            FnArg::Typed(typed) => typed,
        };
        let marker = take_attrs(typed, "context");
        let kind = classify(typed, marker.first(), errors);
        if !matches!(kind, Kind::Input) {
            // Reported by `classify` where it does not belong; not left for the compiler.
            take_attrs(typed, "schema");
        }
        match kind {
            Kind::Context { by_ref } => {
                if has_ctx {
                    errors.push(error::at(
                        typed.ty.span(),
                        "the handler takes the `Context` twice: keep one parameter",
                    ));
                }
                has_ctx = true;
                args.push(Arg::Context { by_ref });
            }
            Kind::Value(value) => {
                check_pattern(&typed.pat, errors);
                let key = value.ty.to_token_stream().to_string();
                if values
                    .iter()
                    .any(|seen| seen.ty.to_token_stream().to_string() == key)
                {
                    errors.push(error::at(
                        value.ty.span(),
                        format!(
                            "`{key}` is taken from the context twice: a context holds one value \
                             of each type, so keep one parameter of it"
                        ),
                    ));
                }
                args.push(Arg::Value(values.len()));
                values.push(*value);
            }
            Kind::Input => {
                args.push(Arg::Input(inputs.len()));
                inputs.push(Param::take(typed, errors));
            }
            Kind::Invalid => {}
        }
    }
    let input = match inputs.as_slice() {
        [param] if !param.has_attrs => ToolInput::Single {
            ty: Box::new(param.field.ty.clone()),
        },
        _ => {
            for span in inputs.iter().filter_map(|param| param.pattern) {
                errors.push(error::at(
                    span,
                    "a `#[tool]` parameter needs a plain name (`name: Type`): the name is the \
                     property the model fills in; only a handler's one input type may be \
                     destructured (`Parameters(args): Parameters<Args>`)",
                ));
            }
            ToolInput::Params(inputs)
        }
    };
    Params {
        args,
        values,
        input,
    }
}

/// What a parameter is.
enum Kind {
    Context {
        by_ref: bool,
    },
    Value(Box<ContextValue>),
    Input,
    /// Reported already.
    Invalid,
}

fn classify(typed: &PatType, marker: Option<&Attribute>, errors: &mut Accumulator) -> Kind {
    let described = typed
        .attrs
        .iter()
        .any(|attribute| attribute.path().is_ident("schema"));
    if let Some(by_ref) = context_param(&typed.ty) {
        if let Some(marker) = marker {
            errors.push(error::at(
                marker.path().span(),
                "the `Context` is the call's own, not a value in it: remove `#[context]`",
            ));
        }
        return Kind::Context { by_ref };
    }
    if let Type::ImplTrait(apit) = &*typed.ty {
        errors.push(error::at(
            apit.span(),
            "a `#[tool]` parameter cannot be `impl Trait`: the handler is not generic; take the \
             concrete input type, or a context value by its concrete type (`&PgPool`, or \
             `&Arc<dyn Trait>` for a trait object put in the context)",
        ));
        return Kind::Invalid;
    }
    match (marker, &*typed.ty) {
        (Some(marker), ty) => {
            if !matches!(marker.meta, Meta::Path(_)) {
                errors.push(error::at(
                    marker.meta.span(),
                    "write `#[context]`, with no arguments: the value is found by its type",
                ));
            }
            if described {
                errors.push(error::at(
                    marker.path().span(),
                    "a context value is not part of the schema, so it takes no \
                     `#[schema(...)]`: remove `#[context]` if the model supplies it, or \
                     `#[schema(...)]` if the context does",
                ));
            }
            if let Type::Reference(reference) = ty {
                errors.push(error::at(
                    reference.and_token.span(),
                    "`#[context]` takes a value by cloning it, and this parameter is a \
                     reference, which is taken from the context without it: remove \
                     `#[context]`, or the `&` to take a clone",
                ));
                return Kind::Invalid;
            }
            if value_type(ty, errors) {
                Kind::Value(Box::new(ContextValue {
                    ty: ty.clone(),
                    cloned: true,
                }))
            } else {
                Kind::Invalid
            }
        }
        (None, Type::Reference(reference)) if !described => borrowed(reference, errors),
        (None, _) => Kind::Input,
    }
}

/// `&T`: a value the handler borrows from the context.
fn borrowed(reference: &syn::TypeReference, errors: &mut Accumulator) -> Kind {
    if let Some(mutability) = &reference.mutability {
        errors.push(error::at(
            mutability.span(),
            "a context value is shared by every call of the run, so it is borrowed as `&T`, \
             never `&mut T`: take `&T`, and put a `Mutex` (or an atomic) in the context for \
             state the handler changes",
        ));
        return Kind::Invalid;
    }
    if let Some(lifetime) = &reference.lifetime
        && lifetime.ident != "_"
    {
        errors.push(error::at(
            lifetime.span(),
            format!(
                "a context value is borrowed from the call's context for the call only, so \
                 it cannot be `&{lifetime}`: write `&T`, without a lifetime"
            ),
        ));
        return Kind::Invalid;
    }
    if value_type(&reference.elem, errors) {
        Kind::Value(Box::new(ContextValue {
            ty: (*reference.elem).clone(),
            cloned: false,
        }))
    } else {
        Kind::Invalid
    }
}

/// Whether `ty` can be looked up in a context: one concrete, sized, owned type. Reports
/// why not.
fn value_type(ty: &Type, errors: &mut Accumulator) -> bool {
    let problem = match ty {
        Type::TraitObject(_) => Some(
            "a context value is found by its concrete type, and a trait object has none: put \
             an `Arc<dyn Trait>` in the context and take `&Arc<dyn Trait>`"
                .to_owned(),
        ),
        Type::ImplTrait(_) => Some(
            "a context value is found by its concrete type: name it (`&PgPool`), not \
             `impl Trait`"
                .to_owned(),
        ),
        Type::Slice(_) => Some(
            "a context holds sized values, and a slice is not one: put a `Vec<T>` in the \
             context and take `&Vec<T>`"
                .to_owned(),
        ),
        Type::Reference(_) => Some(
            "a context holds owned values, so a context value is not a reference itself: \
             take `&T` of the owned type `T` the application put in"
                .to_owned(),
        ),
        Type::Infer(_) => Some("a context value is found by its type: write the type".to_owned()),
        Type::Path(path) if path.path.is_ident("str") => Some(
            "a context holds sized values, and `str` is not one: for a string the model sends, \
             take `String` with `#[schema(describe = \"…\")]`; for one the application puts \
             in the context, take a type of your own that holds a `String`"
                .to_owned(),
        ),
        _ => None,
    };
    if let Some(problem) = problem {
        errors.push(error::at(ty.span(), problem));
        return false;
    }
    let lifetimes = lifetimes_in(ty.to_token_stream());
    for (span, lifetime) in &lifetimes {
        errors.push(error::at(
            *span,
            format!(
                "a context holds `'static` values only, so a context value cannot borrow for \
                 `{lifetime}`: take a type that owns its data (`String` for `&str`, `Arc<T>` \
                 to share)"
            ),
        ));
    }
    lifetimes.is_empty()
}

/// The lifetimes written in a type (`'a`, `'_`), `'static` aside, with their spans.
fn lifetimes_in(tokens: proc_macro2::TokenStream) -> Vec<(Span, String)> {
    use proc_macro2::TokenTree;
    let mut found = Vec::new();
    let mut tokens = tokens.into_iter().peekable();
    while let Some(tree) = tokens.next() {
        match tree {
            TokenTree::Group(group) => found.extend(lifetimes_in(group.stream())),
            TokenTree::Punct(punct) if punct.as_char() == '\'' => {
                if let Some(TokenTree::Ident(ident)) = tokens.peek()
                    && ident != "static"
                {
                    found.push((punct.span(), format!("'{ident}")));
                }
            }
            _ => {}
        }
    }
    found
}

/// A context parameter is a plain name or `_`: the name is not a property, but a pattern
/// would hide what is taken.
fn check_pattern(pat: &Pat, errors: &mut Accumulator) {
    match pat {
        Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {}
        Pat::Wild(_) => {}
        other => errors.push(error::at(
            other.span(),
            "a context parameter needs a plain name (`op: &Operator`) or `_`: destructure \
             the value in the body",
        )),
    }
}

/// Takes the `#[name]` attributes off a parameter, returning them.
pub(crate) fn take_attrs(typed: &mut PatType, name: &str) -> Vec<Attribute> {
    let (taken, others): (Vec<Attribute>, Vec<Attribute>) = std::mem::take(&mut typed.attrs)
        .into_iter()
        .partition(|attribute| attribute.path().is_ident(name));
    typed.attrs = others;
    taken
}

impl Param {
    /// Reads a parameter the model fills in, taking its `#[schema]` attributes off it.
    fn take(typed: &mut PatType, errors: &mut Accumulator) -> Param {
        let schema_attrs = take_attrs(typed, "schema");
        let (member, pattern) = match &*typed.pat {
            Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
                (pat.ident.clone(), None)
            }
            // The whole input destructured (`Parameters(args): Parameters<Args>`): checked
            // once every parameter is sorted, as only the one input may be.
            other => (Ident::new("__input", other.span()), Some(other.span())),
        };
        let field = Field::new(
            member,
            (*typed.ty).clone(),
            &schema_attrs,
            None,
            typed.span(),
            errors,
        );
        Param {
            field,
            has_attrs: !schema_attrs.is_empty(),
            pattern,
        }
    }
}

/// Whether `ty` is `Context` (`Some(false)`) or `&Context` (`Some(true)`), by the last segment
/// of its path.
fn context_param(ty: &Type) -> Option<bool> {
    match ty {
        Type::Reference(reference) if reference.mutability.is_none() => {
            context_param(&reference.elem)
                .filter(|by_ref| !by_ref)
                .map(|_| true)
        }
        Type::Path(path) if path.qself.is_none() => path
            .path
            .segments
            .last()
            .filter(|segment| segment.ident == "Context" && segment.arguments.is_none())
            .map(|_| false),
        Type::Group(group) => context_param(&group.elem),
        Type::Paren(paren) => context_param(&paren.elem),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    #[test]
    fn context_params_are_found_by_type() {
        assert_eq!(context_param(&parse_quote!(Context)), Some(false));
        assert_eq!(
            context_param(&parse_quote!(&tool_runtime::Context)),
            Some(true)
        );
        assert_eq!(context_param(&parse_quote!(&&Context)), None);
        assert_eq!(context_param(&parse_quote!(&mut Context)), None);
        assert_eq!(context_param(&parse_quote!(String)), None);
    }

    #[test]
    fn parameters_are_sorted_by_where_their_values_come_from() {
        let mut errors = darling::Error::accumulator();
        let mut func: ItemFn = parse_quote! {
            async fn restart(op: &Operator, ctx: Context, #[context] pool: Pool, input: Input) {}
        };
        let params = sort(&mut func, &mut errors);
        errors.finish().expect("valid parameters");
        assert!(matches!(
            params.args.as_slice(),
            [
                Arg::Value(0),
                Arg::Context { by_ref: false },
                Arg::Value(1),
                Arg::Input(0)
            ]
        ));
        assert!(!params.values[0].cloned && params.values[1].cloned);
        assert!(matches!(params.input, ToolInput::Single { .. }));
        // The marker is gone from the emitted fn.
        assert!(!func.to_token_stream().to_string().contains("context ]"));
    }

    #[test]
    fn what_cannot_come_from_a_context_is_reported() {
        for func in [
            quote::quote!(
                fn f(a: &mut Operator) {}
            ),
            quote::quote!(
                fn f(a: &'static Operator) {}
            ),
            quote::quote!(
                fn f(a: &dyn Send) {}
            ),
            quote::quote!(
                fn f(a: &str) {}
            ),
            quote::quote!(
                fn f(a: &Operator, b: &Operator) {}
            ),
            quote::quote!(
                fn f(#[context] a: &Operator) {}
            ),
            quote::quote!(
                fn f(a: impl Send) {}
            ),
        ] {
            let mut errors = darling::Error::accumulator();
            let mut func: ItemFn = syn::parse2(func.clone()).expect("a fn");
            sort(&mut func, &mut errors);
            assert!(errors.finish().is_err(), "{}", func.to_token_stream());
        }
    }
}
