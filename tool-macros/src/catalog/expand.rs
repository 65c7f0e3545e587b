//! The code `#[resource]` and `#[prompt]` generate: the fn as written, the handle struct with
//! its `NAME` (and a resource's `URI`), and its `IntoResource` or `IntoPrompt` impl, which
//! builds the item with the builder a user would write by hand.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::Ident;
use syn::spanned::Spanned;

use super::sig::Param;
use super::{CatalogFn, Kind};
use crate::expand::{Tokens, policy};

fn hidden(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

/// The generated code.
pub(crate) fn expand(read: &CatalogFn) -> TokenStream {
    let private = Tokens::private(&read.krate);
    let func = &read.func;
    let handle = read.handle();
    let (handle_items, item_ty, trait_name, method) = handle_struct(read, &handle);
    let (policy_items, available) = match &read.available {
        Some(path) => policy(&private, path),
        None => (TokenStream::new(), TokenStream::new()),
    };
    let name = &read.name.0;
    let builder = match &read.kind {
        Kind::Resource { uri, mime_type } => {
            let mime = mime_type.as_ref().map(|m| quote!(.mime_type(#m)));
            quote!(#private::McpResource::builder(#uri, #name) #mime)
        }
        Kind::Prompt => {
            let description = read.description.clone().unwrap_or_default();
            quote!(#private::McpPrompt::builder(#name, #description))
        }
    };
    let described = match (&read.kind, &read.description) {
        (Kind::Resource { .. }, Some(description)) => quote!(.description(#description)),
        _ => TokenStream::new(),
    };
    let title = read.title.as_ref().map(|t| quote!(.title(#t)));
    let scopes = read.scopes.as_ref().map(|scopes| {
        let text = scopes.value();
        let words = text.split(' ').filter(|s| !s.is_empty());
        quote!(.scopes([#(#words),*]))
    });
    let handler = handler(read, &private);
    let make = hidden("__make");
    let registration = match read.kind {
        Kind::Resource { .. } => Ident::new("ResourceRegistration", Span::call_site()),
        Kind::Prompt => Ident::new("PromptRegistration", Span::call_site()),
    };
    quote! {
        #func

        #handle_items

        #[allow(non_upper_case_globals, non_camel_case_types, clippy::all, clippy::pedantic)]
        const _: () = {
            #policy_items

            #[automatically_derived]
            impl #private::#trait_name for #handle {
                fn #method(self) -> #private::#item_ty {
                    #builder #described #title #scopes #available #handler .build()
                }
            }

            fn #make() -> #private::#item_ty {
                #private::#trait_name::#method(#handle)
            }

            #private::inventory::submit! {
                #private::#registration::new(#make)
            }
        };
    }
}

/// The handle struct and its constants; the item type, trait and method it implements.
fn handle_struct(read: &CatalogFn, handle: &Ident) -> (TokenStream, Ident, Ident, Ident) {
    let vis = &read.func.vis;
    let name = &read.name.0;
    let what = read.what();
    let (uri_const, item_ty, trait_name, method) = match &read.kind {
        Kind::Resource { uri, .. } => (
            {
                let uri = uri.as_ref().map_or_else(String::new, syn::LitStr::value);
                quote! {
                    /// Its URI, or URI template.
                    pub const URI: &'static str = #uri;
                }
            },
            "McpResource",
            "IntoResource",
            "into_resource",
        ),
        Kind::Prompt => (TokenStream::new(), "McpPrompt", "IntoPrompt", "into_prompt"),
    };
    let doc = read
        .description
        .clone()
        .unwrap_or_else(|| format!("The {what} `{name}`."));
    let items = quote! {
        #[doc = #doc]
        #[derive(Debug, Clone, Copy)]
        #vis struct #handle;

        impl #handle {
            /// Its name.
            pub const NAME: &'static str = #name;
            #uri_const
        }
    };
    let ident = |s: &str| Ident::new(s, Span::call_site());
    (items, ident(item_ty), ident(trait_name), ident(method))
}

/// The builder call that installs the handler: `read`/`read_typed` or `get`/`get_typed`,
/// spanned at the fn's return type so that a wrong one is reported there.
fn handler(read: &CatalogFn, private: &Tokens) -> TokenStream {
    let ctx = hidden("__ctx");
    let args = hidden("__args");
    let ident = &read.func.sig.ident;
    let call_args = read.handler.params.iter().map(|param| match param {
        Param::Context { by_ref: true } => quote!(&#ctx),
        Param::Context { by_ref: false } => quote!(#ctx),
        Param::Typed(_) => quote!(#args),
    });
    let await_ = read.handler.is_async.then(|| quote!(.await));
    let call = quote!(#ident(#(#call_args),*) #await_);
    let span = read
        .handler
        .output
        .as_ref()
        .map_or_else(Span::call_site, Spanned::span);
    let word = |name: &str| Ident::new(name, span);
    let (plain, typed) = match read.kind {
        Kind::Resource { .. } => (word("read"), word("read_typed")),
        Kind::Prompt => (word("get"), word("get_typed")),
    };
    match read.handler.typed() {
        Some(ty) => quote_spanned! {span=>
            .#typed(|#ctx: #private::Context, #args: #ty| async move { #call })
        },
        None => quote_spanned! {span=>
            .#plain(|#ctx: #private::Context| async move { #call })
        },
    }
}

/// The errors, the fn as written, and a handle whose impl never runs (the crate does not
/// compile), so that uses of it report nothing more.
pub(crate) fn fallback(read: &CatalogFn, error: darling::Error) -> TokenStream {
    let errors = error.write_errors();
    // A handle that clashes with a type, or one inside an `impl` (the fn is a method),
    // would only add errors: the fn alone.
    let method = read.func.sig.receiver().is_some();
    if read.handle_clashes() || method {
        let func = &read.func;
        return quote!(#errors #func);
    }
    let private = Tokens::private(&read.krate);
    let func = &read.func;
    let handle = read.handle();
    let (handle_items, item_ty, trait_name, method) = handle_struct(read, &handle);
    quote! {
        #errors
        #func
        #handle_items

        #[allow(unreachable_code, clippy::all)]
        const _: () = {
            #[automatically_derived]
            impl #private::#trait_name for #handle {
                fn #method(self) -> #private::#item_ty {
                    ::core::unreachable!()
                }
            }
        };
    }
}
