//! What every request goes through before rmcp serves it, in order: the `Host` and `Origin`
//! checks (T4), and the application's context function (`401` when it fails). Nothing here
//! reads the body.

use std::sync::Arc;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::host::Hosts;
use super::origin::Origins;
use super::refusal::Refusal;
use crate::mcp::server::handler::Authenticated;
use crate::mcp::server::request::McpRequest;
use crate::mcp::server::shared::Shared;

/// What the guard checks requests against.
pub(super) struct Guard {
    pub(super) shared: Arc<Shared>,
    pub(super) hosts: Hosts,
    pub(super) origins: Origins,
}

/// Checks `request` and serves it with `next`, or refuses it.
pub(super) async fn check(guard: Arc<Guard>, request: Request, next: Next) -> Response {
    if !guard.hosts.admit(request.uri(), request.headers()) {
        tracing::warn!(
            host = ?request.headers().get(http::header::HOST),
            "MCP request refused: its Host is not allowed (DNS rebinding?)"
        );
        return Refusal::Host.into_response();
    }
    if !guard.origins.admit(request.headers()) {
        tracing::warn!(
            origin = ?request.headers().get(http::header::ORIGIN),
            "MCP request refused: its Origin is not allowed"
        );
        return Refusal::Origin.into_response();
    }
    // The body stays out of the future's borrows (it is not `Sync`).
    let (mut parts, body) = request.into_parts();
    let made = guard
        .shared
        .context_for(|| {
            McpRequest::http(
                parts.method.clone(),
                parts.uri.clone(),
                parts.headers.clone(),
            )
        })
        .await;
    let ctx = match made {
        Ok(ctx) => ctx,
        Err(error) => {
            tracing::warn!(error = %error, "MCP request rejected: the context function failed");
            return Refusal::Unauthenticated.into_response();
        }
    };
    parts.extensions.insert(Authenticated(ctx));
    next.run(Request::from_parts(parts, body)).await
}
