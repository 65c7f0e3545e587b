//! What every request goes through before rmcp serves it, in order: the `Host` and `Origin`
//! checks (T4), on a protected server its metadata and the bearer token (Z1, Z2), the
//! application's context function (`401` when it fails), on a protected server the scopes of a
//! `tools/call` (Z3), and, for a request that may open a session, the session bounds (T5). Only the last reads a body: that of a request
//! that may open a session when its principal or the server is already at a bound.

use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, to_bytes};
use axum::extract::{ConnectInfo, Request};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::Method;
use http::request::Parts;
use rmcp::transport::common::http_header::HEADER_SESSION_ID;
use serde::Deserialize;

use super::authorize::Authorizer;
use super::host::Hosts;
use super::origin::Origins;
use super::principal::{KeyFn, Owner};
use super::refusal::Refusal;
use super::sessions::{Bound, Ledger, admit};
use crate::call::scopes::Granted;
use crate::mcp::server::auth::{Challenge, Claims};
use crate::mcp::server::request::McpRequest;
use crate::mcp::server::session::Authenticated;
use crate::mcp::server::shared::Shared;

/// The most a refused client is told to wait (`Retry-After`), whatever the idle timeout: a
/// `DELETE` may free a slot at any time.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// What the guard checks requests against.
pub(super) struct Guard {
    pub(super) shared: Arc<Shared>,
    pub(super) hosts: Hosts,
    pub(super) origins: Origins,
    /// The session bounds; `None` for a stateless server, which holds no session.
    pub(super) sessions: Option<SessionBounds>,
    /// The protected resource's checks (Z1–Z3); `None` for a server that does not authorize.
    pub(super) auth: Option<Authorizer>,
    /// The largest body read (rmcp's limit).
    pub(super) max_body: usize,
}

/// The session bounds of a server with sessions.
pub(super) struct SessionBounds {
    pub(super) ledger: Arc<Ledger>,
    pub(super) key: Option<KeyFn>,
    /// The `Retry-After` of a refusal, in seconds.
    pub(super) retry_after: u64,
    /// The largest body read (rmcp's limit).
    pub(super) max_body: usize,
}

impl SessionBounds {
    /// The `Retry-After` (seconds) for a server whose sessions expire after `idle`: a slot
    /// held by an idle session frees within that time; at least 1 s, at most a minute.
    pub(super) fn retry_after(idle: Duration) -> u64 {
        let capped = idle.min(MAX_RETRY_AFTER);
        (capped.as_secs() + u64::from(capped.subsec_nanos() > 0)).max(1)
    }

    /// The refusal by `bound` of a session of `owner`, logged.
    fn refuse(&self, bound: Bound, owner: &Owner) -> Response {
        match bound {
            Bound::PerPrincipal => tracing::debug!(
                owner = ?owner,
                "MCP session refused: its principal holds as many sessions as it may"
            ),
            Bound::Total => tracing::warn!(
                live = self.ledger.live(),
                "MCP session refused: the server holds as many sessions as it may"
            ),
        }
        Refusal::Full {
            bound,
            retry_after: self.retry_after,
        }
        .into_response()
    }
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
    let authorized =
        match authenticate(&guard, request.method(), request.uri(), request.headers()).await {
            Ok(authorized) => authorized,
            Err(answer) => return answer,
        };
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
            // Z1: a protected server's every 401 names its metadata.
            return match &guard.auth {
                Some(auth) => auth.auth.challenge(&Challenge::InvalidToken),
                None => Refusal::Unauthenticated.into_response(),
            };
        }
    };
    let (ctx, body) = match authorize(&guard, authorized, ctx, &parts, body).await {
        Ok(authorized) => authorized,
        Err(refused) => return refused,
    };
    // Only a POST without a session id may open a session (an `initialize`).
    let bounds = guard
        .sessions
        .as_ref()
        .filter(|_| parts.method == Method::POST && !parts.headers.contains_key(HEADER_SESSION_ID));
    let Some(bounds) = bounds else {
        parts.extensions.insert(Authenticated(ctx));
        return next.run(Request::from_parts(parts, body)).await;
    };
    let owner = owner(bounds, &parts, &ctx);
    parts.extensions.insert(Authenticated(ctx));
    let body = match bounds.ledger.full_for(&owner) {
        None => body,
        // At a bound, the guard refuses an `initialize` itself (rmcp would log an error).
        Some(bound) => match to_bytes(body, bounds.max_body).await {
            Err(_) => return Refusal::TooLarge.into_response(),
            Ok(bytes) if is_initialize(&bytes) => return bounds.refuse(bound, &owner),
            Ok(bytes) => Body::from(bytes),
        },
    };
    let (response, refused) =
        admit(owner.clone(), next.run(Request::from_parts(parts, body))).await;
    match refused {
        None => response,
        Some(bound) => bounds.refuse(bound, &owner),
    }
}

