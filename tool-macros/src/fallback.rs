//! What the macros emit when expansion fails: the errors, next to the user's item and a
//! placeholder for what would have been generated, so that one mistake does not cascade into
//! errors at every use of the type or tool, and IDEs keep working.

use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;
use tool_rules::name;

use crate::ast::ToolFn;

/// The errors of `#[derive(Schema)]`, and an `impl Schema` that is never run (the crate does
/// not compile), so that uses of the type report nothing more.
pub(crate) fn derive(
    input: &DeriveInput,
    krate: &TokenStream,
    error: darling::Error,
) -> TokenStream {
    let errors = error.write_errors();
    let private = quote!(#krate::__private);
    let ident = &input.ident;
    let mut generics = input.generics.clone();
    let params: Vec<syn::Ident> = generics
        .type_params()
        .map(|param| param.ident.clone())
        .collect();
    if !params.is_empty() {
        let where_clause = generics.make_where_clause();
        for param in params {
            where_clause
                .predicates
                .push(syn::parse_quote!(#param: #private::Schema));
        }
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    quote! {
        #errors

        const _: () = {
            #[automatically_derived]
            impl #impl_generics #private::Schema for #ident #ty_generics #where_clause {
                fn schema(_: &mut #private::SchemaGen) -> #private::serde_json::Value {
                    ::core::unreachable!()
                }

                fn parse(_: #private::Json, _: &mut #private::ParseCx) -> ::core::option::Option<Self> {
                    ::core::unreachable!()
                }

                fn to_json(&self) -> #private::serde_json::Value {
                    ::core::unreachable!()
                }
            }
        };
    }
}

/// The errors of `#[tool]`, the fn as written (minus the `#[schema]` attributes of its
/// parameters), and, when the tool's name is valid, a placeholder handle with its `NAME`.
pub(crate) fn tool(tool: &ToolFn, error: darling::Error) -> TokenStream {
    let errors = error.write_errors();
    let func = &tool.func;
    // A fn with a receiver is in an `impl` block, where nothing else can be emitted.
    if func.sig.receiver().is_some() {
        return quote! {
            #errors
            #func
        };
    }
    let fn_ident = &func.sig.ident;
    let krate = &tool.krate;
    let private = quote!(#krate::__private);
    // Refer to the fn so that it is not reported as unused on top of the real error.
    let generic = !func.sig.generics.params.is_empty()
        || func.sig.inputs.iter().any(|input| {
            matches!(input, syn::FnArg::Typed(typed) if matches!(*typed.ty, syn::Type::ImplTrait(_)))
        });
    let use_fn = (!generic).then(|| quote!(let _ = #fn_ident;));
    // No placeholder where the handle's name is taken: it would be reported again.
    let handle = (name::check_name(&tool.name).is_ok() && tool.handle_collision().is_none())
        .then(|| placeholder_handle(tool, &private));
    quote! {
        #errors
        #func
        const _: () = {
            #use_fn
        };
        #handle
    }
}

/// The handle struct with its `NAME`, as `#[tool]` would have made it, and an `IntoTool` impl
/// that is never run.
fn placeholder_handle(tool: &ToolFn, private: &TokenStream) -> TokenStream {
    let handle = tool.handle_ident();
    let vis = &tool.func.vis;
    let name = &tool.name;
    let description = tool.description.clone().unwrap_or_default();
    let name_doc = format!("The tool's name: `{name}`.");
    quote! {
        #[doc = #description]
        #[derive(
            ::core::fmt::Debug,
            ::core::clone::Clone,
            ::core::marker::Copy,
            ::core::default::Default,
        )]
        #vis struct #handle;

        impl #handle {
            #[doc = #name_doc]
            pub const NAME: &'static str = #name;
        }

        const _: () = {
            let _ = #handle;
            let _ = #handle::NAME;
        };

        #[automatically_derived]
        impl #private::IntoTool for #handle {
            fn into_tool(self) -> #private::Tool {
                ::core::unreachable!()
            }
        }
    }
}

/// `#[tool]` on something that is not a fn: the item unchanged, and the error.
pub(crate) fn not_a_fn(item: TokenStream) -> TokenStream {
    let error = syn::Error::new(
        proc_macro2::Span::call_site(),
        "`#[tool]` goes on a fn: `#[tool] async fn name(input: Input) -> Result<Output, Error>`",
    )
    .to_compile_error();
    quote! {
        #error
        #item
    }
}
