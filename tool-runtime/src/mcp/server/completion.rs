//! `completion/complete` (M7): suggestions for a prompt's argument or a resource template's
//! variable, from the completer the application gave, else from the values an enum field
//! enumerates; only for an item the client is offered (A5: a hidden one completes nothing).

use rmcp::ErrorData;
use rmcp::model::{CompleteRequestParams, CompleteResult, CompletionInfo, Reference};
use tool_core::Context;

use super::catalog::typed_args::Params;
use super::catalog::{Catalog, policy_failed};
use super::completer::Completer;
use super::offer::offered;

/// At most this many suggestions go in one answer (the MCP limit).
const MAX_VALUES: usize = CompletionInfo::MAX_VALUES;

/// The longest value a client may ask completions for, in bytes.
const MAX_TYPED: usize = 1024;

/// Answers `completion/complete` on `catalog` for a client in `ctx`.
pub(crate) async fn complete(
    catalog: &Catalog,
    request: CompleteRequestParams,
    ctx: Context,
) -> Result<CompleteResult, ErrorData> {
    let typed = request.argument.value;
    if typed.len() > MAX_TYPED {
        return Err(ErrorData::invalid_params(
            format!("the value to complete is longer than {MAX_TYPED} bytes"),
            None,
        ));
    }
    let argument = request.argument.name;
    let found = match &request.r#ref {
        Reference::Prompt(reference) => (catalog.prompt(&reference.name))
            .map(|p| (p.policy(), p.scopes(), p.completers(), p.params(), "prompt")),
        Reference::Resource(reference) => (catalog.resources.iter())
            .find(|r| r.uri() == reference.uri)
            .map(|r| {
                (
                    r.policy(),
                    r.scopes(),
                    r.completers(),
                    r.params(),
                    "resource",
                )
            }),
        _ => None,
    };
    let Some((policy, scopes, completers, params, what)) = found else {
        return Err(not_found(&request.r#ref));
    };
    match offered(policy, scopes, &ctx).await {
        Ok(true) => {}
        Ok(false) => return Err(not_found(&request.r#ref)),
        Err(error) => return Err(policy_failed(&error, what)),
    }
    let mut values = match completers.get(&argument) {
        Some(completer) => suggest(completer, ctx, typed, what).await?,
        None => from_enum(params, &argument, &typed),
    };
    let total = values.len();
    values.truncate(MAX_VALUES);
    let more = total > values.len();
    // Never more than the limit here, which is all `with_pagination` refuses.
    let info = CompletionInfo::with_pagination(values, u32::try_from(total).ok(), more)
        .unwrap_or_default();
    Ok(CompleteResult::new(info))
}

/// What `completer` suggests; its failure redacted (E2, E3).
async fn suggest(
    completer: &Completer,
    ctx: Context,
    typed: String,
    what: &str,
) -> Result<Vec<String>, ErrorData> {
    let future = completer.suggest(ctx, typed);
    match tool_core::panic::CatchUnwind::new(future).await {
        Ok(Ok(values)) => Ok(values),
        Ok(Err(error)) => {
            tracing::error!(error = %error, "an MCP {what} completer failed");
            Err(ErrorData::internal_error("the completion failed", None))
        }
        Err(panic) => {
            tracing::error!(panic = %panic, "an MCP {what} completer panicked");
            Err(ErrorData::internal_error("the completion failed", None))
        }
    }
}

/// The values of an enum field that start with what was typed.
fn from_enum(params: Option<&Params>, argument: &str, typed: &str) -> Vec<String> {
    params
        .map(|params| params.enumerated(argument))
        .unwrap_or_default()
        .into_iter()
        .filter(|value| value.starts_with(typed))
        .collect()
}

/// The answer for a reference to nothing the client is offered.
fn not_found(reference: &Reference) -> ErrorData {
    let what = match reference {
        Reference::Prompt(_) => "no such prompt",
        _ => "no such resource template",
    };
    ErrorData::invalid_params(what, None)
}
