//! The span of one `tools/call` (K2), as the OpenTelemetry semantic conventions for MCP
//! servers name it: `tools/call {tool}`, kind server, with `mcp.method.name`,
//! `gen_ai.operation.name = execute_tool`, `gen_ai.tool.name`, `jsonrpc.request.id`,
//! `mcp.session.id` (streamable HTTP), `mcp.protocol.version` and `network.transport` (`pipe`
//! for stdio, `tcp` for HTTP).
//!
//! A call whose result has `isError` gets `error.type = tool_error` and the error status, as
//! the conventions say; its outcome kind (`failed`, `invalid_arguments`, …) is in
//! `tool_runtime.outcome`. A request whose `_meta` carries a W3C `traceparent` (and
//! `tracestate`) continues that trace, with the `opentelemetry` feature (K6): the span is a
//! child of the client's.
//! A request refused with a JSON-RPC error gets that code as `rpc.response.status_code` and
//! `error.type`. With `record_tool_content(true)` the span also records the call's arguments
//! and the result text the client got (never an unredacted error, E2).

use rmcp::ErrorData;
use rmcp::RoleServer;
use std::time::Instant;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ProtocolVersion, RequestId, RequestMetaObject,
};
use rmcp::service::RequestContext;
use tool_core::Outcome;
use tracing::Span;
use tracing::field::{Empty, display};

use super::request::McpTransport;
use super::shared::Shared;
use crate::telemetry::metrics::{self, McpRecord, Side};
use crate::telemetry::{Named, continue_from, record_call_end, record_error};

/// The `error.type` of a call answered with `isError: true`.
const TOOL_ERROR: &str = "tool_error";

/// The header of streamable HTTP that carries the session id.
const SESSION_HEADER: &str = "mcp-session-id";

/// What the span and the metric of a call read of its request besides its params: from rmcp's
/// request context ([`Seen::of`]), or from an HTTP request the server reads itself.
pub(crate) struct Seen<'a> {
    /// The JSON-RPC id.
    pub(crate) id: &'a RequestId,
    /// The `_meta` rmcp's service moved out of the params (empty when it stayed there).
    pub(crate) meta: &'a RequestMetaObject,
    /// The HTTP request's parts (none for stdio).
    pub(crate) parts: Option<&'a http::request::Parts>,
    /// The request's protocol version, when one is known.
    pub(crate) protocol_version: Option<ProtocolVersion>,
}

impl<'a> Seen<'a> {
    /// What `cx`, a request context of rmcp's service, holds of its request.
    pub(crate) fn of(cx: &'a RequestContext<RoleServer>) -> Self {
        Self {
            id: &cx.id,
            meta: &cx.meta,
            parts: cx.extensions.get::<http::request::Parts>(),
            protocol_version: cx.protocol_version(),
        }
    }
}

/// The span of the `tools/call` request `request`.
pub(crate) fn tools_call(
    request: &CallToolRequestParams,
    cx: &Seen<'_>,
    transport: McpTransport,
) -> Span {
    let name: &str = &request.name;
    let span = tracing::info_span!(
        "tools/call",
        otel.name = %Named::new("tools/call ", name),
        otel.kind = "server",
        otel.status_code = Empty,
        mcp.method.name = "tools/call",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %Named::short(name),
        jsonrpc.request.id = %cx.id,
        mcp.session.id = Empty,
        mcp.protocol.version = Empty,
        network.transport = network_transport(transport),
        gen_ai.tool.call.arguments = Empty,
        gen_ai.tool.call.result = Empty,
        "error.type" = Empty,
        "rpc.response.status_code" = Empty,
        tool_runtime.outcome = Empty,
    );
    if !span.is_disabled() {
        // K6: the call continues the client's trace, when its `_meta` carries one. The SDK
        // may keep a request's `_meta` in its context rather than its params.
        let meta = request
            .meta
            .as_deref()
            .filter(|meta| meta.get_traceparent().is_some());
        let meta = meta.unwrap_or(cx.meta);
        continue_from(&span, meta.get_traceparent(), meta.get_tracestate());
        let session = cx
            .parts
            .and_then(|parts| parts.headers.get(SESSION_HEADER))
            .and_then(|value| value.to_str().ok());
        if let Some(session) = session {
            span.record("mcp.session.id", session);
        }
        if let Some(version) = &cx.protocol_version {
            span.record("mcp.protocol.version", display(version));
        }
    }
    span
}

/// Records the call's arguments (the JSON the handler was given), when the application
/// opted in.
pub(crate) fn record_arguments(span: &Span, arguments: &[u8], content: bool) {
    if content && let Ok(text) = std::str::from_utf8(arguments) {
        span.record("gen_ai.tool.call.arguments", text);
    }
}

/// Records how the call ended.
pub(crate) fn record_outcome(span: &Span, outcome: &Outcome, content: bool) {
    record_call_end(span, outcome, TOOL_ERROR, content);
}

/// The time a `tools/call` takes to be answered, and what its metric names (K5).
pub(crate) struct Timer {
    started: Instant,
    /// The tool's declared name; `None` for a name the server does not hold, which a metric
    /// leaves out (the client chose it: an attribute of unbounded values).
    tool: Option<String>,
    protocol_version: Option<String>,
    transport: &'static str,
}

impl Timer {
    /// Starts timing `request`.
    pub(crate) fn start(
        shared: &Shared,
        request: &CallToolRequestParams,
        cx: &Seen<'_>,
        transport: McpTransport,
    ) -> Self {
        let tool = (shared.by_name.get(request.name.as_ref()))
            .map(|&i| shared.set.tools[i].name().to_owned());
        Self {
            started: Instant::now(),
            tool,
            protocol_version: cx.protocol_version.as_ref().map(ToString::to_string),
            transport: network_transport(transport),
        }
    }

    /// Records `mcp.server.operation.duration`: `error.type` is the JSON-RPC error code of a
    /// refused request, `tool_error` for a result with `isError`.
    pub(crate) fn finish(self, answer: &Result<CallToolResponse, ErrorData>) {
        let error_type = match answer {
            Err(error) => Some(error.code.0.to_string()),
            Ok(CallToolResponse::Complete(result)) if result.is_error == Some(true) => {
                Some(TOOL_ERROR.to_owned())
            }
            Ok(_) => None,
        };
        metrics::record_mcp(&McpRecord {
            side: Side::Server,
            method: "tools/call",
            tool: self.tool.as_deref(),
            protocol_version: self.protocol_version,
            transport: Some(self.transport),
            error_type,
            elapsed: self.started.elapsed(),
        });
    }
}

/// `network.transport`: `pipe` for stdio, `tcp` for HTTP.
fn network_transport(transport: McpTransport) -> &'static str {
    match transport {
        McpTransport::Stdio => "pipe",
        McpTransport::Http => "tcp",
    }
}

/// Records a request refused with a JSON-RPC error (its context could not be built).
pub(crate) fn record_refused(span: &Span, error: &ErrorData) {
    span.record("rpc.response.status_code", display(error.code.0));
    record_error(span, error.code.0);
}
