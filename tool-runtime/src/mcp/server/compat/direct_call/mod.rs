//! Direct calls: a stateless server that answers with JSON bodies
//! ([`HttpOptions::stateless`](crate::mcp::HttpOptions::stateless) and
//! [`json_answers`](crate::mcp::HttpOptions::json_answers)) answers a POST that is one plain
//! `tools/call` itself, with the answer rmcp's service would give, rather than through that
//! service's framing (its JSON-RPC message types, a service and two tasks per request, the
//! channels between them), which costs more than the call itself.
//!
//! The call goes through the same pipeline as any other ([`Session::call`]: K5's
//! metric, K2's span continuing a `traceparent` (K6), the request's context, availability,
//! validation, approval, hooks, redaction, `on_outcome`, the result with its outcome kind and
//! `structuredContent`), and its answer is written as rmcp writes it: `200`,
//! `Content-Type: application/json`, the JSON-RPC response serialized from rmcp's own types.
//! The guard (T4, the context function) runs before, as for any request.
//!
//! Anything else goes to rmcp's service untouched (the body, when it was read, is handed on
//! as read): other methods, notifications, batches, malformed JSON, a progress token or any
//! other `_meta` than trace context, headers rmcp would check further or refuse
//! ([`headers`]), protocol 2026-07-28. A server with tasks (M5) has no direct calls: its
//! calls are rewritten on their way to rmcp.
//!
//! - `envelope`: the one message a direct call answers.
//! - `headers`: the headers it answers under.

mod envelope;
mod headers;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use futures_util::StreamExt;
use http::{HeaderValue, Method, StatusCode, header};
use rmcp::model::{CallToolResponse, ServerJsonRpcMessage, ServerResult};
use tool_core::CancellationToken;

use crate::mcp::server::session::Session;
use crate::mcp::server::spans::Seen;
use crate::mcp::server::tools_call::Caller;
use envelope::Call;

/// The `Content-Type` of an answer.
const JSON: &str = "application/json";

/// What the direct calls of one server share.
pub(crate) struct DirectCalls {
    /// The server's session, without sessions.
    session: Session,
    /// The largest body read (rmcp's limit).
    max_body: usize,
    /// Cancelled when the server stops.
    shutdown: CancellationToken,
    /// How many calls were answered directly.
    answered: AtomicU64,
}

impl DirectCalls {
    pub(crate) fn new(session: Session, max_body: usize, shutdown: CancellationToken) -> Self {
        Self {
            session,
            max_body,
            shutdown,
            answered: AtomicU64::new(0),
        }
    }

    /// How many calls were answered directly.
    pub(crate) fn answered(&self) -> u64 {
        self.answered.load(Ordering::Relaxed)
    }
}

impl std::fmt::Debug for DirectCalls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectCalls")
            .field("answered", &self.answered())
            .finish_non_exhaustive()
    }
}

/// Answers `request` directly when it is a plain `tools/call`, else serves it with `next`
/// (rmcp's service).
pub(crate) async fn serve(calls: Arc<DirectCalls>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let Some(version) = headers::served_version(request.uri(), request.headers()) else {
        return next.run(request).await;
    };
    let (parts, body) = request.into_parts();
    let body = match collect(body, calls.max_body).await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    let Some(call) = envelope::read(&body) else {
        return next.run(Request::from_parts(parts, Body::from(body))).await;
    };
    calls.answered.fetch_add(1, Ordering::Relaxed);
    answer(&calls, call, parts, version).await
}

/// The body of a request whose headers rmcp accepts, read as rmcp reads it: at most
/// `max_body` bytes, else rmcp's `413`; a failure to read it is rmcp's `500`.
async fn collect(body: Body, max_body: usize) -> Result<Vec<u8>, Response> {
    // Data frames only, as rmcp reads them (trailers are skipped).
    let mut frames = body.into_data_stream();
    let mut collected = Vec::new();
    while let Some(data) = frames.next().await {
        let data = match data {
            Ok(data) => data,
            Err(error) => {
                let text = format!("Failed to read request body: {error}");
                return Err(plain(StatusCode::INTERNAL_SERVER_ERROR, text));
            }
        };
        if data.len() > max_body.saturating_sub(collected.len()) {
            let text = format!("Payload Too Large: request body exceeds {max_body} bytes");
            return Err(plain(StatusCode::PAYLOAD_TOO_LARGE, text));
        }
        collected.extend_from_slice(&data);
    }
    Ok(collected)
}

/// Runs `call` in a task of its own, as rmcp runs a handler: if the client goes away before
/// the answer, the call's context is cancelled and the call still runs to its end (P2, E3).
/// The answer is rmcp's: its JSON-RPC response, or its `500` when the server stops first.
async fn answer(
    calls: &DirectCalls,
    call: Call,
    parts: http::request::Parts,
    version: rmcp::model::ProtocolVersion,
) -> Response {
    let cancelled = CancellationToken::new();
    let disconnected = cancelled.clone().drop_guard();
    let session = calls.session.clone();
    let Call { id, params, meta } = call;
    let running = tokio::spawn(async move {
        let seen = Seen {
            id: &id,
            meta: &meta,
            parts: Some(&parts),
            protocol_version: Some(version),
        };
        let answer = session
            .call(params, Caller::Direct(&seen), &cancelled)
            .await;
        let message = match answer {
            Ok(response) => ServerJsonRpcMessage::response(legacy_result(response), id),
            Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
        };
        serde_json::to_vec(&message)
    });
    let ended = tokio::select! {
        ended = running => ended.ok(),
        () = calls.shutdown.cancelled() => None,
    };
    let Some(written) = ended else {
        // rmcp's answer when no message came (the server stopping, the task lost).
        let text = "Encounter an error when empty response: no response message received \
                    from handler";
        return plain(StatusCode::INTERNAL_SERVER_ERROR, text.to_owned());
    };
    disconnected.disarm();
    match written {
        Ok(body) => {
            let mut response = Response::new(Body::from(body));
            (response.headers_mut()).insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON));
            response
        }
        Err(error) => {
            let text = format!("Encounter an error when serialize json response: {error}");
            plain(StatusCode::INTERNAL_SERVER_ERROR, text)
        }
    }
}

/// The result as rmcp's server handler gives it to a client on a protocol before 2026-07-28
/// (every direct call's): without `resultType: "complete"`, and with a `structuredContent`
/// that is not an object moved into the content (SEP-2106).
fn legacy_result(response: CallToolResponse) -> ServerResult {
    let mut result = ServerResult::from(response);
    result.strip_result_type_for_legacy_peer();
    result.strip_non_object_output_for_legacy_peer();
    result
}

/// An answer of rmcp's with a text body and no `Content-Type`.
fn plain(status: StatusCode, text: String) -> Response {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response
}
