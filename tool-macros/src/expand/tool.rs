//! `#[tool]`: the fn as written, the handle struct named after the tool with its `NAME`, its
//! `IntoTool` impl (the input, the handler closure, the availability policy) and its
//! link-time registration.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::{Ident, Type};

use super::{Tokens, hidden, respan, schema};
use crate::ast::{self, ToolFn, ToolInput};
use crate::attr::ApprovalArg;
use crate::params::Arg;

/// The generated code of `#[tool]`.
pub(super) fn expand(tool: &ToolFn) -> TokenStream {
    let krate = &tool.krate;
    let private = Tokens::private(krate);
    let func = &tool.func;
    let handle = tool.handle_ident();
    let description = tool.description.clone().unwrap_or_default();
    let handle_items = handle_struct(tool, &handle, &description);
    let input = Input::of(tool);
    let input_items = &input.items;
    let input_ty = &input.ty;
    let handler = handler(tool, &private, &input);
    let (policy_items, available) = match &tool.args.available {
        Some(path) => policy(&private, path),
        None => (TokenStream::new(), TokenStream::new()),
    };
    let hints = hints(tool, &private);
    let control = control(tool);
    let requires = requires(tool);
    let output = output_schema(tool, &private);
    let (approval_items, approval) = match &tool.args.approval {
        Some(ApprovalArg::Always) => (TokenStream::new(), quote!(.require_approval())),
        Some(ApprovalArg::Predicate(path)) => approval_predicate(&private, path, input_ty),
        None => (TokenStream::new(), TokenStream::new()),
    };
    let tool_static = hidden("TOOL");
    let site = hidden("SITE");
    let make = hidden("__make_tool");
    quote! {
        #func

        #handle_items

        #[allow(non_upper_case_globals, non_camel_case_types, clippy::all, clippy::pedantic)]
        const _: () = {
            #input_items
            #policy_items
            #approval_items

            const #site: #private::Site = #private::Site {
                file: ::core::file!(),
                line: ::core::line!(),
                column: ::core::column!(),
            };

            #[automatically_derived]
            impl #private::IntoTool for #handle {
                fn into_tool(self) -> #private::Tool {
                    static #tool_static: ::std::sync::OnceLock<#private::Tool> =
                        ::std::sync::OnceLock::new();
                    #private::cached_tool(&#tool_static, || {
                        #private::Tool::builder(#handle::NAME, #description)
                            .site(#site)
                            .rendered_handler::<#input_ty, _, _>(#handler)
                            #requires
                            #available
                            #hints
                            #output
                            #control
                            #approval
                            .build()
                    })
                }
            }

            fn #make() -> #private::Tool {
                #private::IntoTool::into_tool(#handle)
            }

            #private::inventory::submit! {
                #private::Registration::new(#handle::NAME, #site, #make)
            }
        };
    }
}

