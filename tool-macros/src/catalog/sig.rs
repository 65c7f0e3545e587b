//! The handler fn of `#[resource]` and `#[prompt]`: where each parameter's value comes from
//! (the request's context, or the typed arguments), whether it is async, what it returns.

use darling::error::Accumulator;
use syn::spanned::Spanned;
use syn::{FnArg, ItemFn, ReturnType, Type};

use crate::error;

/// Where one parameter's value comes from.
pub(crate) enum Param {
    /// The request's `Context`, by value or (`by_ref`) by reference.
    Context { by_ref: bool },
    /// The typed arguments: a type that implements `Schema`.
    Typed(Box<Type>),
}

/// A handler fn, read.
pub(crate) struct Handler {
    pub(crate) params: Vec<Param>,
    pub(crate) is_async: bool,
    /// The return type, as written.
    pub(crate) output: Option<Type>,
}

/// Whether `ty` names `Context` (`Context`, `tool_runtime::Context`).
fn is_context(ty: &Type) -> bool {
    match ty {
        Type::Path(path) => path
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "Context"),
        _ => false,
    }
}

/// Reads `func`'s signature for `#[what]`, reporting each misuse.
pub(crate) fn read(func: &ItemFn, what: &str, errors: &mut Accumulator) -> Handler {
    let sig = &func.sig;
    if !sig.generics.params.is_empty() {
        errors.push(error::at(
            sig.generics.span(),
            format!("a `#[{what}]` fn cannot be generic: name its types"),
        ));
    }
    let mut params = Vec::new();
    for input in &sig.inputs {
        let FnArg::Typed(typed) = input else {
            errors.push(error::at(
                input.span(),
                format!("a `#[{what}]` fn takes no `self`: make it a free fn"),
            ));
            continue;
        };
        let param = match &*typed.ty {
            Type::Reference(reference) if is_context(&reference.elem) => {
                Param::Context { by_ref: true }
            }
            ty if is_context(ty) => Param::Context { by_ref: false },
            ty => Param::Typed(Box::new(ty.clone())),
        };
        params.push((param, typed.ty.span()));
    }
    check_params(&params, what, errors);
    let output = match &sig.output {
        ReturnType::Type(_, ty) if returns_result(ty) => Some((**ty).clone()),
        other => {
            let span = match other {
                ReturnType::Type(_, ty) => ty.span(),
                ReturnType::Default => sig.ident.span(),
            };
            let expected = if what == "prompt" {
                "Result<Vec<Message>, E>"
            } else {
                "Result<C, E>, where C: Into<Contents> (a String, Contents::text or Contents::blob)"
            };
            errors.push(error::at(
                span,
                format!("a `#[{what}]` fn returns `{expected}`, with `E: Into<BoxError>`"),
            ));
            None
        }
    };
    Handler {
        params: params.into_iter().map(|(param, _)| param).collect(),
        is_async: sig.asyncness.is_some(),
        output,
    }
}

/// At most one context and one typed parameter.
fn check_params(params: &[(Param, proc_macro2::Span)], what: &str, errors: &mut Accumulator) {
    let mut contexts = params
        .iter()
        .filter(|(p, _)| matches!(p, Param::Context { .. }));
    if let Some((_, span)) = contexts.nth(1) {
        errors.push(error::at(
            *span,
            format!("a `#[{what}]` fn takes the `Context` once"),
        ));
    }
    let mut typed = params.iter().filter(|(p, _)| matches!(p, Param::Typed(_)));
    if let Some((_, span)) = typed.nth(1) {
        errors.push(error::at(
            *span,
            format!(
                "a `#[{what}]` fn takes its arguments as one parameter whose type derives \
                 `Schema`: put them in one struct"
            ),
        ));
    }
}

/// Whether `ty` is a `Result` (any path ending in `Result`).
fn returns_result(ty: &Type) -> bool {
    match ty {
        Type::Path(path) => path
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "Result"),
        _ => false,
    }
}

impl Handler {
    /// The typed arguments' type, if the fn takes them.
    pub(crate) fn typed(&self) -> Option<&Type> {
        self.params.iter().find_map(|param| match param {
            Param::Typed(ty) => Some(&**ty),
            Param::Context { .. } => None,
        })
    }
}