/// Z1, Z2: on a protected server, the metadata to anyone (as the `Err` answer), and the
/// claims of the request's valid token, or its `401`; `Ok(None)` on a server that does not
/// authorize.
async fn authenticate(
    guard: &Guard,
    method: &Method,
    uri: &http::Uri,
    headers: &http::HeaderMap,
) -> Result<Option<(Arc<Claims>, Granted)>, Response> {
    let Some(auth) = &guard.auth else {
        return Ok(None);
    };
    if let Some(metadata) = auth.metadata(method, uri.path()) {
        return Err(metadata);
    }
    auth.authenticate(headers).await.map(Some)
}

/// Z3: the validated claims and grant added to `ctx`, where handlers take them (C1); a
/// `tools/call` its token does not grant answered `403` here, where the status can still be
/// set.
async fn authorize(
    guard: &Guard,
    authorized: Option<(Arc<Claims>, Granted)>,
    ctx: tool_core::Context,
    parts: &Parts,
    body: Body,
) -> Result<(tool_core::Context, Body), Response> {
    let (Some((claims, granted)), Some(auth)) = (authorized, &guard.auth) else {
        return Ok((ctx, body));
    };
    let ctx = ctx.with_shared(claims).with(granted);
    let body = (auth.check_scopes(&guard.shared, &ctx, parts, body, guard.max_body)).await?;
    Ok((ctx, body))
}

/// Whom a session the request opens is counted against.
fn owner(bounds: &SessionBounds, parts: &Parts, ctx: &tool_core::Context) -> Owner {
    // Z3: on a protected server, the token's subject at its issuer, whatever token it holds
    // now (a refreshed token is the same principal), unless the application names one.
    let subject = (ctx.get::<Claims>()).and_then(|c| Some((&c.issuer, c.subject.as_ref()?)));
    if let (None, Some((issuer, subject))) = (&bounds.key, subject) {
        return Owner::Named(format!("{subject} at {issuer}").into());
    }
    let peer = parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| addr.ip());
    Owner::of(bounds.key.as_ref(), ctx, &parts.headers, peer)
}

/// Whether `body` is a JSON-RPC `initialize` request.
fn is_initialize(body: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Message<'a> {
        #[serde(borrow)]
        method: Option<Cow<'a, str>>,
    }
    serde_json::from_slice::<Message<'_>>(body)
        .is_ok_and(|m| m.method.as_deref() == Some("initialize"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t5_retry_after_is_the_idle_timeout_in_whole_seconds_from_1_to_60() {
        for (idle, secs) in [(0, 1), (300, 1), (1_000, 1), (1_001, 2), (59_500, 60)] {
            assert_eq!(
                SessionBounds::retry_after(Duration::from_millis(idle)),
                secs,
                "{idle} ms"
            );
        }
        assert_eq!(SessionBounds::retry_after(Duration::from_secs(300)), 60);
    }

    #[test]
    fn t5_only_an_initialize_opens_a_session() {
        assert!(is_initialize(
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#
        ));
        assert!(is_initialize(br#"{"method":"initi\u0061lize"}"#));
        for other in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#[..],
            br#"{"jsonrpc":"2.0","method":"initialize\u0000"}"#,
            br#"[{"method":"initialize"}]"#,
            b"not json",
        ] {
            assert!(!is_initialize(other), "{}", String::from_utf8_lossy(other));
        }
    }
}
