//! The `#[tool]` and `#[derive(Schema)]` macros of `tool-runtime`.
//!
//! Use them through `tool-runtime`, which re-exports them with the types the generated code
//! names. Each macro parses its input into a typed view (`ast`), checks every rule in one place
//! (`valid`), and generates code (`expand`); when a rule is broken, it reports every problem
//! at the token it is about and still emits the user's item (`fallback`).

mod ast;
mod attr;
mod expand;
mod fallback;
mod valid;

use proc_macro::TokenStream;

/// Derives `Schema`: the JSON Schema of a struct or enum, and the parser that enforces it.
///
/// See the `tool-runtime` documentation for the attributes (`#[schema(...)]`).
#[proc_macro_derive(Schema, attributes(schema))]
pub fn derive_schema(input: TokenStream) -> TokenStream {
    expand::derive(&syn::parse_macro_input!(input as syn::DeriveInput)).into()
}

/// Makes a typed LLM tool of a fn: keeps the fn, and generates a handle struct named after the
/// tool that implements `IntoTool` and is registered at link time.
///
/// See the `tool-runtime` documentation for the arguments (`name`, `description`,
/// `available`, `crate`).
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool(args.into(), item.into()).into()
}
