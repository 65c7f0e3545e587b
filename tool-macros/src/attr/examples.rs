//! `examples = [r#"{"city": "Paris"}"#, …]` of `#[tool]` (Q3): example inputs, each a string
//! literal holding one JSON object, read here so that a malformed one fails the build at its
//! own token.

use darling::FromMeta;
use proc_macro2::Span;
use syn::{Expr, Lit};

use super::ungroup;

/// One example: the JSON text as written, its parsed object's keys, and its span.
#[derive(Debug, Clone)]
pub(crate) struct Example {
    /// The JSON text.
    pub(crate) text: String,
    /// The object's keys, in order.
    pub(crate) keys: Vec<String>,
    /// The string literal, for errors about it.
    pub(crate) span: Span,
}

/// `examples = [...]`.
#[derive(Debug, Clone, Default)]
pub(crate) struct ExamplesArg(pub(crate) Vec<Example>);

const EXAMPLES_HELP: &str = "write `examples = [r#\"{\"city\": \"Paris\"}\"#]`: a list of \
                             string literals, each one JSON object of the tool's arguments";

impl FromMeta for ExamplesArg {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        let Expr::Array(list) = ungroup(expr) else {
            return Err(darling::Error::custom(EXAMPLES_HELP).with_span(expr));
        };
        let mut errors = darling::Error::accumulator();
        let mut examples = Vec::with_capacity(list.elems.len());
        for element in &list.elems {
            if let Some(example) = errors.handle(example(element)) {
                examples.push(example);
            }
        }
        errors.finish_with(ExamplesArg(examples))
    }

    fn from_word() -> darling::Result<Self> {
        Err(darling::Error::custom(EXAMPLES_HELP))
    }
}

/// Reads one example: a string literal holding a JSON object.
fn example(element: &Expr) -> darling::Result<Example> {
    let Expr::Lit(syn::ExprLit {
        lit: Lit::Str(text),
        ..
    }) = ungroup(element)
    else {
        return Err(darling::Error::custom(EXAMPLES_HELP).with_span(element));
    };
    let value = text.value();
    let parsed: serde_json::Value = serde_json::from_str(&value).map_err(|e| {
        darling::Error::custom(format!(
            "this example is not JSON ({e}): write one JSON object of the tool's arguments, \
             such as `r#\"{{\"city\": \"Paris\"}}\"#`"
        ))
        .with_span(text)
    })?;
    let serde_json::Value::Object(object) = parsed else {
        return Err(darling::Error::custom(
            "an example is one JSON object of the tool's arguments (`{\"city\": \"Paris\"}`), \
             not another JSON value",
        )
        .with_span(text));
    };
    Ok(Example {
        text: value,
        keys: object.keys().cloned().collect(),
        span: text.span(),
    })
}
