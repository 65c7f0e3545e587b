//! What a protected server says of itself (Z1): its Protected Resource Metadata (RFC 9728),
//! and the `401`/`403` answers whose `WWW-Authenticate` challenge points to it (RFC 6750 §3).

use axum::response::{IntoResponse, Response};
use http::header::{CACHE_CONTROL, CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderValue, StatusCode};
use serde_json::json;

use super::{Authorization, OFFLINE_ACCESS};

/// The well-known URI of Protected Resource Metadata, before the resource's path.
pub(super) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// JSON-RPC's `Invalid Request`, the code of the body of a refusal.
const INVALID_REQUEST: i64 = -32600;

/// Why a request is challenged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Challenge {
    /// No token came (RFC 6750 §3.1: no error code): `401`.
    NoToken,
    /// The request's credentials are not one bearer token in the `Authorization` header:
    /// `401 invalid_request`.
    BadRequest,
    /// The token was refused: `401 invalid_token`.
    InvalidToken,
    /// The token lacks `scopes`, every scope the call needs: `403 insufficient_scope`.
    InsufficientScope(Vec<String>),
}

impl Authorization {
    /// The Protected Resource Metadata document (RFC 9728 §2).
    pub(crate) fn metadata(&self) -> serde_json::Value {
        json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "scopes_supported": self.scopes_supported,
            "bearer_methods_supported": ["header"],
        })
    }

    /// The paths the metadata is served at on a server that serves MCP at `served`: the
    /// path-inserted well-known URI of the resource (and of `served`, behind a proxy that
    /// changes the path) and the root one.
    pub(crate) fn metadata_paths(&self, served: &str) -> Vec<String> {
        let mut paths = vec![WELL_KNOWN.to_owned()];
        for path in [self.resource_path(), served.trim_end_matches('/')] {
            let inserted = format!("{WELL_KNOWN}{path}");
            if !paths.contains(&inserted) {
                paths.push(inserted);
            }
        }
        paths
    }

    /// The answer to a request for the metadata.
    pub(crate) fn metadata_response(&self) -> Response {
        (
            StatusCode::OK,
            [
                (CONTENT_TYPE, HeaderValue::from_static("application/json")),
                (CACHE_CONTROL, HeaderValue::from_static("max-age=300")),
            ],
            self.metadata().to_string(),
        )
            .into_response()
    }

    /// The answer to a request challenged for `challenge`.
    pub(crate) fn challenge(&self, challenge: &Challenge) -> Response {
        let metadata = self.metadata_url();
        let (status, header, message) = match challenge {
            Challenge::NoToken => (
                StatusCode::UNAUTHORIZED,
                self.with_scopes(format!("Bearer resource_metadata=\"{metadata}\"")),
                "unauthorized: an access token is required".to_owned(),
            ),
            Challenge::BadRequest => (
                StatusCode::UNAUTHORIZED,
                self.with_scopes(format!(
                    "Bearer error=\"invalid_request\", error_description=\"send one bearer token \
                     in the Authorization header\", resource_metadata=\"{metadata}\""
                )),
                "unauthorized: send one bearer token in the Authorization header".to_owned(),
            ),
            Challenge::InvalidToken => (
                StatusCode::UNAUTHORIZED,
                self.with_scopes(format!(
                    "Bearer error=\"invalid_token\", error_description=\"the access token is not \
                     valid for this resource\", resource_metadata=\"{metadata}\""
                )),
                "unauthorized: the access token is not valid for this resource".to_owned(),
            ),
            Challenge::InsufficientScope(scopes) => {
                let scopes = scopes.join(" ");
                (
                    StatusCode::FORBIDDEN,
                    format!(
                        "Bearer error=\"insufficient_scope\", scope=\"{scopes}\", \
                         resource_metadata=\"{metadata}\", error_description=\"the call needs \
                         the scopes {scopes}\""
                    ),
                    format!("forbidden: the call needs the scopes {scopes}"),
                )
            }
        };
        let body = json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {"code": INVALID_REQUEST, "message": message},
        });
        let mut response = (
            status,
            [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
            body.to_string(),
        )
            .into_response();
        // Scope tokens and URLs are visible ASCII: the header is always valid.
        if let Ok(value) = HeaderValue::from_str(&header) {
            response.headers_mut().insert(WWW_AUTHENTICATE, value);
        }
        response
    }

    /// `challenge` with the scopes a client should ask for, when the server names any.
    fn with_scopes(&self, challenge: String) -> String {
        let scopes: Vec<&str> = (self.scopes_supported.iter())
            .map(String::as_str)
            .filter(|scope| *scope != OFFLINE_ACCESS)
            .collect();
        if scopes.is_empty() {
            challenge
        } else {
            format!("{challenge}, scope=\"{}\"", scopes.join(" "))
        }
    }
}
