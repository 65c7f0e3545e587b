//! `prompts/list` and `prompts/get` (M7): the list holds what the caller's context is offered
//! (A2), in declaration order; a get finds the prompt, checks its policy again (A4), parses
//! its arguments (S2), runs the hooks around the handler and answers its messages, its
//! failure redacted (E2), or, on 2026-07-28, the handler's question (`input_required`).

use std::time::Instant;

use rmcp::ErrorData;
use rmcp::model::{
    CacheScope, GetPromptRequestParams, GetPromptResponse, GetPromptResult, ListPromptsResult,
};
use tool_core::Context;
use tracing::Instrument as _;

use super::McpPrompt;
use crate::mcp::server::catalog::asking::{Asking, Got};
use crate::mcp::server::catalog::run::run;
use crate::mcp::server::catalog::{
    Catalog, CatalogHooks, CatalogItem, answer_failure, finished, policy_failed,
};
use crate::mcp::server::offer::offered;

/// The longest prompt name looked up, in bytes (longer ones are no prompt's).
const MAX_NAME_LEN: usize = 128;

/// `prompts/list`: the prompts `ctx` is offered. The list depends on who asks: no cache may
/// keep or share it.
pub(crate) async fn list(catalog: &Catalog, ctx: &Context) -> Result<ListPromptsResult, ErrorData> {
    let mut listed = Vec::new();
    for prompt in &catalog.prompts {
        match offered(prompt.policy(), prompt.scopes(), ctx).await {
            Ok(true) => listed.push(prompt.listed()),
            Ok(false) => {}
            Err(error) => return Err(policy_failed(&error, "prompt list")),
        }
    }
    Ok(ListPromptsResult::with_all_items(listed)
        .with_ttl_ms(0)
        .with_cache_scope(CacheScope::Private))
}

/// `prompts/get`, in its span (K2) and timed (K5); its handler asks in `asking`'s rounds
/// when there are any (2026-07-28).
pub(crate) async fn get(
    catalog: &Catalog,
    request: GetPromptRequestParams,
    ctx: Context,
    protocol_version: Option<String>,
    asking: Option<Asking<'_>>,
) -> Result<GetPromptResponse, ErrorData> {
    let span = tracing::info_span!(
        "prompts/get",
        otel.name = "prompts/get",
        otel.kind = "server",
        mcp.method.name = "prompts/get",
        gen_ai.prompt.name = %tool_core::violation::preview_str(&request.name),
        "error.type" = tracing::field::Empty,
        "rpc.response.status_code" = tracing::field::Empty,
    );
    let started = Instant::now();
    let prompt = catalog
        .prompt(&request.name)
        .filter(|_| request.name.len() <= MAX_NAME_LEN);
    let answer = get_prompt(&catalog.hooks, prompt, request, ctx, asking)
        .instrument(span.clone())
        .await;
    finished(&span, "prompts/get", protocol_version, started, &answer);
    answer
}

async fn get_prompt(
    hooks: &CatalogHooks,
    prompt: Option<&McpPrompt>,
    request: GetPromptRequestParams,
    ctx: Context,
    asking: Option<Asking<'_>>,
) -> Result<GetPromptResponse, ErrorData> {
    let Some(prompt) = prompt else {
        return Err(not_found());
    };
    // A4, A5: checked again for this request; a hidden prompt is not found.
    match offered(prompt.policy(), prompt.scopes(), &ctx).await {
        Ok(true) => {}
        Ok(false) => return Err(not_found()),
        Err(error) => return Err(policy_failed(&error, "prompt")),
    }
    let Some(getter) = prompt.getter() else {
        return Err(not_found());
    };
    let arguments = request.arguments.unwrap_or_default();
    let item = CatalogItem::Prompt(prompt);
    let messages = match run(hooks, item, getter, &arguments, ctx, asking.as_ref()).await? {
        Got::Done(messages) => {
            messages.map_err(|failure| answer_failure(failure, "prompt", prompt.name()))?
        }
        Got::Asked(input) => return Ok(GetPromptResponse::InputRequired(input)),
    };
    let messages = messages.iter().map(super::Message::to_mcp).collect();
    let result = GetPromptResult::new(messages).with_description(prompt.description());
    Ok(GetPromptResponse::Complete(result))
}

/// The answer to a name no prompt the caller is offered has (the name is not echoed).
fn not_found() -> ErrorData {
    ErrorData::invalid_params("no such prompt", None)
}
