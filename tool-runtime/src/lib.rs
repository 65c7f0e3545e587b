//! Typed LLM tools from attribute macros.
//!
//! Put `#[tool]` on an async fn and `#[derive(Schema)]` on its input, and you get a JSON
//! Schema rendered for the model provider, arguments validated before the handler runs, a tool
//! name checked at compile time, a link-time registry entry, and an agent run loop that
//! re-checks permissions on every call, keeps internal errors away from the model, and stops
//! cleanly on a fatal failure.
//!
//! This is the one crate an application depends on: it re-exports the core types and both
//! macros.

pub use tool_core::{
    BoxError, CallInfo, CancellationToken, Context, DeclarationError, Error, ErrorKind,
    IntoTool, Invalid, Limits, MissingExtension, NameError, Outcome, OutcomeKind, Permanent,
    Policy, Rule, Schema, Site, Tool, ToolBuilder, ToolError, ToolName, Violation, registered,
    registry,
};
pub use tool_core::{context, error, json, name, policy, schema, violation};
pub use tool_core::{CANCELLED, DEFAULT_MAX_ARGUMENT_BYTES, FAILED, TIMED_OUT, UNAVAILABLE};
pub use tool_macros::{Schema, tool};

/// Support for the code the macros generate. Not public API.
#[doc(hidden)]
pub mod __private {
    pub use tool_core::__private::*;
}
