//! The Model Context Protocol (feature `mcp`): serve tools to MCP clients with [`McpServer`],
//! and use the tools of MCP servers in an agent with [`McpToolset`].
//!
//! The protocol (JSON-RPC, the stdio and streamable HTTP transports, initialization,
//! cancellation) is the official Rust SDK's, `rmcp`; this module adds what a [`Tool`] promises
//! on every transport:
//!
//! - **Serving.** A [`Tool`] already bundles its typed handler, its schema and its
//!   context-only policy, so one declaration serves both the agent loop and MCP with the same
//!   guarantees: every `tools/call` goes through [`Tool::invoke_with`] (availability re-check
//!   A4, validation S2, redaction E2), a hidden tool and an unknown name get the same
//!   `tool unavailable` (A5), and each request's [`Context`](tool_core::Context) comes from
//!   the application's context function, given only what the transport authenticated
//!   ([`McpRequest`]).
//! - **Using remote tools.** [`McpToolset`] connects to a server (a child process over stdio,
//!   or streamable HTTP), and turns each of its tools into a run-time [`Tool`] with a valid
//!   name ([`local_name`], N1), the server's description and schema, arguments validated
//!   locally before they are sent ([`JsonSchemaValidator`]), and optional availability
//!   policies.
//!
//! [`Tool`]: tool_core::Tool
//! [`Tool::invoke_with`]: tool_core::Tool::invoke_with

// The two sides share nothing but `Tool` and the wire's keys in `meta`: `server/` serves
// tools, `client/` uses remote ones.
mod client;
mod lines;
mod meta;
mod server;

pub use client::auth as oauth;
pub use client::{
    Handshake, JsonSchemaValidator, McpToolset, McpToolsetBuilder, RemoteCallError, SchemaLimits,
    SchemaRejected, ToolsetError, ToolsetProblem, check_schema, local_name,
};
pub use server::auth;
#[cfg(all(feature = "openai", feature = "anthropic"))]
pub(crate) use server::list_entry;
pub use server::{
    HttpOptions, HttpServer, McpCall, McpNaming, McpRequest, McpServer, McpServerBuilder,
    McpTransport, NO_APPROVAL_ANONYMOUS_TASK, NO_ELICITATION, NO_ELICITATION_STATELESS,
    ProtocolError, ServeError, TaskSupport,
};
// M7: resources, resource templates and prompts, and the macros that make them of a fn.
pub use client::{RemoteCatalogError, RemotePrompt, RemoteResource};
pub use server::{
    CatalogEnd, CatalogHook, CatalogItem, CatalogProblem, CatalogRequest, Contents, Icon,
    IntoPrompt, IntoResource, McpPrompt, McpPromptBuilder, McpResource, McpResourceBuilder,
    Message, registered_prompts, registered_resources,
};
// What `#[resource]` and `#[prompt]` submit at link time. Not public API.
#[doc(hidden)]
pub use server::{PromptRegistration, ResourceRegistration};
pub use tool_runtime_macros::{prompt, resource};