/// The builder calls of the tool's run control: its retry budget (L1), whether its calls
/// run alone (L4), and the scopes a call needs (Z3).
fn control(tool: &ToolFn) -> TokenStream {
    let retries = tool.args.retries.as_ref().map(|keyed| {
        let n = keyed.value.0;
        quote!(.retries(#n))
    });
    let sequential = tool
        .args
        .sequential
        .as_ref()
        .filter(|keyed| keyed.value.0)
        .map(|_| quote!(.sequential()));
    // Z3: the scopes a call needs.
    let scopes = tool.args.scopes.as_ref().map(|scopes| {
        let scopes = &scopes.0;
        quote!(.scopes([#(#scopes),*]))
    });
    // Q1: offered only once a search returned it; Q3: its examples, checked again by the
    // input's own parser when the tool is built.
    let deferred_loading = (tool.args.deferred_loading.as_ref())
        .filter(|keyed| keyed.value.0)
        .map(|_| quote!(.deferred_loading()));
    let examples = tool.args.examples.as_ref().map(|examples| {
        let texts = examples.0.iter().map(|example| &example.text);
        let private = Tokens::private(&tool.krate);
        quote!(.examples([#(#private::example_json(#texts)),*]))
    });
    quote!(#retries #sequential #scopes #deferred_loading #examples)
}

/// The builder calls of the tool's hints (O4).
fn hints(tool: &ToolFn, private: &Tokens) -> TokenStream {
    let args = &tool.args;
    let flag = |hint: &Option<crate::attr::Keyed<crate::attr::Hint>>| match hint {
        Some(keyed) => {
            let value = keyed.value.0;
            quote!(::core::option::Option::Some(#value))
        }
        None => quote!(::core::option::Option::None),
    };
    if args.title.is_none()
        && [
            &args.read_only,
            &args.destructive,
            &args.idempotent,
            &args.open_world,
        ]
        .iter()
        .all(|hint| hint.is_none())
    {
        return TokenStream::new();
    }
    let title = match &args.title {
        Some(title) => quote!(::core::option::Option::Some(::std::string::String::from(#title))),
        None => quote!(::core::option::Option::None),
    };
    let read_only = flag(&args.read_only);
    let destructive = flag(&args.destructive);
    let idempotent = flag(&args.idempotent);
    let open_world = flag(&args.open_world);
    quote! {
        .annotations({
            let mut hints = #private::Annotations::default();
            hints.title = #title;
            hints.read_only = #read_only;
            hints.destructive = #destructive;
            hints.idempotent = #idempotent;
            hints.open_world = #open_world;
            hints
        })
    }
}

/// The builder call that gives the tool the output schema of the fn's success type, when
/// that type declares one (O1); nothing for a type that cannot be named (`impl Trait`).
fn output_schema(tool: &ToolFn, private: &Tokens) -> TokenStream {
    let syn::ReturnType::Type(_, ty) = &tool.func.sig.output else {
        return TokenStream::new();
    };
    let success = success_type(ty);
    if matches!(success, Type::ImplTrait(_) | Type::Infer(_)) {
        return TokenStream::new();
    }
    quote! {
        .output_schema({
            #[allow(unused_imports)]
            use #private::{ViaPlainOutput as _, ViaSchemaOutput as _};
            (&&#private::OutputProbe::<#success>::new()).output_schema()
        })
    }
}

/// The handle: a unit struct with the fn's visibility and the description as its doc, and
/// its `NAME`.
fn handle_struct(tool: &ToolFn, handle: &Ident, description: &str) -> TokenStream {
    let vis = &tool.func.vis;
    let name = &tool.name;
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
    }
}

/// The tool's input type, and how the handler's arguments come out of it.
struct Input {
    /// The hidden input struct of plain parameters, with its `Schema` impl.
    items: TokenStream,
    ty: TokenStream,
    /// `let __ToolInput { a: __arg_0, … } = input;`, for plain parameters.
    destructure: TokenStream,
    /// The handler's arguments after the context.
    args: Vec<Ident>,
}

impl Input {
    fn of(tool: &ToolFn) -> Input {
        let input = hidden("input");
        match &tool.input {
            ToolInput::Single { ty } => Input {
                items: TokenStream::new(),
                ty: quote!(#ty),
                destructure: TokenStream::new(),
                args: vec![input],
            },
            ToolInput::Params(params) => {
                let struct_ident = hidden("__ToolInput");
                let fields = params.iter().map(|param| &param.field);
                let items = schema::input_struct(&tool.krate, &struct_ident, fields.clone());
                let locals: Vec<Ident> = (0..params.len())
                    .map(|position| format_ident!("__arg_{}", position, span = Span::mixed_site()))
                    .collect();
                let members = fields.map(|field| &field.member);
                Input {
                    items,
                    ty: quote!(#struct_ident),
                    destructure: quote!(let #struct_ident { #(#members: #locals),* } = #input;),
                    args: locals,
                }
            }
        }
    }
}

/// The closure the tool runs: takes the context and the parsed input, looks up the context
/// values the fn takes (C1), calls the fn, and renders what it returns.
fn handler(tool: &ToolFn, private: &Tokens, input: &Input) -> TokenStream {
    let func = &tool.func;
    let fn_ident = &func.sig.ident;
    let ctx = hidden("ctx");
    let input_local = hidden("input");
    let out = hidden("out");
    let tag = hidden("tag");
    let input_ty = &input.ty;
    let destructure = &input.destructure;
    let values = context_values(tool, private, &ctx);
    let locals: Vec<Ident> = (0..tool.values.len())
        .map(|position| format_ident!("__value_{}", position, span = Span::mixed_site()))
        .collect();
    let call_args: Vec<TokenStream> = tool
        .params
        .iter()
        .map(|arg| match *arg {
            // The context values borrow the context: the fn gets a clone of it then.
            Arg::Context { by_ref: false } if !tool.values.is_empty() => {
                quote!(::core::clone::Clone::clone(&#ctx))
            }
            Arg::Context { by_ref: false } => quote!(#ctx),
            Arg::Context { by_ref: true } => quote!(&#ctx),
            Arg::Value(at) => {
                let local = &locals[at];
                quote!(#local)
            }
            Arg::Input(at) => {
                let local = &input.args[at];
                quote!(#local)
            }
        })
        .collect();
    let await_ = func.sig.asyncness.map(|_| quote!(.await));
    let uses_ctx = !tool.values.is_empty()
        || tool
            .params
            .iter()
            .any(|arg| matches!(arg, Arg::Context { .. }));
    let ctx_pat = if uses_ctx { quote!(#ctx) } else { quote!(_) };
    // The `Serialize` check points at the success type: `T` of `Result<T, E>` (or of an alias
    // such as `anyhow::Result<T>`), else the whole return type.
    let output_span = match &func.sig.output {
        syn::ReturnType::Default => fn_ident.span(),
        syn::ReturnType::Type(_, ty) => syn::spanned::Spanned::span(success_type(ty)),
    };
    let render = respan(
        quote!(#private::render_output(#tag.into_result(#out))),
        output_span,
    );
    quote! {
        |#ctx_pat: #private::Context, #input_local: #input_ty| async move {
            #[allow(unused_imports)]
            use #private::{ViaPlain as _, ViaResult as _};
            #(let #locals = #values;)*
            #destructure
            let #out = #fn_ident(#(#call_args),*) #await_;
            let #tag = (&#private::Probe(&#out)).result_tag();
            #render
        }
    }
}

/// The expressions that take each context value out of the call's context (C1), spanned at
/// the parameter's type so that a type that cannot be one is reported there. A value the
/// context lacks is a failure, which the availability check of the call rules out first.
fn context_values(tool: &ToolFn, private: &Tokens, ctx: &Ident) -> Vec<TokenStream> {
    tool.values
        .iter()
        .map(|value| {
            let ty = &value.ty;
            let span = syn::spanned::Spanned::span(ty);
            let take = if value.cloned {
                quote_spanned!(span=> #private::context_clone::<#ty>)
            } else {
                quote_spanned!(span=> #private::context_value::<#ty>)
            };
            quote! {
                match #take(&#ctx) {
                    ::core::result::Result::Ok(value) => value,
                    ::core::result::Result::Err(error) => return ::core::result::Result::Err(error),
                }
            }
        })
        .collect()
}

/// The builder calls that declare the context values the fn takes (C1).
fn requires(tool: &ToolFn) -> TokenStream {
    let types = tool.values.iter().map(|value| {
        let ty = &value.ty;
        quote!(.requires::<#ty>())
    });
    quote!(#(#types)*)
}

/// The success type of a return type: `T` of `Result<T, E>` or of a `…Result<T>` alias, else
/// the type itself.
fn success_type(ty: &Type) -> &Type {
    if let Some(segment) = ast::last_segment(ty)
        && segment.ident.to_string().ends_with("Result")
        && let syn::PathArguments::AngleBracketed(args) = &segment.arguments
        && let Some(syn::GenericArgument::Type(success)) = args.args.first()
    {
        return success;
    }
    ty
}

/// The availability policy `available = path` (A1) of a tool, resource or prompt: a `Policy`
/// that calls it, sync or async, spanned at the path; and the builder call that installs it.
pub(crate) fn policy(private: &Tokens, path: &syn::Path) -> (TokenStream, TokenStream) {
    let policy = hidden("__ToolPolicy");
    let out = hidden("out");
    let tag = hidden("tag");
    let span = syn::spanned::Spanned::span(path);
    let ctx_at = Ident::new("ctx", Span::mixed_site().located_at(span));
    let call = respan(quote!(#private::call_policy(#path, #ctx_at)), span);
    let finish = respan(
        quote!(#private::policy_result(#tag.into_future(#out).await)),
        span,
    );
    let items = quote! {
        struct #policy;

        #[automatically_derived]
        impl #private::Policy for #policy {
            fn check<'a>(
                &'a self,
                #ctx_at: &'a #private::Context,
            ) -> #private::BoxFuture<'a, ::core::result::Result<bool, #private::BoxError>> {
                ::std::boxed::Box::pin(async move {
                    #[allow(unused_imports)]
                    use #private::{ViaFuture as _, ViaReady as _};
                    let #out = #call;
                    let #tag = (&#private::Probe(&#out)).tag();
                    #finish
                })
            }
        }
    };
    (items, quote!(.available(#policy)))
}

/// The approval predicate `approval = path` (H1): an `ApprovalPredicate` of the input type
/// that calls it, sync or async, spanned at the path; and the builder call that installs it.
fn approval_predicate(
    private: &Tokens,
    path: &syn::Path,
    input_ty: &TokenStream,
) -> (TokenStream, TokenStream) {
    let predicate = hidden("__ToolApproval");
    let out = hidden("out");
    let tag = hidden("tag");
    let span = syn::spanned::Spanned::span(path);
    let ctx_at = Ident::new("ctx", Span::mixed_site().located_at(span));
    let input_at = Ident::new("input", Span::mixed_site().located_at(span));
    let call = respan(
        quote!(#private::call_approval::<#input_ty, _, _>(#path, #ctx_at, #input_at)),
        span,
    );
    let finish = respan(
        quote!(#private::approval_result(#tag.into_future(#out).await)),
        span,
    );
    let items = quote! {
        struct #predicate;

        #[automatically_derived]
        impl #private::ApprovalPredicate<#input_ty> for #predicate {
            fn check<'a>(
                &'a self,
                #ctx_at: &'a #private::Context,
                #input_at: &'a #input_ty,
            ) -> #private::BoxFuture<'a, ::core::result::Result<#private::Approval, #private::BoxError>> {
                ::std::boxed::Box::pin(async move {
                    #[allow(unused_imports)]
                    use #private::{ViaFuture as _, ViaReady as _};
                    let #out = #call;
                    let #tag = (&#private::Probe(&#out)).tag();
                    #finish
                })
            }
        }
    };
    (items, quote!(.approval::<#input_ty>(#predicate)))
}
