//! `#[resource]` and `#[prompt]` (rule M7): an MCP resource or prompt of a fn, checked as
//! `#[tool]` checks a tool. Each reads its arguments and the fn (`args`, `sig`), checks every
//! rule in one place (`valid`), and generates the handle and its `IntoResource` or
//! `IntoPrompt` impl (`expand`); when a rule is broken it reports every problem at its token
//! and still emits the fn and a placeholder handle.

mod args;
mod expand;
mod sig;
mod valid;

use darling::FromMeta;
use darling::ast::NestedMeta;
use darling::error::Accumulator;
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Ident, ItemFn, LitStr, Path};
use tool_rules::name::name_from_fn;

use crate::ast::doc_of;
use args::{PromptArgs, ResourceArgs};
use sig::Handler;

/// What kind of item, with what only a resource has.
pub(crate) enum Kind {
    /// A resource: its URI (or URI template) and media type.
    Resource {
        uri: Option<LitStr>,
        mime_type: Option<LitStr>,
    },
    /// A prompt.
    Prompt,
}

/// A `#[resource]` or `#[prompt]` fn, read.
pub(crate) struct CatalogFn {
    pub(crate) kind: Kind,
    pub(crate) func: ItemFn,
    /// The name, and the token it was read from (the literal, or the fn's identifier).
    pub(crate) name: (String, Span),
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) available: Option<Path>,
    /// `scopes = "a b"`, as written.
    pub(crate) scopes: Option<LitStr>,
    pub(crate) handle_arg: Option<Path>,
    pub(crate) krate: TokenStream,
    pub(crate) handler: Handler,
    /// Whether the attribute's arguments were read (else their error is reported, and what
    /// they lack is not).
    pub(crate) args_read: bool,
}

impl CatalogFn {
    /// What the attribute is called.
    pub(crate) fn what(&self) -> &'static str {
        match self.kind {
            Kind::Resource { .. } => "resource",
            Kind::Prompt => "prompt",
        }
    }

    /// Whether the handle would have the name of the type of the fn's typed parameter.
    pub(crate) fn handle_clashes(&self) -> bool {
        let handle = self.handle();
        match self.handler.typed() {
            Some(syn::Type::Path(path)) => {
                path.path.segments.last().is_some_and(|s| s.ident == handle)
            }
            _ => false,
        }
    }

    /// The handle's identifier: `handle = Name`, else the name in `PascalCase`.
    pub(crate) fn handle(&self) -> Ident {
        if let Some(ident) = self.handle_arg.as_ref().and_then(Path::get_ident) {
            return ident.clone();
        }
        let mut out = String::new();
        let words = self.name.0.split(|c: char| !c.is_ascii_alphanumeric());
        for word in words.filter(|w| !w.is_empty()) {
            let mut chars = word.chars();
            if let Some(first) = chars.next() {
                out.push(first.to_ascii_uppercase());
                out.extend(chars);
            }
        }
        if !out.starts_with(|c: char| c.is_ascii_alphabetic()) {
            let prefix = if self.what() == "prompt" {
                "Prompt"
            } else {
                "Resource"
            };
            out.insert_str(0, prefix);
        }
        Ident::new(&out, self.func.sig.ident.span())
    }
}

/// `#[resource]`: parse, validate, expand.
pub(crate) fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    entry(args, item, "resource")
}

/// `#[prompt]`: parse, validate, expand.
pub(crate) fn prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    entry(args, item, "prompt")
}

fn entry(args: TokenStream, item: TokenStream, what: &'static str) -> TokenStream {
    let Ok(func) = syn::parse2::<ItemFn>(item.clone()) else {
        let message = format!(
            "`#[{what}]` goes on a fn: `#[{what}(…)] async fn name(ctx: Context, args: Args) \
             -> Result<…, Error>`"
        );
        let error = syn::Error::new(Span::call_site(), message).to_compile_error();
        return quote!(#error #item);
    };
    let mut errors = darling::Error::accumulator();
    let read = parse(args, func, what, &mut errors);
    valid::check(&read, &mut errors);
    match errors.finish() {
        Ok(()) => expand::expand(&read),
        Err(error) => expand::fallback(&read, error),
    }
}

/// Reads the attribute's arguments and the fn.
fn parse(
    args: TokenStream,
    func: ItemFn,
    what: &'static str,
    errors: &mut Accumulator,
) -> CatalogFn {
    let list = errors
        .handle(NestedMeta::parse_meta_list(args).map_err(darling::Error::from))
        .unwrap_or_default();
    let mut args_read = true;
    let (kind, common) = if what == "resource" {
        let args = errors.handle(ResourceArgs::from_list(&list));
        args_read &= args.is_some();
        let args = args.unwrap_or_default();
        let kind = Kind::Resource {
            uri: args.uri.clone(),
            mime_type: args.mime_type.clone(),
        };
        (kind, args.common())
    } else {
        let args = errors.handle(PromptArgs::from_list(&list));
        args_read &= args.is_some();
        (Kind::Prompt, args.unwrap_or_default().common())
    };
    let name = match &common.name {
        Some(literal) => (literal.value(), literal.span()),
        None => {
            let ident = &func.sig.ident;
            (name_from_fn(&ident.to_string()), ident.span())
        }
    };
    let description =
        (common.description.as_ref().map(LitStr::value)).or_else(|| doc_of(&func.attrs));
    let krate = match &common.krate {
        Some(path) => quote!(#path),
        None => quote!(::tool_runtime),
    };
    let handler = sig::read(&func, what, errors);
    CatalogFn {
        kind,
        name,
        title: common.title.as_ref().map(LitStr::value),
        description,
        available: common.available.clone(),
        scopes: common.scopes.clone(),
        handle_arg: common.handle.clone(),
        krate,
        handler,
        func,
        args_read,
    }
}
