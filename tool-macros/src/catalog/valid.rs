//! Every rule of `#[resource]` and `#[prompt]`, in one list: the name is an MCP name, a
//! resource has a URI that is one (or a URI template whose variables come as one typed
//! parameter), a prompt has a description, a handle is an identifier.

use darling::error::Accumulator;
use proc_macro2::Span;
use syn::spanned::Spanned;
use tool_rules::mcp_name::{MAX_MCP_NAME_LEN, invalid_mcp_name};
use tool_rules::uri_template::UriTemplate;

use super::{CatalogFn, Kind};
use crate::error;

/// Reports each rule `read` breaks.
pub(crate) fn check(read: &CatalogFn, errors: &mut Accumulator) {
    name(read, errors);
    if let Some(handle) = &read.handle_arg
        && handle.get_ident().is_none()
    {
        errors.push(error::at(
            handle.span(),
            "`handle = Name` takes an identifier: the name of the generated struct",
        ));
    }
    if read.handle_clashes() {
        let handle = read.handle();
        errors.push(error::at(
            read.func.sig.ident.span(),
            format!(
                "the generated handle `{handle}` would have the name of this fn's parameter \
                 type `{handle}`: name the handle otherwise, with `handle = {handle}{}`",
                if read.what() == "prompt" {
                    "Prompt"
                } else {
                    "Resource"
                }
            ),
        ));
    }
    if let Some(scopes) = &read.scopes {
        scope_tokens(scopes, errors);
    }
    match &read.kind {
        Kind::Resource { uri, .. } => resource(read, uri.as_ref(), errors),
        Kind::Prompt if read.description.is_none() => errors.push(error::at(
            read.func.sig.ident.span(),
            "a prompt needs a description, which clients list: write a doc comment on the \
             fn, or `description = \"…\"`",
        )),
        Kind::Prompt => {}
    }
}

/// The name is an MCP name (SEP-986), with the nearest one proposed.
fn name(read: &CatalogFn, errors: &mut Accumulator) {
    let (name, span) = &read.name;
    let Some(reason) = invalid_mcp_name(name) else {
        return;
    };
    let what = read.what();
    let mut message = format!(
        "`{name}` is not a valid {what} name: {reason} (an MCP name is 1–{MAX_MCP_NAME_LEN} \
         characters of A–Z, a–z, 0–9, `_`, `-` and `.`)"
    );
    let mut fixed = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || "_-.".contains(c) {
            fixed.push(c);
        } else if !fixed.ends_with('-') {
            fixed.push('-');
        }
    }
    let fixed: String = fixed
        .trim_matches('-')
        .chars()
        .take(MAX_MCP_NAME_LEN)
        .collect();
    if !fixed.is_empty() && invalid_mcp_name(&fixed).is_none() {
        message.push_str(&format!("; did you mean `{fixed}`?"));
    }
    errors.push(error::at(*span, message));
}

/// A resource's URI, and its variables against the fn's typed parameter.
fn resource(read: &CatalogFn, uri: Option<&syn::LitStr>, errors: &mut Accumulator) {
    let Some(uri) = uri else {
        if !read.args_read {
            return;
        }
        errors.push(error::at(
            Span::call_site(),
            "`#[resource]` needs `uri = \"…\"`: the URI it serves (`docs://guide`), or a URI \
             template whose variables are the fields of its parameter (`orders://{id}`)",
        ));
        return;
    };
    let template = match UriTemplate::parse(&uri.value()) {
        Ok(template) => template,
        Err(reason) => {
            errors.push(error::at(uri.span(), reason));
            return;
        }
    };
    match (template.is_plain(), read.handler.typed()) {
        (false, None) => errors.push(error::at(
            read.func.sig.span(),
            format!(
                "the URI template has variables ({}), which the fn takes as one parameter \
                 whose type derives `Schema` with a field for each: add it",
                template.variables().collect::<Vec<_>>().join(", ")
            ),
        )),
        (true, Some(ty)) => errors.push(error::at(
            ty.span(),
            "this resource's URI has no variables, so the fn takes no parameters but the \
             `Context`: remove this one, or add `{variables}` to the URI",
        )),
        _ => {}
    }
}

/// `scopes = "a b"`: OAuth scope tokens (printable ASCII without a space, `"` or a backslash),
/// separated by spaces, at least one.
fn scope_tokens(scopes: &syn::LitStr, errors: &mut Accumulator) {
    let text = scopes.value();
    let words: Vec<&str> = text.split(' ').filter(|s| !s.is_empty()).collect();
    let help = "write `scopes = \"docs:read docs:write\"`: the OAuth scopes a token needs, \
                separated by spaces";
    if words.is_empty() {
        errors.push(error::at(
            scopes.span(),
            format!("no scope is named: {help}"),
        ));
    }
    let token = |w: &str| {
        w.bytes()
            .all(|b| (0x21..=0x7e).contains(&b) && b != b'"' && b != b'\\')
    };
    if let Some(bad) = words.iter().find(|w| !token(w)) {
        errors.push(error::at(
            scopes.span(),
            format!("`{bad}` is not an OAuth scope token (printable ASCII without a space, `\"` or `\\`): {help}"),
        ));
    }
}
