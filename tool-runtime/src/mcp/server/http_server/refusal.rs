//! The answers to requests the server refuses before serving them (T4, T5), and the
//! `Connection: close` every refusal carries.
//!
//! A request refused before its body was read leaves the body on the connection; hyper then
//! closes the connection after the answer. Without `Connection: close` a pooled client would
//! reuse it and its next request would fail, so every error answer says the connection ends
//! ([`close_after_errors`]), and the client opens a new one.

use axum::response::{IntoResponse, Response};
use http::header::{CONNECTION, CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use http::{HeaderValue, StatusCode};
use serde_json::json;

use super::sessions::Bound;

/// JSON-RPC's `Invalid Request`.
const INVALID_REQUEST: i64 = -32600;
/// The JSON-RPC code of a server that cannot take the request now.
const SERVER_BUSY: i64 = -32000;

/// Why a request is refused before it is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refusal {
    /// Its `Host` is not allowed (T4): `403`.
    Host,
    /// Its `Origin` is not allowed (T4): `403`.
    Origin,
    /// The context function failed: `401`.
    Unauthenticated,
    /// The body is larger than the server reads: `413`.
    TooLarge,
    /// A session bound is reached (T5): `429` for the principal's, `503` for the server's,
    /// with `Retry-After` in seconds.
    Full { bound: Bound, retry_after: u64 },
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
            Self::TooLarge => (
                StatusCode::PAYLOAD_TOO_LARGE,
                INVALID_REQUEST,
                "the request body is too large",
            ),
            Self::Full {
                bound: Bound::PerPrincipal,
                ..
            } => (
                StatusCode::TOO_MANY_REQUESTS,
                SERVER_BUSY,
                "too many live sessions for this principal: close one or retry later",
            ),
            Self::Full {
                bound: Bound::Total,
                ..
            } => (
                StatusCode::SERVICE_UNAVAILABLE,
                SERVER_BUSY,
                "the server holds as many sessions as it can: retry later",
            ),
        };
        let body = json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {"code": code, "message": message},
        });
        let mut response = (
            status,
            [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
            body.to_string(),
        )
            .into_response();
        if let Self::Full { retry_after, .. } = self {
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(retry_after));
        }
        response
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
