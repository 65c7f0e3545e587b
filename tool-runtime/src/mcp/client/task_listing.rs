//! What a server's `tools/list` says of each tool's tasks (M5, protocol 2025-11-25), kept
//! through the SDK, which does not read `execution`: each answer from the server is rewritten
//! on its way in, a tool's `execution.taskSupport` copied into its `_meta`
//! ([`TASK_SUPPORT_META`]), where [`Connection`](super::remote_tool::Connection) finds it.
//!
//! - stdio and byte streams: each line pumped through [`rewrite`] ([`child`], [`io`]);
//! - streamable HTTP: each event of a response stream, by [`TaskAware`] around the SDK's
//!   HTTP client. A server that answers with single JSON bodies is not rewritten: its
//!   required-task tools are found when they refuse a plain call (`-32601`).

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::Arc;

use futures_util::StreamExt;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use serde_json::Value;
use tokio::io::{AsyncRead, DuplexStream};
use tokio::process::{Child, ChildStdin, Command};

use crate::mcp::lines::pump;

/// Where a listed tool's `execution.taskSupport` is kept.
pub(crate) const TASK_SUPPORT_META: &str = "tool-runtime/taskSupport";

/// How much the pipe between a pump and the SDK buffers.
const PIPE: usize = 64 * 1024;

/// A message from the server, rewritten (`None`: unchanged).
pub(crate) fn rewrite(bytes: &[u8]) -> Option<Vec<u8>> {
    if !bytes.windows(11).any(|w| w == b"\"execution\"") {
        return None;
    }
    let mut message: Value = serde_json::from_slice(bytes).ok()?;
    let tools = message.pointer_mut("/result/tools")?.as_array_mut()?;
    let mut changed = false;
    for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
        let support = tool
            .get("execution")
            .and_then(|e| e.get("taskSupport"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let Some(support) = support else { continue };
        let meta = tool
            .entry("_meta")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert(TASK_SUPPORT_META.to_owned(), Value::String(support));
            changed = true;
        }
    }
    changed.then(|| serde_json::to_vec(&message).ok()).flatten()
}

/// The server's side of a byte stream, read through [`rewrite`]: the reader the SDK gets.
pub(crate) fn io<R>(reader: R) -> DuplexStream
where
    R: AsyncRead + Send + Unpin + 'static,
{
    let (sdk_side, pump_side) = tokio::io::duplex(PIPE);
    tokio::spawn(pump(reader, pump_side, rewrite));
    sdk_side
}

/// A server process started from `command`, killed when the returned [`Child`] is dropped:
/// its output read through [`rewrite`], and its input.
pub(crate) fn child(mut command: Command) -> std::io::Result<(DuplexStream, ChildStdin, Child)> {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn()?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(std::io::Error::other(
            "the process has no piped stdin or stdout",
        ));
    };
    Ok((io(stdout), stdin, child))
}

/// The SDK's HTTP client `C`, each server-sent event's data through [`rewrite`].
#[derive(Clone)]
pub(crate) struct TaskAware<C>(pub(crate) C);

/// A stream of server-sent events, as the SDK's HTTP client gives it.
type Events = futures_util::stream::BoxStream<'static, Result<sse_stream::Sse, SseError>>;

fn rewrite_events(events: Events) -> Events {
    events
        .map(|event| {
            event.map(|mut event| {
                if let Some(data) = &event.data
                    && let Some(rewritten) = rewrite(data.as_bytes())
                    && let Ok(rewritten) = String::from_utf8(rewritten)
                {
                    event.data = Some(rewritten);
                }
                event
            })
        })
        .boxed()
}

fn rewrite_response(response: StreamableHttpPostResponse) -> StreamableHttpPostResponse {
    match response {
        StreamableHttpPostResponse::Sse(events, session) => {
            StreamableHttpPostResponse::Sse(rewrite_events(events), session)
        }
        other => other,
    }
}

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for TaskAware<C> {
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let response = self
            .0
            .post_message(uri, message, session_id, auth_header, custom_headers);
        response.await.map(rewrite_response)
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let response = self.0.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        );
        response.await.map(rewrite_response)
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        (self.0)
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<Events, StreamableHttpError<Self::Error>> {
        let events =
            (self.0).get_stream(uri, session_id, last_event_id, auth_header, custom_headers);
        events.await.map(rewrite_events)
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<Events, StreamableHttpError<Self::Error>> {
        let events = (self.0).get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        );
        events.await.map(rewrite_events)
    }
}
