//! Code generation, and the two pipelines: parse, validate, expand (or fall back).
//!
//! Generated code names everything through `<crate>::__private` and `::core`/`::std`. Hidden
//! locals use `Span::mixed_site()`. Where a trait bound can fail, the code that needs it is
//! spanned at the user's token (the field type, the attribute key, the validator path, the
//! return type), so the error points there.
//!
//! `schema` expands `#[derive(Schema)]`; `tool` expands `#[tool]`, whose plain parameters
//! become a hidden input struct with a derived `Schema`.

mod schema;
mod tool;

pub(crate) use tool::policy;

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::{DeriveInput, Ident, ItemFn};

use crate::ast::{Container, ToolFn};
use crate::{fallback, valid};

/// `#[derive(Schema)]`: parse, validate, expand.
pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    let mut errors = darling::Error::accumulator();
    let container = Container::from_syn(input, &mut errors);
    valid::container(&container, &mut errors);
    match errors.finish() {
        Ok(()) => schema::expand(&container),
        Err(error) => fallback::derive(input, &container.krate, error),
    }
}

/// `#[tool]`: parse, validate, expand.
pub(crate) fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let Ok(func) = syn::parse2::<ItemFn>(item.clone()) else {
        return fallback::not_a_fn(item);
    };
    let mut errors = darling::Error::accumulator();
    let tool = ToolFn::from_syn(args, func, &mut errors);
    valid::tool(&tool, &mut errors);
    match errors.finish() {
        Ok(()) => tool::expand(&tool),
        Err(error) => fallback::tool(&tool, error),
    }
}

/// Tokens that the generated code repeats many times, such as the path `<crate>::__private`.
///
/// Kept as separate tokens, which `quote!` appends one by one, rather than as a
/// `TokenStream`, which the compiler would be asked to join into the output at every use;
/// the tokens emitted are the same.
#[derive(Clone)]
pub(crate) struct Tokens(Vec<TokenTree>);

impl Tokens {
    /// The tokens of `stream`.
    pub(crate) fn new(stream: TokenStream) -> Tokens {
        Tokens(stream.into_iter().collect())
    }

    /// `&ident`.
    pub(crate) fn reference(ident: &Ident) -> Tokens {
        Tokens(vec![
            proc_macro2::Punct::new('&', proc_macro2::Spacing::Alone).into(),
            ident.clone().into(),
        ])
    }

    /// `<krate>::__private`, the path of the support the generated code names.
    pub(crate) fn private(krate: &TokenStream) -> Tokens {
        Tokens::new(quote::quote!(#krate::__private))
    }
}

impl ToTokens for Tokens {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(self.0.iter().cloned());
    }
}

/// A hidden local: invisible to the user's code (mixed-site hygiene).
fn hidden(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

/// Every token of `tokens`, relocated to `span` (keeping call-site name resolution), so that an
/// error about the expression points at `span`.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|tree| match tree {
            TokenTree::Group(group) => {
                let mut out = Group::new(group.delimiter(), respan(group.stream(), span));
                out.set_span(span);
                TokenTree::Group(out)
            }
            mut other => {
                other.set_span(other.span().located_at(span));
                other
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use quote::quote;
    use syn::parse_quote;

    use super::*;

    fn derive_str(input: DeriveInput) -> String {
        derive(&input).to_string()
    }

    fn tool_str(args: TokenStream, item: TokenStream) -> String {
        tool(args, item).to_string()
    }

    #[test]
    fn derive_reports_every_problem_and_still_implements_schema() {
        let out = derive_str(parse_quote! {
            struct Query {
                #[schema(min_len = 5, max_len = 1)]
                a: String,
                #[schema(format = "phone")]
                b: String,
                #[schema(default)]
                c: Option<u32>,
            }
        });
        assert_eq!(out.matches("compile_error").count(), 3, "{out}");
        assert!(out.contains("min_len = 5"), "{out}");
        assert!(out.contains("unknown `format`"), "{out}");
        assert!(out.contains("already optional"), "{out}");
        // The placeholder impl keeps uses of `Query` from failing too.
        assert!(out.contains("Schema for Query"), "{out}");
        assert!(out.contains("unreachable"), "{out}");
    }

    #[test]
    fn derive_names_support_through_the_facade_or_the_override() {
        let out = derive_str(parse_quote! {
            struct Query { id: String }
        });
        assert!(
            out.contains(":: tool_runtime :: __private :: Schema for Query"),
            "{out}"
        );
        assert!(!out.contains("compile_error"), "{out}");
        let out = derive_str(parse_quote! {
            #[schema(crate = crate::facade)]
            struct Query { id: String }
        });
        assert!(
            out.contains("crate :: facade :: __private :: Schema for Query"),
            "{out}"
        );
        assert!(!out.contains(":: tool_runtime"), "{out}");
    }

    #[test]
    fn derive_rejects_tuple_shapes() {
        let out = derive_str(parse_quote!(
            struct Pair(u32, u32);
        ));
        assert!(out.contains("needs named fields"), "{out}");
        let out = derive_str(parse_quote!(
            enum E {
                A(u32),
                B { x: u32 },
            }
        ));
        assert!(out.contains("tuple variant"), "{out}");
    }

    #[test]
    fn tool_generates_a_handle_named_after_the_tool() {
        let out = tool_str(
            quote!(name = "lookup-window"),
            quote! {
                /// Finds a window.
                pub async fn find_window(input: Query) -> u32 { 1 }
            },
        );
        assert!(!out.contains("compile_error"), "{out}");
        assert!(out.contains("pub struct LookupWindow"), "{out}");
        assert!(
            out.contains("pub const NAME : & 'static str = \"lookup-window\""),
            "{out}"
        );
        assert!(out.contains("inventory :: submit"), "{out}");
        assert!(
            out.contains("pub async fn find_window (input : Query)"),
            "{out}"
        );
    }

    #[test]
    fn tool_checks_names_and_proposes_one() {
        let out = tool_str(
            quote!(name = "Lookup_Window"),
            quote! {
                /// Finds a window.
                fn find() -> u32 { 1 }
            },
        );
        assert!(out.contains("try `lookup-window`"), "{out}");
        // The fn is still emitted.
        assert!(out.contains("fn find ()"), "{out}");
        let out = tool_str(
            TokenStream::new(),
            quote! {
                /// Finds.
                fn find__it() -> u32 { 1 }
            },
        );
        assert!(out.contains("derived from this fn's name"), "{out}");
        assert!(out.contains("name = \\\"find-it\\\""), "{out}");
    }

    #[test]
    fn tool_strips_schema_attributes_from_parameters() {
        let out = tool_str(
            TokenStream::new(),
            quote! {
                /// Adds.
                fn add(#[schema(describe = "a")] a: i64, #[schema(describe = "b")] b: i64) -> i64 { a + b }
            },
        );
        assert!(out.contains("fn add (a : i64 , b : i64)"), "{out}");
        assert!(out.contains("struct __ToolInput"), "{out}");
    }

    #[test]
    fn handle_idents_are_identifiers() {
        let mut errors = darling::Error::accumulator();
        let tool = ToolFn::from_syn(
            quote!(name = "3d-render"),
            parse_quote!(
                fn render() {}
            ),
            &mut errors,
        );
        errors.finish().expect("a valid tool");
        assert_eq!(tool.handle_ident().to_string(), "Tool3dRender");
    }

    #[test]
    fn respan_moves_every_token() {
        let span = Span::call_site();
        let out = respan(quote!(a::b(c, [d])), span);
        assert_eq!(out.to_string(), "a :: b (c , [d])");
    }
}
