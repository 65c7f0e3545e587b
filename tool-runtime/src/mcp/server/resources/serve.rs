//! `resources/list`, `resources/templates/list` and `resources/read` (M7): each list holds
//! what the caller's context is offered (A2), in declaration order; a read finds the one
//! resource that serves the URI, checks its policy again (A4), parses the template's
//! variables (S2), runs the hooks around the reader and answers its contents, its failure
//! redacted (E2).

use std::time::Instant;

use rmcp::ErrorData;
use rmcp::model::{
    CacheScope, ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult,
};
use serde_json::{Map, Value, json};
use tool_core::Context;
use tracing::Instrument as _;

use super::McpResource;
use crate::mcp::server::catalog::asking::{Asking, Got};
use crate::mcp::server::catalog::run::run;
use crate::mcp::server::catalog::{Catalog, CatalogItem, answer_failure, finished, policy_failed};
use crate::mcp::server::offer::offered;

/// The longest URI read, in bytes.
pub(crate) const MAX_URI_LEN: usize = 8 * 1024;

/// The resources (or, with `templates`, the templates) `ctx` is offered, in declaration
/// order; a policy error refuses the list (A3).
async fn offered_resources<'a>(
    catalog: &'a Catalog,
    ctx: &Context,
    templates: bool,
) -> Result<Vec<&'a McpResource>, ErrorData> {
    let mut listed = Vec::new();
    for resource in (catalog.resources.iter()).filter(|r| r.is_template() == templates) {
        match offered(resource.policy(), resource.scopes(), ctx).await {
            Ok(true) => listed.push(resource),
            Ok(false) => {}
            Err(error) => return Err(policy_failed(&error, "resource list")),
        }
    }
    Ok(listed)
}

/// `resources/list`: the plain resources `ctx` is offered. The list depends on who asks:
/// no cache may keep or share it.
pub(crate) async fn list(
    catalog: &Catalog,
    ctx: &Context,
) -> Result<ListResourcesResult, ErrorData> {
    let listed = offered_resources(catalog, ctx, false).await?;
    let entries = listed.into_iter().map(McpResource::listed).collect();
    Ok(ListResourcesResult::with_all_items(entries)
        .with_ttl_ms(0)
        .with_cache_scope(CacheScope::Private))
}

/// `resources/templates/list`: the templates `ctx` is offered.
pub(crate) async fn list_templates(
    catalog: &Catalog,
    ctx: &Context,
) -> Result<ListResourceTemplatesResult, ErrorData> {
    let listed = offered_resources(catalog, ctx, true).await?;
    let entries = listed
        .into_iter()
        .map(McpResource::listed_template)
        .collect();
    Ok(ListResourceTemplatesResult::with_all_items(entries)
        .with_ttl_ms(0)
        .with_cache_scope(CacheScope::Private))
}

/// `resources/read`, in its span (K2) and timed (K5); its handler asks in `asking`'s rounds
/// when there are any (2026-07-28).
pub(crate) async fn read(
    catalog: &Catalog,
    request: ReadResourceRequestParams,
    ctx: Context,
    protocol_version: Option<String>,
    asking: Option<Asking<'_>>,
) -> Result<ReadResourceResponse, ErrorData> {
    let span = tracing::info_span!(
        "resources/read",
        otel.name = "resources/read",
        otel.kind = "server",
        mcp.method.name = "resources/read",
        mcp.resource.uri = %tool_core::violation::preview_str(&request.uri),
        "error.type" = tracing::field::Empty,
        "rpc.response.status_code" = tracing::field::Empty,
    );
    let started = Instant::now();
    let answer = read_uri(catalog, &request.uri, ctx, asking)
        .instrument(span.clone())
        .await;
    finished(&span, "resources/read", protocol_version, started, &answer);
    answer
}

/// Reads `uri`: not found (SEP-2164, `-32602` with the URI in `data`) when no resource the
/// caller is offered serves it.
async fn read_uri(
    catalog: &Catalog,
    uri: &str,
    ctx: Context,
    asking: Option<Asking<'_>>,
) -> Result<ReadResourceResponse, ErrorData> {
    if uri.len() > MAX_URI_LEN {
        return Err(ErrorData::invalid_params(
            format!("the URI is longer than {MAX_URI_LEN} bytes"),
            None,
        ));
    }
    let Some((resource, values)) = catalog.resource_for(uri) else {
        return Err(not_found(uri));
    };
    // A4, A5: checked again for this read; a hidden resource is not found.
    match offered(resource.policy(), resource.scopes(), &ctx).await {
        Ok(true) => {}
        Ok(false) => return Err(not_found(uri)),
        Err(error) => return Err(policy_failed(&error, "resource")),
    }
    let Some(reader) = resource.reader() else {
        return Err(not_found(uri));
    };
    let arguments: Map<String, Value> = (values.into_iter())
        .map(|(name, value)| (name, Value::String(value)))
        .collect();
    let item = CatalogItem::Resource { resource, uri };
    let hooks = &catalog.hooks;
    let contents = match run(hooks, item, reader, &arguments, ctx, asking.as_ref()).await? {
        Got::Done(contents) => {
            contents.map_err(|failure| answer_failure(failure, "resource", uri))?
        }
        Got::Asked(input) => return Ok(ReadResourceResponse::InputRequired(input)),
    };
    let mut result = ReadResourceResult::new(contents.into_mcp(uri, resource.mime_type()));
    result.ttl_ms = Some(0);
    result.cache_scope = Some(CacheScope::Private);
    Ok(ReadResourceResponse::Complete(result))
}

/// The answer to a URI no resource the caller is offered serves (SEP-2164).
fn not_found(uri: &str) -> ErrorData {
    let uri = if uri.len() > MAX_URI_LEN { "" } else { uri };
    ErrorData::invalid_params("resource not found", Some(json!({ "uri": uri })))
}
