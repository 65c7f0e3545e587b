//! Serving tools over MCP: [`McpServer`], whose every call goes through the same
//! [`Tool::invoke_with`] as the agent loop; here its handle, in the submodules the rest.
//!
//! - `builder`: [`McpServerBuilder`], every tool checked at `build()`.
//! - `shared`: what every session of one server shares (the tools, their `tools/list`
//!   entries, the context function).
//! - `request`: what the application's functions are given: [`McpRequest`] (what the
//!   transport authenticated) and [`McpCall`] (one call answered).
//! - `session`: what serving one session holds, and a request's context.
//! - `handler`: the MCP requests of a session on rmcp's typed seam, `tools/list` and
//!   `tools/call`.
//! - `tools_call`: the one way a `tools/call` enters, however it came (U1).
//! - `seam`: the MCP side of a call (approval by elicitation, input rounds).
//! - `result`: the MCP result of a call's outcome.
//! - `approval`: a call awaiting approval, asked of the client's user by elicitation (H6).
//! - `request_state`: the sealed `requestState` of an approval question (H10).
//! - `rounds`: a handler's questions on 2026-07-28, asked in the call's answer (M3, M8).
//! - `questions`: what a handler can ask its client (elicitation, sampling, roots: M3, M8).
//! - `ask`: one such question, asked through a carrier (the rounds, a task).
//! - `sampling`, `roots`: a handler's sampling requests and roots, during a call (M8).
//! - `malformed`: the answers to requests the SDK cannot parse.
//! - `spans`: each call's `tools/call` span, as the MCP semantic conventions name it (K2).
//! - `progress`: a handler's progress, sent as `notifications/progress` (K3).
//! - `logging`: a handler's log messages, sent as `notifications/message` (M8).
//! - `protocol_error`: [`ProtocolError`], a handler's way to answer with a JSON-RPC error (M9).
//! - `protocol_header`: the `MCP-Protocol-Version` header, read one way.
//! - `search`: deferred tools, served with the search that loads them (Q1).
//! - `tasks`: long-running tools as MCP tasks ([`TaskSupport`], M5).
//! - `resources`, `prompts`: what a server serves besides tools ([`McpResource`],
//!   [`McpPrompt`], M7); `catalog`: them checked together, and what their requests share;
//!   `completer`: what suggests an argument's values; `completion`: `completion/complete` of
//!   their arguments; `icon`: [`Icon`]; `registry`:
//!   the `#[resource]` and `#[prompt]` items linked into the binary.
//! - `http_server`: the streamable HTTP transport ([`HttpServer`], [`HttpOptions`]).
//! - `error`: why serving stopped, or could not start ([`ServeError`]).

mod approval;
mod approval_edits;
mod ask;
pub mod auth;
mod builder;
mod catalog;
mod compat;
mod completer;
mod completion;
mod elicit;
mod error;
mod handle;
mod handler;
mod http_server;
mod icon;
mod logging;
mod malformed;
mod naming;
mod notify;
mod offer;
mod progress;
mod prompts;
mod protocol_error;
mod protocol_header;
mod questions;
mod registry;
mod request;
mod request_state;
mod resources;
mod result;
mod roots;
mod rounds;
mod sampling;
mod seam;
mod search;
mod session;
mod shared;
mod spans;
mod tasks;
mod tools_call;

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::ServiceExt;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::ToSocketAddrs;
use tool_core::Tool;

use handler::Handler;
use session::Session;

pub use approval::{NO_APPROVAL_ANONYMOUS_TASK, NO_ELICITATION, NO_ELICITATION_STATELESS};
pub use builder::McpServerBuilder;
#[cfg(all(feature = "openai", feature = "anthropic"))]
pub(crate) use builder::list_entry;
pub use catalog::problem::CatalogProblem;
pub use catalog::{CatalogEnd, CatalogHook, CatalogItem, CatalogRequest};
pub use error::ServeError;
pub use handle::McpServer;
pub use http_server::{HttpOptions, HttpServer};
pub use icon::Icon;
pub use naming::McpNaming;
pub use prompts::{IntoPrompt, McpPrompt, McpPromptBuilder, Message};
pub use protocol_error::ProtocolError;
pub use registry::{
    PromptRegistration, ResourceRegistration, registered_prompts, registered_resources,
};
pub use request::{McpCall, McpRequest, McpTransport};
pub use resources::{Contents, IntoResource, McpResource, McpResourceBuilder};
pub use tasks::TaskSupport;

impl McpServer {
    /// The tools served, in declaration order.
    pub fn tools(&self) -> &[Tool] {
        &self.shared.set.tools
    }

    /// Each tool served with its `tools/list` entry, in declaration order (C2).
    #[cfg(all(feature = "openai", feature = "anthropic"))]
    pub(crate) fn listed(&self) -> impl Iterator<Item = (&Tool, &rmcp::model::Tool)> {
        self.shared.set.tools.iter().zip(&self.shared.listed)
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
        let (sdk_in, sdk_out, pumps) =
            compat::tasks::io::pipes(tasks, reader, writer, stop.clone());
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
        let handler = Handler::new(Session::new(Arc::clone(&self.shared), McpTransport::Stdio));
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
