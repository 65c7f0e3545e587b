//! The task rewriting of streamable HTTP (M5): each POSTed message rewritten before the SDK
//! reads it, each answer (a JSON body, or each `data:` line of an event stream) after.

use std::sync::Arc;

use axum::body::{Body, Bytes, to_bytes};
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use http::{Method, StatusCode, header};

use super::{incoming, outgoing};
use crate::mcp::server::tasks::Tasks;

/// Rewrites `request` and its answer for 2025-11-25 tasks; bodies over `max_body` bytes are
/// refused as the SDK would refuse them.
pub(crate) async fn rewrite(
    tasks: Arc<Tasks>,
    max_body: usize,
    request: Request,
    next: Next,
) -> Response {
    let request = if request.method() == Method::POST {
        let (parts, body) = request.into_parts();
        let Ok(bytes) = to_bytes(body, max_body).await else {
            return StatusCode::PAYLOAD_TOO_LARGE.into_response();
        };
        let bytes = incoming(&tasks, &bytes).map_or(bytes, Bytes::from);
        Request::from_parts(parts, Body::from(bytes))
    } else {
        request
    };
    let response = next.run(request).await;
    let kind = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if kind.starts_with("application/json") {
        let (mut parts, body) = response.into_parts();
        let Ok(bytes) = to_bytes(body, usize::MAX).await else {
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        let bytes = match outgoing(&tasks, &bytes) {
            Some(rewritten) => {
                parts.headers.remove(header::CONTENT_LENGTH);
                Bytes::from(rewritten)
            }
            None => bytes,
        };
        Response::from_parts(parts, Body::from(bytes))
    } else if kind.starts_with("text/event-stream") {
        let (parts, body) = response.into_parts();
        Response::from_parts(parts, events(tasks, body))
    } else {
        response
    }
}

/// An event stream whose `data:` lines are rewritten, line by line as they come.
fn events(tasks: Arc<Tasks>, body: Body) -> Body {
    let chunks = body.into_data_stream();
    let lines = futures_util::stream::unfold(
        (chunks, Vec::<u8>::new(), false),
        move |(mut chunks, mut pending, mut done)| {
            let tasks = Arc::clone(&tasks);
            async move {
                loop {
                    if let Some(end) = pending.iter().rposition(|&b| b == b'\n') {
                        let rest = pending.split_off(end + 1);
                        let whole = std::mem::replace(&mut pending, rest);
                        let out = rewrite_lines(&whole, &tasks);
                        return Some((
                            Ok::<_, axum::Error>(Bytes::from(out)),
                            (chunks, pending, done),
                        ));
                    }
                    if done {
                        if pending.is_empty() {
                            return None;
                        }
                        let out = std::mem::take(&mut pending);
                        return Some((Ok(Bytes::from(out)), (chunks, pending, done)));
                    }
                    match chunks.next().await {
                        Some(Ok(chunk)) => pending.extend_from_slice(&chunk),
                        Some(Err(error)) => return Some((Err(error), (chunks, pending, true))),
                        None => done = true,
                    }
                }
            }
        },
    );
    Body::from_stream(lines)
}

/// Complete lines of an event stream, each `data:` line's message rewritten.
fn rewrite_lines(lines: &[u8], tasks: &Tasks) -> Vec<u8> {
    let mut out = Vec::with_capacity(lines.len());
    for line in lines.split_inclusive(|&b| b == b'\n') {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        let body = body.strip_suffix(b"\r").unwrap_or(body);
        let rewritten = body
            .strip_prefix(b"data:")
            .map(|data| data.strip_prefix(b" ").unwrap_or(data))
            .and_then(|data| outgoing(tasks, data));
        match rewritten {
            Some(message) => {
                out.extend_from_slice(b"data: ");
                out.extend_from_slice(&message);
                out.push(b'\n');
            }
            None => out.extend_from_slice(line),
        }
    }
    out
}
