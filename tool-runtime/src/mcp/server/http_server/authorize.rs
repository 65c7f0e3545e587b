//! The protected resource's part of the guard (Z1–Z3): its metadata served, the bearer token
//! taken from the `Authorization` header and verified (`401` otherwise), and, for a server
//! whose tools declare scopes, a `tools/call` whose token lacks one answered `403` before rmcp
//! reads it, by the one scope check of a call (`call::scopes`).

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::Arc;

use axum::body::{Body, to_bytes};
use axum::response::{IntoResponse, Response};
use http::header::AUTHORIZATION;
use http::request::Parts;
use http::{HeaderMap, Method};
use serde::Deserialize;
use tool_core::Context;

use super::refusal::Refusal;
use crate::call::scopes::{self, Granted};
use crate::mcp::server::auth::{Authorization, Challenge, Claims};
use crate::mcp::server::shared::Shared;

/// What the guard holds for a protected server.
pub(super) struct Authorizer {
    pub(super) auth: Authorization,
    /// The paths the metadata is served at.
    metadata_paths: Vec<String>,
    /// Whether a tool declares scopes: only then are `tools/call` bodies read here.
    scoped: bool,
}

impl Authorizer {
    /// The authorizer of `auth` on a server serving MCP at `served`, holding `shared`'s tools.
    pub(super) fn new(auth: Authorization, served: &str, shared: &Shared) -> Self {
        Self {
            metadata_paths: auth.metadata_paths(served),
            scoped: shared
                .set
                .tools
                .iter()
                .any(|tool| !tool.scopes().is_empty()),
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
    /// `ctx`) lacks a scope of its tool (Z3); the body otherwise, to be served.
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
        let mut needed = BTreeSet::new();
        let mut ordered = Vec::new();
        for name in called_tools(&bytes) {
            let Some(tool) = shared
                .by_name
                .get(name.as_ref())
                .map(|&i| &shared.set.tools[i])
            else {
                continue;
            };
            if scopes::missing(tool, ctx).is_empty() {
                continue;
            }
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
