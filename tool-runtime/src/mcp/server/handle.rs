//! [`McpServer`]: the handle of a built server, cheap to clone. Its builder is in `builder`,
//! the ways to serve it in the parent module.

use std::fmt;
use std::sync::Arc;

use super::shared::Shared;

/// Tools served over the Model Context Protocol, over stdio or streamable HTTP.
///
/// One declaration serves both transports with the same guarantees: every `tools/call` runs
/// through [`Tool::invoke_with`], like a call of the agent loop, so availability is checked
/// again (A4), arguments are validated (S2, R5) and failures are redacted (E2, E3); a hidden
/// tool and an unknown name get the same `tool unavailable` (A5).
///
/// - `tools/list` evaluates each policy for the request's [`Context`], in declaration order,
///   and lists the available tools with their name, description and input schema (the neutral
///   schema, object root). A tool has no output schema today (E1), so none is listed.
/// - `tools/call` answers with text content (E1), plus `structuredContent` when the text is
///   a JSON object. Violations, [`ToolError`](tool_core::ToolError) text and
///   `the tool failed` come back as results with `isError: true`, so the client's model can
///   correct itself. A permanent failure, a panic or a policy error is logged (`tracing`) and
///   answered `the tool failed`; the server goes on (E4).
/// - `notifications/cancelled` cancels the call's [`Context`] (a child of the request's).
/// - A call of a tool that requires approval (H1) asks the client's user by elicitation when
///   the client declared that capability (H6): an `elicitation/create` request while the
///   call waits (protocols up to 2025-11-25), or an `input_required` result the client
///   answers by calling again (2026-07-28 on). Accepted, the call runs (availability and
///   validation checked again, the predicate not asked again); declined or cancelled, it
///   answers `the call was not approved`; a client without the capability gets
///   [`NO_ELICITATION`]; a stateless HTTP server answers a client on a protocol before
///   2026-07-28 [`NO_ELICITATION_STATELESS`] (no session could bring its answer back). A call
///   that was not approved never runs. A deferred tool (H5) cannot be served: it has no
///   handler here.
/// - The `requestState` of an `input_required` question is sealed with the server's key
///   (H10, [`McpServerBuilder::state_key`]), bound to the tool, the arguments and the
///   question, and expires ([`McpServerBuilder::approval_expiry`]): a forged, altered,
///   expired or replayed state, or one brought back for another call or by a client that
///   declared no elicitation, is answered `the call was not approved`, and nothing runs.
///   Replicas behind a balancer share a configured key.
/// - Hooks ([`McpServerBuilder::hook`], K1) run around each call as on an agent: a denial
///   answers with the hook's message (kind `denied`), a hook that ends the run or panics
///   answers `the tool failed` (logged, and given to `on_outcome`), and the server goes on.
/// - A `tools/call` with a progress token (`_meta.progressToken`) gets the handler's
///   progress ([`Context::progress`]) as `notifications/progress`, all sent before the
///   result (K3).
/// - Each call has a `tools/call {tool}` span (kind server), with the attributes of the
///   OpenTelemetry semantic conventions for MCP (K2); see
///   [`McpServerBuilder::record_tool_content`] to record arguments and results.
///
/// Each request's [`Context`] comes from the application's context function
/// ([`McpServerBuilder::context`]), given only what the transport authenticated
/// ([`McpRequest`]). The model's or client's arguments never reach it.
///
/// ```no_run
/// use tool_runtime::mcp::{McpRequest, McpServer};
/// use tool_runtime::{Context, Tool};
///
/// # #[derive(Clone)] struct Principal(String);
/// # fn verify(_token: &str) -> Option<Principal> { None }
/// # async fn serve(lookup_window: Tool) -> Result<(), Box<dyn std::error::Error>> {
/// let server = McpServer::builder()
///     .name("maintenance")
///     .tool(lookup_window)
///     .context(|req: McpRequest| async move {
///         let principal = req.bearer_token().and_then(verify).ok_or("unauthenticated")?;
///         Ok::<_, &str>(Context::new().with(principal))
///     })
///     .build()?;
/// let http = server.bind_http("127.0.0.1:8080", Default::default()).await?;
/// println!("serving on {}", http.url());
/// http.wait().await?;
/// # Ok(())
/// # }
/// ```
///
/// [`Context`]: tool_core::Context
/// [`Context::progress`]: tool_core::Context::progress
/// [`Tool::invoke_with`]: tool_core::Tool::invoke_with
/// [`NO_ELICITATION`]: super::NO_ELICITATION
/// [`NO_ELICITATION_STATELESS`]: super::NO_ELICITATION_STATELESS
/// [`McpServerBuilder::state_key`]: super::McpServerBuilder::state_key
/// [`McpServerBuilder::approval_expiry`]: super::McpServerBuilder::approval_expiry
/// [`McpServerBuilder::hook`]: super::McpServerBuilder::hook
/// [`McpServerBuilder::record_tool_content`]: super::McpServerBuilder::record_tool_content
/// [`McpServerBuilder::context`]: super::McpServerBuilder::context
/// [`McpRequest`]: super::McpRequest
#[derive(Clone)]
pub struct McpServer {
    pub(super) shared: Arc<Shared>,
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.shared.info.server_info.name)
            .field("tools", &self.shared.set.tools)
            .finish_non_exhaustive()
    }
}
