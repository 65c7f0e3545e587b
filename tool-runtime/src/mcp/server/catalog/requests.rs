//! The requests about resources, templates, prompts and completions (M7), as a session
//! receives them: each request's context built as a tool call's is, then the one step that
//! serves it. Nothing is decided here.

use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams,
    ReadResourceResponse,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use tool_core::Context;

use super::asking::{self, Bound};
use crate::mcp::server::resources::serve::MAX_URI_LEN;
use crate::mcp::server::session::Session;
use crate::mcp::server::{completion, prompts, questions, resources};

/// The context of the request `cx`, as a tool call's is built.
async fn context(session: &Session, cx: &RequestContext<RoleServer>) -> Result<Context, ErrorData> {
    let parts = cx.extensions.get::<http::request::Parts>();
    session.request_context(parts).await
}

/// The request's protocol version, for its metric.
fn version(cx: &RequestContext<RoleServer>) -> Option<String> {
    cx.protocol_version().as_ref().map(ToString::to_string)
}

/// Whether notifications can reach this session later, unasked: one that lives beyond its
/// request (stdio, or a stateful HTTP session) on a protocol before 2026-07-28. On 2026-07-28
/// a client hears of changes only on the `subscriptions/listen` streams it opens, of only
/// what it asked for there (`listen`).
fn lasting(session: &Session, cx: &RequestContext<RoleServer>) -> bool {
    session.told_unasked(cx.protocol_version().as_ref())
}

/// Remembers the session to tell it when a list changes, when it can be told.
fn listen(session: &Session, cx: &RequestContext<RoleServer>) {
    if lasting(session, cx) {
        let catalog = &session.shared.catalog;
        catalog
            .subscriptions
            .listen(&session.task_owner(cx), &cx.peer);
    }
}

pub(crate) async fn list_resources(
    session: &Session,
    cx: &RequestContext<RoleServer>,
) -> Result<ListResourcesResult, ErrorData> {
    let ctx = context(session, cx).await?;
    listen(session, cx);
    resources::serve::list(&session.shared.catalog, &ctx).await
}

pub(crate) async fn list_resource_templates(
    session: &Session,
    cx: &RequestContext<RoleServer>,
) -> Result<ListResourceTemplatesResult, ErrorData> {
    let ctx = context(session, cx).await?;
    resources::serve::list_templates(&session.shared.catalog, &ctx).await
}

pub(crate) async fn read_resource(
    session: &Session,
    request: ReadResourceRequestParams,
    cx: &RequestContext<RoleServer>,
) -> Result<ReadResourceResponse, ErrorData> {
    let ctx = context(session, cx).await?;
    let bound = Bound {
        method: "resources/read",
        name: &request.uri,
        args: Vec::new(),
        state: request.request_state.as_deref(),
        responses: request.input_responses.as_ref(),
    };
    let asking = asking::asking(&session.shared.request_states, bound, cx)?;
    // M3: before 2026-07-28 a resource's handler asks during the read, where it can.
    let ctx = match asking {
        Some(_) => ctx,
        None => questions::during_call(ctx, cx, session.sessions),
    };
    let catalog = &session.shared.catalog;
    resources::serve::read(catalog, request, ctx, version(cx), asking).await
}

/// `resources/subscribe`: only to a resource the caller could read now (A5: another URI is
/// not found); its updates are checked again on this request's context when they come.
pub(crate) async fn subscribe(
    session: &Session,
    uri: &str,
    cx: &RequestContext<RoleServer>,
) -> Result<(), ErrorData> {
    let ctx = context(session, cx).await?;
    let catalog = &session.shared.catalog;
    let found = (uri.len() <= MAX_URI_LEN)
        .then(|| catalog.resource_for(uri))
        .flatten();
    let offered = match found {
        Some((resource, _)) => {
            crate::mcp::server::offer::offered(resource.policy(), resource.scopes(), &ctx)
                .await
                .map_err(|error| super::policy_failed(&error, "resource"))?
        }
        None => false,
    };
    if !offered {
        return Err(ErrorData::invalid_params(
            "resource not found",
            Some(serde_json::json!({ "uri": if uri.len() > MAX_URI_LEN { "" } else { uri } })),
        ));
    }
    if !lasting(session, cx) {
        // Nothing could reach a session that ends with its request: acknowledged, as the
        // protocol asks, and logged.
        tracing::debug!("a subscription was acknowledged on a session that cannot be notified");
        return Ok(());
    }
    (catalog.subscriptions).subscribe(&session.task_owner(cx), &cx.peer, uri, ctx)
}

pub(crate) fn unsubscribe(session: &Session, uri: &str, cx: &RequestContext<RoleServer>) {
    let catalog = &session.shared.catalog;
    catalog
        .subscriptions
        .unsubscribe(&session.task_owner(cx), uri);
}

pub(crate) async fn list_prompts(
    session: &Session,
    cx: &RequestContext<RoleServer>,
) -> Result<ListPromptsResult, ErrorData> {
    let ctx = context(session, cx).await?;
    listen(session, cx);
    prompts::serve::list(&session.shared.catalog, &ctx).await
}

pub(crate) async fn get_prompt(
    session: &Session,
    request: GetPromptRequestParams,
    cx: &RequestContext<RoleServer>,
) -> Result<GetPromptResponse, ErrorData> {
    let ctx = context(session, cx).await?;
    let arguments = request.arguments.clone().unwrap_or_default();
    let bound = Bound {
        method: "prompts/get",
        name: &request.name,
        args: serde_json::to_vec(&arguments).unwrap_or_default(),
        state: request.request_state.as_deref(),
        responses: request.input_responses.as_ref(),
    };
    let asking = asking::asking(&session.shared.request_states, bound, cx)?;
    // M3: before 2026-07-28 a prompt's handler asks during the get, as a tool's does during
    // its call, where the client can answer there.
    let ctx = match asking {
        Some(_) => ctx,
        None => questions::during_call(ctx, cx, session.sessions),
    };
    prompts::serve::get(&session.shared.catalog, request, ctx, version(cx), asking).await
}

pub(crate) async fn complete(
    session: &Session,
    request: CompleteRequestParams,
    cx: &RequestContext<RoleServer>,
) -> Result<CompleteResult, ErrorData> {
    let ctx = context(session, cx).await?;
    completion::complete(&session.shared.catalog, request, ctx).await
}
