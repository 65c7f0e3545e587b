//! Serving tools over MCP: [`McpServer`], whose every call goes through the same
//! [`Tool::invoke_with`] as the agent loop; here its handle, in the submodules the rest.
//!
//! - `builder`: [`McpServerBuilder`], every tool checked at `build()`.
//! - `shared`: what every session of one server shares (the tools, their `tools/list`
//!   entries, the context function).
//! - `request`: what the application's functions are given: [`McpRequest`] (what the
//!   transport authenticated) and [`McpCall`] (one call answered).
//! - `handler`: the MCP requests of a session, `tools/list` and `tools/call`.
//! - `result`: the MCP result of a call's outcome.
//! - `approval`: a call awaiting approval, asked of the client's user by elicitation (H6).
//! - `request_state`: the sealed `requestState` of an approval question (H10).
//! - `rounds`: a handler's questions on 2026-07-28, asked in the call's answer (M3).
//! - `malformed`: the answers to requests the SDK cannot parse.
//! - `spans`: each call's `tools/call` span, as the MCP semantic conventions name it (K2).
//! - `progress`: a handler's progress, sent as `notifications/progress` (K3).
//! - `tasks`: long-running tools as MCP tasks ([`TaskSupport`], M5).
//! - `http_server`: the streamable HTTP transport ([`HttpServer`], [`HttpOptions`]).
//! - `error`: why serving stopped, or could not start ([`ServeError`]).

mod approval;
mod builder;
mod elicit;
mod error;
mod handler;
mod http_server;
mod malformed;
mod naming;
mod progress;
mod request;
mod request_state;
mod result;
mod rounds;
mod shared;
mod spans;
mod tasks;

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::ServiceExt;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::ToSocketAddrs;
use tool_core::Tool;

use handler::Handler;
use shared::Shared;

pub use approval::{NO_ELICITATION, NO_ELICITATION_STATELESS};
pub use builder::McpServerBuilder;
#[cfg(all(feature = "openai", feature = "anthropic"))]
pub(crate) use builder::list_entry;
pub use error::ServeError;
pub use http_server::{HttpOptions, HttpServer};
pub use naming::McpNaming;
pub use request::{McpCall, McpRequest, McpTransport};
pub use tasks::TaskSupport;

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
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<Shared>,
}

impl McpServer {
    /// Starts a server. See [`McpServerBuilder`].
    #[must_use = "a builder does nothing until `build` is called"]
    pub fn builder() -> McpServerBuilder {
        McpServerBuilder::new()
    }

    /// The tools served, in declaration order.
    pub fn tools(&self) -> &[Tool] {
        &self.shared.tools
    }

    /// Each tool served with its `tools/list` entry, in declaration order (C2).
    #[cfg(all(feature = "openai", feature = "anthropic"))]
    pub(crate) fn listed(&self) -> impl Iterator<Item = (&Tool, &rmcp::model::Tool)> {
        self.shared.tools.iter().zip(&self.shared.listed)
    }

    /// Serves one client over this process's standard input and output until the client
    /// closes them. Each request's context is built with [`McpRequest`] of transport
    /// [`McpTransport::Stdio`]: authenticate the peer from the process environment.
    ///
    /// Nothing else may write to standard output while this runs: log to standard error.
    ///
    /// # Errors
    ///
    /// Returns [`ServeError::Start`] when the session cannot start (the client closed the
    /// stream first, say), and [`ServeError::Task`] when the session's task failed.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future ends the session: the contexts of the calls in flight are
    /// cancelled, and their answers are not sent.
    pub async fn serve_stdio(&self) -> Result<(), ServeError> {
        self.serve_io(tokio::io::stdin(), tokio::io::stdout()).await
    }

    /// Serves one client over a byte stream (newline-delimited JSON-RPC, as on stdio) until
    /// the client closes it: a pipe, a socket, or the ends of an in-process duplex.
    ///
    /// Requests are treated as coming over stdio ([`McpTransport::Stdio`]).
    ///
    /// # Errors
    ///
    /// As [`McpServer::serve_stdio`].
    ///
    /// # Cancel safety
    ///
    /// As [`McpServer::serve_stdio`].
    pub async fn serve_io<R, W>(&self, reader: R, writer: W) -> Result<(), ServeError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        if !self.shared.tasks.enabled() {
            return self.serve_session(reader, writer).await;
        }
        // M5: each message through the task rewriting, both ways.
        let stop = tool_core::CancellationToken::new();
        let tasks = Arc::clone(&self.shared.tasks);
        let (sdk_in, sdk_out, pumps) = tasks::io::pipes(tasks, reader, writer, stop.clone());
        let serving = async {
            let served = self.serve_session(sdk_in, sdk_out).await;
            stop.cancel();
            served
        };
        tokio::join!(serving, pumps).0
    }

    /// Serves one session of the SDK's on `reader` and `writer`.
    async fn serve_session<R, W>(&self, reader: R, writer: W) -> Result<(), ServeError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let handler = Handler::new(Arc::clone(&self.shared), McpTransport::Stdio);
        let running = handler
            .serve((reader, writer))
            .await
            .map_err(|e| ServeError::Start(Box::new(e)))?;
        // Dropping `running` (with this future) cancels the session.
        running.waiting().await.map_err(ServeError::Task)?;
        Ok(())
    }

    /// Serves streamable HTTP on `addr` (at [`HttpOptions::path`], `/mcp` by default), in a
    /// task of the current runtime, until [`HttpServer::shutdown`].
    ///
    /// Every HTTP request goes through the context function first, with its method, URI and
    /// headers ([`McpTransport::Http`]); when it fails the request is answered
    /// `401 Unauthorized` (and the failure logged), before any MCP processing. Only loopback
    /// `Host`s are accepted unless [`HttpOptions::allowed_hosts`] says otherwise (a guard
    /// against DNS rebinding); put TLS in front of a server reachable from elsewhere.
    ///
    /// # Errors
    ///
    /// Returns [`ServeError::Bind`] when `addr` cannot be bound.
    pub async fn bind_http(
        &self,
        addr: impl ToSocketAddrs,
        options: HttpOptions,
    ) -> Result<HttpServer, ServeError> {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(ServeError::Bind)?;
        let local: SocketAddr = listener.local_addr().map_err(ServeError::Bind)?;
        Ok(http_server::spawn(
            Arc::clone(&self.shared),
            listener,
            local,
            options,
        ))
    }
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.shared.info.server_info.name)
            .field("tools", &self.shared.tools)
            .finish_non_exhaustive()
    }
}
