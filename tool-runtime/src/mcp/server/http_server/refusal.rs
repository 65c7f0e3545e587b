//! The answers to requests the server refuses before serving them (T4), and the
//! `Connection: close` every refusal carries.
//!
//! A request refused before its body was read leaves the body on the connection; hyper then
//! closes the connection after the answer. Without `Connection: close` a pooled client would
//! reuse it and its next request would fail, so every error answer says the connection ends
//! ([`close_after_errors`]), and the client opens a new one.

use axum::response::{IntoResponse, Response};
use http::header::{CONNECTION, CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderValue, StatusCode};
use serde_json::json;

/// JSON-RPC's `Invalid Request`.
const INVALID_REQUEST: i64 = -32600;

/// Why a request is refused before it is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refusal {
    /// Its `Host` is not allowed (T4): `403`.
    Host,
    /// Its `Origin` is not allowed (T4): `403`.
    Origin,
    /// The context function failed: `401`.
    Unauthenticated,
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let (status, code, message) = match self {
            Self::Host => (
                StatusCode::FORBIDDEN,
                INVALID_REQUEST,
                "Forbidden: the Host is not allowed",
            ),
            Self::Origin => (
                StatusCode::FORBIDDEN,
                INVALID_REQUEST,
                "Forbidden: the Origin is not allowed",
            ),
            Self::Unauthenticated => {
                return (
                    StatusCode::UNAUTHORIZED,
                    [(WWW_AUTHENTICATE, "Bearer")],
                    "unauthorized",
                )
                    .into_response();
            }
        };
        let body = json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {"code": code, "message": message},
        });
        (
            status,
            [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
            body.to_string(),
        )
            .into_response()
    }
}

/// Adds `Connection: close` to an error answer (`4xx`, `5xx`): ours, rmcp's (a `Host` not
/// allowed, an unknown session, a body too large) and the router's (`404`, `405`).
pub(super) async fn close_after_errors(mut response: Response) -> Response {
    let status = response.status();
    if status.is_client_error() || status.is_server_error() {
        response
            .headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
    }
    response
}
