//! The protected resource's part of the guard (Z1–Z3): its metadata served, the bearer token
//! taken from the `Authorization` header and verified (`401` otherwise), and, for a server
//! whose tools declare scopes, a `tools/call` whose token lacks one answered `403` before rmcp
//! reads it, by the one scope check of a call (`call::scopes`). Only a tool the caller may see
//! is challenged: a hidden one, or a deferred one not loaded for the caller, goes on to get the
//! answer a name the server does not hold gets (A5).

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::Arc;

use axum::body::{Body, to_bytes};
use axum::response::{IntoResponse, Response};
use http::header::AUTHORIZATION;
use http::request::Parts;
use http::{HeaderMap, Method};
use rmcp::model::ProtocolVersion;
use serde::Deserialize;
use tool_core::{Context, Tool};

use super::refusal::Refusal;
use crate::call::scopes::{self, Granted};
use crate::mcp::server::auth::{Authorization, Challenge, Claims};
use crate::mcp::server::protocol_header::{NamedVersion, named_version};
use crate::mcp::server::session::http_owner;
use crate::mcp::server::shared::Shared;

/// What the guard holds for a protected server.
pub(super) struct Authorizer {
    pub(super) auth: Authorization,
    /// The paths the metadata is served at.
    metadata_paths: Vec<String>,
    /// Whether a tool declares scopes: only then are `tools/call` bodies read here.
    scoped: bool,
    /// Whether the server keeps sessions: who owns a request's loaded tools depends on it.
    sessions: bool,
}

impl Authorizer {
    /// The authorizer of `auth` on a server serving MCP at `served`, holding `shared`'s tools,
    /// keeping sessions or not (`sessions`).
    pub(super) fn new(auth: Authorization, served: &str, shared: &Shared, sessions: bool) -> Self {
        Self {
            metadata_paths: auth.metadata_paths(served),
            scoped: shared
                .set
                .tools
                .iter()
                .any(|tool| !tool.scopes().is_empty()),
            sessions,
            auth,
        }
    }

    /// The metadata, when the request asks for it (Z1): served to anyone, without a token.
    pub(super) fn metadata(&self, method: &Method, path: &str) -> Option<Response> {
        let asked = (*method == Method::GET || *method == Method::HEAD)
            && self.metadata_paths.iter().any(|served| served == path);
        asked.then(|| self.auth.metadata_response())
    }

    /// The claims of the request's token and what it grants (Z2), or the `401` answer. The
    /// token is read from the `Authorization` header only (never the query string), and
    /// appears in no log line and no answer.
    pub(super) async fn authenticate(
        &self,
        headers: &HeaderMap,
    ) -> Result<(Arc<Claims>, Granted), Response> {
        let token = match bearer(headers) {
            Ok(token) => token,
            Err(challenge) => {
                tracing::debug!(?challenge, "MCP request refused: no bearer token to check");
                return Err(self.auth.challenge(&challenge));
            }
        };
        match self.auth.verifier.verify_shared(token).await {
            Ok(claims) => {
                let granted = self
                    .auth
                    .hierarchy
                    .expand(claims.scopes.iter().map(String::as_str));
                let granted = Granted::new(granted, self.auth.step_up);
                Ok((claims, granted))
            }
            Err(error) => {
                tracing::info!(reason = %error, "MCP request refused: its access token is refused");
                Err(self.auth.challenge(&Challenge::InvalidToken))
            }
        }
    }

    /// For a server whose tools declare scopes, reads a POST's body (at most `max_body`
    /// bytes) and answers `403 insufficient_scope` to a `tools/call` whose token (behind
    /// `ctx`) lacks a scope of a tool the caller may see (Z3, [`challenged`]); the body
    /// otherwise, to be served.
    pub(super) async fn check_scopes(
        &self,
        shared: &Shared,
        ctx: &Context,
        parts: &Parts,
        body: Body,
        max_body: usize,
    ) -> Result<Body, Response> {
        if !self.scoped || parts.method != Method::POST {
            return Ok(body);
        }
        let Ok(bytes) = to_bytes(body, max_body).await else {
            return Err(Refusal::TooLarge.into_response());
        };
        let called = called_tools(&bytes);
        // Q1: who owns the tools the caller's searches loaded, named as its session names it.
        let owner = (!called.is_empty())
            .then(|| {
                http_owner(
                    self.sessions,
                    Some(parts),
                    protocol(&parts.headers).as_ref(),
                )
            })
            .flatten();
        let mut needed = BTreeSet::new();
        let mut ordered = Vec::new();
        // Each name once, however often a batch calls it: a policy runs at most once a tool.
        let called: BTreeSet<Cow<'_, str>> = called.into_iter().collect();
        for name in &called {
            let Some(tool) = challenged(shared, ctx, name, owner.as_deref()).await else {
                continue;
            };
            // Every scope the call needs, not only those missing: the client asks for them all.
            for scope in tool.scopes() {
                if needed.insert(scope.clone()) {
                    ordered.push(scope.clone());
                }
            }
        }
        if ordered.is_empty() {
            return Ok(Body::from(bytes));
        }
        tracing::info!(scopes = ?ordered, "MCP call refused: its token lacks a scope the tool needs");
        Err(self.auth.challenge(&Challenge::InsufficientScope(ordered)))
    }
}

