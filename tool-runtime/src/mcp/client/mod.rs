//! Using the tools of MCP servers: [`McpToolset`], a remote server's tools as run-time
//! [`Tool`]s an agent holds beside its own; here its handle, in the submodules the rest.
//!
//! - `builder`: [`McpToolsetBuilder`], connecting (child process, streamable HTTP, or any
//!   byte stream) and turning each listed tool into a [`Tool`]; [`Handshake`].
//! - `names`: remote names mapped to valid local ones (N1, [`local_name`]).
//! - `remote_schema`: remote schemas bounded ([`SchemaLimits`], [`check_schema`]) and
//!   arguments validated against them locally ([`JsonSchemaValidator`]).
//! - `remote_tool`: the session with the server, and each call sent over it.
//! - `remote_catalog`: the server's resources and prompts, listed, read and got (M7).
//! - [`auth`]: connecting to a protected server with OAuth 2.1 (Z4, [`auth::OAuthClient`]).
//! - `error`: why a toolset cannot be built ([`ToolsetError`], [`ToolsetProblem`]) or a remote
//!   call failed ([`RemoteCallError`]).

pub mod auth;
mod builder;
mod elicit;
mod error;
mod names;
mod remote_catalog;
mod remote_input;
mod remote_schema;
mod remote_task;
mod remote_tool;
mod remote_violations;
mod task_listing;

use std::fmt;
use std::sync::Arc;

use tool_core::{Site, Tool};

use names::NameMap;
use remote_tool::Connection;

pub use builder::{Handshake, McpToolsetBuilder};
pub use error::{RemoteCallError, ToolsetError, ToolsetProblem};
pub use names::local_name;
pub use remote_catalog::{RemoteCatalogError, RemotePrompt, RemoteResource};
pub use remote_schema::{JsonSchemaValidator, SchemaLimits, SchemaRejected, check_schema};

/// The tools of one remote MCP server, as [`Tool`]s: each with the server's name (mapped to a
/// valid local name, N1), description and input schema, its arguments validated against that
/// schema locally before anything is sent (S2, R5), and optionally an availability policy
/// like a native tool's (A1–A8).
///
/// - A remote name that breaks N1 (`get_weather`, `Ops.Restart`) is mapped to the nearest valid
///   one (`get-weather`, `ops-restart`), behind an optional prefix that namespaces the server;
///   calls use the remote name ([`McpToolset::remote_name`]). Two remote names mapping to one
///   local name are reported, with both remote names, when the toolset is built; a local name
///   shared with another tool of an agent is reported by the agent's `build()` (N3).
/// - Remote schemas are untrusted: their size, depth and `$ref`s are bounded, and references
///   to other documents refused ([`SchemaLimits`], [`JsonSchemaValidator`]).
/// - A remote result with `isError: true` reaches the model as its text (like a
///   [`ToolError`](tool_core::ToolError)), unless our own server marked it `failed` or
///   `fatal` (T2: then it is `failed` here, never fatal); a transport or protocol failure as
///   `the tool failed`, with the [`RemoteCallError`] kept for the application (E2, E3).
/// - Cancelling a call's [`Context`](tool_core::Context) sends `notifications/cancelled` to the server.
///
/// Descriptions and schemas come from the server and go to the model provider (D3): use
/// servers you trust with that.
///
/// ```no_run
/// use tool_runtime::mcp::McpToolset;
/// use tool_runtime::{Agent, OfflineModel};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let weather = McpToolset::builder()
///     .prefix("wx")
///     .connect_child(tokio::process::Command::new("weather-mcp-server"))
///     .await?;
/// let agent = Agent::builder(OfflineModel::new())
///     .tools(weather.tools())
///     .build()?;
/// # Ok(())
/// # }
/// ```
pub struct McpToolset {
    tools: Vec<Tool>,
    names: NameMap,
    connection: Arc<Connection>,
}

impl McpToolset {
    /// Starts a toolset. See [`McpToolsetBuilder`].
    #[track_caller]
    #[must_use = "a builder does nothing until it connects"]
    pub fn builder() -> McpToolsetBuilder {
        McpToolsetBuilder::new(Site::caller())
    }

    /// The tools, in the order the server listed them.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The tools, owned.
    pub fn into_tools(self) -> Vec<Tool> {
        self.tools
    }

    /// The remote name the local tool name `local` stands for.
    pub fn remote_name(&self, local: &str) -> Option<&str> {
        self.names.remote(local)
    }

    /// The local name of the remote tool `remote`.
    pub fn local_name(&self, remote: &str) -> Option<&str> {
        self.names.local(remote)
    }

    /// Every `(local, remote)` name pair, in the order the server listed the tools.
    pub fn names(&self) -> impl Iterator<Item = (&str, &str)> {
        self.names.pairs()
    }

    /// The server: its command or URL.
    pub fn server(&self) -> &str {
        self.connection.server()
    }

    /// Ends the session with the server (a child process exits). The tools remain, but
    /// their calls fail (`the tool failed`, with a transport error for the application).
    ///
    /// The session also ends when the toolset and all its tools are dropped.
    pub async fn close(&self) {
        self.connection.close().await;
    }
}

impl fmt::Debug for McpToolset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpToolset")
            .field("server", &self.connection.server())
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

impl<'a> IntoIterator for &'a McpToolset {
    type Item = &'a Tool;
    type IntoIter = std::slice::Iter<'a, Tool>;

    fn into_iter(self) -> Self::IntoIter {
        self.tools.iter()
    }
}
