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

// The two sides share nothing but `Tool` and the `_meta` key below: `server/` serves tools,
// `client/` uses remote ones.
mod client;
mod lines;
mod server;

/// The `_meta` key of a `tools/call` result under which our server names the call's outcome
/// kind (`success`, `unavailable`, `invalid_arguments`, `rejected`, `failed`, `timed_out`,
/// `cancelled`, `fatal`, `denied`: the [`OutcomeKind`](tool_core::OutcomeKind) display names), so that
/// the kind survives the transport between our server and our client (T2).
const OUTCOME_META_KEY: &str = "tool-runtime/outcome";

/// The `_meta` key of an `invalid_arguments` result under which our server lists the
/// violations (`[{"path", "rule", "message"}]`, `rule` a [`Rule`](tool_core::Rule) keyword),
/// so that our client reports the same violations as the server found (T1, T2).
const VIOLATIONS_META_KEY: &str = "tool-runtime/violations";

pub use client::{
    Handshake, JsonSchemaValidator, McpToolset, McpToolsetBuilder, RemoteCallError, SchemaLimits,
    SchemaRejected, ToolsetError, ToolsetProblem, check_schema, local_name,
};
#[cfg(all(feature = "openai", feature = "anthropic"))]
pub(crate) use server::list_entry;
pub use server::{
    HttpOptions, HttpServer, McpCall, McpNaming, McpRequest, McpServer, McpServerBuilder,
    McpTransport, NO_ELICITATION, NO_ELICITATION_STATELESS, ServeError, TaskSupport,
};

/// The JSON type of `value`, with its article ("a string"), as the messages of both sides
/// name it.
pub(crate) fn json_kind(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