/// The tool a `tools/call` of `name` is challenged for (Z3): one the caller may see, whose
/// token (behind `ctx`) lacks a scope of it. A name the server does not hold, a deferred tool
/// no search of `owner`'s loaded (Q1), and a tool whose policy hides it from the caller (a
/// policy that fails hides it) are not: their call goes on, to be answered as a name the
/// server does not hold (A5), so that a `403` never tells that a hidden tool exists, nor
/// what it needs. A policy that reads the token's scopes hides its tool from a token without
/// them, and step-up cannot reveal it: the application chose to hide it, not to ask for more.
/// The policy runs only for a tool the server holds, whose scopes the token lacks, once for
/// each such tool a request calls (however often a batch names it).
async fn challenged<'s>(
    shared: &'s Shared,
    ctx: &Context,
    name: &str,
    owner: Option<&str>,
) -> Option<&'s Tool> {
    let tool = shared.tool_for(name, owner)?;
    if scopes::missing(tool, ctx).is_empty() {
        return None;
    }
    match tool.available(ctx).await {
        Ok(visible) => visible.then_some(tool),
        Err(error) => {
            tracing::debug!(
                tool = tool.name(),
                error = %error,
                "an availability policy failed while a call's scopes were checked; the tool \
                 is answered as unknown"
            );
            None
        }
    }
}

/// The protocol version a request's `MCP-Protocol-Version` header names, when the server
/// knows it.
fn protocol(headers: &HeaderMap) -> Option<ProtocolVersion> {
    match named_version(headers) {
        NamedVersion::Known(version) => Some(version),
        NamedVersion::Absent | NamedVersion::Unreadable => None,
    }
}

/// The one bearer token of `headers`, or why there is none to check.
fn bearer(headers: &HeaderMap) -> Result<&str, Challenge> {
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return Err(if headers.contains_key(AUTHORIZATION) {
            Challenge::BadRequest
        } else {
            Challenge::NoToken
        });
    };
    let value = value.to_str().map_err(|_| Challenge::InvalidToken)?;
    let (scheme, token) = value.split_once(' ').ok_or(Challenge::BadRequest)?;
    let token = token.trim_matches(' ');
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() || token.contains(' ') {
        return Err(Challenge::BadRequest);
    }
    Ok(token)
}

/// The names of the tools `body` calls: one JSON-RPC `tools/call`, or each of a batch.
fn called_tools(body: &[u8]) -> Vec<Cow<'_, str>> {
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(borrow)]
        name: Option<Cow<'a, str>>,
    }
    #[derive(Deserialize)]
    struct Message<'a> {
        #[serde(borrow)]
        method: Option<Cow<'a, str>>,
        #[serde(borrow)]
        params: Option<Params<'a>>,
    }
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Messages<'a> {
        #[serde(borrow)]
        One(Message<'a>),
        #[serde(borrow)]
        Batch(Vec<Message<'a>>),
    }
    let messages = match serde_json::from_slice::<Messages<'_>>(body) {
        Ok(Messages::One(message)) => vec![message],
        Ok(Messages::Batch(messages)) => messages,
        Err(_) => return Vec::new(),
    };
    messages
        .into_iter()
        .filter(|m| m.method.as_deref() == Some("tools/call"))
        .filter_map(|m| m.params.and_then(|p| p.name))
        .collect()
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    #[test]
    fn z1_only_one_bearer_token_in_the_authorization_header_is_read() {
        let mut headers = HeaderMap::new();
        assert_eq!(bearer(&headers), Err(Challenge::NoToken));
        headers.insert(AUTHORIZATION, HeaderValue::from_static("Bearer abc"));
        assert_eq!(bearer(&headers), Ok("abc"));
        headers.insert(AUTHORIZATION, HeaderValue::from_static("bearer  abc "));
        assert_eq!(bearer(&headers), Ok("abc"));
        headers.insert(AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert_eq!(bearer(&headers), Err(Challenge::BadRequest));
        headers.insert(AUTHORIZATION, HeaderValue::from_static("Bearer a b"));
        assert_eq!(bearer(&headers), Err(Challenge::BadRequest));
        headers.append(AUTHORIZATION, HeaderValue::from_static("Bearer c"));
        assert_eq!(bearer(&headers), Err(Challenge::BadRequest));
    }

    #[test]
    fn z3_the_tools_a_body_calls_are_read_from_one_message_or_a_batch() {
        let one = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"close"}}"#;
        assert_eq!(called_tools(one), ["close"]);
        let batch =
            br#"[{"method":"tools/list"},{"method":"tools/call","params":{"name":"a\u0062"}}]"#;
        assert_eq!(called_tools(batch), ["ab"]);
        assert!(called_tools(b"{").is_empty());
    }
}
