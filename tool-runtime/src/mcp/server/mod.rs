//! [`McpServer`]: tools served over MCP, each call through the same [`Tool::invoke_with`] as
//! the agent loop.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::model::{Implementation, JsonObject, ServerCapabilities, ServerConfig, Tool as McpTool};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::ToSocketAddrs;
use tool_core::policy::BoxFuture;
use tool_core::{BoxError, Context, IntoTool, Limits, Outcome, Tool, index_by_name};

use super::error::ServeError;
use super::handler::Handler;
use super::http_server::{HttpOptions, HttpServer};
use super::request::{McpRequest, McpTransport};
use crate::errors::{BuildError, BuildProblem};
use tool_core::panic::CatchUnwind;

/// Builds the [`Context`] of one request from what its transport authenticated.
pub(crate) type ContextFn =
    Arc<dyn Fn(McpRequest) -> BoxFuture<'static, Result<Context, BoxError>> + Send + Sync>;

/// Observes every call's outcome, unredacted (E3).
pub(crate) type OutcomeFn = Arc<dyn Fn(&McpCall<'_>) + Send + Sync>;

/// One call the server answered, for [`McpServerBuilder::on_outcome`]: the name the client
/// asked for, the request id, and the outcome with its unredacted error (E3).
#[derive(Debug)]
#[non_exhaustive]
pub struct McpCall<'a> {
    /// The tool name the client asked for (it may name no tool, A5).
    pub tool: &'a str,
    /// The JSON-RPC id of the request.
    pub call_id: &'a str,
    /// The transport the request came over.
    pub transport: McpTransport,
    /// How the call ended: the text the client got, and for the application the violations
    /// and the unredacted error.
    pub outcome: &'a Outcome,
}

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
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<Shared>,
}

/// What every session of a server shares.
pub(crate) struct Shared {
    /// The tools, in declaration order.
    pub(crate) tools: Vec<Tool>,
    /// Each tool as `tools/list` shows it (same order as `tools`), rendered at `build()`.
    pub(crate) listed: Vec<McpTool>,
    pub(crate) by_name: HashMap<String, usize>,
    pub(crate) context: ContextFn,
    pub(crate) info: ServerConfig,
    pub(crate) limits: Limits,
    pub(crate) on_outcome: Option<OutcomeFn>,
}

impl Shared {
    /// The context of a request, from the application's context function; a panic in it is
    /// contained.
    pub(crate) async fn context_for(&self, request: McpRequest) -> Result<Context, BoxError> {
        let make = Arc::clone(&self.context);
        match CatchUnwind::new(async move { make(request).await }).await {
            Ok(result) => result,
            Err(panic) => Err(format!("the context function panicked: {panic}").into()),
        }
    }
}

impl McpServer {
    /// Starts a server. See [`McpServerBuilder`].
    #[must_use = "a builder does nothing until `build` is called"]
    pub fn builder() -> McpServerBuilder {
        McpServerBuilder {
            tools: Vec::new(),
            context: None,
            name: "tool-runtime".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            instructions: None,
            limits: Limits::default(),
            on_outcome: None,
        }
    }

    /// The tools served, in declaration order.
    pub fn tools(&self) -> &[Tool] {
        &self.shared.tools
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
        Ok(super::http_server::spawn(
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

/// Builds an [`McpServer`]; start with [`McpServer::builder`].
#[must_use = "a builder does nothing until `build` is called"]
pub struct McpServerBuilder {
    tools: Vec<Tool>,
    context: Option<ContextFn>,
    name: String,
    version: String,
    instructions: Option<String>,
    limits: Limits,
    on_outcome: Option<OutcomeFn>,
}

impl McpServerBuilder {
    /// Adds a tool: a [`Tool`], or the handle `#[tool]` generates. Tools keep the order they
    /// are added in (the order of `tools/list` and of its policy checks).
    pub fn tool(mut self, tool: impl IntoTool) -> Self {
        self.tools.push(tool.into_tool());
        self
    }

    /// Adds tools: every registered tool (`registry()?`), a named selection
    /// (`registered([...])?`), or any other list.
    pub fn tools<T: IntoTool>(mut self, tools: impl IntoIterator<Item = T>) -> Self {
        self.tools
            .extend(tools.into_iter().map(IntoTool::into_tool));
        self
    }

    /// Sets the context function: it builds the [`Context`] of each request from what the
    /// transport authenticated ([`McpRequest`]: the headers of an HTTP request, say, whose
    /// bearer token the application verifies; for stdio, read the process environment).
    ///
    /// An error (or a panic) rejects the request: over HTTP with `401 Unauthorized`, over
    /// stdio with a JSON-RPC error; its text is logged, never sent. Without a context
    /// function every request gets an empty [`Context`].
    pub fn context<F, Fut, E>(mut self, f: F) -> Self
    where
        F: Fn(McpRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Context, E>> + Send + 'static,
        E: Into<BoxError>,
    {
        let f = Arc::new(f);
        self.context = Some(Arc::new(move |request| {
            let f = Arc::clone(&f);
            Box::pin(async move { f(request).await.map_err(Into::into) })
        }));
        self
    }

    /// Sets the name the server gives in its `serverInfo` (default `tool-runtime`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Sets the version the server gives in its `serverInfo` (default: this crate's).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// Sets the instructions the server gives the client.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Sets the limits applied to each call's arguments (default: 1 MiB of arguments).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Calls `f` with every call's outcome, unredacted: the violations and the error behind
    /// `the tool failed` (E3). Failures are also logged with `tracing`.
    pub fn on_outcome(mut self, f: impl Fn(&McpCall<'_>) + Send + Sync + 'static) -> Self {
        self.on_outcome = Some(Arc::new(f));
        self
    }

    /// Builds the server, checking every tool before anything is served.
    ///
    /// # Errors
    ///
    /// Returns a [`BuildError`] (kind `Declaration`) listing every problem: each tool
    /// declared wrong (its [`Tool::err`], D2) and each pair of tools sharing a name, naming
    /// both declaration sites (N3).
    pub fn build(self) -> Result<McpServer, BuildError> {
        let mut problems = Vec::new();
        let mut listed = Vec::with_capacity(self.tools.len());
        let index = index_by_name(self.tools.iter().map(|t| (t.name(), t.site(), t.err())));
        for (tool, problem) in self.tools.iter().zip(index.problems) {
            match problem {
                Some(error) => problems.push(BuildProblem::Tool(error)),
                None => listed.push(list_entry(tool)),
            }
        }
        if !problems.is_empty() {
            return Err(BuildError::new(problems));
        }
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.server_info = Implementation::new(self.name, self.version);
        info.instructions = self.instructions;
        let context = self
            .context
            .unwrap_or_else(|| Arc::new(|_| Box::pin(async { Ok(Context::new()) })));
        Ok(McpServer {
            shared: Arc::new(Shared {
                tools: self.tools,
                listed,
                by_name: index.by_name,
                context,
                info,
                limits: self.limits,
                on_outcome: self.on_outcome,
            }),
        })
    }
}

impl fmt::Debug for McpServerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServerBuilder")
            .field("name", &self.name)
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

/// A tool as `tools/list` shows it: name, description and the neutral input schema. No
/// output schema: a tool's result type declares none today (E1).
fn list_entry(tool: &Tool) -> McpTool {
    let schema: JsonObject = tool.schema().as_object().cloned().unwrap_or_default();
    McpTool::new(
        tool.name().to_owned(),
        tool.description().to_owned(),
        Arc::new(schema),
    )
}
