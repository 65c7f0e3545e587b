//! Core types of `tool-runtime`: [`Tool`], the [`Schema`] trait and its parser, [`Context`],
//! availability [`Policy`], errors, the call pipeline ([`Tool::invoke`]) and the link-time
//! [`registry`].
//!
//! Applications depend on `tool-runtime`, which re-exports everything here together with the
//! `#[tool]` and `#[derive(Schema)]` macros.
//!
//! Descriptions, names and schemas are sent to the model provider (D3): keep secrets out of
//! them.

pub mod context;
mod dynamic;
pub mod error;
mod invoke;
pub mod json;
pub mod name;
pub mod panic;
pub mod policy;
mod registry;
pub mod schema;
mod tool;
pub mod violation;

#[doc(hidden)]
pub mod __private;

pub use context::{CallInfo, CancellationToken, Context, MissingExtension};
pub use dynamic::ArgumentValidator;
pub use error::{
    BoxError, DeclarationError, Error, ErrorKind, Panicked, Permanent, Site, ToolError,
};
pub use invoke::{
    CANCELLED, DEFAULT_MAX_ARGUMENT_BYTES, FAILED, Limits, Outcome, OutcomeKind, TIMED_OUT,
    UNAVAILABLE,
};
pub use name::{NameError, ToolName};
pub use policy::Policy;
pub use registry::{NameIndex, index_by_name, registered, registry};
pub use schema::{Invalid, Schema};
pub use tool::{IntoTool, Tool, ToolBuilder, render_result};
pub use violation::{Rule, Violation};
